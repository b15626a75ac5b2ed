//! The reference delegator's integration tests, one module per subsystem, linked as one test
//! binary (one link instead of one per file). nextest still runs every test in its own process.

mod bindings;
mod client_conformance;
mod connections;
mod crash;
mod driver;
mod engine;
mod hotpath;
mod interop_sdk;
mod outbox;
mod planted_bugs;
mod support;
