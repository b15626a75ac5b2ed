//! Behaviour as data: the [`NetworkSpec`] of a scenario, each agent's [`AgentSpec`], its
//! [`Rule`]s (a [`Matcher`], [`ScriptStep`]s and an optional [`Fault`]).
//!
//! Scripts load from TOML with unknown keys rejected ([`NetworkSpec::from_toml`] names the file,
//! line and field of any problem) and can be built in Rust with the builder ([`crate::MockAgent`]).

use crate::expect::{Times, TimesSchema};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A whole simulated network: its seed, journal bounds and agents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkSpec {
    /// Seed for everything random (task ids, generated artifact content).
    #[serde(default)]
    pub seed: u64,
    /// Journal bounds.
    #[serde(default)]
    pub journal: JournalSpec,
    /// The bindings served by every agent that does not list its own `bindings` (default
    /// `["jsonrpc"]`): how `a2a-harness run --binding rest` moves a whole scenario to another
    /// binding. A 0.3 agent serves JSON-RPC whatever this says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_bindings: Option<Vec<Binding>>,
    /// Serve every agent over TLS (HTTPS, gRPC over TLS with ALPN `h2`) with a certificate of
    /// the network's own authority ([`crate::tls::Authority`]), as if each had `[agent.tls]`:
    /// how `a2a-harness run --tls` moves a whole scenario to TLS. An agent's own `tls` wins.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tls: bool,
    /// The agents, each on its own `127.0.0.1` port.
    #[serde(default, rename = "agent")]
    pub agents: Vec<AgentSpec>,
}

/// Bounds of the traffic journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct JournalSpec {
    /// Entries kept; later ones are counted as dropped.
    pub max_entries: usize,
    /// Strings longer than this inside recorded payloads are replaced by a summary.
    pub max_string_bytes: usize,
    /// How much of the traffic is kept: `"full"` (the default) or `"truth"`.
    pub detail: JournalDetail,
}

impl Default for JournalSpec {
    fn default() -> Self {
        JournalSpec {
            max_entries: 200_000,
            max_string_bytes: 2048,
            detail: JournalDetail::Full,
        }
    }
}

/// How much of the traffic a journal keeps (`[journal] detail`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum JournalDetail {
    /// Everything: what the rules judge. Scenarios use it.
    #[default]
    Full,
    /// What a benchmark verifies and no more: requests without their params, headers or
    /// envelope, answers and stream events without their bodies, no `sse_event` for a generated
    /// artifact chunk a stream sends (chunks on the general path, for a 0.3 agent, a mutation or
    /// `omit_fields`, keep a payload-less one), and of each artifact's `artifact_chunk`s only
    /// those that start it (`append: false`): the rest are counted in its `artifact_sent`
    /// (`chunks`). Task lives, artifact sizes and sha256 are whole. Used by `a2a-harness bench`;
    /// the rules cannot judge such a journal.
    Truth,
}

/// Which protocol version an agent speaks: the protocol crate's one version type (`"1.0"`,
/// the default, or `"0.3"`, spoken through the protocol crate's adapter).
pub use a2a_protocol::ProtocolVersion;

/// A protocol binding: `"jsonrpc"`, `"rest"` (HTTP+JSON) or `"grpc"`.
pub use a2a_protocol::Binding;

mod agent;
mod defaults;
mod fault;
mod files;
mod load;
mod parts;
mod rule;
mod step;
mod validate;

pub use agent::*;
use defaults::{half, one};
pub use fault::*;
pub use files::read_beside;
pub use parts::{Base64Bytes, PartSpec};
pub use rule::*;
pub use step::*;

pub use load::{ScriptError, line_col, toml_error};
pub use validate::{Problem, ValidationError};
