//! State situations (DLG-STATE-*, DLG-CTX-*): every task state, refinement, polling, cancels.

use super::*;

pub(super) fn completed(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("summarize");
    let a = d.agent("worker", &skill);
    d.agents[a].streaming = rng.random_bool(0.75);
    let mut del = d.delegation(&skill, "Summarize the quarterly report");
    del.streaming_preferred = rng.random_bool(0.75);
    if rng.random_bool(0.3) {
        del.deadline_in_ms = Some(far_deadline(rng));
        d.list(&["DLG-LIMIT-02"]);
    }
    let w = work(rng, Shapes::SomeArtifact);
    completing(d, a, &del, &w);
    d.list(&["DLG-STATE-02", "DLG-SEND-06", "DLG-ART-08"]);
    if w.working {
        d.list(&["DLG-STATE-01"]);
    }
    expect(&mut del, &[Outcome::Completed]);
    d.delegations.push(del);
    d.titles.push("a task that completes with artifacts".into());
}

pub(super) fn terminal(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("summarize");
    let a = d.agent("worker", &skill);
    d.agents[a].streaming = rng.random_bool(0.7);
    let mut del = d.delegation(&skill, "Summarize the corrupt report");
    del.streaming_preferred = rng.random_bool(0.7);
    let (name, outcome, message) = pick(
        rng,
        &[
            ("FAILED", Outcome::Failed, "the source document is corrupt"),
            ("CANCELED", Outcome::Canceled, "operator stopped the job"),
            ("REJECTED", Outcome::Rejected, "out of scope for this agent"),
        ],
    );
    let mut steps = Vec::new();
    if outcome != Outcome::Rejected {
        steps.push(state("WORKING"));
        if outcome == Outcome::Failed && rng.random_bool(0.5) {
            steps.push(artifacts(1, rng.random_range(1..=3), 64));
            d.list(&["DLG-OBS-03"]);
        }
    }
    steps.push(state_full(name, Some(message), rng.random_range(0..=50)));
    d.agents[a].rules.push(rule(steps));
    expect(&mut del, &[outcome]);
    d.delegations.push(del);
    d.list(&["DLG-STATE-03", "DLG-STATE-05"]);
    d.titles.push(format!("the agent ends the task {name}"));
}

pub(super) fn unknown_state(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("summarize");
    let a = d.agent("odd", &skill);
    // The odd state is seen on a stream.
    d.agents[a].streaming = true;
    let mut del = d.delegation(&skill, "Summarize despite an odd state");
    let mut steps = Vec::new();
    if rng.random_bool(0.75) {
        steps.push(state("UNSPECIFIED"));
    } else {
        steps.push(state("WORKING"));
        steps.push(ScriptStep::UnknownState {
            state: pick(
                rng,
                &["TASK_STATE_PAUSED", "TASK_STATE_SLEEPING", "TASK_STATE_42"],
            )
            .to_string(),
        });
    }
    steps.push(wait(rng.random_range(20..=150)));
    steps.push(state("WORKING"));
    steps.push(artifacts(
        1,
        rng.random_range(1..=3),
        rng.random_range(50..=300),
    ));
    steps.push(state("COMPLETED"));
    d.agents[a].rules.push(rule(steps));
    del.streaming_preferred = true;
    expect(&mut del, &[Outcome::Completed]);
    d.delegations.push(del);
    d.list(&["DLG-STATE-04", "DLG-OBS-01", "DLG-WIRE-01"]);
    d.titles.push("an unknown task state".into());
}

pub(super) fn refinement(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("clause-extraction");
    let a = d.agent("legal", &skill);
    d.agents[a].streaming = rng.random_bool(0.7);
    let w = work(rng, Shapes::SomeArtifact);
    let mut first = d.delegation(&skill, "Extract the clauses of the agreement");
    first.streaming_preferred = rng.random_bool(0.7);
    completing(d, a, &first, &w);
    expect(&mut first, &[Outcome::Completed]);
    let mut second = d.delegation(&skill, "Refine: fill in the empty clause text");
    second.refine_of = Some(first.id.clone());
    second.after = Some(first.id.clone());
    second.streaming_preferred = first.streaming_preferred;
    expect(&mut second, &[Outcome::Completed]);
    d.delegations.push(first);
    d.delegations.push(second);
    // The refinement's contextId is the one the agent gave (DLG-CTX-01); two delegations in a
    // row within the card's max-age (60 s): no second card fetch (DLG-CARD-02).
    d.list(&["DLG-STATE-06", "DLG-STATE-05", "DLG-CTX-01", "DLG-CARD-02"]);
    d.titles.push("a refinement after completion".into());
}

pub(super) fn slow_polling(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("summarize");
    let a = d.agent("slow", &skill);
    d.agents[a].streaming = false;
    d.agents[a].push_notifications = rng.random_bool(0.3);
    // Status timestamps at a UTC offset (valid RFC 3339; gRPC's are binary).
    d.agents[a].timestamp_style = TimestampStyle::Offset;
    d.agents[a].rules.push(rule(vec![
        wait(rng.random_range(100..=300)),
        state("WORKING"),
        wait(rng.random_range(200..=600)),
        artifacts(1, rng.random_range(1..=3), 128),
        state("COMPLETED"),
    ]));
    let mut del = d.delegation(&skill, "Summarize slowly");
    expect(&mut del, &[Outcome::Completed]);
    d.delegations.push(del);
    d.list(&[
        "DLG-STATE-01",
        "DLG-OBS-01",
        "DLG-OBS-05",
        "DLG-ROUTE-02",
        "DLG-SEND-03",
        "DLG-ART-04",
        "DLG-WIRE-03",
    ]);
    if !d.agents[a].push_notifications {
        // Over HTTP+JSON only, no stream, no push and a blocking send that returns at once:
        // the task is read with GET /tasks/{id}, whose id travels percent-encoded.
        d.agents[a].bindings = Some(vec![Binding::Rest]);
        d.agents[a].max_block_ms = 50;
        d.list(&["DLG-REST-01", "DLG-REST-02"]);
    }
    d.titles.push("slow progress without streaming".into());
}

pub(super) fn caller_cancel(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("summarize");
    let a = d.agent("worker", &skill);
    d.agents[a].streaming = rng.random_bool(0.7);
    d.agents[a]
        .rules
        .push(rule(vec![state("WORKING"), wait(60_000)]));
    let mut del = d.delegation(&skill, "Summarize until told to stop");
    del.streaming_preferred = rng.random_bool(0.7);
    expect(&mut del, &[Outcome::Canceled]);
    d.cancels.push(Cancel {
        id: del.id.clone(),
        when_state: Some("TASK_STATE_WORKING".into()),
    });
    d.delegations.push(del);
    d.list(&["DLG-STATE-03"]);
    d.titles.push("the caller cancels".into());
}
