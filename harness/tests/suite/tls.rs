//! TLS through the whole loop: a `security.tls-*` case over each binding (JSON-RPC and HTTP+JSON
//! over HTTPS, gRPC over TLS with ALPN h2), and `run --tls` moving a plain case onto TLS, both
//! against the reference delegator. Every listener is the mock network's, on 127.0.0.1.

use crate::common;

use a2a_harness_core::catalog::{CaseGlob, load_catalog, select};
use a2a_harness_core::run::{RunOptions, run};
use a2a_harness_core::runner::Verdict;
use a2a_mock_agents::Event;
use a2a_protocol::Binding;

fn cases(pattern: &str) -> Vec<a2a_harness_core::scenario::Scenario> {
    let cat = load_catalog(&common::root().join("scenarios")).expect("catalog loads");
    select(&cat, &CaseGlob::new(pattern).unwrap())
}

fn tls_outcomes(r: &a2a_harness_core::runner::CaseResult, agent: &str) -> Vec<String> {
    r.journal
        .iter()
        .filter(|e| e.agent == agent)
        .filter_map(|e| match &e.event {
            Event::Tls { outcome, .. } => Some(outcome.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_untrusted_agent_is_refused_and_a_sound_one_used_over_every_binding() {
    let cases = cases("security.tls-unknown-authority");
    assert_eq!(cases.len(), 1);
    let mut options = RunOptions::new(format!("{} drive", common::delegator().display()));
    options.bindings = vec![Binding::JsonRpc, Binding::Rest, Binding::Grpc];
    options.jobs = 3;
    let report = run(&cases, &options).await;
    assert_eq!(report.results.len(), 3);
    for r in &report.results {
        assert_eq!(r.verdict, Verdict::Pass, "{}: {:?}", r.id, r.notes);
        let tls01 = r.rules.iter().find(|v| v.id == "DLG-TLS-01").unwrap();
        assert_eq!(tls01.verdict, Verdict::Pass, "{}", r.id);
        // The handshake the delegator aborted is journaled; nothing reached the agent.
        let forged = tls_outcomes(r, "forged");
        assert!(!forged.is_empty(), "{}", r.id);
        assert!(
            forged.iter().all(|o| o == "handshake_failed"),
            "{}: {forged:?}",
            r.id
        );
        assert!(
            !r.journal
                .iter()
                .any(|e| e.agent == "forged" && matches!(e.event, Event::Request { .. })),
            "{}",
            r.id
        );
        // The sound agent was reached over TLS only, on its binding.
        let sound = tls_outcomes(r, "sound");
        assert!(
            sound.iter().all(|o| o == "handshake"),
            "{}: {sound:?}",
            r.id
        );
        let binding = r.binding.unwrap();
        assert!(
            r.journal.iter().any(|e| e.agent == "sound"
                && matches!(&e.event, Event::Request { binding: b, method: Some(_), .. } if *b == binding)),
            "{}",
            r.id
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn run_tls_serves_a_plain_case_over_tls_and_records_it() {
    let cases = cases("states.completed");
    let mut options = RunOptions::new(format!("{} drive", common::delegator().display()));
    options.tls = true;
    let report = run(&cases, &options).await;
    let r = &report.results[0];
    assert_eq!(r.verdict, Verdict::Pass, "{:?}", r.notes);
    assert!(r.tls);
    assert!(r.repro.contains(" --tls"), "{}", r.repro);
    // Every connection of the case completed a TLS 1.3 handshake; none was plain.
    let tls: Vec<&Event> = r
        .journal
        .iter()
        .map(|e| &e.event)
        .filter(|e| matches!(e, Event::Tls { .. }))
        .collect();
    assert!(!tls.is_empty());
    assert!(
        tls.iter()
            .all(|e| matches!(e, Event::Tls { outcome, version, .. }
        if outcome == "handshake" && version.as_deref() == Some("TLSv1.3")))
    );
    let v = r.rules.iter().find(|v| v.id == "DLG-TLS-03").unwrap();
    assert_eq!(v.verdict, Verdict::Pass);
}
