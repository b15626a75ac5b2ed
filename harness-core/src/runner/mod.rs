//! Running one case: start its network, drive the delegator through the driver contract, answer
//! its escalations, inject the crash, collect the evidence and turn it into verdicts.
//!
//! - `case`: [`run_case`] as named phases over one case's state;
//! - `capture`: every byte the delegator writes on stdout and stderr, spooled per process life,
//!   and the secret scan of it with the snapshot and the store (DLG-SECRET-01);
//! - `crash`: crash triggers, the journal tripwire and the kill-and-restart;
//! - `intake`: what is kept of the delegator's output, checked against the contract schemas as
//!   written and then parsed into the typed contract ([`Received`]);
//! - `messages`: the `delegate` the harness writes (a typed
//!   [`Delegate`](a2a_driver_contract::Delegate)) and the forged push;
//! - `unacked`: the `delegate`s and `cancel`s the delegator has not acknowledged, re-sent to
//!   the restarted process after a crash;
//! - `verdict`: case results, the judgement of the rules, known-failing lists.

mod capture;
mod case;
mod crash;
mod intake;
mod messages;
mod unacked;
mod verdict;

pub use case::run_case;
pub use crash::CrashRecord;
pub use intake::{MAX_GARBAGE, MAX_MESSAGES, MAX_NOTES, Received, contract_problem, parse_message};
pub use verdict::{CaseResult, RuleVerdict, Verdict, apply_known_failing, repro_command};

use std::path::PathBuf;
use std::time::Duration;

/// Settings of a run.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// The delegator command.
    pub delegator: String,
    /// The seed.
    pub seed: u64,
    /// Where per-case stores go.
    pub work_dir: PathBuf,
    /// The binding the case's unpinned agents serve (`run --binding`); `None`: as the case says.
    pub binding: Option<a2a_protocol::Binding>,
    /// Serve every agent over TLS (`run --tls`): the network's `tls`, the delegator given the
    /// network's authority as `init.tls_roots`. Cases with `[agent.tls]` use TLS regardless.
    pub tls: bool,
}

/// The case with every agent that does not pin its own bindings serving `binding` only (a
/// network-wide `default_bindings` in the case pins every agent, as does a 0.3 agent).
pub fn served_over(
    s: &crate::scenario::Scenario,
    binding: a2a_protocol::Binding,
) -> crate::scenario::Scenario {
    let mut s = s.clone();
    if s.network.default_bindings.is_none() {
        s.network.default_bindings = Some(vec![binding]);
    }
    s
}

/// The case with every agent served over TLS (`run --tls`; an agent's own `tls` stays).
pub fn served_over_tls(s: &crate::scenario::Scenario) -> crate::scenario::Scenario {
    let mut s = s.clone();
    s.network.tls = true;
    s
}

/// True when every agent of the case pins the bindings it serves (so `--binding` changes
/// nothing in it).
pub fn pins_every_agent(s: &crate::scenario::Scenario) -> bool {
    s.network.default_bindings.is_some()
        || s.network.agents.iter().all(|a| {
            a.bindings.is_some() || a.protocol == a2a_mock_agents::script::ProtocolVersion::V0_3
        })
}

/// The URL the delegator under test is told is its own (`init.self_url`).
pub(crate) const SELF_URL: &str = "http://127.0.0.1:9/delegator-under-test";
/// Push notifications go to a receiver the delegator binds on a free loopback port.
pub(crate) const WEBHOOK_BASE: &str = "http://127.0.0.1:0";
/// The delegator's own credential (`init.credential`); it must never reach an agent.
pub(crate) const OWN_CREDENTIAL: &str = "Bearer delegator-own-secret-never-forward";

/// The longest wait for `init_ok` (a case's `timeout_ms` may end it sooner). Generous: a
/// delegator in an interpreted language imports its SDK first (about a CPU-second for the Python
/// SDK), which on a loaded CI machine has taken more than 15 s. The case's own bound starts
/// again at `init_ok`, so a slow start leaves the case its whole time.
pub(crate) const INIT_WAIT: Duration = Duration::from_secs(30);
/// A write to the delegator's stdin blocked this long at the end of the case is a contract break.
pub(crate) const STDIN_STALL: Duration = Duration::from_secs(1);
