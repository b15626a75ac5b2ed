//! Observation situations (DLG-OBS-*, DLG-PUSH-*): streams that end early, trickles, push.

use super::*;

pub(super) fn stream_reset(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("report");
    let a = d.agent("shaky", &skill);
    let close = rng.random_range(1..=3);
    d.agents[a].rules.push(Rule {
        fault: Some(Fault::ResetAfter { events: close }),
        steps: vec![
            state("WORKING"),
            shape(
                artifacts(1, rng.random_range(3..=5), rng.random_range(100..=300)),
                |_, _, _, _, delay| *delay = 20,
            ),
            wait(200),
            state("COMPLETED"),
        ],
        ..Rule::default()
    });
    let mut del = d.delegation(&skill, "Write the report over a shaky stream");
    del.streaming_preferred = true;
    expect(&mut del, &[Outcome::Completed]);
    d.delegations.push(del);
    d.list(&["DLG-OBS-02", "DLG-ART-04"]);
    d.titles
        .push(format!("a stream reset after {close} events"));
}

pub(super) fn stream_closed_early(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("report");
    let a = d.agent("closer", &skill);
    let close = rng.random_range(1..=2);
    d.agents[a].rules.push(Rule {
        fault: Some(Fault::CloseAfter { events: close }),
        steps: vec![
            state("WORKING"),
            wait(300),
            artifacts(1, rng.random_range(1..=3), 100),
            state("COMPLETED"),
        ],
        ..Rule::default()
    });
    let mut del = d.delegation(&skill, "Write the report over a short stream");
    del.streaming_preferred = true;
    expect(&mut del, &[Outcome::Completed]);
    d.delegations.push(del);
    d.list(&["DLG-OBS-02", "DLG-OBS-01"]);
    d.titles
        .push(format!("a stream closed after {close} events"));
}

pub(super) fn trickle(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("report");
    let a = d.agent("slowlink", &skill);
    d.agents[a].streaming = rng.random_bool(0.7);
    d.agents[a].rules.push(Rule {
        fault: Some(Fault::Trickle {
            bytes_per_sec: rng.random_range(5_000..=40_000),
        }),
        steps: vec![
            artifacts(1, rng.random_range(1..=3), rng.random_range(100..=300)),
            state("COMPLETED"),
        ],
        ..Rule::default()
    });
    let mut del = d.delegation(&skill, "Write the report over a slow link");
    del.streaming_preferred = rng.random_bool(0.7);
    expect(&mut del, &[Outcome::Completed]);
    d.delegations.push(del);
    d.list(&["DLG-ART-04", "DLG-OBS-01"]);
    d.titles.push("a trickled response".into());
}

pub(super) fn push(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("report");
    let a = d.agent("pusher", &skill);
    d.agents[a].streaming = false;
    d.agents[a].push_notifications = true;
    d.agents[a].push_duplicates = rng.random_range(0..=2);
    let mut steps = vec![state("WORKING")];
    // A push about a task the delegator never created (right token): it changes nothing.
    let foreign = rng.random_bool(0.4);
    if foreign {
        steps.push(ScriptStep::PushForeign {
            state: "TASK_STATE_FAILED".into(),
            message: Some("Your order was canceled".into()),
        });
    }
    steps.extend([
        wait(rng.random_range(300..=600)),
        artifacts(1, rng.random_range(1..=2), 150),
        state("COMPLETED"),
    ]);
    d.agents[a].rules.push(rule(steps));
    let mut del = d.delegation(&skill, "Write the pushed report");
    expect(&mut del, &[Outcome::Completed]);
    // The push token is a secret: only its hash may be kept. Genuine pushes get 2xx.
    d.list(&[
        "DLG-OBS-01",
        "DLG-ROUTE-02",
        "DLG-ART-04",
        "DLG-SECRET-01",
        "DLG-PUSH-01",
    ]);
    if foreign {
        d.list(&["DLG-PUSH-02"]);
    }
    // Forged pushes go to every delegation of the case: only when this one is alone.
    let alone = d.delegations.is_empty();
    if alone && rng.random_bool(0.5) {
        d.forge_push = true;
        d.alone = true;
        d.list(&["DLG-OBS-04"]);
    }
    // A second delegation to the same agent: a second push config, with its own token.
    if rng.random_bool(0.4) {
        let mut more = d.delegation(&skill, "Write the pushed appendix");
        expect(&mut more, &[Outcome::Completed]);
        d.delegations.push(more);
        d.list(&["DLG-PUSH-03"]);
    }
    d.delegations.push(del);
    d.titles.push("push or polling without streaming".into());
}
