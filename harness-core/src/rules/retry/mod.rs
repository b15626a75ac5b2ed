//! Retries (DLG-RETRY-*): bounded, Retry-After honoured, indefinite sends resent with the same id, dead letters.
//!
//! Here: DLG-RETRY-01 (bounded), DLG-RETRY-03 (indefinite sends resent with the same id) and
//! the timing options; `backoff`: DLG-RETRY-02 (Retry-After honoured, within the cap, growing,
//! with jitter) and its statistics; `dead_letter`: DLG-RETRY-04 (exhausted retries dead-lettered).

mod backoff;
mod dead_letter;
#[cfg(test)]
mod tests;

pub(super) use backoff::*;
pub(super) use dead_letter::*;

use super::evidence::*;
use super::registry::{Check, fail};
use super::send::message_id_stable_across_resends;
use a2a_driver_contract::Outcome;
use a2a_mock_agents::Event;
use std::collections::BTreeMap;

pub(in crate::rules) fn retries_bounded(ev: &Evidence) -> Check {
    let mut by_mid: BTreeMap<(String, String), Vec<u64>> = BTreeMap::new();
    for r in requests(ev.journal) {
        if r.is_new_send()
            && let (Some(m), Some(_)) = (r.message_id(), delegation_of(ev, &r))
        {
            by_mid
                .entry((r.agent.to_string(), m.to_string()))
                .or_default()
                .push(r.seq);
        }
    }
    if by_mid.is_empty() {
        return Check::NotApplicable;
    }
    for r in requests(ev.journal) {
        let Some(d) = (r.is_new_send()).then(|| delegation_of(ev, &r)).flatten() else {
            continue;
        };
        let key = (
            r.agent.to_string(),
            r.message_id().unwrap_or_default().to_string(),
        );
        let n = by_mid.get(&key).map_or(0, Vec::len);
        // A restart may add one recovery resend.
        let allowed = d.max_retries as usize + 1 + usize::from(ev.crash_seq.is_some());
        if n > allowed {
            return fail(
                format!("at most {} sends of one intent", allowed),
                format!("{n} sends"),
                by_mid.get(&key).cloned().unwrap_or_default(),
            );
        }
    }
    Check::Pass
}

/// The `retry_base_ms` the harness gives a delegator unless the scenario overrides it.
pub const DEFAULT_RETRY_BASE_MS: u64 = 50;
/// The `retry_cap_ms` the harness gives a delegator unless the scenario overrides it.
pub const DEFAULT_RETRY_CAP_MS: u64 = 500;

/// The scenario's option `key` in ms (`options` of the case), else `default`.
pub(in crate::rules) fn option_ms(ev: &Evidence, key: &str, default: u64) -> u64 {
    ev.scenario
        .options
        .get(key)
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(default)
}

pub(in crate::rules) fn indefinite_send_resent_with_same_id(ev: &Evidence) -> Check {
    let dropped = ev.journal.iter().any(|e| matches!(&e.event, Event::ConnectionDropped { phase, .. } if phase == "after_processing"));
    if !dropped {
        return Check::NotApplicable;
    }
    message_id_stable_across_resends(ev)
}
