//! Artifacts (DLG-ART-*): byte-exact results, url parts, provenance, bounded memory.

use super::evidence::*;
use super::registry::{Check, fail};
use super::state::outcome_expected;
use a2a_driver_contract::{Done, DoneArtifact, Outcome};
use a2a_mock_agents::Event;

/// How an artifact of a task arrived: number of chunks and whether any appended.
fn chunk_history(ev: &Evidence, task: &str, aid: &str) -> (usize, bool) {
    let mut n = 0;
    let mut appended = false;
    for e in ev.journal {
        if let Event::ArtifactChunk {
            task_id,
            artifact_id,
            append,
            ..
        } = &e.event
            && task_id == task
            && artifact_id == aid
        {
            n += 1;
            appended |= *append;
        }
    }
    (n, appended)
}

/// What the delegator committed for an artifact: the file it reported as read by the harness,
/// else (no file read) what it reported.
fn committed<'a>(ev: &'a Evidence, id: &str, a: &'a DoneArtifact) -> (u64, &'a str) {
    match ev
        .artifact_files
        .get(&(id.to_string(), a.artifact_id.clone()))
    {
        Some(FileFact::Read { bytes, sha256 }) => (*bytes, sha256.as_str()),
        _ => (a.bytes, a.sha256.as_str()),
    }
}

/// The COMPLETED units of work (delegations, fan-out children) with the task that delivered
/// their result.
fn completed_with_task<'a>(ev: &'a Evidence) -> Vec<(&'a Done, String)> {
    let mut out = Vec::new();
    for w in works(ev) {
        let Some(done) = done_of(ev, w.id) else {
            continue;
        };
        if done.state != Outcome::Completed {
            continue;
        }
        if let Some((tid, _)) = tasks_of(ev, w.id).pop() {
            out.push((done, tid));
        }
    }
    out
}

/// The committed content of the artifacts `which` selects equals the agent's truth.
fn committed_exact(ev: &Evidence, which: impl Fn(&str, &str, u64) -> bool) -> Check {
    let mut any = false;
    for (done, tid) in completed_with_task(ev) {
        for (aid, (bytes, sha, seq)) in artifact_truth(ev.journal, &tid) {
            if !which(&tid, aid, seq) {
                continue;
            }
            any = true;
            let Some(rep) = done.artifacts.iter().find(|r| r.artifact_id == aid) else {
                return fail(
                    format!("artifact {aid} committed ({bytes} bytes)"),
                    "missing from the outcome",
                    vec![seq],
                );
            };
            let (cb, cs) = committed(ev, &done.id, rep);
            if cb != bytes || cs != sha {
                return fail(
                    format!("{aid}: {bytes} bytes, sha256 {sha} as the agent sent them"),
                    format!("{cb} bytes, sha256 {cs} committed"),
                    vec![seq],
                );
            }
        }
    }
    Check::held_if_seen(any)
}

/// DLG-ART-01: artifacts built with `append: true` chunks are joined in order.
pub(super) fn appends_joined_in_order(ev: &Evidence) -> Check {
    committed_exact(ev, |t, a, _| chunk_history(ev, t, a).1)
}

/// DLG-ART-02: artifacts sent in several chunks are committed whole, not as the last chunk.
pub(super) fn every_chunk_counts(ev: &Evidence) -> Check {
    committed_exact(ev, |t, a, _| chunk_history(ev, t, a).0 > 1)
}

/// DLG-REC-06: artifacts the agent completed after the crash are committed byte-exact.
pub(super) fn artifacts_exact_after_recovery(ev: &Evidence) -> Check {
    let Some(crash) = ev.crash_seq else {
        return Check::NotApplicable;
    };
    committed_exact(ev, |_, _, seq| seq > crash)
}

/// DLG-ART-04: the byte length and sha256 the delegator reports are those of the file it
/// committed, and (for artifacts whose assembly DLG-ART-01/02 do not judge: one chunk, no
/// append) of what the agent sent; every delivered artifact is reported.
pub(super) fn reported_bytes_match(ev: &Evidence) -> Check {
    let mut any = false;
    for (done, tid) in completed_with_task(ev) {
        let truth = artifact_truth(ev.journal, &tid);
        for rep in &done.artifacts {
            any = true;
            let aid = rep.artifact_id.as_str();
            match ev
                .artifact_files
                .get(&(done.id.clone(), rep.artifact_id.clone()))
            {
                Some(FileFact::Unreadable(why)) => {
                    return fail(
                        format!("{aid}: the reported file {} holds the artifact", rep.path),
                        format!("it could not be read: {why}"),
                        vec![],
                    );
                }
                Some(FileFact::Read { bytes, sha256 })
                    if *bytes != rep.bytes || *sha256 != rep.sha256 =>
                {
                    return fail(
                        format!(
                            "{aid}: reported {} bytes, sha256 {} as the file holds",
                            rep.bytes, rep.sha256
                        ),
                        format!("the file holds {bytes} bytes, sha256 {sha256}"),
                        vec![],
                    );
                }
                _ => {}
            }
            // An artifact the agent never delivered in full is DLG-OBS-03's (only what a
            // completed task delivers is committed), or DLG-ART-09's for a protocol error.
            let Some((bytes, sha, seq)) = truth.get(aid) else {
                continue;
            };
            let (n, appended) = chunk_history(ev, &tid, aid);
            if n <= 1 && !appended && (rep.bytes != *bytes || rep.sha256 != *sha) {
                return fail(
                    format!("{aid}: {bytes} bytes, sha256 {sha}"),
                    format!("{} bytes, sha256 {} reported", rep.bytes, rep.sha256),
                    vec![*seq],
                );
            }
        }
        for (aid, (bytes, _, seq)) in &truth {
            any = true;
            if !done.artifacts.iter().any(|r| r.artifact_id == *aid) {
                return fail(
                    format!("artifact {aid} reported ({bytes} bytes)"),
                    "missing from the outcome",
                    vec![*seq],
                );
            }
        }
    }
    if !any
        && !ev.outcomes.is_empty()
        && ev
            .scenario
            .delegations
            .iter()
            .all(|d| done_state(ev, &d.id).is_some_and(|s| s != Outcome::Completed))
        && outcome_expected(ev) == Check::Pass
    {
        // Every delegation ended in another outcome the case allows (a delegator that kept a
        // state it cannot read as unknown until the deadline, say): no bytes to compare.
        return Check::NotExercised {
            why: "no delegation completed: each ended in another outcome the case allows".into(),
        };
    }
    Check::held_if_seen(any)
}

pub(super) fn url_parts_fetched(ev: &Evidence) -> Check {
    let blobs = ev
        .journal
        .iter()
        .any(|e| matches!(&e.event, Event::BlobServed { .. }));
    let urls = ev
        .journal
        .iter()
        .any(|e| matches!(&e.event, Event::ArtifactChunk { .. }))
        && ev.scenario.network.agents.iter().any(|a| {
            a.rules.iter().any(|r| {
                // Only url parts to an allowed origin are to be fetched (DLG-URL-01 judges the
                // others).
                r.steps.iter().any(|s| {
                    matches!(s, a2a_mock_agents::ScriptStep::ArtifactUrl { target, .. }
                        if target.is_blob())
                })
            })
        });
    if !urls {
        return Check::NotApplicable;
    }
    if !blobs {
        return fail("the url part fetched", "no GET of the blob", vec![]);
    }
    match (committed_exact(ev, |_, _, _| true), outcome_expected(ev)) {
        (f @ Check::Fail { .. }, _) | (_, f @ Check::Fail { .. }) => f,
        _ => Check::Pass,
    }
}

/// DLG-ART-08: each recorded artifact names its provenance (agent, skill, task), and it agrees
/// with the journal: the task was created for that delegation by the agent the record names
/// (matched by the `host:port` its requests went to), the skill is the delegation's capability,
/// and the agent sent that artifact in that task.
pub(super) fn artifact_provenance_recorded(ev: &Evidence) -> Check {
    use serde_json::Value;
    let recs = snapshot_records(ev);
    let mut any = false;
    // The `host:port` each agent was reached at.
    let hosts: Vec<(String, &str)> = requests(ev.journal)
        .iter()
        .filter_map(|r| r.headers.get("host").map(|h| (h.clone(), r.agent)))
        .collect();
    for r in recs {
        let id = r.id().unwrap_or_default();
        for a in r.artifacts() {
            any = true;
            let text = |k: &str| a.get(k).and_then(Value::as_str);
            let (Some(agent), Some(skill), Some(task)) = (
                text("agent_url").or_else(|| text("agent")),
                text("skill"),
                text("task_id"),
            ) else {
                return fail(
                    "artifact provenance (agent, skill, task)",
                    format!("{a}"),
                    vec![],
                );
            };
            let aid = text("artifact_id").unwrap_or_default();
            // A fan-out parent holds its children's artifacts: their tasks and skills count.
            let mut tasks: Vec<(String, String, &str)> = Vec::new();
            for d in &ev.scenario.delegations {
                if d.id == id {
                    tasks.extend(
                        tasks_of(ev, id)
                            .into_iter()
                            .map(|(t, a)| (t, a, d.capability.as_str())),
                    );
                }
                for c in d.children.iter().filter(|c| c.id == id || d.id == id) {
                    tasks.extend(
                        tasks_of(ev, &c.id)
                            .into_iter()
                            .map(|(t, a)| (t, a, c.capability.as_str())),
                    );
                }
            }
            if tasks.is_empty() {
                tasks.extend(tasks_of(ev, id).into_iter().map(|(t, a)| (t, a, "")));
            }
            let Some((_, task_agent, capability)) = tasks.iter().find(|(t, _, _)| t == task) else {
                return fail(
                    format!("{id}: provenance task {task} is a task created for it"),
                    format!(
                        "its tasks: {}",
                        super::words::list(tasks.iter().map(|t| &t.0))
                    ),
                    vec![],
                );
            };
            let named = hosts
                .iter()
                .filter(|(h, _)| agent.contains(h.as_str()))
                .map(|(_, n)| *n)
                .next();
            if named.is_some_and(|n| n != task_agent) || (named.is_none() && agent != task_agent) {
                return fail(
                    format!("{id}: provenance agent is {task_agent}, which holds task {task}"),
                    format!("agent {agent}"),
                    vec![],
                );
            }
            if !capability.is_empty() && *capability != skill {
                return fail(
                    format!("{id}: provenance skill {capability}"),
                    format!("skill {skill}"),
                    vec![],
                );
            }
            if !aid.is_empty()
                && !ev.journal.iter().any(|e| {
                    matches!(&e.event, Event::ArtifactChunk { task_id, artifact_id, .. }
                        | Event::ArtifactSent { task_id, artifact_id, .. }
                        if task_id == task && artifact_id == aid)
                })
            {
                return fail(
                    format!("{id}: artifact {aid} was sent in task {task}"),
                    "the agent never sent it there",
                    vec![],
                );
            }
        }
    }
    Check::held_if_seen(any)
}

/// Bytes the agents sent of large payloads: artifact chunks and huge SSE events (the mock
/// journals a huge event as `<huge event of N bytes>`), with the last entry that sent any.
fn streamed_bytes(journal: &[a2a_mock_agents::Entry]) -> (u64, Option<u64>) {
    let mut total = 0u64;
    let mut last = None;
    for e in journal {
        let n = match &e.event {
            Event::ArtifactChunk { bytes, .. } => *bytes,
            Event::SseEvent { data, .. } => data
                .as_str()
                .and_then(|d| d.strip_prefix("<huge event of "))
                .and_then(|d| d.strip_suffix(" bytes>"))
                .and_then(|n| n.parse().ok())
                .unwrap_or(0),
            _ => 0,
        };
        if n > 0 {
            total = total.saturating_add(n);
            last = Some(e.seq);
        }
    }
    (total, last)
}

/// DLG-ART-10: the whole process group's peak memory stays within its baseline at `init_ok`
/// plus the case's allowance (`memory_bound_mib`), while more than the allowance streamed in:
/// buffering the payload would cross the bound. A payload that never streamed is a FAIL, since
/// streaming it is the case's purpose. After a crash the reading is the killed process's and
/// only what streamed before the kill counts: the restarted process gets the payload as one task
/// snapshot, not as a stream, so a kill before more than the allowance streamed leaves the rule
/// NOT EXERCISED.
pub(super) fn memory_bounded_while_streaming(ev: &Evidence) -> Check {
    let Some(allowance_mib) = ev.scenario.memory_bound_mib else {
        return Check::NotApplicable;
    };
    // The journal is in sequence order: what the killed process can have streamed is a prefix.
    let journal = match ev.crash_seq {
        Some(k) => &ev.journal[..ev.journal.partition_point(|e| e.seq <= k)],
        None => ev.journal,
    };
    let (streamed, last) = streamed_bytes(journal);
    if let Some(k) = ev.crash_seq
        && streamed <= allowance_mib << 20
    {
        return Check::NotExercised {
            why: format!(
                "the delegator was killed after journal entry {k}, when {streamed} bytes had \
                 streamed (allowance {allowance_mib} MiB); the restarted process gets the \
                 payload as one task snapshot, not as a stream"
            ),
        };
    }
    let witnesses: Vec<u64> = last.into_iter().collect();
    let mib = |kib: u64| format!("{:.1} MiB", kib as f64 / 1024.0);
    if streamed == 0 {
        return fail(
            "the large payload streamed to the delegator",
            "the artifact never streamed: the agent sent no chunk or event of it",
            vec![],
        );
    }
    if streamed <= allowance_mib << 20 {
        return fail(
            format!(
                "more than the {allowance_mib} MiB allowance streamed, so that buffering it would show"
            ),
            format!("only {streamed} bytes streamed"),
            witnesses,
        );
    }
    let Some(m) = ev.memory.as_ref() else {
        return fail(
            "a reading of the delegator's process-group memory",
            "none (no /proc on this machine)",
            vec![],
        );
    };
    let Some(base) = m.baseline_kib else {
        return fail(
            "the delegator's process-group memory at init_ok (the baseline)",
            "none (no init_ok, or no /proc)",
            vec![],
        );
    };
    let bound = base.saturating_add(allowance_mib * 1024);
    if m.peak_kib > bound {
        return fail(
            format!(
                "peak memory of the process group at most {} (baseline {} at init_ok + {allowance_mib} MiB) while {} streamed",
                mib(bound),
                mib(base),
                mib(streamed >> 10)
            ),
            format!(
                "{} over {} processes (highest sampled sum {}, {} samples)",
                mib(m.peak_kib),
                m.processes,
                mib(m.sampled_peak_kib),
                m.samples
            ),
            witnesses,
        );
    }
    Check::Pass
}

#[cfg(test)]
mod tests {
    use super::super::evidence::FileFact;
    use super::super::registry::Check;
    use crate::delegator_process::MemoryReading;
    use crate::rules::test_support::*;
    use crate::scenario::Scenario;
    use a2a_mock_agents::Event;
    use serde_json::json;

    #[test]
    fn art_04_is_not_exercised_when_every_delegation_took_another_allowed_outcome() {
        let allowed = r#"expect = { state = ["COMPLETED", "FAILED"] }"#;
        let mut c = Case::new(&delegation(allowed));
        let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t1", "c1", "m1", false);
        c.j.resp("a", r, 200, None, json!({"result": {"task": {"id": "t1"}}}));
        c.j.sent("a", "t1", "artifact-1", 10, "abc");
        c.done("d1", "FAILED", json!([]));
        assert!(matches!(
            c.check(checker("DLG-ART-04")),
            Check::NotExercised { .. }
        ));
        // An outcome the case does not allow is no other path: nothing to excuse.
        let mut c2 = Case::new(&delegation(r#"expect = { state = ["COMPLETED"] }"#));
        c2.j.send("a", "m1", "do the thing", json!({}));
        c2.done("d1", "FAILED", json!([]));
        assert_eq!(c2.check(checker("DLG-ART-04")), Check::NotApplicable);
    }

    #[test]
    fn art_04_catches_wrong_bytes_or_hash_of_a_single_chunk() {
        let mut c = good("");
        assert_eq!(c.check(checker("DLG-ART-04")), Check::Pass);
        c.done(
            "d1",
            "COMPLETED",
            json!([{"artifact_id": "artifact-1", "bytes": 5, "sha256": "abc"}]),
        );
        assert!(fails(c.check(checker("DLG-ART-04"))), "bytes");
        c.done(
            "d1",
            "COMPLETED",
            json!([{"artifact_id": "artifact-1", "bytes": 10, "sha256": "zzz"}]),
        );
        assert!(fails(c.check(checker("DLG-ART-04"))), "sha");
        c.done("d1", "COMPLETED", json!([]));
        assert!(fails(c.check(checker("DLG-ART-04"))), "missing");
    }

    /// A three-chunk appended artifact: the agent's truth is 30 bytes, sha "whole".
    fn appended() -> Case {
        let mut c = good("");
        c.j.entries.clear();
        let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t1", "c1", "m1", false);
        c.j.resp("a", r, 200, None, json!({}));
        c.j.chunk("a", "t1", "artifact-1", false, 10);
        c.j.chunk("a", "t1", "artifact-1", true, 10);
        c.j.chunk("a", "t1", "artifact-1", true, 10);
        c.j.sent("a", "t1", "artifact-1", 30, "whole");
        c.j.state("a", "t1", "TASK_STATE_COMPLETED");
        let (_, g) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
        c.j.resp("a", g, 200, None, json!({}));
        c
    }

    #[test]
    fn an_append_bug_breaks_art_01_and_02_not_art_04() {
        let mut c = appended();
        // Only the last chunk committed, and reported honestly as what the file holds.
        c.done(
            "d1",
            "COMPLETED",
            json!([{"artifact_id": "artifact-1", "bytes": 10, "sha256": "last"}]),
        );
        c.files.insert(
            ("d1".into(), "artifact-1".into()),
            FileFact::Read {
                bytes: 10,
                sha256: "last".into(),
            },
        );
        assert!(fails(c.check(checker("DLG-ART-01"))));
        assert!(fails(c.check(checker("DLG-ART-02"))));
        assert_eq!(c.check(checker("DLG-ART-04")), Check::Pass);
        assert_eq!(
            c.check(checker("DLG-REC-06")),
            Check::NotApplicable,
            "no crash, no recovery to judge"
        );
    }

    #[test]
    fn a_misreported_hash_breaks_art_04_only() {
        let mut c = appended();
        c.done(
            "d1",
            "COMPLETED",
            json!([{"artifact_id": "artifact-1", "bytes": 30, "sha256": "misreported"}]),
        );
        c.files.insert(
            ("d1".into(), "artifact-1".into()),
            FileFact::Read {
                bytes: 30,
                sha256: "whole".into(),
            },
        );
        assert_eq!(c.check(checker("DLG-ART-01")), Check::Pass);
        assert_eq!(c.check(checker("DLG-ART-02")), Check::Pass);
        assert!(fails(c.check(checker("DLG-ART-04"))));
        c.files.insert(
            ("d1".into(), "artifact-1".into()),
            FileFact::Unreadable("No such file".into()),
        );
        assert!(
            fails(c.check(checker("DLG-ART-04"))),
            "no file behind the report"
        );
    }

    #[test]
    fn rec_06_judges_artifacts_completed_after_the_crash() {
        let mut c = appended();
        c.crash = Some(2);
        c.done(
            "d1",
            "COMPLETED",
            json!([{"artifact_id": "artifact-1", "bytes": 30, "sha256": "whole"}]),
        );
        assert_eq!(c.check(checker("DLG-REC-06")), Check::Pass);
        c.done(
            "d1",
            "COMPLETED",
            json!([{"artifact_id": "artifact-1", "bytes": 20, "sha256": "partial"}]),
        );
        assert!(fails(c.check(checker("DLG-REC-06"))));
        c.crash = Some(99);
        assert_eq!(c.check(checker("DLG-REC-06")), Check::NotApplicable);
    }

    #[test]
    fn art_03_url_never_fetched() {
        let text = "id = \"t\"\ntitle = \"t\"\nrules = [\"DLG-ART-03\"]\n[network]\n[[network.agent]]\nname = \"a\"\n[[network.agent.skill]]\nid = \"s\"\n[[network.agent.rule]]\nsteps = [{ do = \"artifact_url\", bytes = 10 }]\n[[delegate]]\nid = \"d1\"\ncapability = \"s\"\ntext = \"do the thing\"\n";
        let mut c = good("");
        c.s = Scenario::from_toml(std::path::Path::new("t.toml"), text).unwrap();
        c.j.push(
            "a",
            Event::ArtifactChunk {
                task_id: "t1".into(),
                artifact_id: "artifact-1".into(),
                append: false,
                last_chunk: true,
                bytes: 0,
            },
        );
        assert!(fails(c.check(checker("DLG-ART-03"))));
        c.j.push(
            "a",
            Event::BlobServed {
                key: "k".into(),
                bytes: 10,
                sha256: "abc".into(),
            },
        );
        assert_eq!(c.check(checker("DLG-ART-03")), Check::Pass);
    }

    #[test]
    fn art_03_forbidden_url_parts_are_not_to_be_fetched() {
        // Only a url part to the agent's own origin is to be fetched; one to the trap is
        // DLG-URL-01's, and not fetching it breaks nothing here.
        let text = "id = \"t\"\ntitle = \"t\"\nrules = [\"DLG-ART-03\"]\n[network]\n[[network.agent]]\nname = \"a\"\n[[network.agent.skill]]\nid = \"s\"\n[[network.agent.rule]]\nsteps = [{ do = \"artifact_url\", bytes = 10, target = \"trap\" }]\n[[delegate]]\nid = \"d1\"\ncapability = \"s\"\ntext = \"do the thing\"\n";
        let mut c = good("");
        c.s = Scenario::from_toml(std::path::Path::new("t.toml"), text).unwrap();
        c.j.chunk("a", "t1", "artifact-1", false, 0);
        assert_eq!(c.check(checker("DLG-ART-03")), Check::NotApplicable);
    }

    #[test]
    fn art_08_a_fan_out_parent_records_its_childrens_artifacts() {
        let mut c = good("children = [{ id = \"d1-1\", capability = \"x\", text = \"child A\" }]");
        let (_, r) = c.j.send("attacker", "m2", "child A", json!({}));
        c.j.created("attacker", "t2", "c2", "m2", false);
        c.j.resp("attacker", r, 200, None, json!({}));
        c.j.sent("attacker", "t2", "artifact-2", 5, "def");
        let rec = |skill: &str, task: &str| {
            Some(
                json!({"records": [{"id": "d1", "artifacts": [{"artifact_id": "artifact-2",
                "agent_url": "attacker", "skill": skill, "task_id": task}]}]}),
            )
        };
        c.snapshot = rec("x", "t2");
        assert_eq!(c.check(checker("DLG-ART-08")), Check::Pass);
        c.snapshot = rec("s", "t2");
        assert!(fails(c.check(checker("DLG-ART-08"))), "the parent's skill");
        c.snapshot = rec("x", "t9");
        assert!(fails(c.check(checker("DLG-ART-08"))), "a made-up task");
    }

    #[test]
    fn art_08_provenance_must_agree_with_the_journal() {
        let mut c = good("");
        assert_eq!(c.check(checker("DLG-ART-08")), Check::Pass);
        let rec = |agent: &str, skill: &str, task: &str| {
            Some(
                json!({"records": [{"id": "d1", "artifacts": [{"artifact_id": "artifact-1",
                "agent_url": agent, "skill": skill, "task_id": task}]}]}),
            )
        };
        c.snapshot = rec("a", "s", "t1");
        assert_eq!(c.check(checker("DLG-ART-08")), Check::Pass);
        c.snapshot = rec("a", "s", "t9");
        assert!(fails(c.check(checker("DLG-ART-08"))), "a made-up task");
        c.snapshot = rec("attacker", "s", "t1");
        assert!(fails(c.check(checker("DLG-ART-08"))), "the wrong agent");
        c.snapshot = rec("a", "other-skill", "t1");
        assert!(fails(c.check(checker("DLG-ART-08"))), "the wrong skill");
    }

    #[test]
    fn art_08_no_provenance() {
        let mut c = good("");
        assert_eq!(c.check(checker("DLG-ART-08")), Check::Pass);
        c.snapshot =
            Some(json!({"records": [{"id": "d1", "artifacts": [{"artifact_id": "artifact-1"}]}]}));
        assert!(fails(c.check(checker("DLG-ART-08"))));
    }

    fn chunks(c: &mut Case, n: u64, bytes: u64) {
        for _ in 0..n {
            c.j.push(
                "a",
                Event::ArtifactChunk {
                    task_id: "t1".into(),
                    artifact_id: "artifact-1".into(),
                    append: true,
                    last_chunk: false,
                    bytes,
                },
            );
        }
    }

    fn reading(baseline_mib: u64, peak_mib: u64) -> MemoryReading {
        MemoryReading {
            baseline_kib: Some(baseline_mib * 1024),
            peak_kib: peak_mib * 1024,
            sampled_peak_kib: peak_mib * 1024,
            processes: 2,
            samples: 10,
        }
    }

    #[test]
    fn art_10_bound_is_the_baseline_plus_the_allowance_over_the_whole_group() {
        let mut c = good("");
        c.s.memory_bound_mib = Some(32);
        chunks(&mut c, 96, 1 << 20);
        c.memory = Some(reading(10, 40));
        assert_eq!(c.check(checker("DLG-ART-10")), Check::Pass);
        // A group that held the artifact (baseline 10 + 96 MiB) fails, whatever the leader's share.
        c.memory = Some(reading(10, 106));
        assert!(fails(c.check(checker("DLG-ART-10"))));
        // The bound moves with the baseline: 43 MiB is over 10 + 32.
        c.memory = Some(reading(10, 43));
        assert!(fails(c.check(checker("DLG-ART-10"))));
        c.memory = Some(reading(12, 43));
        assert_eq!(c.check(checker("DLG-ART-10")), Check::Pass);
        c.memory = Some(MemoryReading {
            baseline_kib: None,
            ..reading(10, 20)
        });
        assert!(fails(c.check(checker("DLG-ART-10"))), "no baseline");
        c.memory = None;
        assert!(fails(c.check(checker("DLG-ART-10"))), "no reading");
    }

    #[test]
    fn art_10_needs_the_payload_to_have_streamed() {
        let mut c = good("");
        c.j = J::new();
        c.s.memory_bound_mib = Some(32);
        c.memory = Some(reading(10, 11));
        let Check::Fail { observed, .. } = c.check(checker("DLG-ART-10")) else {
            panic!("a delegator that never fetched the artifact has no PASS");
        };
        assert!(observed.contains("never streamed"), "{observed}");
        // Less than the allowance proves nothing about buffering.
        chunks(&mut c, 16, 1 << 20);
        assert!(fails(c.check(checker("DLG-ART-10"))));
        // A huge SSE event counts as streamed.
        c.j.push(
            "a",
            Event::SseEvent {
                req: 1,
                index: 1,
                data: json!("<huge event of 33554432 bytes>"),
            },
        );
        assert_eq!(c.check(checker("DLG-ART-10")), Check::Pass);
    }

    #[test]
    fn art_10_after_a_crash_judges_what_streamed_before_the_kill() {
        let mut c = good("");
        c.j = J::new();
        c.s.memory_bound_mib = Some(32);
        chunks(&mut c, 8, 1 << 20);
        let kill = c.j.entries.last().map(|e| e.seq).unwrap();
        chunks(&mut c, 88, 1 << 20);
        c.crash = Some(kill);
        // Killed after 8 MiB: the rest went to nobody; the restarted process got a snapshot.
        c.memory = Some(reading(10, 106));
        assert!(
            matches!(c.check(checker("DLG-ART-10")), Check::NotExercised { .. }),
            "{:?}",
            c.check(checker("DLG-ART-10"))
        );
        // Killed after more than the allowance streamed: the killed process is judged.
        c.crash = Some(c.j.entries.last().map(|e| e.seq).unwrap());
        assert!(fails(c.check(checker("DLG-ART-10"))), "it buffered");
        c.memory = Some(reading(10, 40));
        assert_eq!(c.check(checker("DLG-ART-10")), Check::Pass);
    }

    #[test]
    fn extra_reported_artifact_fails() {
        let mut c = good("");
        c.done("d1", "COMPLETED", json!([{"artifact_id": "artifact-1", "bytes": 10, "sha256": "abc"}, {"artifact_id": "artifact-9", "bytes": 1, "sha256": "x"}]));
        assert!(
            fails(c.check(checker("DLG-OBS-03"))),
            "an artifact no task delivered"
        );
        assert_eq!(
            c.check(checker("DLG-ART-04")),
            Check::Pass,
            "blamed on DLG-OBS-03"
        );
    }
}
