//! DLG-URL-01 (A2A §14.1.1): url parts are validated before anything is fetched.
//!
//! The harness gives the delegator the origins it may fetch url parts from
//! (`init.fetch_origins`: the mock agents' own origins). A mock agent can send url parts that must
//! not be fetched (journal `forbidden_url`): a scheme other than http(s) (`file:`, `ftp:` to the
//! trap, `data:`), the trap server on `127.0.0.9` (outside the allowed origins), an allowed url
//! that redirects to the trap, and an allowed origin with userinfo. The trap journals every
//! connection it accepts (`trap_connection`).
//!
//! The rule fails on any connection the trap saw, on any fetch of a url that carried userinfo
//! (its path requested at the agent), and on a delegation that accepted such a part's artifact
//! as a COMPLETED result. A correct delegator may fail the delegation, or complete it without
//! that artifact (rejected, or kept only as an unfetched reference outside `done.artifacts`);
//! both pass. It is judged only where the situation arose: the part reached the delegator
//! (news of its task delivered after it was sent) and the delegation reached an outcome.

use super::evidence::*;
use super::registry::{Check, fail};
use a2a_driver_contract::{Done, FromDelegator, Outcome};
use a2a_mock_agents::Event;

/// One forbidden url part the journal shows an agent sent.
struct Forbidden<'a> {
    seq: u64,
    agent: &'a str,
    task: &'a str,
    artifact: &'a str,
    url: &'a str,
    why: &'a str,
}

fn forbidden_parts<'a>(ev: &'a Evidence) -> Vec<Forbidden<'a>> {
    ev.journal
        .iter()
        .filter_map(|e| match &e.event {
            Event::ForbiddenUrl {
                task_id,
                artifact_id,
                url,
                why,
            } => Some(Forbidden {
                seq: e.seq,
                agent: e.agent.as_str(),
                task: task_id,
                artifact: artifact_id,
                url,
                why,
            }),
            _ => None,
        })
        .collect()
}

/// The path (and query) of a url, as a request for it would carry it.
fn path_of(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let i = rest.find('/')?;
    Some(&rest[i..])
}

/// The `done` that ended the work on `task`, with its delegation id: the one naming the task,
/// else the one of the delegation whose work created it.
fn done_for<'a>(ev: &'a Evidence, task: &str) -> Option<(&'a str, &'a Done)> {
    let named = ev.outcomes.iter().find_map(|(id, o)| match o {
        FromDelegator::Done(d) if d.task_id.as_deref() == Some(task) => Some((id.as_str(), d)),
        _ => None,
    });
    named.or_else(|| {
        ev.scenario.delegations.iter().find_map(|d| {
            tasks_of(ev, &d.id)
                .iter()
                .any(|(t, _)| t == task)
                .then(|| done_of(ev, &d.id).map(|done| (d.id.as_str(), done)))
                .flatten()
        })
    })
}

/// DLG-URL-01.
pub(super) fn url_parts_validated(ev: &Evidence) -> Check {
    let parts = forbidden_parts(ev);
    let trapped = ev.journal.iter().find_map(|e| match &e.event {
        Event::TrapConnection {
            peer, first_line, ..
        } => Some((e.seq, peer, first_line)),
        _ => None,
    });
    if parts.is_empty() && trapped.is_none() {
        return Check::NotApplicable;
    }
    if let Some((seq, peer, line)) = trapped {
        let cause = parts
            .iter()
            .map(|p| format!("{} ({})", p.url, p.why))
            .collect::<Vec<_>>();
        return fail(
            "no connection outside the allowed fetch origins: the trap on 127.0.0.9 is never reached",
            format!(
                "the trap accepted a connection from {peer}{}; url parts sent: {}",
                line.as_deref()
                    .map(|l| format!(" ({l})"))
                    .unwrap_or_default(),
                super::words::list(&cause)
            ),
            vec![seq],
        );
    }
    // A url with userinfo names an allowed origin: its fetch shows as a request for its path.
    for p in parts.iter().filter(|p| p.why.contains("userinfo")) {
        let Some(path) = path_of(p.url) else { continue };
        let fetched = ev.journal.iter().find(|e| {
            e.agent == p.agent
                && matches!(&e.event, Event::Request { path: q, http_method, .. }
                    if q == path && http_method == "GET")
        });
        if let Some(e) = fetched {
            return fail(
                format!("the url part {} is not fetched ({})", p.url, p.why),
                format!("GET {path} at agent {}", p.agent),
                vec![p.seq, e.seq],
            );
        }
    }
    let mut judged = false;
    for p in &parts {
        let Some((id, done)) = done_for(ev, p.task) else {
            continue;
        };
        // The part reached the delegator before its outcome: news of the task after it.
        let Some(seen) = delivered_between(
            ev.journal,
            p.task,
            p.seq.saturating_sub(1),
            seen_until(ev, id),
        ) else {
            continue;
        };
        judged = true;
        if done.state == Outcome::Completed
            && let Some(a) = done.artifacts.iter().find(|a| a.artifact_id == p.artifact)
        {
            return fail(
                format!(
                    "{id}: the artifact of the url part {} ({}) is not accepted as a result",
                    p.url, p.why
                ),
                format!(
                    "COMPLETED with artifact {} ({} bytes) reported",
                    a.artifact_id, a.bytes
                ),
                vec![p.seq, seen],
            );
        }
    }
    if judged {
        Check::Pass
    } else {
        Check::NotExercised {
            why: "no delegation that was sent a forbidden url part reached an outcome after the part reached it".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_support::*;
    use serde_json::json;

    const TRAP_URL: &str = "http://127.0.0.9:4000/trap/t1-1";

    /// d1's task t1 on agent `a` was sent a forbidden url part (artifact-1), which reached the
    /// delegator in a GetTask answer after the task completed.
    fn sent(url: &str, why: &str) -> Case {
        let mut c = Case::new(&delegation(""));
        let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t1", "c1", "m1", false);
        c.j.resp("a", r, 200, None, json!({"result": {"task": {"id": "t1"}}}));
        c.j.push(
            "a",
            Event::ForbiddenUrl {
                task_id: "t1".into(),
                artifact_id: "artifact-1".into(),
                url: url.into(),
                why: why.into(),
            },
        );
        c.j.chunk("a", "t1", "artifact-1", false, 0);
        c.j.state("a", "t1", "TASK_STATE_COMPLETED");
        let (_, g) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
        c.j.resp("a", g, 200, None, json!({"result": {"id": "t1"}}));
        c
    }

    fn trap(c: &mut Case) {
        c.j.push(
            "trap",
            Event::TrapConnection {
                peer: "127.0.0.1:50000".into(),
                local: "127.0.0.9:4000".into(),
                first_line: Some("GET /trap/t1-1 HTTP/1.1".into()),
            },
        );
    }

    fn url01(c: &Case) -> Check {
        c.check(checker("DLG-URL-01"))
    }

    #[test]
    fn failing_the_delegation_without_fetching_passes() {
        let mut c = sent(TRAP_URL, "origin outside the allowed fetch origins");
        c.done("d1", "FAILED", json!([]));
        assert_eq!(url01(&c), Check::Pass);
    }

    #[test]
    fn completing_without_the_artifact_passes() {
        // Another correct path: the part is rejected, the delegation completes without it.
        let mut c = sent("file:///etc/passwd", "scheme file");
        c.done("d1", "COMPLETED", json!([]));
        assert_eq!(url01(&c), Check::Pass);
    }

    #[test]
    fn a_trap_connection_fails_whatever_the_outcome() {
        let mut c = sent(TRAP_URL, "origin outside the allowed fetch origins");
        trap(&mut c);
        c.done("d1", "FAILED", json!([]));
        assert!(fails(url01(&c)), "{:?}", url01(&c));
        // Even with no outcome at all.
        let mut c = sent(TRAP_URL, "origin outside the allowed fetch origins");
        trap(&mut c);
        assert!(fails(url01(&c)));
    }

    #[test]
    fn accepting_the_forbidden_artifact_fails() {
        let mut c = sent("data:application/octet-stream;base64,eA==", "scheme data");
        c.done(
            "d1",
            "COMPLETED",
            json!([{"artifact_id": "artifact-1", "bytes": 1, "sha256": "x"}]),
        );
        assert!(fails(url01(&c)));
    }

    #[test]
    fn fetching_a_url_with_userinfo_fails() {
        let url = "http://a2a:trap@127.0.0.1:4100/blobs/t1-1";
        let mut c = sent(url, "userinfo in the url");
        c.done("d1", "FAILED", json!([]));
        assert_eq!(url01(&c), Check::Pass);
        c.j.http(
            "a",
            a2a_protocol::Binding::JsonRpc,
            "GET",
            "/blobs/t1-1",
            None,
            json!(null),
            &[],
            None,
        );
        assert!(fails(url01(&c)), "{:?}", url01(&c));
    }

    #[test]
    fn judged_only_where_the_part_reached_an_outcome() {
        // No forbidden part, no trap: nothing to judge.
        assert_eq!(url01(&good("")), Check::NotApplicable);
        // Sent, but the delegation never reported an outcome.
        let c = sent(TRAP_URL, "origin outside the allowed fetch origins");
        assert!(matches!(url01(&c), Check::NotExercised { .. }));
        // An outcome reported before the part reached the delegator does not count.
        let mut c = sent(TRAP_URL, "origin outside the allowed fetch origins");
        c.done("d1", "FAILED", json!([]));
        c.done_at.insert("d1".into(), 3);
        assert!(matches!(url01(&c), Check::NotExercised { .. }));
    }

    #[test]
    fn paths_of_urls() {
        assert_eq!(path_of("http://u:p@h:1/blobs/k?x"), Some("/blobs/k?x"));
        assert_eq!(path_of("file:///etc/passwd"), Some("/etc/passwd"));
        assert_eq!(path_of("data:x"), None);
    }
}
