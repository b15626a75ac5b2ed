//! # a2a-harness-core: what every run of the A2A delegation conformance harness needs
//!
//! Drives any delegator (through the newline-delimited JSON driver contract of
//! `docs/driver-protocol.md`) through a simulated network of mock A2A agents, one case per
//! scenario file, and checks every rule of the registry against what the network observed:
//! the case format, the catalog, the rules, the runner, verdicts and the reports a run writes.
//! The reports live here, not in a crate of their own, because the run loop writes them and the
//! requirements table and the reports refer to each other. This crate must not know the tools
//! that only some commands use: the explorer and scenario generator (`a2a-harness-explore`) and
//! the recording proxy and journal-to-scenario conversion (`a2a-harness-record`) depend on it,
//! never the reverse; the journal comparison of `run --check-determinism` is the stand-alone
//! [`a2a_journal_diff`].
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
//! - [`runner`]: running a case, crash injection, verdicts;
//! - [`invariants`]: history invariants (`HIST-*`) over a whole case's evidence;
//! - [`recovery_phases`]: the recovery rules and history invariants that apply when the
//!   delegator is killed at each phase of a delegation;
//! - [`sweep`]: the crash sweep (a kill at every journal position of a case);
//! - [`run`](mod@run): running many cases in parallel ([`run()`], [`RunOptions`], [`RunReport`]);
//! - [`determinism`]: `run --check-determinism`, each case twice and the runs compared;
//! - [`matrix`]: the catalog's situation matrix (generated into `scenarios/README.md`);
//! - [`report`]: `index.json`, `cases/*.json`, `junit.xml`, `summary.md`, `index.html`;
//! - [`explain`](mod@explain): what `a2a-harness rules` and `a2a-harness explain` print;
//! - [`console`]: what `a2a-harness run` prints as it runs.

#![warn(missing_docs)]

pub mod catalog;
pub mod console;
pub mod determinism;
pub mod explain;
pub mod invariants;
pub mod recovery_phases;
pub use a2a_driver_contract::process as delegator_process;
pub mod matrix;
pub mod report;
pub mod requirements;
pub mod rules;
pub mod run;
pub mod runner;
pub mod scenario;
pub mod sweep;

pub use run::{RunOptions, RunReport, run};
