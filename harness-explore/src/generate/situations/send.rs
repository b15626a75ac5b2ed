//! Send situations (DLG-SEND-*): direct replies, definite errors, x-deleg.

use super::*;

pub(super) fn direct_reply(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("lookup");
    let a = d.agent("oracle", &skill);
    d.agents[a].streaming = rng.random_bool(0.5);
    let text = pick(
        rng,
        &[
            "42",
            "The capital of France is Paris.",
            "",
            "Yes, the invoice was paid on Monday.",
        ],
    );
    let parts = if text.is_empty() || rng.random_bool(0.2) {
        vec![a2a_mock_agents::script::PartSpec::text(
            "see the attached note",
        )]
    } else {
        Vec::new()
    };
    d.agents[a].rules.push(rule(vec![ScriptStep::Reply {
        text: text.to_string(),
        parts,
    }]));
    let mut del = d.delegation(&skill, "Look up the answer");
    del.streaming_preferred = rng.random_bool(0.6);
    expect(&mut del, &[Outcome::AnsweredDirect]);
    d.list(&["DLG-SEND-05"]);
    if streams(d, a, &del) {
        d.list(&["DLG-ROUTE-02"]);
    }
    d.delegations.push(del);
    d.titles.push("a Message reply".into());
}

pub(super) fn definite_error(d: &mut Draft, rng: &mut ChaCha8Rng) {
    // -32600, -32601, -32603 and -32006 map to HTTP statuses some bindings treat as transient:
    // those cases keep to JSON-RPC, as the catalog's.
    let code = pick(
        rng,
        &[
            -32001, -32003, -32004, -32005, -32007, -32008, -32009, -32602, -32600, -32601, -32603,
            -32006,
        ],
    );
    if matches!(code, -32600 | -32601 | -32603 | -32006) {
        d.only_bindings(&[Binding::JsonRpc]);
    }
    let skill = d.skill("summarize");
    let a = d.agent("refuser", &skill);
    d.agents[a].streaming = rng.random_bool(0.7);
    d.agents[a].rules.push(rule(vec![ScriptStep::Error {
        code,
        message: Some(format!("injected error {code}")),
    }]));
    let mut del = d.delegation(&skill, "Summarize and meet a definite error");
    del.streaming_preferred = rng.random_bool(0.7);
    expect(&mut del, &[Outcome::SendFailed]);
    d.list(&["DLG-SEND-09", "DLG-RETRY-01"]);
    d.delegations.push(del);
    d.titles.push(format!("a definite error {code}"));
}

pub(super) fn x_deleg(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("translate");
    let a = d.agent("worker", &skill);
    let mut del = d.delegation(&skill, "Translate the annex");
    del.deadline_in_ms = Some(rng.random_range(8_000..=30_000));
    del.depth = rng.random_range(0..=2);
    del.chain = upstream_chain(del.depth);
    del.budget_usd = f64::from(rng.random_range(10..=500u32)) / 100.0;
    if rng.random_bool(0.5) {
        del.mime_types = vec!["text/plain".into()];
    } else {
        del.mime_types = vec!["text/plain".into(), "application/json".into()];
    }
    del.streaming_preferred = rng.random_bool(0.6);
    let w = work(rng, Shapes::TextOnly);
    completing(d, a, &del, &w);
    expect(&mut del, &[Outcome::Completed]);
    // Service parameters beside A2A-Version: two extensions the card requires and the
    // delegator supports (catalog: extensions.two-required).
    for ext in ["trace", "audit"] {
        let uri = format!("https://example.com/ext/{ext}/v1");
        d.agents[a].extensions.push(ExtensionSpec {
            uri: uri.clone(),
            description: String::new(),
            required: true,
        });
        if !d.extensions.contains(&uri) {
            d.extensions.push(uri);
        }
    }
    d.list(&[
        "DLG-SEND-04",
        "DLG-SEND-10",
        "DLG-SEND-07",
        "DLG-SEND-08",
        "DLG-LIMIT-02",
        "DLG-LIMIT-08",
        "DLG-EXT-01",
        "DLG-EXT-02",
    ]);
    d.delegations.push(del);
    d.titles
        .push("x-deleg with deadline, depth and chain".into());
}
