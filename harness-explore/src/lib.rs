//! # a2a-harness-explore: generated scenarios and the explorer of `a2a-harness explore`
//!
//! Owns [`generate`] (one scenario from a seed, aimed at a rule family, built only from the
//! vocabulary the catalog already uses) and [`explore`](mod@explore) (runs of generated
//! scenarios against a delegator, findings, shrinking each to a small scenario file, the
//! `explore` report). It runs cases, judges them and writes reports through
//! [`a2a_harness_core`] and adds no rule of its own: core must not know this crate (a run of
//! the catalog needs neither generator nor explorer), and this crate must not know the
//! recording proxy or the command line.

#![warn(missing_docs)]

pub mod explore;
pub mod generate;
