//! Input situations (DLG-INPUT-*): answerable, escalated and capped questions.

use super::*;

/// (input key, value, a question naming the key).
pub(super) const ANSWERABLE: &[(&str, &str, &str)] = &[
    ("city", "Lisbon", "Which city is the destination?"),
    (
        "jurisdiction",
        "England",
        "Which jurisdiction governs the agreement?",
    ),
    ("currency", "EUR", "Which currency should the invoice use?"),
    (
        "language",
        "French",
        "Which language should the summary be in?",
    ),
];

/// (a question about nothing any delegation holds, the caller's answer).
pub(super) const UNANSWERABLE: &[(&str, &str)] = &[
    ("Which seat class does the traveller want?", "business"),
    ("What is the approval code from finance?", "APPROVED-7731"),
    ("Which cost centre should be charged?", "CC-4410"),
];

pub(super) fn input_answerable(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let (key, value, question) = pick(rng, ANSWERABLE);
    let skill = d.skill("plan");
    let a = d.agent("asker", &skill);
    d.agents[a].streaming = rng.random_bool(0.7);
    let mut steps = vec![state("WORKING")];
    steps.push(ScriptStep::InputRequired {
        question: question.to_string(),
        expect: Some(Matcher {
            text_contains: Some(value.to_string()),
            ..Matcher::default()
        }),
        rounds: 1,
        on_wrong: OnWrongAnswer::Fail,
        max_wrong: 3,
        timeout_ms: 10_000,
    });
    let w = work(rng, Shapes::Any);
    steps.extend(w.steps.iter().cloned());
    let mut del = d.delegation(&skill, "Plan the offsite");
    del.streaming_preferred = rng.random_bool(0.7);
    let w = Work { steps, ..w };
    completing(d, a, &del, &w);
    del.inputs.insert(key.to_string(), json!(value));
    expect(&mut del, &[Outcome::Completed]);
    d.delegations.push(del);
    d.list(&["DLG-INPUT-01", "DLG-INPUT-02", "DLG-INPUT-03"]);
    d.titles.push("a question answered from held data".into());
}

pub(super) fn input_escalated(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let (question, answer) = pick(rng, UNANSWERABLE);
    let (key, value, _) = pick(rng, ANSWERABLE);
    let skill = d.skill("book");
    let a = d.agent("asker", &skill);
    d.agents[a].streaming = rng.random_bool(0.7);
    let mut steps = Vec::new();
    if rng.random_bool(0.6) {
        steps.push(state("WORKING"));
    }
    steps.push(ScriptStep::InputRequired {
        question: question.to_string(),
        expect: Some(Matcher {
            text_contains: Some(answer.to_string()),
            ..Matcher::default()
        }),
        rounds: 1,
        on_wrong: OnWrongAnswer::Fail,
        max_wrong: 3,
        timeout_ms: 10_000,
    });
    let w = work(rng, Shapes::Any);
    steps.extend(w.steps.iter().cloned());
    let mut del = d.delegation(&skill, "Book the trip");
    del.streaming_preferred = rng.random_bool(0.7);
    let streamed = streams(d, a, &del);
    let w = Work { steps, ..w };
    completing(d, a, &del, &w);
    if rng.random_bool(0.7) {
        del.inputs.insert(key.to_string(), json!(value));
    }
    del.expect.escalates = Some(EscalationKind::Input);
    expect(&mut del, &[Outcome::Completed]);
    d.answers.push(Answer {
        id: del.id.clone(),
        kind: EscalationKind::Input,
        value: answer.to_string(),
    });
    d.delegations.push(del);
    // The answer names the agent's own task (DLG-CTX-02).
    d.list(&["DLG-INPUT-01", "DLG-INPUT-03", "DLG-CTX-02"]);
    if streamed {
        d.list(&["DLG-OBS-02"]);
    }
    // An agent that keeps no history: the question is only in the status message (§3.7).
    if rng.random_bool(0.4) {
        d.agents[a].keep_history = false;
        d.list(&["DLG-CTX-03"]);
    }
    d.titles
        .push("a question only the caller can answer".into());
}

pub(super) fn input_cap(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let cap = rng.random_range(1..=2u32);
    d.option("input_round_cap", json!(cap));
    let (key, value, question) = pick(rng, ANSWERABLE);
    let skill = d.skill("plan");
    let a = d.agent("needy", &skill);
    d.agents[a].streaming = rng.random_bool(0.7);
    d.agents[a].rules.push(rule(vec![
        ScriptStep::InputRequired {
            question: question.to_string(),
            expect: None,
            rounds: cap + rng.random_range(1..=3),
            on_wrong: OnWrongAnswer::Reask,
            max_wrong: 3,
            timeout_ms: 10_000,
        },
        state("COMPLETED"),
    ]));
    let mut del = d.delegation(&skill, "Plan the offsite with a needy agent");
    del.streaming_preferred = rng.random_bool(0.7);
    del.inputs.insert(key.to_string(), json!(value));
    expect(&mut del, &[Outcome::Failed, Outcome::Canceled]);
    d.delegations.push(del);
    d.list(&["DLG-INPUT-04"]);
    d.titles
        .push(format!("more input rounds than the cap of {cap}"));
}
