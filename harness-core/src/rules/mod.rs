//! The rules: a registry of every rule (its ID, level, requirement, source and checker) and the
//! checkers, one module per rule family, over the evidence of a case (the journal, the
//! delegator's messages, outcomes and snapshot). Checkers read what the network observed; what
//! the delegator reports is compared with that truth, never trusted.
//!
//! - [`registry`](registry()): every rule in ID order, the rule ID being data;
//! - `evidence`: [`Evidence`] and the helpers checkers read it with ([`requests`], [`Req`]);
//! - `front`: the front door as the journal saw it (every HTTP request of the delegator with the
//!   tenant its binding carries, card fetches and freshness, process lives, what cards
//!   advertised over time);
//! - one module per family: `send`, `wire`, `rest` (the HTTP+JSON binding), `ext` (extensions
//!   and service parameters), `card` (card caching, patch versions, the extended card), `route`,
//!   `ctx` (context and task ids, history), `state`, `input`, `auth` (with untrusted text),
//!   `names` (agent-chosen names and where the delegator writes), `limit`, `obs`, `push` (the
//!   webhook), `art` (with `rejection`: rejected artifacts and agent protocol errors), `retry`,
//!   `rec`, `secret` (secrets at rest and in logs: the scan of what the delegator writes), `tls`
//!   (transport security: certificates, plaintext interfaces, the TLS version), `url` (url parts
//!   validated before fetching: allowed origins, the trap on `127.0.0.9`).

mod evidence;
pub mod registry;

mod art;
mod auth;
mod card;
mod ctx;
mod ext;
mod front;
mod input;
mod limit;
mod names;
mod obs;
mod push;
mod rec;
mod rejection;
mod rest;
mod retry;
mod route;
pub mod secret;
mod send;
mod sign;
mod state;
mod tls;
mod url;
mod wire;
mod words;

#[cfg(test)]
pub(crate) mod test_support;

pub use evidence::{
    Evidence, FileFact, Record, Req, direct_reply, hash_reported_files, requests, unsent_work,
};
pub use limit::MIN_DEADLINE_MARGIN_MS;
pub use names::{TRAP_MARKER, trap_hits};
pub use obs::DEFAULT_POLL_INTERVAL_MS;
pub use registry::{Check, Level, Rule, registry};
pub use retry::{DEFAULT_RETRY_BASE_MS, DEFAULT_RETRY_CAP_MS};
