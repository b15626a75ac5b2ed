//! # a2a-delegator: the reference A2A 1.0 delegator
//!
//! A delegator that does everything the delegation seeds ask, so the harness can prove its checks
//! pass on correct behaviour, driven through the same contract as any foreign delegator
//! (`docs/driver-protocol.md`).
//!
//! - [`request`]: the request model ([`DelegationRequest`], [`ArtifactSpec`]) and its constraints;
//! - [`store`]: the durable delegation store ([`DelegationStore`], [`SqliteStore`]);
//! - [`agents`] and [`client`]: agent cards, routing, the JSON-RPC client (1.0 and, through the
//!   compat adapter, 0.3);
//! - [`policy`]: the handler for every task state and every error code, backoff, input answers;
//! - [`artifacts`]: reassembly to disk with incremental sha256 and validation;
//! - [`fetch`]: the url-part fetch policy (allowed origins, http(s) only, no userinfo, redirects
//!   checked) against server-side request forgery;
//! - [`engine`]: the delegation runs: sending, observing, interrupted states, limits, retries,
//!   the dead-letter queue, recovery;
//! - [`webhook`]: the push-notification receiver;
//! - [`driver`]: the driver contract over stdin/stdout;
//! - [`metrics`]: operational metrics for `a2a-delegator status`;
//! - [`bugs`]: planted bugs for the harness's self-test (feature `planted-bugs` only).

#![warn(missing_docs)]

pub mod agents;
pub mod artifacts;
pub mod bugs;
pub mod client;
pub mod driver;
pub mod engine;
pub mod fetch;
pub mod metrics;
pub mod policy;
pub mod request;
pub mod signatures;
pub mod store;
pub mod tls;
pub mod webhook;

pub use engine::{
    Done, Engine, EngineConfig, EngineError, EscalationKind, Event, Options, Outcome,
};
pub use request::{ArtifactSpec, ChildRequest, DelegationRequest, Priority};
pub use store::{DelegationRecord, DelegationState, DelegationStore, SqliteStore};
