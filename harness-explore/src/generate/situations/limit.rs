//! Limit situations (DLG-LIMIT-*): deadlines, depth, loops, budgets, cancellation.

use super::*;

pub(super) fn refused(d: &mut Draft, limit: &'static str, rule_id: &'static str, del: Delegation) {
    let mut del = del;
    expect(&mut del, &[Outcome::Refused]);
    del.expect.nothing_sent = true;
    d.refusals.insert(limit);
    d.delegations.push(del);
    d.list(&[rule_id]);
    d.titles.push(format!("work refused for its {limit}"));
}

pub(super) fn past_deadline(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("summarize");
    agent_or_share(d, "worker", &skill);
    let mut del = d.delegation(&skill, "Summarize yesterday's news");
    del.deadline_in_ms = Some(-rng.random_range(1_000..=600_000));
    refused(d, "deadline", "DLG-LIMIT-01", del);
}

pub(super) fn too_deep(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("summarize");
    agent_or_share(d, "worker", &skill);
    let mut del = d.delegation(&skill, "Summarize at depth");
    del.depth = rng.random_range(4..=7);
    del.chain = upstream_chain(del.depth);
    refused(d, "depth", "DLG-LIMIT-07", del);
}

pub(super) fn in_loop(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("summarize");
    agent_or_share(d, "worker", &skill);
    let mut del = d.delegation(&skill, "Summarize for a caller that was called by us");
    let n = rng.random_range(1..=3u32);
    let mut chain = upstream_chain(n - 1);
    chain.insert(rng.random_range(0..=chain.len()), "$self".into());
    del.depth = n;
    del.chain = chain;
    refused(d, "loop", "DLG-LIMIT-09", del);
}

pub(super) fn local_deadline(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("summarize");
    let a = d.agent("slowpoke", &skill);
    d.agents[a].enforce_x_deleg = false;
    d.agents[a].streaming = rng.random_bool(0.7);
    let mut del = d.delegation(&skill, "Summarize the archive before the meeting");
    del.streaming_preferred = rng.random_bool(0.7);
    match rng.random_range(0..3) {
        0 => d.agents[a].rules.push(rule(vec![
            state("WORKING"),
            wait(60_000),
            state("COMPLETED"),
        ])),
        1 => d.agents[a].rules.push(Rule {
            on_cancel: CancelBehaviour::Ignore,
            steps: vec![
                state("WORKING"),
                shape(artifacts(1, 1, 100), |_, _, _, o, _| *o = true),
                wait(120_000),
                state("COMPLETED"),
            ],
            ..Rule::default()
        }),
        _ => {
            del.max_size_bytes = 100 * 1024 * 1024;
            // 25,000 chunks 2 ms apart: a stream of 50 s, longer than the case can last
            // (deadline + 15 s), and 25 MiB on paper, so that two of them stay under
            // explore's byte bound (64 MiB).
            d.agents[a].rules.push(Rule {
                on_cancel: CancelBehaviour::Ignore,
                steps: vec![
                    state("WORKING"),
                    shape(artifacts(1, 25_000, 1024), |_, _, _, _, delay| *delay = 2),
                    state("COMPLETED"),
                ],
                ..Rule::default()
            });
        }
    }
    let deadline = rng.random_range(2_000..=4_000);
    del.deadline_in_ms = Some(deadline);
    expect(&mut del, &[Outcome::Canceled, Outcome::Failed]);
    d.deadline_bound.insert(del.id.clone());
    d.delegations.push(del);
    d.needs_ms(deadline as u64 + 15_000);
    d.list(&["DLG-LIMIT-03", "DLG-LIMIT-02", "DLG-OBS-01"]);
    d.titles.push("an agent that outlives the deadline".into());
}

pub(super) fn cancel_race(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("summarize");
    let a = d.agent("racer", &skill);
    d.agents[a].enforce_x_deleg = false;
    d.agents[a].streaming = rng.random_bool(0.7);
    d.agents[a].rules.push(Rule {
        on_cancel: CancelBehaviour::CompleteFirst,
        steps: vec![state("WORKING"), wait(60_000)],
        ..Rule::default()
    });
    let deadline = rng.random_range(2_000..=3_500);
    let mut del = d.delegation(&skill, "Summarize the race");
    del.streaming_preferred = rng.random_bool(0.7);
    del.deadline_in_ms = Some(deadline);
    expect(&mut del, &[Outcome::Completed]);
    d.delegations.push(del);
    d.needs_ms(deadline as u64 + 15_000);
    d.list(&["DLG-LIMIT-04"]);
    d.titles.push("a cancel that loses the race".into());
}

pub(super) fn budget_fan_out(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("research");
    let a = d.agent("worker", &skill);
    d.agents[a].streaming = rng.random_bool(0.7);
    d.agents[a].rules.push(rule(vec![
        artifacts(1, 1, rng.random_range(16..=200)),
        state("COMPLETED"),
    ]));
    let mut del = d.delegation(&skill, "Research the markets");
    del.budget_usd = f64::from(rng.random_range(20..=600u32)) / 100.0;
    let markets = ["French", "German", "Spanish", "Italian"];
    let n = rng.random_range(2..=4);
    del.children = markets[..n]
        .iter()
        .enumerate()
        .map(|(i, m)| Child {
            id: format!("{}-{}", del.id, i + 1),
            capability: skill.clone(),
            text: format!("Research the {m} market (job {}-{})", del.id, i + 1),
        })
        .collect();
    expect(&mut del, &[Outcome::Completed]);
    d.delegations.push(del);
    d.list(&["DLG-LIMIT-05", "DLG-LIMIT-06"]);
    d.titles.push(format!("a fan-out of {n} sharing a budget"));
}

pub(super) fn sub_delegation(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let plan = d.skill("plan");
    let sub = d.skill("subplan");
    let alpha = d.agent("alpha", &plan);
    let beta = d.agent("beta", &sub);
    let mut del = d.delegation(&plan, "Plan the product launch");
    del.streaming_preferred = rng.random_bool(0.7);
    let loops = rng.random_bool(0.5);
    let (alpha_name, beta_name) = (d.agents[alpha].name.clone(), d.agents[beta].name.clone());
    d.agents[alpha].rules.push(Rule {
        when: Matcher {
            text_contains: Some(del.text.clone()),
            ..Matcher::default()
        },
        steps: vec![
            state("WORKING"),
            ScriptStep::Delegate {
                to: beta_name,
                text: format!("sub-plan for beta ({})", del.id),
                skill: Some(sub.clone()),
                margin_ms: 1000,
                budget_share: 0.5,
            },
            state("COMPLETED"),
        ],
        ..Rule::default()
    });
    d.agents[alpha].rules.push(rule(vec![state("COMPLETED")]));
    let back = if loops {
        vec![
            ScriptStep::Delegate {
                to: alpha_name,
                text: "loop back to alpha".into(),
                skill: Some(plan.clone()),
                margin_ms: 1000,
                budget_share: 0.5,
            },
            state("COMPLETED"),
        ]
    } else {
        vec![artifacts(1, 1, 64), state("COMPLETED")]
    };
    d.agents[beta].rules.push(rule(back));
    if loops {
        // The loop comes back as a fast rejection; alpha's task fails.
        expect(&mut del, &[Outcome::Failed]);
        d.list(&["DLG-STATE-03"]);
    } else {
        expect(&mut del, &[Outcome::Completed]);
    }
    d.delegations.push(del);
    d.list(&["DLG-LIMIT-08", "DLG-SEND-07"]);
    d.titles.push(if loops {
        "a loop downstream".into()
    } else {
        "a sub-delegation chain".into()
    });
}
