//! Recovery situations (DLG-REC-*): crashes at each trigger, purged tasks.

use super::*;

/// A crash case: the crash wants the case to itself.
pub(super) fn crash(d: &mut Draft, trigger: CrashTrigger, chunks: u64) {
    let mut c = Crash::at_event(std::num::NonZeroU64::MIN);
    c.trigger = trigger;
    c.chunks = chunks;
    c.event = None;
    d.crash = Some(c);
    d.alone = true;
    d.needs_ms(20_000);
}

pub(super) fn crash_first_request(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("summarize");
    let a = d.agent("worker", &skill);
    d.agents[a].dedup_message_id = true;
    d.agents[a].streaming = rng.random_bool(0.7);
    let mut del = d.delegation(&skill, "Summarize across a crash");
    del.streaming_preferred = rng.random_bool(0.7);
    let mut w = work(rng, Shapes::Any);
    w.steps.insert(0, wait(rng.random_range(300..=500)));
    completing(d, a, &del, &w);
    expect(&mut del, &[Outcome::Completed]);
    d.delegations.push(del);
    crash(d, CrashTrigger::FirstRequest, 0);
    d.list(&["DLG-SEND-01", "DLG-REC-01", "DLG-REC-02", "DLG-REC-05"]);
    d.titles.push("a crash at the first request".into());
}

pub(super) fn crash_indefinite(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("summarize");
    let a = d.agent("lossy", &skill);
    d.agents[a].dedup_message_id = true;
    d.agents[a].streaming = rng.random_bool(0.5);
    let mut del = d.delegation(&skill, "Summarize across a lost response and a crash");
    del.streaming_preferred = false;
    let mut steps = vec![wait(300)];
    steps.extend(work(rng, Shapes::SomeArtifact).steps);
    steps.push(state("COMPLETED"));
    d.agents[a].rules.push(Rule {
        times: Some(1),
        fault: Some(Fault::DropResponse),
        steps,
        ..Rule::default()
    });
    expect(&mut del, &[Outcome::Completed]);
    d.delegations.push(del);
    crash(d, CrashTrigger::IndefiniteSend, 0);
    d.list(&["DLG-REC-01", "DLG-REC-02", "DLG-REC-05", "DLG-RETRY-03"]);
    d.titles.push("a crash after a lost response".into());
}

pub(super) fn crash_after_chunks(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let (a, mut del) = streamed_pair(
        d,
        "streamer",
        "report",
        "Write the long report across a crash",
    );
    let chunks = rng.random_range(6..=12u32);
    let at = rng.random_range(1..=u64::from(chunks) - 3);
    let delay = rng.random_range(30..=60);
    d.agents[a].rules.push(rule(vec![
        state("WORKING"),
        shape(
            artifacts(1, chunks, rng.random_range(200..=1000)),
            |_, _, _, _, dl| *dl = delay,
        ),
        state("COMPLETED"),
    ]));
    expect(&mut del, &[Outcome::Completed]);
    d.delegations.push(del);
    crash(d, CrashTrigger::AfterChunks, at);
    d.list(&["DLG-REC-01", "DLG-REC-03", "DLG-REC-06"]);
    d.titles
        .push(format!("a crash after {at} of {chunks} chunks"));
}

pub(super) fn crash_input_round(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let (question, answer) = pick(rng, UNANSWERABLE);
    let (key, value, _) = pick(rng, ANSWERABLE);
    let skill = d.skill("book");
    let a = d.agent("asker", &skill);
    d.agents[a].streaming = rng.random_bool(0.7);
    d.agents[a].rules.push(rule(vec![
        ScriptStep::InputRequired {
            question: question.to_string(),
            expect: None,
            rounds: 1,
            on_wrong: OnWrongAnswer::Reask,
            max_wrong: 3,
            timeout_ms: 30_000,
        },
        state("COMPLETED"),
    ]));
    let mut del = d.delegation(&skill, "Book the flight across a crash");
    del.streaming_preferred = rng.random_bool(0.7);
    del.inputs.insert(key.to_string(), json!(value));
    del.expect.escalates = Some(EscalationKind::Input);
    expect(&mut del, &[Outcome::Completed]);
    d.answers.push(Answer {
        id: del.id.clone(),
        kind: EscalationKind::Input,
        value: answer.to_string(),
    });
    d.delegations.push(del);
    crash(d, CrashTrigger::InputRound, 0);
    d.list(&["DLG-REC-01", "DLG-REC-03", "DLG-INPUT-01"]);
    d.titles.push("a crash during an input round".into());
}

pub(super) fn crash_retry_backoff(d: &mut Draft, rng: &mut ChaCha8Rng) {
    // The kill lands when the delegator closes the error's connection (`Connection: close`,
    // HTTP/1.1 only: JSON-RPC and REST); the first backoff lasts a second or more, so it lands
    // before the resend.
    d.only_bindings(&[Binding::JsonRpc, Binding::Rest]);
    d.option("retry_base_ms", json!(2000));
    d.option("retry_cap_ms", json!(4000));
    let skill = d.skill("summarize");
    let a = d.agent("flaky", &skill);
    d.agents[a].streaming = rng.random_bool(0.6);
    d.agents[a].rules.push(fault_rule(
        Some(1),
        Fault::HttpStatus {
            status: pick(rng, &[503, 429]),
            retry_after_s: Some(1),
        },
    ));
    let w = work(rng, Shapes::Any);
    let mut del = d.delegation(&skill, "Summarize across a backoff crash");
    del.streaming_preferred = rng.random_bool(0.7);
    completing(d, a, &del, &w);
    expect(&mut del, &[Outcome::Completed]);
    d.delegations.push(del);
    crash(d, CrashTrigger::RetryBackoff, 0);
    d.list(&["DLG-REC-01", "DLG-REC-02", "DLG-SEND-02"]);
    d.titles.push("a crash during a retry backoff".into());
}

pub(super) fn crash_at_event(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("summarize");
    let a = d.agent("worker", &skill);
    d.agents[a].dedup_message_id = true;
    d.agents[a].streaming = rng.random_bool(0.7);
    let mut del = d.delegation(&skill, "Summarize across a crash at any point");
    del.streaming_preferred = rng.random_bool(0.7);
    let mut w = work(rng, Shapes::SomeArtifact);
    w.steps.insert(0, wait(rng.random_range(50..=200)));
    // Judged by the recovery rules and the history invariants, not by what the work shows: the
    // kill may land before the work starts.
    let mut steps = w.steps.clone();
    steps.push(state("COMPLETED"));
    d.agents[a].rules.push(rule(steps));
    expect(&mut del, &[Outcome::Completed]);
    d.delegations.push(del);
    // Early entries: card reads, the send, the task's first states (a short case has few more).
    let event = rng.random_range(1..=6u64);
    crash(d, CrashTrigger::AtEvent, 0);
    if let Some(c) = &mut d.crash {
        c.event = std::num::NonZeroU64::new(event);
    }
    d.list(&["DLG-REC-01"]);
    d.titles.push(format!("a crash at journal entry {event}"));
}

pub(super) fn purged(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("summarize");
    let a = d.agent("forgetful", &skill);
    d.agents[a].streaming = false;
    d.agents[a].rules.push(rule(vec![
        state("WORKING"),
        wait(rng.random_range(100..=300)),
        ScriptStep::Purge,
    ]));
    let mut del = d.delegation(&skill, "Summarize with a forgetful agent");
    expect(&mut del, &[Outcome::Lost]);
    d.delegations.push(del);
    d.list(&["DLG-REC-04"]);
    d.titles.push("a task the agent forgets".into());
}
