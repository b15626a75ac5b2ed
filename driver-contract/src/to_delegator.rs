//! Messages from the harness to the delegator ([`ToDelegator`]), one per line on its stdin.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One line the harness writes to the delegator's stdin, tagged by its `type` field.
///
/// Receivers ignore fields they do not know; an unknown `type` is a parse error here, which a
/// delegator answers with `error` code [`DriverErrorCode::Unsupported`](crate::DriverErrorCode).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToDelegator {
    /// The first message: open the store, read the agent cards, answer `init_ok`.
    Init(Init),
    /// Start one delegation.
    Delegate(Delegate),
    /// The answer to an input escalation.
    Answer(Answer),
    /// A scoped credential for an auth escalation.
    Credential(Credential),
    /// Cancel a running delegation.
    Cancel(Cancel),
    /// Ask for every durable record (answered with one `snapshot_ok`).
    Snapshot,
}

/// `init`: where the store is, which agents exist, who the delegator is.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Init {
    /// Directory of the durable store (created if missing). The reference delegator falls back
    /// to `drive --store DIR` when this is absent or `null`.
    #[serde(default)]
    pub store_dir: Option<String>,
    /// `true`: resume every open delegation found in the store.
    #[serde(default)]
    pub recovering: bool,
    /// Agent card URLs, in routing preference order.
    #[schemars(inner(url))]
    pub agents: Vec<String>,
    /// Base URL of the webhook receiver (port `0`: any free port); `null` disables push.
    #[serde(default)]
    #[schemars(url)]
    pub webhook_base_url: Option<String>,
    /// `host:port` to bind the webhook receiver instead (for a proxy in front of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_listen: Option<String>,
    /// The delegator's own identity: appended to `chain`, refused when already in one.
    #[schemars(url)]
    pub self_url: String,
    /// The delegator's own credential; it must never be sent to any agent.
    #[serde(default)]
    pub credential: Option<String>,
    /// Credentials the delegator holds for agents' `securitySchemes` (A2A §7.3, §3.1.11): card
    /// URL -> the `Authorization` value to send to that agent (`Bearer agent-cred-7`), for
    /// `GetExtendedAgentCard` and for every request when the card requires it. Never the
    /// delegator's own `credential`, never sent to another agent; a secret (DLG-SECRET-01).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub agent_credentials: std::collections::BTreeMap<String, String>,
    /// URIs of the A2A extensions the delegator supports (may activate with `A2A-Extensions`);
    /// an agent whose card requires another extension is not to be used (A2A §4.6).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
    /// Origins (`scheme://host:port`, such as `http://127.0.0.1:4100`) the delegator may fetch
    /// `url` parts from (A2A §14.1.1). Given: a url part is fetched only when its scheme is
    /// `http` or `https`, it carries no userinfo and its origin is in this list, and a redirect
    /// is followed only to an origin in the list; any other url part is not fetched (the
    /// delegation fails, or completes without that artifact). Absent or empty: no list, the
    /// delegator's own policy applies. The harness gives the mock agents' own origins.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(inner(url))]
    pub fetch_origins: Vec<String>,
    /// Signed agent cards (A2A §8.4): the keys the delegator trusts and whether a card must
    /// carry a verified signature to be used. Absent: no policy (a delegator may still verify
    /// signatures it can check).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card_signatures: Option<CardSignaturePolicy>,
    /// Path of a PEM file with the certificate authorities the delegator must trust for
    /// `https://` agents (A2A §7.2), and no others: the harness makes one authority per case
    /// for agents served over TLS. Absent: every agent is plain HTTP on loopback. A delegator
    /// given roots must not fall back to plain HTTP (§7.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_roots: Option<String>,
    /// Tuning options, all optional.
    #[serde(default)]
    pub options: InitOptions,
}

/// `init.card_signatures`: how to treat signed agent cards (A2A §8.4.3).
///
/// A card is trusted when one of its `signatures` verifies: its protected header's `kid` names a
/// key of [`CardSignaturePolicy::trusted_keys`], that key is not expired (a JWK `exp`, seconds
/// since the epoch, in the past) and the JWS verifies over the card without `signatures` and
/// without default-valued members, canonicalised with JCS (RFC 8785). A key found only through
/// a card's `jku` is not trusted by that alone. A card with signatures none of which verifies
/// is never used (nothing is sent to its interfaces); an unsigned card is not used when
/// [`CardSignaturePolicy::required`] is true.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CardSignaturePolicy {
    /// The trusted public keys, a JWKS (RFC 7517 §5: `{"keys": [JWK, ...]}`); a key may carry
    /// `exp` (NumericDate), after which it is expired and never used.
    #[schemars(with = "serde_json::Value")]
    pub trusted_keys: Value,
    /// `true`: an agent whose card carries no signature that verifies is not used.
    #[serde(default)]
    pub required: bool,
}

/// `init.options`: every option is optional; an absent one takes the delegator's default (the
/// reference delegator's defaults are given per field). Unknown options are kept in
/// [`InitOptions::extra`] and ignored by delegators that do not know them.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InitOptions {
    /// Incoming `depth` above this is refused (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64", extend("default" = 3))]
    pub max_depth: Option<u64>,
    /// Input rounds per delegation; past it the delegation fails (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64", extend("default" = 3))]
    pub input_round_cap: Option<u64>,
    /// A child's deadline is this much earlier than ours (default 2000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64", extend("default" = 2000))]
    pub deadline_margin_ms: Option<u64>,
    /// Fraction of a budget kept back when it is split (default 0.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64", range(min = 0.0, max = 1.0), extend("default" = 0.1))]
    pub budget_reserve_fraction: Option<f64>,
    /// Base of the exponential retry backoff (default 2000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64", extend("default" = 2000))]
    pub retry_base_ms: Option<u64>,
    /// Cap of the retry backoff (default 60000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64", extend("default" = 60000))]
    pub retry_cap_ms: Option<u64>,
    /// First polling interval; backs off ×1.5 up to 10× while nothing changes (default 500).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64", range(min = 1), extend("default" = 500))]
    pub poll_interval_ms: Option<u64>,
    /// Seed of every jitter generator (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64", extend("default" = 0))]
    pub seed: Option<u64>,
    /// The protocol bindings agents may be called over, in order of preference. Absent: every
    /// binding the delegator speaks, in the order of each agent card's `supportedInterfaces`
    /// (A2A §8.3.2). Given: only these, in this order; an agent's other listed interfaces are
    /// fallbacks for a call its first one does not serve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub bindings: Option<Vec<BindingName>>,
    /// Any other option, such as the reference delegator's extras `max_event_bytes`,
    /// `write_buffer_bytes`, `request_timeout_ms`, `terminal_grace_ms` and
    /// `max_requests_per_agent`.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `delegate`: start one delegation. Absent fields take the defaults given per field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Delegate {
    /// The delegation id; unique in the store.
    #[schemars(length(min = 1, max = 128))]
    pub id: String,
    /// Skill id the agent's card must advertise.
    #[schemars(length(min = 1))]
    pub capability: String,
    /// The instructions (sent as a text part).
    #[schemars(length(min = 1))]
    pub text: String,
    /// Data the delegation holds: sent as a data part, and used to answer input questions that
    /// name a key (default `{}`).
    #[serde(default)]
    pub inputs: Map<String, Value>,
    /// What output is acceptable.
    #[serde(default)]
    pub artifact_spec: ArtifactSpec,
    /// Local deadline = the earlier of now + this and `deadline` (10..=3600, default 300).
    #[serde(default = "default_timeout_seconds")]
    #[schemars(range(min = 10, max = 3600))]
    pub timeout_seconds: u64,
    /// Absolute deadline (RFC 3339), or `null`.
    #[serde(default)]
    #[schemars(extend("format" = "date-time"))]
    pub deadline: Option<String>,
    /// The delegation's budget; the agent gets a share, the rest is the reserve (default 1.0).
    #[serde(default = "default_budget_usd")]
    #[schemars(range(min = 0.0))]
    pub budget_usd: f64,
    /// Transient failures are retried at most this often (0..=10, default 3).
    #[serde(default = "default_max_retries")]
    #[schemars(range(max = 10))]
    pub max_retries: u32,
    /// Recorded (default `normal`).
    #[serde(default)]
    pub priority: Priority,
    /// Depth at which this work reached the delegator (default 0).
    #[serde(default)]
    pub depth: u32,
    /// Delegators the work passed through, oldest first (default `[]`).
    #[serde(default)]
    #[schemars(inner(length(min = 1)))]
    pub chain: Vec<String>,
    /// Fan-out: one delegation per child; the parent's `done` comes after all children's.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub children: Option<Vec<ChildDelegate>>,
    /// Refinement of an earlier delegation: a new task in its context, sent to the same agent.
    #[serde(default)]
    pub refine_of: Option<String>,
    /// Reference-delegator extra: only this agent card URL may take the work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

fn default_timeout_seconds() -> u64 {
    300
}

fn default_budget_usd() -> f64 {
    1.0
}

fn default_max_retries() -> u32 {
    3
}

impl Delegate {
    /// A delegation with every optional field at its default.
    pub fn new(
        id: impl Into<String>,
        capability: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Delegate {
            id: id.into(),
            capability: capability.into(),
            text: text.into(),
            inputs: Map::new(),
            artifact_spec: ArtifactSpec::default(),
            timeout_seconds: default_timeout_seconds(),
            deadline: None,
            budget_usd: default_budget_usd(),
            max_retries: default_max_retries(),
            priority: Priority::default(),
            depth: 0,
            chain: Vec::new(),
            children: None,
            refine_of: None,
            agent: None,
        }
    }
}

/// `delegate.artifact_spec`: what output is acceptable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ArtifactSpec {
    /// Accepted media types (`type/*`, `*/*` allowed), at least one; sent as
    /// `acceptedOutputModes` (default `["application/json"]`).
    #[serde(default = "default_mime_types")]
    #[schemars(length(min = 1), inner(pattern(r"^[^/\s]+/[^/\s]+")))]
    pub mime_types: Vec<String>,
    /// Per artifact; rejected once crossed (1..=4 GiB, default 10 MiB).
    #[serde(default = "default_max_size_bytes")]
    #[schemars(range(min = 1, max = 4_294_967_296_u64))]
    pub max_size_bytes: u64,
    /// Stream when the card declares streaming (default `true`).
    #[serde(default = "default_true")]
    pub streaming_preferred: bool,
    /// JSON Schema every `data` part must satisfy, or `null`.
    #[serde(default)]
    #[schemars(schema_with = "any_value")]
    pub schema: Option<Value>,
}

fn default_mime_types() -> Vec<String> {
    vec!["application/json".to_owned()]
}

fn default_max_size_bytes() -> u64 {
    10 * 1024 * 1024
}

fn default_true() -> bool {
    true
}

impl Default for ArtifactSpec {
    fn default() -> Self {
        ArtifactSpec {
            mime_types: default_mime_types(),
            max_size_bytes: default_max_size_bytes(),
            streaming_preferred: true,
            schema: None,
        }
    }
}

/// The schema of a field that accepts any JSON value (described, not constrained).
pub(crate) fn any_value(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({})
}

/// An A2A protocol binding, by its short name (`init.options.bindings`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(transform = crate::plain_enum)]
pub enum BindingName {
    /// JSON-RPC 2.0 (`protocolBinding` `JSONRPC`).
    Jsonrpc,
    /// HTTP+JSON (`protocolBinding` `HTTP+JSON`).
    Rest,
    /// gRPC (`protocolBinding` `GRPC`).
    Grpc,
}

/// `delegate.priority`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
#[schemars(transform = crate::plain_enum)]
pub enum Priority {
    /// Low.
    Low,
    /// Normal (the default).
    #[default]
    Normal,
    /// High.
    High,
    /// Critical.
    Critical,
}

impl Priority {
    /// The wire name: `low`, `normal`, `high` or `critical`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Priority::Low => "low",
            Priority::Normal => "normal",
            Priority::High => "high",
            Priority::Critical => "critical",
        }
    }
}

impl std::fmt::Display for Priority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One child of a fan-out `delegate`; absent optional fields are inherited from the parent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChildDelegate {
    /// The child's delegation id.
    #[schemars(length(min = 1, max = 128))]
    pub id: String,
    /// Skill id.
    #[schemars(length(min = 1))]
    pub capability: String,
    /// Instructions.
    #[schemars(length(min = 1))]
    pub text: String,
    /// The child's inputs (else the parent's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Map<String, Value>>,
    /// The child's artifact spec (else the parent's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_spec: Option<ArtifactSpec>,
    /// The child's retry limit (else the parent's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 10))]
    pub max_retries: Option<u32>,
    /// The child's priority (else the parent's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<Priority>,
}

impl ChildDelegate {
    /// A child that inherits every optional field.
    pub fn new(
        id: impl Into<String>,
        capability: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        ChildDelegate {
            id: id.into(),
            capability: capability.into(),
            text: text.into(),
            inputs: None,
            artifact_spec: None,
            max_retries: None,
            priority: None,
        }
    }
}

/// `answer`: the reply to an `escalate` of kind `input`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Answer {
    /// The delegation id.
    #[schemars(length(min = 1, max = 128))]
    pub id: String,
    /// The answer text, sent to the task as a new message.
    pub text: String,
}

/// `credential`: a credential scoped to the agent and task of an `escalate` of kind `auth`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Credential {
    /// The delegation id.
    #[schemars(length(min = 1, max = 128))]
    pub id: String,
    /// The `Authorization` header value to use for that delegation's requests to that agent.
    #[schemars(length(min = 1))]
    pub credential: String,
}

/// `cancel`: cancel a running delegation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Cancel {
    /// The delegation id.
    #[schemars(length(min = 1, max = 128))]
    pub id: String,
}
