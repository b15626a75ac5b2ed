//! # a2a-harness: the A2A delegation conformance harness
//!
//! Drives any delegator (through the newline-delimited JSON driver contract of
//! `docs/driver-protocol.md`) through a simulated network of mock A2A agents, one case per
//! scenario file, and checks every rule of the registry against what the network observed.
//!
//! - [`scenario`]: the case format;
//! - [`catalog`]: loading the catalog (rule IDs checked against the registry), selecting cases;
//! - [`delegator_process`] (re-exported from `a2a_driver_contract::process`, shared with the
//!   benchmarks): the delegator under test as a process: starting it, writing
//!   [`ToDelegator`](a2a_driver_contract::ToDelegator) lines, reading its output lines, killing
//!   its process group;
//! - [`rules`]: the rule registry and its checkers;
//! - [`requirements`]: the client requirements of A2A 1.0 (C-01..C-68) and the rules that
//!   judge each, or why none does;
//! - [`generate`]: scenarios generated from a seed, aimed at a rule family (for `explore`);
//! - [`runner`]: running a case, crash injection, verdicts;
//! - [`invariants`]: history invariants (`HIST-*`) over a whole case's evidence;
//! - [`sweep`]: the crash sweep (a kill at every journal position of a case);
//! - [`run`](mod@run): running many cases in parallel ([`run()`], [`RunOptions`], [`RunReport`]);
//! - [`explore`](mod@explore): generated scenarios, findings, shrinking (`a2a-harness explore`);
//! - [`record`]: the recording proxy of `a2a-harness record` (traffic to a mock-format journal);
//! - [`determinism`]: `run --check-determinism`, each case twice and the runs compared;
//! - [`journal_diff`]: comparing two journals modulo ids, ports and timing (`journal diff`,
//!   `run --check-determinism`);
//! - [`from_journal`]: `a2a-harness scenario from-journal` (a recorded journal to a scenario);
//! - [`report`]: `index.json`, `cases/*.json`, `junit.xml`, `summary.md`, `index.html`;
//! - [`explain`](mod@explain): what `a2a-harness rules` and `a2a-harness explain` print;
//! - [`console`]: what `a2a-harness run` prints as it runs.

#![warn(missing_docs)]

pub mod catalog;
pub mod console;
pub mod determinism;
pub mod explain;
pub mod explore;
pub mod from_journal;
pub mod generate;
pub mod invariants;
pub mod record;
pub mod recovery_phases;
pub use a2a_driver_contract::process as delegator_process;
pub mod journal_diff;
pub mod matrix;
pub mod report;
pub mod requirements;
pub mod rules;
pub mod run;
pub mod runner;
pub mod scenario;
pub mod sweep;

pub use run::{RunOptions, RunReport, run};
