//! Wire situations (DLG-WIRE-*): mutated payloads, lowercase enums, pinned bindings.

use super::*;

pub(super) fn mutated_payloads(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let m = pick(rng, &[Mutation::LegacyFields, Mutation::UnknownField]);
    // The mutations act on JSON bodies only.
    d.only_bindings(&[Binding::JsonRpc, Binding::Rest]);
    let skill = d.skill("report");
    let a = d.agent("oldschool", &skill);
    let step = artifacts(
        rng.random_range(1..=2),
        rng.random_range(1..=3),
        rng.random_range(100..=400),
    );
    let interleave = rng.random_bool(0.5);
    d.agents[a].rules.push(Rule {
        mutate: vec![m],
        steps: vec![
            state_full("WORKING", Some("on it"), 0),
            shape(step, |_, i, _, _, _| *i = interleave),
            state_full("COMPLETED", Some("done"), 0),
        ],
        ..Rule::default()
    });
    let mut made = 0;
    for (what, streamed) in [("streamed", true), ("polled", false)] {
        if rng.random_bool(0.7) || (!streamed && made == 0) {
            made += 1;
            let mut del = d.delegation(&skill, &format!("Write the {what} report"));
            del.streaming_preferred = streamed;
            expect(&mut del, &[Outcome::Completed]);
            d.delegations.push(del);
        }
    }
    d.list(&["DLG-WIRE-01", "DLG-ART-04", "DLG-STATE-02"]);
    d.titles.push(format!("{m:?} payloads"));
}

pub(super) fn lowercase_enums(d: &mut Draft, rng: &mut ChaCha8Rng) {
    d.only_bindings(&[Binding::JsonRpc, Binding::Rest]);
    let skill = d.skill("report");
    let a = d.agent("lowercase", &skill);
    d.agents[a].rules.push(Rule {
        mutate: vec![Mutation::LowercaseEnums],
        steps: vec![
            state_full("WORKING", Some("working on it"), 0),
            artifacts(1, rng.random_range(1..=3), rng.random_range(100..=300)),
            state_full("COMPLETED", Some("done"), 0),
        ],
        ..Rule::default()
    });
    let deadline = rng.random_range(4_000..=6_000);
    let mut del = d.delegation(&skill, "Write the report in lowercase");
    del.streaming_preferred = rng.random_bool(0.5);
    del.deadline_in_ms = Some(deadline);
    // Read leniently, or kept as an unknown state until the deadline.
    expect(
        &mut del,
        &[Outcome::Completed, Outcome::Canceled, Outcome::Failed],
    );
    d.delegations.push(del);
    d.needs_ms(deadline as u64 + 12_000);
    d.list(&["DLG-STATE-04", "DLG-WIRE-01"]);
    d.titles.push("lowercase 0.3 enums".into());
}

pub(super) fn pinned_binding(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("classify");
    let a = d.agent("pinned", &skill);
    let mut all = Binding::ALL.to_vec();
    // A random non-empty ordered subset.
    let mut chosen = Vec::new();
    while !all.is_empty() {
        let i = rng.random_range(0..all.len());
        let b = all.remove(i);
        if chosen.is_empty() || rng.random_bool(0.5) {
            chosen.push(b);
        }
    }
    d.agents[a].bindings = Some(chosen);
    d.agents[a].streaming = rng.random_bool(0.7);
    let mut del = d.delegation(&skill, "Classify the ticket");
    del.streaming_preferred = rng.random_bool(0.7);
    let w = work(rng, Shapes::Any);
    completing(d, a, &del, &w);
    expect(&mut del, &[Outcome::Completed]);
    d.delegations.push(del);
    d.list(&["DLG-WIRE-01", "DLG-SEND-04", "DLG-ROUTE-04", "DLG-ROUTE-07"]);
    // The first binding is the one every delegator speaking it uses (DLG-ROUTE-05); one served
    // alone is the only way to the agent.
    match d.agents[a].bindings.as_deref() {
        Some([Binding::JsonRpc, ..]) => d.list(&["DLG-WIRE-02"]),
        Some([Binding::Rest]) => d.list(&["DLG-REST-01"]),
        _ => {}
    }
    d.titles.push("an agent on pinned bindings".into());
}
