//! Crash injection against the reference delegator: every trigger kills at its named point, the
//! recorded seqs name the entry that fired it and the last entry before the kill, and the same
//! seed gives the same kill point.

use crate::common;

use a2a_harness_core::catalog::{CaseGlob, load_catalog, select};
use a2a_harness_core::runner::{CaseResult, CrashRecord, RunSettings, Verdict, run_case};
use a2a_harness_core::scenario::CrashTrigger;
use a2a_mock_agents::{Entry, Event};

async fn run(case: &str, seed: u64) -> CaseResult {
    let cat = load_catalog(&common::root().join("scenarios")).expect("catalog loads");
    let s = select(&cat, &CaseGlob::new(case).unwrap());
    assert_eq!(s.len(), 1, "{case}");
    let work = tempfile::tempdir().unwrap();
    let cfg = RunSettings {
        delegator: format!("{} drive", common::delegator().display()),
        seed,
        work_dir: work.path().to_path_buf(),
        binding: None,
        tls: false,
    };
    run_case(&s[0], &cfg).await
}

fn is_send(e: &Entry) -> bool {
    matches!(&e.event, Event::Request { method: Some(m), .. } if m.contains("Message"))
}

/// The firing entry is the trigger's event, and nothing that ends the named wait lies between it
/// and the kill.
fn check_point(r: &CaseResult, c: &CrashRecord) {
    let at = |seq: u64| r.journal.iter().find(|e| e.seq == seq);
    let fired = at(c.fired_seq).unwrap_or_else(|| panic!("{}: no entry {}", r.id, c.fired_seq));
    assert!(c.last_seq_before_kill >= c.fired_seq, "{c:?}");
    let between = || {
        r.journal
            .iter()
            .filter(|e| e.seq > c.fired_seq && e.seq <= c.last_seq_before_kill)
    };
    match c.trigger {
        CrashTrigger::BeforeFirstSend => {
            assert!(
                matches!(&fired.event, Event::ConnectionDropped { phase, .. } if phase == "before_processing"),
                "{fired:?}"
            );
            // The dropped send was the only one, and nothing was created before the kill.
            let sends = r
                .journal
                .iter()
                .filter(|e| e.seq <= c.last_seq_before_kill && is_send(e))
                .count();
            assert_eq!(sends, 1);
            assert!(
                !r.journal.iter().any(|e| e.seq <= c.last_seq_before_kill
                    && matches!(e.event, Event::TaskCreated { .. }))
            );
        }
        CrashTrigger::CancelRequest => assert!(
            matches!(&fired.event, Event::Request { method: Some(m), .. } if m.contains("CancelTask") || m == "tasks/cancel"),
            "{fired:?}"
        ),
        CrashTrigger::FinalState => assert!(
            matches!(&fired.event, Event::TaskState { state, .. } if state == "TASK_STATE_COMPLETED"),
            "{fired:?}"
        ),
        CrashTrigger::AuthRound => {
            assert!(
                matches!(&fired.event, Event::TaskState { state, .. } if state == "TASK_STATE_AUTH_REQUIRED"),
                "{fired:?}"
            );
            assert!(!between().any(is_send), "a credential before the kill");
        }
        CrashTrigger::FirstRequest => assert!(is_send(fired), "{fired:?}"),
        CrashTrigger::IndefiniteSend => assert!(
            matches!(&fired.event, Event::ConnectionDropped { phase, .. } if phase == "after_processing"),
            "{fired:?}"
        ),
        CrashTrigger::AfterChunks => {
            assert!(
                matches!(fired.event, Event::ArtifactChunk { .. }),
                "{fired:?}"
            );
            let chunks = r
                .journal
                .iter()
                .filter(|e| e.seq <= c.last_seq_before_kill)
                .filter(|e| matches!(e.event, Event::ArtifactChunk { .. }))
                .count();
            assert_eq!(chunks, 3, "killed after exactly K chunks");
        }
        CrashTrigger::RetryBackoff => {
            assert!(
                matches!(fired.event, Event::Response { status: 503, .. }),
                "{fired:?}"
            );
            assert!(!between().any(is_send), "a resend before the kill");
            // The kill landed when the delegator closed the 503's connection, having read it.
            let last = r
                .journal
                .iter()
                .find(|e| e.seq == c.last_seq_before_kill)
                .expect("the last entry before the kill");
            assert!(
                matches!(last.event, Event::ClientClosed { req } if Some(req) == fired.event.req()),
                "{last:?}"
            );
            // The resend came after the restart, with the same messageId.
            assert!(
                r.journal
                    .iter()
                    .any(|e| e.seq > c.last_seq_before_kill && is_send(e))
            );
        }
        CrashTrigger::AtEvent => assert_eq!(c.last_seq_before_kill, c.fired_seq),
        CrashTrigger::InputRound => {
            assert!(
                matches!(&fired.event, Event::TaskState { state, .. } if state == "TASK_STATE_INPUT_REQUIRED"),
                "{fired:?}"
            );
            assert!(!between().any(is_send), "an answer before the kill");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_trigger_kills_at_its_named_point_and_records_it() {
    let mut triggers = Vec::new();
    for case in [
        "recovery.crash-at-first-request",
        "recovery.crash-after-indefinite-send",
        "recovery.crash-after-chunks",
        "recovery.crash-during-backoff",
        "recovery.crash-during-input-round",
        "recovery.crash-before-first-send",
        "recovery.crash-during-auth-round",
        "recovery.crash-during-cancel",
        "recovery.crash-during-cancel-undelivered",
        "recovery.crash-at-final-state",
    ] {
        let r = run(case, 4).await;
        assert_eq!(r.verdict, Verdict::Pass, "{case}: {:?}", r.notes);
        let c = r
            .crash
            .clone()
            .unwrap_or_else(|| panic!("{case}: no crash record"));
        assert!(c.at_named_point, "{case}: {c:?}");
        check_point(&r, &c);
        let note = format!(
            "crash injected: SIGKILL after journal seq {} ({:?} fired at seq {}",
            c.last_seq_before_kill, c.trigger, c.fired_seq
        );
        assert!(
            r.notes.iter().any(|n| n.starts_with(&note)),
            "{case}: {:?}",
            r.notes
        );
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(
            json["crash"]["fired_seq"], c.fired_seq,
            "in cases/<id>.json"
        );
        assert_eq!(
            json["crash"]["last_seq_before_kill"],
            c.last_seq_before_kill
        );
        triggers.push(c.trigger);
    }
    assert_eq!(triggers.len(), 10);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_same_seed_kills_at_the_same_point() {
    let a = run("recovery.crash-during-backoff", 4).await;
    let b = run("recovery.crash-during-backoff", 4).await;
    let key = |r: &CaseResult| {
        r.crash
            .as_ref()
            .map(|c| (c.fired_seq, c.last_seq_before_kill, c.at_named_point))
    };
    assert!(key(&a).is_some());
    assert_eq!(key(&a), key(&b));
}
