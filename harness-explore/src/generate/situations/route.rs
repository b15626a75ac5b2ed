//! Route situations (DLG-ROUTE-*, DLG-CARD-*): routing, streaming choice, 0.3 agents, bindings, cards.

use super::*;

pub(super) fn routing(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("extract");
    let first = d.agents.len();
    let mut decoys = 0;
    if rng.random_bool(0.7) {
        let a = d.agent("images-only", &skill);
        d.agents[a].output_modes = vec!["image/png".into()];
        decoys += 1;
    }
    if decoys == 0 || rng.random_bool(0.5) {
        let other = d.skill("translate");
        d.agent("wrong-skill", &other);
    }
    let right = d.agent("right", &skill);
    d.agents[right].skills[0].output_modes = vec!["application/json".into()];
    d.agents[right].rules.push(rule(vec![
        ScriptStep::DataArtifact {
            data: json!({ "clauses": ["governing law", "termination"] }),
            media_type: None,
        },
        state("COMPLETED"),
    ]));
    // Its extended card, behind the card's scheme, lists a premium tenant's interfaces first:
    // a delegator that reads it works from it (DLG-CARD-05); one that does not uses the public
    // card (the extended card is optional).
    d.agents[right].extended_tenant = Some("premium".into());
    d.agents[right].security = Some(SecuritySpec {
        credential: format!("Bearer agent-cred-{}", d.agents[right].name),
        scope: SecurityScope::ExtendedCard,
    });
    // The right agent last or first among this situation's agents in routing order.
    if rng.random_bool(0.5) {
        let r = d.agents.remove(right);
        d.agents.insert(first, r);
    }
    let mut del = d.delegation(&skill, "Extract clauses from the agreement");
    del.mime_types = vec!["application/json".into()];
    expect(&mut del, &[Outcome::Completed]);
    d.delegations.push(del);
    d.list(&["DLG-ROUTE-01", "DLG-CARD-05", "DLG-ROUTE-07"]);
    d.titles.push("routing by skill and output mode".into());
}

pub(super) fn streaming_choice(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("report");
    let a = d.agent("worker", &skill);
    let streaming = rng.random_bool(0.5);
    d.agents[a].streaming = streaming;
    d.agents[a].push_notifications = rng.random_bool(0.5);
    let mut del = d.delegation(&skill, "Produce the batch report");
    del.streaming_preferred = rng.random_bool(0.5);
    let w = work(rng, Shapes::Any);
    completing(d, a, &del, &w);
    // No extended card, push declared or not: optional capabilities only where declared.
    d.list(&["DLG-ROUTE-01", "DLG-ROUTE-09"]);
    if del.streaming_preferred || !streaming {
        d.list(&["DLG-ROUTE-02"]);
    }
    if !streaming {
        d.list(&["DLG-SEND-03"]);
    }
    if w.working {
        d.list(&["DLG-STATE-01"]);
    }
    expect(&mut del, &[Outcome::Completed]);
    d.delegations.push(del);
    d.titles.push(format!(
        "streaming {} by the card, {} by the request",
        if streaming { "declared" } else { "absent" },
        if del_pref(d) {
            "preferred"
        } else {
            "not preferred"
        }
    ));
}

pub(super) fn del_pref(d: &Draft) -> bool {
    d.delegations.last().is_some_and(|x| x.streaming_preferred)
}

pub(super) fn v03_agent(d: &mut Draft, rng: &mut ChaCha8Rng) {
    d.only_bindings(&[Binding::JsonRpc]);
    let skill = d.skill("summarize");
    let a = d.agent("legacy", &skill);
    d.agents[a].protocol = ProtocolVersion::V0_3;
    d.agents[a].streaming = rng.random_bool(0.7);
    let mut del = d.delegation(&skill, "Summarize with a legacy agent");
    del.streaming_preferred = rng.random_bool(0.7);
    let steps = vec![
        state("WORKING"),
        artifacts(1, rng.random_range(1..=4), rng.random_range(64..=400)),
    ];
    let w = Work {
        steps,
        working: true,
        artifacts: true,
        multi_chunk: false,
        text_only: true,
    };
    completing(d, a, &del, &w);
    expect(&mut del, &[Outcome::Completed]);
    d.delegations.push(del);
    d.list(&["DLG-ROUTE-03"]);
    d.titles.push("a 0.3 agent".into());
}

/// An agent on gRPC only.
pub(super) fn grpc_only(d: &mut Draft, rng: &mut ChaCha8Rng) {
    bindings_variant(d, rng, 0);
}

/// An agent on every binding in a drawn order with a patch number on its card (DLG-ROUTE-05,
/// DLG-CARD-01): a situation of its own, so the aimed round robin reaches it.
pub(super) fn every_binding(d: &mut Draft, rng: &mut ChaCha8Rng) {
    bindings_variant(d, rng, 1);
}

/// An advertised binding that fails at the transport level, before the one that works
/// (DLG-ROUTE-06, DLG-ROUTE-08): a situation of its own, so the aimed round robin reaches it.
pub(super) fn broken_binding(d: &mut Draft, rng: &mut ChaCha8Rng) {
    bindings_variant(d, rng, 2);
}

fn bindings_variant(d: &mut Draft, rng: &mut ChaCha8Rng, variant: u32) {
    let skill = d.skill("summarize");
    let a = d.agent("multi", &skill);
    let mut del = d.delegation(&skill, "Summarize over the card's binding");
    match variant {
        0 => {
            d.agents[a].bindings = Some(vec![Binding::Grpc]);
            d.list(&["DLG-ROUTE-04"]);
            expect(&mut del, &[Outcome::Completed]);
        }
        1 => {
            let mut order = Binding::ALL.to_vec();
            let first = order.remove(rng.random_range(0..order.len()));
            order.insert(0, first);
            d.agents[a].bindings = Some(order);
            // A patch number on the card changes nothing (spec §3.6).
            d.agents[a].card_protocol_version = Some("1.0.2".into());
            d.list(&["DLG-ROUTE-04", "DLG-ROUTE-05", "DLG-CARD-01"]);
            expect(&mut del, &[Outcome::Completed]);
        }
        _ => {
            let broken = pick(rng, &[Binding::Grpc, Binding::Rest]);
            d.agents[a].bindings = Some(vec![Binding::JsonRpc]);
            d.agents[a].advertised_bindings = Some(vec![broken, Binding::JsonRpc]);
            d.list(&["DLG-ROUTE-04", "DLG-ROUTE-06", "DLG-ROUTE-08"]);
            // Falls back, or ends the delegation visibly.
            expect(
                &mut del,
                &[Outcome::Completed, Outcome::SendFailed, Outcome::Failed],
            );
        }
    }
    let w = work(rng, Shapes::SomeArtifact);
    let mut steps = w.steps.clone();
    steps.push(state("COMPLETED"));
    d.agents[a].rules.push(rule(steps));
    if variant < 2 {
        d.list(&["DLG-ART-04"]);
    }
    d.delegations.push(del);
    d.titles.push("bindings from the card".into());
}

/// A card with `max-age` 1 s that goes stale while the first task runs (and, sometimes, changes
/// its tenant meanwhile): the second delegation, which starts after the first ends, finds it
/// stale, so the delegator revalidates before new work goes to the agent (DLG-CARD-03), and
/// sends to the changed card's interface (DLG-ROUTE-07). As `cards.stale-changed`.
pub(super) fn stale_card(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("summarize");
    let a = d.agent("moving", &skill);
    d.agents[a].card_max_age_s = 1;
    if rng.random_bool(0.5) {
        d.agents[a].tenant = Some(format!("t{}", d.next()));
    }
    // The first task outlasts the card's freshness by at least half a second plus the
    // checker's margin, whatever the delegator's start-up time (the change counts from the
    // agent's first task).
    let slow_ms = rng.random_range(2_000..=2_600u64);
    let changed = rng.random_bool(0.6);
    if changed {
        let tenant = format!("moved-{}", d.next());
        d.agents[a].card_changes.push(CardChange {
            after_ms: rng.random_range(200..=1_200),
            tenant,
        });
    }
    let first = d.delegation(&skill, "Summarize the first chapter");
    let mut second = d.delegation(&skill, "Summarize the second chapter");
    second.after = Some(first.id.clone());
    d.agents[a].rules.push(Rule {
        when: Matcher {
            text_contains: Some(first.text.clone()),
            ..Matcher::default()
        },
        steps: vec![
            state("WORKING"),
            wait(slow_ms),
            artifacts(1, 1, rng.random_range(40..=200)),
            state("COMPLETED"),
        ],
        ..Rule::default()
    });
    d.agents[a].rules.push(rule(vec![
        artifacts(1, 1, rng.random_range(40..=200)),
        state("COMPLETED"),
    ]));
    let mut first = first;
    expect(&mut first, &[Outcome::Completed]);
    expect(&mut second, &[Outcome::Completed]);
    d.delegations.push(first);
    d.delegations.push(second);
    d.list(&["DLG-CARD-03", "DLG-ROUTE-07", "DLG-STATE-02"]);
    d.titles.push(if changed {
        "a card that goes stale and changes its tenant".into()
    } else {
        "a card that goes stale".into()
    });
}

/// A skill only on the extended card, behind the card's Bearer scheme: the delegator must read
/// the extended card to route at all, authenticated with the credential it was given for the
/// agent (DLG-CARD-04), and works from it (DLG-CARD-05). As `cards.extended-secured`.
pub(super) fn extended_only(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let public = d.skill("summarize");
    let hidden = d.skill("audit-ledger");
    let a = d.agent("premium", &public);
    d.agents[a].extended_skills.push(skill_spec(&hidden));
    if rng.random_bool(0.5) {
        d.agents[a].extended_tenant = Some(format!("premium-{}", d.next()));
    }
    let n = d.next();
    let credential = format!("Bearer agent-cred-{}-{n}", d.agents[a].name);
    d.agents[a].security = Some(SecuritySpec {
        credential,
        scope: SecurityScope::ExtendedCard,
    });
    let w = work(rng, Shapes::Any);
    let mut del = d.delegation(&hidden, "Audit the ledger of the quarter");
    del.streaming_preferred = rng.random_bool(0.5);
    completing(d, a, &del, &w);
    expect(&mut del, &[Outcome::Completed]);
    d.delegations.push(del);
    d.list(&[
        "DLG-CARD-04",
        "DLG-CARD-05",
        "DLG-ROUTE-01",
        "DLG-ROUTE-07",
        "DLG-AUTH-01",
        "DLG-STATE-02",
    ]);
    d.titles
        .push("a skill only on the extended card, behind the card's scheme".into());
}
