//! `summary.md`, the console's rules-broken text and `index.json` of a fixed set of results (a
//! pass, a fail with a witness and stderr, an xfail, a pass with a rule not exercised, a case the
//! delegator declined, and a contract failure with no rule to blame), as insta snapshots, with
//! the A2A client compatibility they make; and the INCOMPLETE mark in every output of an
//! interrupted run.

use a2a_harness_core::report::{
    ReportRun, coverage, html, junit, rules_broken_text, run_index, summary,
};
use a2a_harness_core::runner::CaseResult;
use serde_json::{Value, json};

fn entry(seq: u64, agent: &str, event: Value) -> Value {
    let mut v = event;
    v["seq"] = json!(seq);
    v["at_us"] = json!(seq * 1000);
    v["agent"] = json!(agent);
    v
}

fn case(id: &str, verdict: &str, rules: Value, extra: Value) -> CaseResult {
    let mut v = json!({
        "id": id,
        "title": format!("the {id} case"),
        "verdict": verdict,
        "rules": rules,
        "seed": 1,
        "repro": format!("a2a-harness run --case {id} --seed 1 --delegator '[DELEGATOR]'"),
        "duration_ms": 100,
        "notes": [],
        "outcomes": {},
        "messages": [],
        "stderr": "",
        "journal": [],
    });
    if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
        for (k, x) in e {
            o.insert(k.clone(), x.clone());
        }
    }
    serde_json::from_value(v).expect("a case result")
}

fn results() -> Vec<CaseResult> {
    let send = entry(
        1,
        "reporter",
        json!({"event": "request", "req": 1, "http_method": "POST", "path": "/", "method": "SendStreamingMessage", "headers": {}}),
    );
    let chunk = entry(
        2,
        "reporter",
        json!({"event": "sse_event", "req": 1, "index": 0, "data": {"result": {"artifactUpdate": {"append": true}}}}),
    );
    vec![
        case(
            "states.completed",
            "PASS",
            json!([{"id": "DLG-STATE-01", "level": "MUST", "verdict": "PASS"}]),
            json!({}),
        ),
        case(
            "artifacts.interleaved-chunks",
            "FAIL",
            json!([
                {"id": "DLG-ART-01", "level": "MUST", "verdict": "FAIL",
                 "expected": "artifact-1: 1665 bytes, sha256 4b3b as the agent sent them",
                 "observed": "333 bytes, sha256 aff6 committed",
                 "witnesses": [chunk.clone()]},
                {"id": "DLG-ART-02", "level": "MUST", "verdict": "PASS"}
            ]),
            json!({
                "journal": [send, chunk],
                "messages": [{"type": "init_ok"}, {"type": "done", "id": "d1", "state": "COMPLETED"}],
                "stderr": "starting\nchunk replaced artifact-1\n"
            }),
        ),
        case(
            "hostile.legacy-fields",
            "XFAIL",
            json!([{"id": "DLG-ART-01", "level": "MUST", "verdict": "FAIL",
                    "expected": "artifact-1: 900 bytes", "observed": "300 bytes"}]),
            json!({}),
        ),
        case(
            "observation.push-or-poll",
            "PASS",
            json!([{"id": "DLG-OBS-04", "level": "SHOULD", "verdict": "NOT EXERCISED",
                    "expected": "the situation this rule is about",
                    "observed": "the delegator took push notifications"}]),
            json!({}),
        ),
        case(
            "bindings.grpc-only",
            "UNSUPPORTED",
            json!([
                {"id": "DLG-SEND-04", "level": "MUST", "verdict": "PASS"},
                {"id": "DLG-ROUTE-04", "level": "MUST", "verdict": "UNKNOWN",
                 "expected": "evidence for this rule", "observed": "nothing observed that bears on it"},
                {"id": "DLG-STATE-06", "level": "SHOULD", "verdict": "NON-STRICT",
                 "expected": "a new task in context ctx-1", "observed": "a message to the old task"}
            ]),
            json!({"outcomes": {"d1": {"type": "error", "id": "d1", "code": "unsupported",
                                       "message": "no gRPC client"}}}),
        ),
        case(
            "sending.direct-message",
            "FAIL",
            json!([]),
            json!({
                "notes": ["the delegator exited before init_ok (exit status 1)"],
                "stderr": "Traceback (most recent call last):\nValueError: no config\n"
            }),
        ),
    ]
}

fn run(incomplete: bool) -> ReportRun<'static> {
    ReportRun {
        delegator: "[DELEGATOR]",
        seed: 1,
        wall_ms: 4321,
        incomplete,
    }
}

/// The summary up to the rule coverage table (which lists the whole registry).
fn head_of(summary: &str) -> &str {
    summary.split("## Rules\n").next().unwrap_or(summary)
}

#[test]
fn summary_opens_with_the_rules_broken_and_shows_every_verdict() {
    let results = results();
    let index = run_index(&run(false), &coverage(&[]), &results);
    let md = summary(&index, &results);
    insta::assert_snapshot!("summary", head_of(&md));
    assert!(
        md.trim_end().ends_with("\n3 passed, 2 failed, 1 skipped"),
        "{md}"
    );
    // The declined case breaks no rule by declining (ROUTE-04 was only UNKNOWN there); the
    // SHOULD it broke before declining stands.
    let broken: Vec<&str> = index.rules_broken.iter().map(|b| b.id.as_str()).collect();
    assert!(!broken.contains(&"DLG-ROUTE-04"), "{broken:?}");
    assert!(broken.contains(&"DLG-STATE-06"), "{broken:?}");
    // The compatibility section: a table per level at the end of summary.md.
    let compat = md
        .split("## A2A client compatibility\n")
        .nth(1)
        .expect("the section");
    for level in ["### MUST (", "### SHOULD (", "### MAY ("] {
        assert!(compat.contains(level), "{level}: {compat}");
    }
    assert!(
        compat.contains("| C-40 | §3.4.3 | SHOULD | FAIL |"),
        "{compat}"
    );
    assert!(
        compat.contains("| C-55 | §13.4 | SHOULD (shared) | NOT TESTED |"),
        "{compat}"
    );
    let c = index
        .compatibility
        .as_ref()
        .expect("compatibility in index.json");
    insta::assert_snapshot!(
        "compatibility_lines",
        format!(
            "{}\n{}",
            a2a_harness_core::report::compatibility_line(c),
            a2a_harness_core::report::compatibility_note(c)
        )
    );
    let row = |id: &str| c.requirements.iter().find(|r| r.id == id).unwrap();
    // A PASS in a declined case counts for nothing; its break does.
    assert_eq!(row("C-01").status.label(), "NOT EXERCISED");
    assert_eq!(row("C-40").status.label(), "FAIL");
    assert_eq!(
        row("C-40").evidence.as_ref().unwrap().case,
        "bindings.grpc-only"
    );
    // OBS-04 was NOT EXERCISED (the delegator took another path): its rows are not judged.
    assert_eq!(row("C-46").status.label(), "NOT EXERCISED");
    insta::assert_snapshot!(
        "console_rules_broken",
        rules_broken_text(&index.rules_broken)
    );
    insta::assert_json_snapshot!("index", json!({
        "run": index.run,
        "totals": index.totals,
        "cases": index.cases,
        "rules_broken": index.rules_broken,
    }), {
        ".run.finished_at" => "[finished_at]",
        ".run.hostname" => "[hostname]",
    });
}

#[test]
fn an_interrupted_run_is_marked_incomplete_everywhere() {
    let results = results();
    let index = run_index(&run(true), &coverage(&[]), &results);
    assert!(summary(&index, &results).contains("> **INCOMPLETE**"));
    assert!(html(&index, &results).contains("<p class=\"banner\" id=\"incomplete\">INCOMPLETE"));
    assert!(junit(&index, &results).contains("<property name=\"incomplete\" value=\"true\"/>"));
    let whole = run_index(&run(false), &coverage(&[]), &results);
    assert!(!summary(&whole, &results).contains("INCOMPLETE"));
    assert!(!html(&whole, &results).contains("INCOMPLETE"));
}
