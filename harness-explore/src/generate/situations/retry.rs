//! Retry situations (DLG-RETRY-*): transient failures, indefinite sends, stalls, the dead-letter queue.

use super::*;

/// The one send method every correct delegator uses for this pair, if the card and the request
/// decide it (DLG-ROUTE-02): for faults queued on a method.
pub(super) fn send_method(d: &Draft, agent: usize, del: &Delegation) -> Option<&'static str> {
    if !d.agents[agent].streaming {
        Some("SendMessage")
    } else if del.streaming_preferred {
        Some("SendStreamingMessage")
    } else {
        None
    }
}

pub(super) fn transient_fault(rng: &mut ChaCha8Rng) -> (Fault, bool) {
    match rng.random_range(0..6) {
        0 => (Fault::DropBefore, false),
        1 => (
            Fault::HttpStatus {
                status: 429,
                retry_after_s: Some(1),
            },
            true,
        ),
        2 => (
            Fault::HttpStatus {
                status: 503,
                retry_after_s: Some(1),
            },
            true,
        ),
        _ => (
            Fault::HttpStatus {
                status: pick(rng, &[500, 502, 503, 504]),
                retry_after_s: None,
            },
            false,
        ),
    }
}

pub(super) fn transient(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("summarize");
    let a = d.agent("flaky", &skill);
    d.agents[a].streaming = rng.random_bool(0.6);
    let mut del = d.delegation(&skill, "Summarize through a flaky proxy");
    del.streaming_preferred = rng.random_bool(0.7);
    let k = rng.random_range(1..=3u32);
    del.max_retries = pick(rng, &[0, 1, 2, 3, 3, 4, 5]);
    let (fault, slow) = transient_fault(rng);
    // DLG-RETRY-02 reads a Retry-After from the agents' rule faults: such a fault stays a rule.
    let queued = match send_method(d, a, &del) {
        Some(m) if !slow && rng.random_bool(0.5) => {
            d.agents[a].queued_faults.push(QueuedFault {
                method: m.to_string(),
                times: k,
                fault: fault.clone(),
            });
            true
        }
        _ => false,
    };
    if !queued {
        d.agents[a].rules.push(fault_rule(Some(k), fault.clone()));
    }
    let w = work(rng, Shapes::Any);
    let m = del.max_retries;
    if k <= m {
        completing(d, a, &del, &w);
    } else {
        // Never reached: what the work would show is not listed.
        let mut steps = w.steps.clone();
        steps.push(state("COMPLETED"));
        d.agents[a].rules.push(rule(steps));
    }
    d.list(&["DLG-RETRY-01"]);
    if k <= m {
        // A delegator may give up earlier than max_retries (at most, says DLG-RETRY-01).
        expect(&mut del, &[Outcome::Completed, Outcome::DeadLettered]);
        d.list(&["DLG-REC-05"]);
    } else {
        expect(&mut del, &[Outcome::DeadLettered]);
        d.list(&["DLG-RETRY-04"]);
    }
    if m >= 1 {
        d.list(&["DLG-RETRY-02", "DLG-SEND-02"]);
    }
    if slow {
        d.needs_ms(15_000 + 1_500 * u64::from(k));
    }
    d.delegations.push(del);
    d.titles.push(format!(
        "{k} transient failures ({}) with max_retries {m}",
        fault_name(&fault)
    ));
}

pub(super) fn fault_name(f: &Fault) -> String {
    match f {
        Fault::HttpStatus {
            status,
            retry_after_s: Some(s),
        } => format!("HTTP {status}, Retry-After {s}"),
        Fault::HttpStatus { status, .. } => format!("HTTP {status}"),
        Fault::DropBefore => "connection dropped".into(),
        other => format!("{other:?}"),
    }
}

pub(super) fn indefinite(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("summarize");
    let a = d.agent("lossy", &skill);
    d.agents[a].dedup_message_id = true;
    d.agents[a].streaming = rng.random_bool(0.5);
    let mut del = d.delegation(&skill, "Summarize over a lossy link");
    del.streaming_preferred = false;
    let w = work(rng, Shapes::SomeArtifact);
    let mut steps = w.steps.clone();
    steps.push(state("COMPLETED"));
    d.agents[a].rules.push(Rule {
        times: Some(1),
        fault: Some(Fault::DropResponse),
        steps: steps.clone(),
        ..Rule::default()
    });
    d.agents[a].rules.push(rule(steps));
    expect(&mut del, &[Outcome::Completed, Outcome::DeadLettered]);
    d.delegations.push(del);
    d.list(&["DLG-RETRY-03", "DLG-REC-05", "DLG-SEND-02", "DLG-ART-04"]);
    d.titles.push("a send whose response is lost".into());
}

pub(super) fn stalled_send(d: &mut Draft, rng: &mut ChaCha8Rng) {
    // A reference-delegator option (others ignore it and wait the stall out); it would cut
    // the long requests of other situations short, so the case keeps to itself.
    d.option("request_timeout_ms", json!(1500));
    d.alone = true;
    let skill = d.skill("report");
    let a = d.agent("sleepy", &skill);
    d.agents[a].dedup_message_id = true;
    d.agents[a].streaming = false;
    let steps = vec![
        state("WORKING"),
        artifacts(1, rng.random_range(1..=3), 100),
        state("COMPLETED"),
    ];
    d.agents[a].rules.push(Rule {
        times: Some(1),
        fault: Some(Fault::Stall {
            ms: rng.random_range(2_500..=4_000),
        }),
        steps: steps.clone(),
        ..Rule::default()
    });
    d.agents[a].rules.push(rule(steps));
    let mut del = d.delegation(&skill, "Write the report with a sleepy agent");
    del.streaming_preferred = false;
    expect(&mut del, &[Outcome::Completed, Outcome::DeadLettered]);
    d.delegations.push(del);
    d.needs_ms(20_000);
    d.list(&["DLG-SEND-02", "DLG-REC-05", "DLG-RETRY-01", "DLG-ART-04"]);
    d.titles.push("a stalled send".into());
}

pub(super) fn dead_letter(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("summarize");
    let a = d.agent("down", &skill);
    d.agents[a].streaming = rng.random_bool(0.6);
    let status = pick(rng, &[500, 502, 503]);
    d.agents[a].rules.push(fault_rule(
        None,
        Fault::HttpStatus {
            status,
            retry_after_s: None,
        },
    ));
    let mut del = d.delegation(&skill, "Summarize while the agent is down");
    del.streaming_preferred = rng.random_bool(0.7);
    del.max_retries = rng.random_range(0..=2);
    del.depth = rng.random_range(0..=2);
    del.chain = upstream_chain(del.depth);
    expect(&mut del, &[Outcome::DeadLettered]);
    d.list(&["DLG-RETRY-01", "DLG-RETRY-04"]);
    if del.max_retries >= 1 {
        d.list(&["DLG-RETRY-02", "DLG-SEND-02"]);
    }
    d.delegations.push(del);
    d.titles.push(format!("an agent down with HTTP {status}"));
}

/// Sends that fail many times (seven to ten 503s, or dropped connections, each) for one or two
/// delegations at once: enough backoffs for DLG-RETRY-02 to judge growth up to the cap (a
/// constant pause fails whatever the jitter) and, with two, jitter across intents. As
/// `retries.backoff-grows`; the case has the delegator to itself so nothing else moves the
/// timings.
pub(super) fn backoff_grows(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("summarize");
    let a = d.agent("recovering", &skill);
    let regions = if rng.random_bool(0.7) {
        &["north", "south"][..]
    } else {
        &["west"][..]
    };
    let fault = if rng.random_bool(0.8) {
        Fault::HttpStatus {
            status: 503,
            retry_after_s: None,
        }
    } else {
        Fault::DropBefore
    };
    let mut total = 0;
    for region in regions {
        let k = rng.random_range(7..=10u32);
        total += k;
        let mut del = d.delegation(
            &skill,
            &format!("Summarize the {region} region while the agent recovers"),
        );
        del.max_retries = 10;
        d.agents[a].rules.push(Rule {
            when: Matcher {
                text_contains: Some(del.text.clone()),
                ..Matcher::default()
            },
            times: Some(k),
            fault: Some(fault.clone()),
            ..Rule::default()
        });
        // A delegator may give up earlier than max_retries (at most, says DLG-RETRY-01).
        expect(&mut del, &[Outcome::Completed, Outcome::DeadLettered]);
        d.delegations.push(del);
    }
    d.agents[a].rules.push(rule(vec![state("COMPLETED")]));
    d.list(&["DLG-RETRY-02", "DLG-RETRY-01", "DLG-SEND-02", "DLG-REC-05"]);
    d.alone = true;
    d.needs_ms(20_000);
    d.titles.push(format!(
        "{total} transient failures ({}) over {} delegation(s), max_retries 10",
        fault_name(&fault),
        regions.len()
    ));
}
