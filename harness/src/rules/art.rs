//! Artifacts (DLG-ART-*): byte-exact results, url parts, provenance, bounded memory.

use super::evidence::*;
use super::registry::{Check, fail};
use super::state::outcome_expected;
use a2a_driver_contract::Outcome;
use a2a_mock_agents::Event;
use std::collections::BTreeMap;

pub(super) fn artifacts_exact(ev: &Evidence) -> Check {
    let mut any = false;
    for d in &ev.scenario.delegations {
        let Some(done) = done_of(ev, &d.id) else {
            continue;
        };
        if done.state != Outcome::Completed {
            continue;
        }
        let reported = &done.artifacts;
        let tasks = tasks_of(ev, &d.id);
        let Some((tid, _)) = tasks.last() else {
            continue;
        };
        let mut truth: BTreeMap<&str, (u64, &str, u64)> = BTreeMap::new();
        for e in ev.journal {
            if let Event::ArtifactSent {
                task_id,
                artifact_id,
                bytes,
                sha256,
            } = &e.event
                && task_id == tid
            {
                truth.insert(artifact_id, (*bytes, sha256, e.seq));
            }
        }
        for (aid, (bytes, sha, seq)) in &truth {
            any = true;
            let Some(rep) = reported.iter().find(|r| r.artifact_id == *aid) else {
                return fail(
                    format!("artifact {aid} reported ({bytes} bytes)"),
                    "missing from the outcome",
                    vec![*seq],
                );
            };
            let (rb, rs) = (Some(rep.bytes), Some(rep.sha256.as_str()));
            if rb != Some(*bytes) || rs != Some(*sha) {
                return fail(
                    format!("{aid}: {bytes} bytes, sha256 {sha}"),
                    format!("{rb:?} bytes, sha256 {rs:?}"),
                    vec![*seq],
                );
            }
        }
        // Nothing reported that the agent did not deliver in full (a late or orphan chunk
        // committed as an artifact is garbage).
        for r in reported {
            let aid = r.artifact_id.as_str();
            if !truth.contains_key(aid) {
                return fail(
                    format!(
                        "only artifacts the agent delivered in full ({:?})",
                        truth.keys().collect::<Vec<_>>()
                    ),
                    format!("{aid:?} reported as well"),
                    vec![],
                );
            }
        }
    }
    if any {
        Check::Pass
    } else {
        Check::NotApplicable
    }
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
                r.steps
                    .iter()
                    .any(|s| matches!(s, a2a_mock_agents::ScriptStep::ArtifactUrl { .. }))
            })
        });
    if !urls {
        return Check::NotApplicable;
    }
    if !blobs {
        return fail("the url part fetched", "no GET of the blob", vec![]);
    }
    match (artifacts_exact(ev), outcome_expected(ev)) {
        (f @ Check::Fail { .. }, _) | (_, f @ Check::Fail { .. }) => f,
        _ => Check::Pass,
    }
}

pub(super) fn artifact_provenance_recorded(ev: &Evidence) -> Check {
    let recs = snapshot_records(ev);
    let mut any = false;
    for r in recs {
        for a in r.artifacts() {
            any = true;
            let present = |k: &str| a.get(k).is_some_and(|v| !v.is_null());
            let has = (present("agent") || present("agent_url"))
                && present("skill")
                && present("task_id");
            if !has {
                return fail(
                    "artifact provenance (agent, skill, task)",
                    format!("{a}"),
                    vec![],
                );
            }
        }
    }
    if any {
        Check::Pass
    } else {
        Check::NotApplicable
    }
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
/// streaming it is the case's purpose.
pub(super) fn memory_bounded_while_streaming(ev: &Evidence) -> Check {
    let Some(allowance_mib) = ev.scenario.memory_bound_mib else {
        return Check::NotApplicable;
    };
    let (streamed, last) = streamed_bytes(ev.journal);
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
    use super::super::registry::Check;
    use crate::delegator_process::MemoryReading;
    use crate::rules::test_support::*;
    use crate::scenario::Scenario;
    use a2a_mock_agents::Event;
    use serde_json::json;

    #[test]
    fn artifact_checks_catch_wrong_bytes_or_hash() {
        for rule in ["DLG-ART-01", "DLG-ART-02", "DLG-ART-04", "DLG-REC-06"] {
            let mut c = good("");
            assert_eq!(c.check(checker(rule)), Check::Pass, "{rule}");
            c.done(
                "d1",
                "COMPLETED",
                json!([{"artifact_id": "artifact-1", "bytes": 5, "sha256": "abc"}]),
            );
            assert!(fails(c.check(checker(rule))), "{rule} bytes");
            c.done(
                "d1",
                "COMPLETED",
                json!([{"artifact_id": "artifact-1", "bytes": 10, "sha256": "zzz"}]),
            );
            assert!(fails(c.check(checker(rule))), "{rule} sha");
            c.done("d1", "COMPLETED", json!([]));
            assert!(fails(c.check(checker(rule))), "{rule} missing");
        }
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
    fn rejections_must_not_complete() {
        for rule in [
            "DLG-ART-05",
            "DLG-ART-06",
            "DLG-ART-07",
            "DLG-ART-09",
            "DLG-STATE-04",
        ] {
            let mut c = good("expect = { state = [\"FAILED\"] }");
            assert!(
                fails(c.check(checker(rule))),
                "{rule}: COMPLETED where FAILED was required"
            );
            c.done("d1", "FAILED", json!([]));
            assert_eq!(c.check(checker(rule)), Check::Pass, "{rule}");
        }
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
    fn extra_reported_artifact_fails() {
        let mut c = good("");
        c.done("d1", "COMPLETED", json!([{"artifact_id": "artifact-1", "bytes": 10, "sha256": "abc"}, {"artifact_id": "artifact-9", "bytes": 1, "sha256": "x"}]));
        assert!(fails(c.check(checker("DLG-ART-04"))));
    }
}
