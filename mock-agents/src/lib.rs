//! # a2a-mock-agents: a scriptable simulated A2A 1.0 peer network
//!
//! The harness's instrument. Each [`Network`] runs N mock agents on `127.0.0.1` ephemeral ports,
//! each a real A2A 1.0 server (JSON-RPC, HTTP+JSON and/or gRPC on one port, per its script's
//! `bindings`) whose behaviour comes from a script ([`script`]): reply
//! with a message, run a task through its states, ask for input or credentials, stream chunked
//! artifacts generated from a seed, sub-delegate with `x-deleg`, break the protocol on purpose,
//! or inject transport faults. Everything is recorded in one [`Journal`] with a sequence number
//! across all agents, so verdicts come from observed traffic.
//!
//! Scripts load from TOML ([`NetworkSpec::from_toml`]) or are built in Rust with the
//! wiremock-style builder ([`MockAgent::builder`], [`MockAgent::when`], typed [`Step`]s, and
//! `expect(n)` verified when the [`Network`] is dropped or by [`Network::verify`]).
//!
//! Module map (all private except [`script`], the data format): `network` (start, gates, queued
//! faults, verification), `agent` (per-agent state, the card), `rpc` (router, JSON-RPC envelope,
//! version negotiation, binding-aware unary rendering), `rest` (the HTTP+JSON edge), `grpc` (the
//! gRPC edge: framing, statuses), `gate` (the front door of every A2A request: the card's
//! credential, tenant and required extensions; the extension echo), `matching` (rule selection), `faults`, `methods` (the one
//! dispatcher and the A2A method handlers, whatever the binding), `step_runner` (a task's steps), `task_events` (state changes and artifact chunks to
//! subscribers and webhooks), `sse` (stream framing: SSE or gRPC frames), `frames` (pre-encoded frames of generated chunks), `push`, `mutations`, `delegation`,
//! `blobs`, `content` (seeded artifact bytes), `journal`, `expect`, `builder`, `server` (the
//! accept loop), `timestamps` (the agent's clock and timestamp forms), `omit` (answers and
//! events lacking REQUIRED fields), `trap` (the trap server on `127.0.0.9` that journals every
//! connection: url parts a delegator must not fetch).

#![warn(missing_docs)]

mod agent;
mod blobs;
mod builder;
mod content;
mod delegation;
mod expect;
mod faults;
mod frames;
mod gate;
mod grpc;
mod journal;
mod matching;
mod methods;
mod mutations;
mod network;
mod omit;
mod push;
mod rest;
mod rpc;
pub mod script;
mod server;
mod signing;
mod sse;
mod step_runner;
mod task_events;
mod timestamps;
pub mod tls;
mod trap;

pub use builder::{
    ArtifactStep, ArtifactsStep, ChunkStep, InputStep, MockAgent, MockAgentBuilder, RuleBuilder,
    StateStep, Step,
};
pub use expect::{RuleCount, Times, TimesParseError, VerifyError};
pub use gate::{EXTENSIONS_HEADER, UNAUTHENTICATED_CODE};
pub use journal::{AgentName, Entry, Event, Journal, RpcRequest, Tripwire, WaitTimeout};
pub use network::{Network, NetworkError};
pub use rest::REST_PATH;
pub use rpc::{CUT_BODY, MOCK_PEER_HEADER, RPC_PATH};
pub use script::{
    AgentSpec, CardChange, EventKind, ExtensionSpec, Fault, IdStyle, Matcher, NetworkSpec,
    PartSpec, Pattern, Problem, QueuedFault, Rule, ScriptError, ScriptStep, SecurityScope,
    SecuritySpec, TimestampStyle, UrlTarget, ValidationError,
};
pub use signing::{JWKS_PATH, key_id, public_jwk, signing_key, trusted_keys};
pub use trap::{TRAP_HOST, TRAP_PATH_PREFIX};

/// The README's Rust examples, compiled as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
