//! The situations, by rule family. Each adds its agents, skills, delegation(s), answers and
//! crash to a [`Draft`], lists the rules whose situation it plants, and sets the outcomes every
//! correct delegator must reach (wide where the rules allow several paths).
//!
//! The situations follow the catalog cases that show each rule (`scenarios/`), with their sizes,
//! counts, faults and timings drawn from the seed.

mod art;
mod auth;
mod input;
mod limit;
mod obs;
mod rec;
mod retry;
mod route;
mod security;
mod send;
mod state;
mod wire;

use super::Topic;
use super::draft::{Draft, MAX_AGENTS, skill_spec};
use super::steps::{Shapes, Work, artifacts, pick, shape, state, state_full, wait, work};
use a2a_driver_contract::{EscalationKind, Outcome};
use a2a_harness_core::scenario::{Answer, Cancel, Child, Crash, CrashTrigger, Delegation};
use a2a_mock_agents::script::{
    Binding, CancelBehaviour, CardChange, ContentKind, ExtensionSpec, Fault, Matcher, Mutation,
    OnWrongAnswer, ProtocolVersion, QueuedFault, Rule, ScriptStep, SecurityScope, SecuritySpec,
    TimestampStyle,
};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde_json::json;

type Situation = fn(&mut Draft, &mut ChaCha8Rng);

/// Add one situation of family `topic`, drawn at random.
pub(super) fn add(topic: Topic, d: &mut Draft, rng: &mut ChaCha8Rng) {
    let list = of(topic);
    pick(rng, list)(d, rng);
}

/// Add the `nth` situation of family `topic` (cycling through its list).
pub(super) fn add_nth(topic: Topic, nth: u64, d: &mut Draft, rng: &mut ChaCha8Rng) {
    let list = of(topic);
    let i = (nth % list.len() as u64) as usize;
    list[i](d, rng);
}

/// The situations of family `topic`; one listed twice comes twice as often.
fn of(topic: Topic) -> &'static [Situation] {
    match topic {
        Topic::Send => &[direct_reply, definite_error, x_deleg, direct_reply],
        Topic::Wire => &[
            mutated_payloads,
            lowercase_enums,
            pinned_binding,
            unknown_state,
        ],
        Topic::Route => &[
            routing,
            streaming_choice,
            v03_agent,
            grpc_only,
            every_binding,
            stale_card,
            broken_binding,
            extended_only,
            tls_bad_certificate,
            signed_cards_required,
            tls_plain_interfaces,
            signed_cards_optional,
        ],
        Topic::State => &[
            completed,
            terminal,
            unknown_state,
            refinement,
            slow_polling,
            caller_cancel,
            unknown_state,
            unknown_state,
        ],
        Topic::Input => &[input_answerable, input_escalated, input_cap, input_cap],
        Topic::Auth => &[auth_required, untrusted_text, auth_required, hostile_names],
        Topic::Limit => &[
            past_deadline,
            too_deep,
            in_loop,
            local_deadline,
            cancel_race,
            budget_fan_out,
            sub_delegation,
            local_deadline,
        ],
        Topic::Obs => &[
            stream_reset,
            stream_closed_early,
            trickle,
            push,
            local_deadline,
        ],
        Topic::Art => &[
            chunked,
            omit_last_chunk,
            by_reference,
            forbidden_url,
            oversize_stream,
            wrong_media_type,
            schema_violation,
            protocol_error,
            chunked,
            large_stream,
        ],
        Topic::Retry => &[
            transient,
            transient,
            indefinite,
            stalled_send,
            dead_letter,
            backoff_grows,
        ],
        Topic::Rec => &[
            crash_first_request,
            crash_indefinite,
            crash_after_chunks,
            crash_input_round,
            crash_retry_backoff,
            purged,
            crash_at_event,
        ],
    }
}

use art::*;
use auth::*;
use input::*;
use limit::*;
use obs::*;
use rec::*;
use retry::*;
use route::*;
use security::*;
use send::*;
use state::*;
use wire::*;

// ---- helpers ------------------------------------------------------------------------------

/// An unconditional rule with these steps.
pub(super) fn rule(steps: Vec<ScriptStep>) -> Rule {
    Rule {
        steps,
        ..Rule::default()
    }
}

/// A rule for the first `times` matching sends, answering with `fault`.
pub(super) fn fault_rule(times: Option<u32>, fault: Fault) -> Rule {
    Rule {
        times,
        fault: Some(fault),
        ..Rule::default()
    }
}

pub(super) fn expect(d: &mut Delegation, states: &[Outcome]) {
    d.expect.state = states.to_vec();
}

/// The delegation will be streamed by a delegator that follows DLG-ROUTE-02.
pub(super) fn streams(d: &Draft, agent: usize, del: &Delegation) -> bool {
    d.agents[agent].streaming && del.streaming_preferred
}

/// An agent for a situation whose sends must never arrive (a refusal): a fresh one while there
/// is room, else the skill joins the last agent (a correct delegator sends nothing either way).
pub(super) fn agent_or_share(d: &mut Draft, role: &str, skill: &str) {
    if d.agents.len() < MAX_AGENTS {
        let a = d.agent(role, skill);
        d.agents[a].rules.push(rule(vec![state("COMPLETED")]));
    } else if let Some(last) = d.agents.last_mut() {
        last.skills.push(skill_spec(skill));
    }
}

/// A completing task with random work, the rules its work exercises listed.
pub(super) fn completing(d: &mut Draft, agent: usize, del: &Delegation, w: &Work) {
    let streamed = streams(d, agent, del);
    let mut steps = w.steps.clone();
    steps.push(state("COMPLETED"));
    d.agents[agent].rules.push(rule(steps));
    if w.artifacts {
        d.list(&["DLG-ART-04"]);
    }
    if w.multi_chunk && streamed {
        d.list(&["DLG-ART-01", "DLG-ART-02"]);
    }
}

pub(super) fn upstream_chain(n: u32) -> Vec<String> {
    (0..n)
        .map(|i| format!("http://127.0.0.1:9/upstream-{i}"))
        .collect()
}

/// A deadline comfortably in the future (the x-deleg rules judge it; nothing waits for it).
pub(super) fn far_deadline(rng: &mut ChaCha8Rng) -> i64 {
    rng.random_range(20_000..=120_000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn every_situation_alone_is_consistent() {
        for topic in Topic::ALL {
            for seed in 0..60 {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let mut d = Draft::new(seed);
                add(topic, &mut d, &mut rng);
                d.alone = false;
                assert_eq!(
                    d.consistent(),
                    Ok(()),
                    "{topic} seed {seed}: {:?}",
                    d.titles
                );
                assert!(!d.delegations.is_empty(), "{topic} seed {seed}");
            }
        }
    }
}
