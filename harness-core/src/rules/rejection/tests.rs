//! Tests of DLG-ART-05, -06, -07 and -09: broken delegators fail, correct different paths pass.

use super::super::registry::Check;
use crate::rules::test_support::*;
use serde_json::json;

const RULES: [&str; 4] = ["DLG-ART-05", "DLG-ART-06", "DLG-ART-07", "DLG-ART-09"];

/// The delegation's extra TOML: expects FAILED, a 50-byte bound and a schema.
const EXTRA: &str = "expect = { state = [\"FAILED\"] }\nmax_size_bytes = 50\nschema = { type = \"object\", required = [\"clauses\"] }";

/// Agent `a`'s script makes `rule`'s situation (the size bound needs none: 100 bytes > 50).
fn bad_script(c: &mut Case, rule: &str) {
    let step = match rule {
        "DLG-ART-05" => json!({"do": "artifacts", "content": "raw", "media_type": "image/png"}),
        "DLG-ART-07" => json!({"do": "data_artifact", "data": {"items": []}}),
        "DLG-ART-09" => json!({"do": "append_unknown"}),
        _ => return,
    };
    c.script(
        "a",
        json!({"steps": [step, {"do": "state", "state": "TASK_STATE_COMPLETED"}]}),
    );
}

/// [`streamed`] with 100 bytes, the situation of `rule` scripted.
pub(super) fn bad(rule: &str) -> (Case, u64) {
    let (mut c, chunk) = streamed(EXTRA, 100);
    bad_script(&mut c, rule);
    (c, chunk)
}

#[test]
fn a_failed_done_with_an_empty_journal_is_no_rejection() {
    for rule in RULES {
        let mut c = Case::new(&delegation(EXTRA));
        bad_script(&mut c, rule);
        c.done("d1", "FAILED", json!([]));
        let got = c.check(checker(rule));
        assert_ne!(got, Check::Pass, "{rule}");
    }
}

#[test]
fn only_a_delegation_in_the_situation_is_judged() {
    // A well-behaved agent: no odd type, no schema to break, within the bound, no protocol
    // error. Whatever the delegator reports, these rules have nothing to say about it.
    for rule in RULES {
        let (mut c, _) = streamed("expect = { state = [\"FAILED\", \"COMPLETED\"] }", 100);
        c.done("d1", "FAILED", json!([]));
        assert_eq!(c.check(checker(rule)), Check::NotApplicable, "{rule}");
    }
    // A schema the data satisfies is no violation.
    let (mut c, _) = streamed(EXTRA, 10);
    c.script(
        "a",
        json!({"steps": [{"do": "data_artifact", "data": {"clauses": []}}]}),
    );
    c.done("d1", "FAILED", json!([]));
    assert_eq!(c.check(checker("DLG-ART-07")), Check::NotApplicable);
    // A url part over the bound at another agent says nothing about d1's task at `a`.
    let (mut c, _) = streamed(EXTRA, 10);
    c.script(
        "old",
        json!({"steps": [{"do": "artifact_url", "bytes": 1000}]}),
    );
    c.done(
        "d1",
        "COMPLETED",
        json!([{"artifact_id": "artifact-1", "bytes": 10, "sha256": "bad"}]),
    );
    assert_eq!(c.check(checker("DLG-ART-06")), Check::NotApplicable);
    c.script(
        "a",
        json!({"steps": [{"do": "artifact_url", "bytes": 1000}]}),
    );
    assert!(
        fails(c.check(checker("DLG-ART-06"))),
        "released over the bound"
    );
    // The genuine violation still fails: the bad bytes released.
    for rule in RULES {
        let (mut c, _) = bad(rule);
        c.done(
            "d1",
            "FAILED",
            json!([{"artifact_id": "artifact-1", "bytes": 100, "sha256": "bad"}]),
        );
        assert!(fails(c.check(checker(rule))), "{rule}");
    }
}

#[test]
fn failing_after_the_bad_artifact_arrived_passes() {
    for rule in RULES {
        let (mut c, _) = bad(rule);
        c.done("d1", "FAILED", json!([]));
        assert_eq!(c.check(checker(rule)), Check::Pass, "{rule}");
    }
}

#[test]
fn failing_before_the_bad_artifact_reached_the_delegator_has_no_cause() {
    for rule in RULES {
        let (mut c, chunk) = bad(rule);
        c.done("d1", "FAILED", json!([]));
        // The `done` arrived when the journal stood just after the task was created.
        c.done_at.insert("d1".into(), chunk - 3);
        assert!(fails(c.check(checker(rule))), "{rule}");
    }
}

#[test]
fn completing_without_the_bad_artifact_is_correct_when_reported() {
    for rule in ["DLG-ART-05", "DLG-ART-06", "DLG-ART-07"] {
        let (mut c, _) = bad(rule);
        c.done("d1", "COMPLETED", json!([]));
        assert!(
            fails(c.check(checker(rule))),
            "{rule}: the rejection is not reported"
        );
        if let Some(a2a_driver_contract::FromDelegator::Done(d)) = c.outcomes.get_mut("d1") {
            d.reason = Some("rejected artifact-1: not acceptable".into());
        }
        assert_eq!(c.check(checker(rule)), Check::Pass, "{rule}");
        c.done(
            "d1",
            "COMPLETED",
            json!([{"artifact_id": "artifact-1", "bytes": 100, "sha256": "bad"}]),
        );
        assert!(
            fails(c.check(checker(rule))),
            "{rule}: the bad bytes released"
        );
    }
}

#[test]
fn art_09_recovery_needs_a_fresh_get_task_and_byte_exact_results() {
    let (mut c, _) = bad("DLG-ART-09");
    c.done(
        "d1",
        "COMPLETED",
        json!([{"artifact_id": "artifact-1", "bytes": 100, "sha256": "bad"}]),
    );
    if let Some(a2a_driver_contract::FromDelegator::Done(d)) = c.outcomes.get_mut("d1") {
        d.reason = Some("stream protocol error; recovered from GetTask".into());
    }
    assert!(fails(c.check(checker("DLG-ART-09"))), "no GetTask");
    let (_, g) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
    c.j.resp("a", g, 200, None, json!({}));
    assert_eq!(c.check(checker("DLG-ART-09")), Check::Pass);
    c.done(
        "d1",
        "COMPLETED",
        json!([{"artifact_id": "artifact-1", "bytes": 100, "sha256": "made-up"}]),
    );
    assert!(fails(c.check(checker("DLG-ART-09"))), "not byte-exact");
}

/// A streamed delegation (expects COMPLETED or FAILED) whose agent completes t1 with
/// artifact-1 (64 bytes) and then sends `late` on the stream, after the final status; the
/// script commits that protocol error. Returns the case, the stream's request number and
/// the late event's sequence.
fn late_after_terminal(late: serde_json::Value) -> (Case, u64, u64) {
    let mut c = Case::new(&delegation(
        "expect = { state = [\"COMPLETED\", \"FAILED\"] }",
    ));
    c.script(
        "a",
        json!({"steps": [
            {"do": "artifacts", "count": 1, "chunks": 1, "chunk_bytes": 64},
            {"do": "state", "state": "TASK_STATE_COMPLETED"},
            {"do": "raw_event", "result": {}},
        ]}),
    );
    let (_, r) = c.j.rpc(
        "a",
        "SendStreamingMessage",
        json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "do the thing"}]}}),
        &[],
    );
    c.j.created("a", "t1", "c1", "m1", false);
    let ev = |result: serde_json::Value| json!({"jsonrpc": "2.0", "id": 1, "result": result});
    c.j.sse_data(
        "a",
        r,
        ev(json!({"task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}})),
    );
    c.j.chunk("a", "t1", "artifact-1", false, 64);
    c.j.sse_data(
        "a",
        r,
        ev(json!({"artifactUpdate": {"taskId": "t1", "artifact": {"artifactId": "artifact-1"}}})),
    );
    c.j.sent("a", "t1", "artifact-1", 64, "sha-64");
    c.j.state("a", "t1", "TASK_STATE_COMPLETED");
    c.j.sse_data(
        "a",
        r,
        ev(json!({"statusUpdate": {"taskId": "t1", "status": {"state": "TASK_STATE_COMPLETED"}}})),
    );
    let seq = c.j.sse_data("a", r, ev(late));
    (c, r, seq)
}

/// A late chunk of another task (the catalog's `artifacts.chunk-after-terminal`): the agent's
/// task never holds it.
fn foreign_late_chunk() -> serde_json::Value {
    json!({"artifactUpdate": {"taskId": "late", "artifact": {"artifactId": "artifact-9"}}})
}

#[test]
fn art_09_stopping_at_the_terminal_status_is_no_mistake() {
    // It stopped reading at COMPLETED (or read the late chunk and ignored it) and reports
    // the artifact as it stood then: no fresh GetTask needed, nothing to report.
    let (mut c, _, _) = late_after_terminal(foreign_late_chunk());
    c.done(
        "d1",
        "COMPLETED",
        json!([{"artifact_id": "artifact-1", "bytes": 64, "sha256": "sha-64"}]),
    );
    assert_eq!(c.check(checker("DLG-ART-09")), Check::Pass);
    // Failing visibly is still correct.
    c.done("d1", "FAILED", json!([]));
    assert_eq!(c.check(checker("DLG-ART-09")), Check::Pass);
    // Committing the late chunk's bytes is the garbage.
    c.done(
        "d1",
        "COMPLETED",
        json!([{"artifact_id": "artifact-1", "bytes": 64, "sha256": "sha-64"},
               {"artifact_id": "artifact-9", "bytes": 10, "sha256": "late"}]),
    );
    assert!(fails(c.check(checker("DLG-ART-09"))));
    // So is an artifact that is not the one of the terminal state.
    c.done(
        "d1",
        "COMPLETED",
        json!([{"artifact_id": "artifact-1", "bytes": 74, "sha256": "sha-64-and-late"}]),
    );
    assert!(fails(c.check(checker("DLG-ART-09"))));
}

#[test]
fn art_09_a_late_chunk_the_task_kept_counts_only_through_a_fresh_get_task() {
    // A late chunk of the task itself: the agent's task (GetTask) takes it, and the
    // journal's artifact truth after it includes it.
    let late =
        json!({"artifactUpdate": {"taskId": "t1", "artifact": {"artifactId": "artifact-2"}}});
    let (mut c, _, _) = late_after_terminal(late);
    c.j.chunk("a", "t1", "artifact-2", false, 10);
    c.j.sent("a", "t1", "artifact-2", 10, "sha-late");
    let both = json!([{"artifact_id": "artifact-1", "bytes": 64, "sha256": "sha-64"},
                      {"artifact_id": "artifact-2", "bytes": 10, "sha256": "sha-late"}]);
    // As it stood at the terminal state: correct.
    c.done(
        "d1",
        "COMPLETED",
        json!([{"artifact_id": "artifact-1", "bytes": 64, "sha256": "sha-64"}]),
    );
    assert_eq!(c.check(checker("DLG-ART-09")), Check::Pass);
    // The late chunk committed from the stream, no GetTask showed it: garbage.
    c.done("d1", "COMPLETED", both.clone());
    assert!(fails(c.check(checker("DLG-ART-09"))));
    // A fresh GetTask after it holds it: the agent's own task, byte-exact.
    let (_, g) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
    c.j.resp("a", g, 200, None, json!({}));
    assert_eq!(c.check(checker("DLG-ART-09")), Check::Pass);
}

#[test]
fn art_09_a_fault_before_the_final_status_still_needs_a_fresh_get_task() {
    // The same stream with an append to an unknown artifact before COMPLETED: the
    // delegator read it, so a result comes from a fresh GetTask with the problem reported.
    let (mut c, r, _) = late_after_terminal(foreign_late_chunk());
    let bad = json!({"jsonrpc": "2.0", "id": 1, "result": {"artifactUpdate": {"taskId": "t1", "append": true, "artifact": {"artifactId": "never-started"}}}});
    let pos =
        c.j.entries
            .iter()
            .position(|e| matches!(e.event, a2a_mock_agents::Event::TaskState { .. }))
            .expect("the final state");
    c.j.entries.insert(
        pos,
        a2a_mock_agents::Entry {
            seq: 0,
            at_us: 0,
            agent: "a".into(),
            event: a2a_mock_agents::Event::SseEvent {
                req: r,
                index: 0,
                data: bad,
            },
        },
    );
    for (i, e) in c.j.entries.iter_mut().enumerate() {
        e.seq = i as u64 + 1;
        e.at_us = e.seq * 1000;
    }
    c.done(
        "d1",
        "COMPLETED",
        json!([{"artifact_id": "artifact-1", "bytes": 64, "sha256": "sha-64"}]),
    );
    assert!(fails(c.check(checker("DLG-ART-09"))), "no fresh GetTask");
}

#[test]
fn faulty_events_are_told_from_good_ones() {
    use super::protocol_error::{StreamView, faulty_event};
    let id = json!("r1");
    let ev = |result: serde_json::Value| json!({"jsonrpc": "2.0", "id": "r1", "result": result});
    let snapshot = ev(
        json!({"task": {"id": "t1", "status": {"state": "TASK_STATE_WORKING"},
        "artifacts": [{"artifactId": "a1"}]}}),
    );
    let chunk = |aid: &str, append: bool| {
        ev(json!({"artifactUpdate": {"taskId": "t1", "append": append,
            "artifact": {"artifactId": aid}}}))
    };
    let status = |task: &str, state: &str| {
        ev(json!({"statusUpdate": {"taskId": task, "status": {"state": state}}}))
    };
    // A good stream: snapshot, an append to its artifact, a new one, the final state.
    let mut v = StreamView::default();
    for good in [
        snapshot.clone(),
        chunk("a1", true),
        chunk("a2", false),
        chunk("a2", true),
        json!("<artifact-update event of 8192 generated bytes>"),
        status("t1", "TASK_STATE_COMPLETED"),
    ] {
        assert!(!faulty_event(&good, "t1", Some(&id), &mut v), "{good}");
    }
    assert!(
        faulty_event(&chunk("a3", false), "t1", Some(&id), &mut v),
        "after the end"
    );
    let fresh = || {
        let mut v = StreamView::default();
        faulty_event(&snapshot, "t1", Some(&id), &mut v);
        v
    };
    for bad in [
        json!("{not json"),
        json!("<huge event of 9000000 bytes>"),
        chunk("a9", true),
        status("t2", "TASK_STATE_WORKING"),
        json!({"jsonrpc": "2.0", "id": "r2", "result": {}}),
    ] {
        assert!(faulty_event(&bad, "t1", Some(&id), &mut fresh()), "{bad}");
    }
}

#[test]
fn art_09_after_a_kill_judges_what_the_restarted_process_saw() {
    // Killed once the task existed (entry 2): the faulty stream went to a dead process. The
    // restarted one resends the message and gets the finished task as one snapshot.
    let (mut c, _) = bad("DLG-ART-09");
    c.crash = Some(2);
    let (_, again) = c.j.rpc(
        "a",
        "SendStreamingMessage",
        json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "do the thing"}]}}),
        &[],
    );
    c.j.created("a", "t1", "c1", "m1", true);
    c.j.sse("a", again);
    c.done(
        "d1",
        "COMPLETED",
        json!([{"artifact_id": "artifact-1", "bytes": 100, "sha256": "bad"}]),
    );
    assert_eq!(c.check(checker("DLG-ART-09")), Check::NotApplicable);
    // Its stream went on past the snapshot: a faulty event can have reached it, and then a
    // result needs a fresh GetTask and the problem reported, as without a kill.
    let mut c2 = c;
    let ev = a2a_mock_agents::Event::SseEvent {
        req: again,
        index: 1,
        data: json!("{not json"),
    };
    c2.j.push("a", ev);
    c2.done(
        "d1",
        "COMPLETED",
        json!([{"artifact_id": "artifact-1", "bytes": 100, "sha256": "bad"}]),
    );
    assert!(fails(c2.check(checker("DLG-ART-09"))), "no GetTask");
    let (_, g) = c2.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
    c2.j.resp("a", g, 200, None, json!({}));
    if let Some(a2a_driver_contract::FromDelegator::Done(d)) = c2.outcomes.get_mut("d1") {
        d.reason = Some("stream protocol error; recovered from GetTask".into());
    }
    assert_eq!(c2.check(checker("DLG-ART-09")), Check::Pass);
}

/// A fault entry marking the next event or answer of request `req` as lacking `pointer`.
fn omit(c: &mut Case, req: u64, pointer: &str) {
    c.j.push(
        "a",
        a2a_mock_agents::Event::Fault {
            req,
            kind: format!("omit_fields:{pointer}"),
        },
    );
}

/// A streamed delegation whose agent sends, before the real 100-byte artifact, an artifact
/// update without `artifactId` (`malformed_event`); the task completes.
fn malformed_stream() -> Case {
    let mut c = Case::new(&delegation(
        "expect = { state = [\"COMPLETED\", \"FAILED\"] }",
    ));
    c.script(
        "a",
        json!({"steps": [
            {"do": "state", "state": "TASK_STATE_WORKING"},
            {"do": "malformed_event", "omit": "artifact.artifactId"},
            {"do": "artifacts", "count": 1, "chunks": 1, "chunk_bytes": 100},
            {"do": "state", "state": "TASK_STATE_COMPLETED"},
        ]}),
    );
    let (_, r) = c.j.rpc(
        "a",
        "SendStreamingMessage",
        json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "do the thing"}]}}),
        &[],
    );
    c.j.created("a", "t1", "c1", "m1", false);
    c.j.state("a", "t1", "TASK_STATE_WORKING");
    c.j.sse_data(
        "a",
        r,
        json!({"id": 1, "result": {"statusUpdate": {"taskId": "t1", "status": {"state": "TASK_STATE_WORKING"}}}}),
    );
    omit(&mut c, r, "/result/artifactUpdate/artifact/artifactId");
    c.j.sse_data(
        "a",
        r,
        json!({"id": 1, "result": {"artifactUpdate": {"taskId": "t1", "artifact": {"parts": [{"text": "junk"}]}}}}),
    );
    c.j.chunk("a", "t1", "artifact-1", false, 100);
    c.j.sent("a", "t1", "artifact-1", 100, "good");
    c.j.sse("a", r);
    c.j.state("a", "t1", "TASK_STATE_COMPLETED");
    c.j.sse("a", r);
    c
}

#[test]
fn art_09_an_event_lacking_a_required_field_is_rejected_not_committed() {
    // Ignoring the event (the spec's "reject") and completing from the stream: right.
    let mut c = malformed_stream();
    c.done(
        "d1",
        "COMPLETED",
        json!([{"artifact_id": "artifact-1", "bytes": 100, "sha256": "good"}]),
    );
    assert_eq!(c.check(checker("DLG-ART-09")), Check::Pass);
    // Recovering from a fresh GetTask: right as well.
    let (_, g) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
    c.j.resp("a", g, 200, None, json!({}));
    assert_eq!(c.check(checker("DLG-ART-09")), Check::Pass);
    // Failing visibly with nothing released: right.
    let mut c = malformed_stream();
    c.done("d1", "FAILED", json!([]));
    assert_eq!(c.check(checker("DLG-ART-09")), Check::Pass);
    // Committing the id-less artifact under a made-up id: garbage.
    let mut c = malformed_stream();
    c.done(
        "d1",
        "COMPLETED",
        json!([{"artifact_id": "artifact-1", "bytes": 100, "sha256": "good"},
               {"artifact_id": "unnamed-0", "bytes": 4, "sha256": "junk"}]),
    );
    assert!(fails(c.check(checker("DLG-ART-09"))));
    // Merging its bytes into the real artifact: garbage.
    let mut c = malformed_stream();
    c.done(
        "d1",
        "COMPLETED",
        json!([{"artifact_id": "artifact-1", "bytes": 104, "sha256": "mixed"}]),
    );
    assert!(fails(c.check(checker("DLG-ART-09"))));
}

#[test]
fn art_09_a_malformed_event_on_a_stream_nobody_read_is_not_exercised() {
    // The delegator polled: the event lacking a field went to no stream of its.
    let mut c = Case::new(&delegation("expect = { state = [\"COMPLETED\"] }"));
    c.script(
        "a",
        json!({"steps": [{"do": "malformed_event", "omit": "taskId"},
                         {"do": "state", "state": "TASK_STATE_COMPLETED"}]}),
    );
    let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
    c.j.created("a", "t1", "c1", "m1", false);
    c.j.resp("a", r, 200, None, json!({"result": {"task": {"id": "t1"}}}));
    c.j.state("a", "t1", "TASK_STATE_COMPLETED");
    let (_, g) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
    c.j.resp("a", g, 200, None, json!({}));
    c.done("d1", "COMPLETED", json!([]));
    assert!(matches!(
        c.check(checker("DLG-ART-09")),
        Check::NotExercised { .. }
    ));
}

#[test]
fn art_09_a_get_task_answer_without_status_is_a_faulty_answer() {
    let mut c = Case::new(&delegation(
        "expect = { state = [\"COMPLETED\", \"FAILED\"] }",
    ));
    c.script(
        "a",
        json!({"when": {"method": "GetTask"}, "times": 1,
               "fault": {"kind": "omit_fields", "pointers": ["/result/status"]}}),
    );
    let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
    c.j.created("a", "t1", "c1", "m1", false);
    c.j.resp("a", r, 200, None, json!({"result": {"task": {"id": "t1"}}}));
    c.j.chunk("a", "t1", "artifact-1", false, 10);
    c.j.sent("a", "t1", "artifact-1", 10, "abc");
    c.j.state("a", "t1", "TASK_STATE_COMPLETED");
    let (_, g) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
    omit(&mut c, g, "/result/status");
    c.j.resp("a", g, 200, None, json!({"result": {"id": "t1"}}));
    // Read again, complete and exact.
    let (_, g2) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
    c.j.resp("a", g2, 200, None, json!({"result": {"id": "t1"}}));
    c.done(
        "d1",
        "COMPLETED",
        json!([{"artifact_id": "artifact-1", "bytes": 10, "sha256": "abc"}]),
    );
    assert_eq!(c.check(checker("DLG-ART-09")), Check::Pass);
    // Failing on it visibly: right as well.
    c.done("d1", "FAILED", json!([]));
    assert_eq!(c.check(checker("DLG-ART-09")), Check::Pass);
    // Completing with nothing although the task had an artifact: the answer's gap became
    // the result.
    c.done("d1", "COMPLETED", json!([]));
    assert!(fails(c.check(checker("DLG-ART-09"))));
}

#[test]
fn omitted_events_are_the_next_answer_of_the_same_request() {
    let mut c = Case::new("");
    let (_, r1) = c.j.send("a", "m1", "x", json!({}));
    let (_, r2) = c.j.send("a", "m2", "y", json!({}));
    omit(&mut c, r1, "/result/task/id");
    let other = c.j.resp("a", r2, 200, None, json!({}));
    let marked = c.j.resp("a", r1, 200, None, json!({}));
    let later = c.j.resp("a", r1, 200, None, json!({}));
    let got = super::protocol_error::omitted_events(&c.j.entries);
    assert!(got.contains(&marked));
    assert!(!got.contains(&other) && !got.contains(&later));
}
