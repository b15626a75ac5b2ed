//! # a2a-harness-record: recording real traffic and turning a journal into a scenario
//!
//! Owns [`record`] (the A2A-aware recording proxy of `a2a-harness record`: traffic between a
//! delegator and real agents written to a journal in the mock network's format) and
//! [`from_journal`] (`a2a-harness scenario from-journal`: such a journal, or a report's case
//! journal, becomes a catalog scenario as text). Both work on the journal format of
//! `a2a_mock_agents` and the wire objects of `a2a_protocol` only: this crate must not know the
//! rules, the runner, the reports or the command line (it does not depend on
//! `a2a-harness-core`; a recorded scenario is judged like any other once it is in a catalog).

#![warn(missing_docs)]

pub mod from_journal;
pub mod record;
