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

pub(super) fn memory_bounded_while_streaming(ev: &Evidence) -> Check {
    let Some(bound) = ev.scenario.memory_bound_mib else {
        return Check::NotApplicable;
    };
    let streamed: u64 = ev
        .journal
        .iter()
        .map(|e| match &e.event {
            Event::ArtifactChunk { bytes, .. } => *bytes,
            _ => 0,
        })
        .sum();
    let Some(peak) = ev.peak_rss_kib else {
        return fail(
            "a peak memory reading of the delegator",
            "none (no /proc on this machine)",
            vec![],
        );
    };
    if peak > bound * 1024 {
        return fail(
            format!(
                "peak memory at most {bound} MiB while {} MiB streamed",
                streamed >> 20
            ),
            format!("{} MiB", peak / 1024),
            vec![],
        );
    }
    Check::Pass
}

#[cfg(test)]
mod tests {
    use super::super::registry::Check;
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
    fn art_08_no_provenance() {
        let mut c = good("");
        assert_eq!(c.check(checker("DLG-ART-08")), Check::Pass);
        c.snapshot =
            Some(json!({"records": [{"id": "d1", "artifacts": [{"artifact_id": "artifact-1"}]}]}));
        assert!(fails(c.check(checker("DLG-ART-08"))));
    }

    #[test]
    fn art_10_memory_grows_with_the_artifact() {
        let mut c = good("");
        c.s.memory_bound_mib = Some(64);
        assert!(fails(c.check(checker("DLG-ART-10"))), "no reading");
        c.rss = Some(30 * 1024);
        assert_eq!(c.check(checker("DLG-ART-10")), Check::Pass);
        c.rss = Some(300 * 1024);
        assert!(fails(c.check(checker("DLG-ART-10"))));
    }

    #[test]
    fn extra_reported_artifact_fails() {
        let mut c = good("");
        c.done("d1", "COMPLETED", json!([{"artifact_id": "artifact-1", "bytes": 10, "sha256": "abc"}, {"artifact_id": "artifact-9", "bytes": 1, "sha256": "x"}]));
        assert!(fails(c.check(checker("DLG-ART-04"))));
    }
}
