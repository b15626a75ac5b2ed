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
//! - [`runner`]: running a case, crash injection, verdicts;
//! - [`run`](mod@run): running many cases in parallel ([`run()`], [`RunOptions`], [`RunReport`]);
//! - [`explore`](mod@explore): generated scenarios, findings, shrinking (`a2a-harness explore`);
//! - [`report`]: `index.json`, `cases/*.json`, `junit.xml`, `summary.md`, `index.html`.

#![warn(missing_docs)]

pub mod catalog;
pub mod explore;
pub mod generate;
pub use a2a_driver_contract::process as delegator_process;
pub mod report;
pub mod rules;
pub mod run;
pub mod runner;
pub mod scenario;

pub use run::{RunOptions, RunReport, run};
