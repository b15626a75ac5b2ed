//! One mock agent's script ([`AgentSpec`]): its card (skills, extensions, security, signing,
//! changes over time), its listener's bounds, the shape of its ids and timestamps, and the
//! faults queued per method.

use super::*;

/// One mock agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentSpec {
    /// Unique name within the network; steps refer to other agents by it.
    pub name: String,
    /// Protocol version served.
    #[serde(default)]
    pub protocol: ProtocolVersion,
    /// The bindings served, in card order (default: the network's `default_bindings`, else
    /// `["jsonrpc"]`). All share one port, one task store, the rules, faults and the journal:
    /// JSON-RPC at `/a2a`, HTTP+JSON under `/rest`, gRPC (`lf.a2a.v1.A2AService`, HTTP/2
    /// prior knowledge) on the root. A 1.0 agent only: a 0.3 agent serves JSON-RPC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bindings: Option<Vec<Binding>>,
    /// The bindings listed in the card's `supportedInterfaces`, in this order (default: the
    /// served `bindings`). Advertising one that is not served makes an agent that fails on
    /// it: an unserved HTTP+JSON binding answers every `/rest` request with HTTP 404 and an
    /// error body, an unserved gRPC binding answers every call with `UNIMPLEMENTED`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advertised_bindings: Option<Vec<Binding>>,
    /// `capabilities.streaming` on the card; streaming methods answer -32004 when false.
    #[serde(default = "yes")]
    pub streaming: bool,
    /// `capabilities.pushNotifications`; push-config methods answer -32003 when false.
    #[serde(default = "yes")]
    pub push_notifications: bool,
    /// Deduplicate `messageId`: a resent id returns the task it created first.
    #[serde(default = "yes")]
    pub dedup_message_id: bool,
    /// Check incoming `x-deleg` (past deadline, depth over `max_depth`, own URL in chain) and
    /// reject violating work with TASK_STATE_REJECTED.
    #[serde(default = "yes")]
    pub enforce_x_deleg: bool,
    /// Depth limit for `enforce_x_deleg`.
    #[serde(default = "default_depth")]
    pub max_depth: u32,
    /// Close open streams when the task becomes INPUT_REQUIRED or AUTH_REQUIRED.
    #[serde(default = "yes")]
    pub close_stream_on_interrupt: bool,
    /// Extra deliveries of every push notification (0: each once; at-least-once allows more).
    #[serde(default)]
    pub push_duplicates: u32,
    /// Request bodies over this size get -32600 (HTTP 413) instead of being read.
    #[serde(default = "default_body_limit")]
    pub max_body_bytes: usize,
    /// Longest time a blocking `SendMessage` waits for a terminal or interrupted state.
    #[serde(default = "default_block_ms")]
    pub max_block_ms: u64,
    /// A connection that has not sent a request's complete headers this long after it opened
    /// (or after its previous response) is closed (slowloris).
    #[serde(default = "default_header_timeout")]
    pub header_timeout_ms: u64,
    /// A request whose body has not fully arrived this long after its headers gets -32600
    /// (HTTP 408) and its connection is closed.
    #[serde(default = "default_body_timeout")]
    pub body_timeout_ms: u64,
    /// Connections served at once. At the cap, the connection that has waited longest without
    /// sending a request is closed to make room; if every one is busy with a request, new ones
    /// wait (unaccepted, in the listen backlog) until one closes.
    #[serde(default = "default_max_connections")]
    pub max_connections: usize,
    /// Skills on the card.
    #[serde(default, rename = "skill")]
    pub skills: Vec<SkillSpec>,
    /// Output modes on the card (default `text/plain`, `application/json`, `application/octet-stream`).
    #[serde(default)]
    pub output_modes: Vec<String>,
    /// Input modes on the card (`defaultInputModes`; default `text/plain`, `application/json`).
    #[serde(default)]
    pub input_modes: Vec<String>,
    /// Answer -32005 to a message with a part whose `mediaType` is not among the input modes
    /// (`*/*` or `type/*` entries allowed); parts without a `mediaType` are always accepted.
    #[serde(default)]
    pub reject_unsupported_input_modes: bool,
    /// Skills only on the extended card. With any, the card declares
    /// `capabilities.extendedAgentCard` and `GetExtendedAgentCard` returns the card with them
    /// added; without, `GetExtendedAgentCard` answers -32004.
    #[serde(default, rename = "extended_skill")]
    pub extended_skills: Vec<SkillSpec>,
    /// The `tenant` every interface of the card carries (spec §8.3.2(4)). Every A2A request
    /// must carry it exactly (JSON-RPC `params.tenant`, the gRPC request's `tenant`, the
    /// HTTP+JSON `/{tenant}` path prefix); one with another tenant or none is refused with
    /// -32602 (HTTP+JSON 400, gRPC `INVALID_ARGUMENT`) naming the tenants served. A 1.0 agent
    /// only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The `protocolVersion` the card's interfaces advertise (default: the agent's protocol,
    /// `1.0`), such as `1.0.3`: the agent still speaks 1.0 and accepts any 1.0.x a client
    /// sends. It must name 1.0. A 1.0 agent only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card_protocol_version: Option<String>,
    /// Extensions on the card (`capabilities.extensions`). A request that does not list every
    /// `required` one in `A2A-Extensions` is refused with -32008; the extensions a request
    /// activates are echoed in the response's `A2A-Extensions` header. A 1.0 agent only.
    #[serde(default, rename = "extension", skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<ExtensionSpec>,
    /// `Cache-Control: max-age` of the card, in seconds.
    #[serde(default = "default_card_max_age")]
    pub card_max_age_s: u64,
    /// Send `Cache-Control`, `ETag` and `Last-Modified` with the card (and answer conditional
    /// requests with 304); `false`: none of them, every card request gets the whole card.
    #[serde(default = "yes")]
    pub card_cache_headers: bool,
    /// Changes of the card over time, in order of `after_ms`: from then on the card advertises
    /// the change's tenant (so its bytes, `ETag` and `Last-Modified` change) and the agent
    /// accepts that tenant as well as every earlier one. A 1.0 agent only.
    #[serde(default, rename = "card_change", skip_serializing_if = "Vec::is_empty")]
    pub card_changes: Vec<CardChange>,
    /// The card declares an HTTP authentication scheme (`securitySchemes` and
    /// `securityRequirements`) whose credential is this exact `Authorization` value; requests
    /// in its `scope` without it are refused as unauthenticated (HTTP 401 with
    /// `WWW-Authenticate`, gRPC `UNAUTHENTICATED`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security: Option<SecuritySpec>,
    /// The extended card lists interfaces with this `tenant` first (before the public card's),
    /// and the agent accepts it; it makes the card declare `capabilities.extendedAgentCard`
    /// like an `extended_skill` does. A 1.0 agent only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extended_tenant: Option<String>,
    /// How the task and context ids this agent mints look (default `uuid`); `opaque` ids
    /// contain characters a URL path must percent-encode and that must be echoed byte-exactly.
    #[serde(default, skip_serializing_if = "IdStyle::is_default")]
    pub id_style: IdStyle,
    /// Behaviour rules, first match wins.
    #[serde(default, rename = "rule")]
    pub rules: Vec<Rule>,
    /// Faults queued per method, applied to the next calls of that method before any rule, in
    /// order; once used up the agent behaves normally.
    #[serde(default, rename = "queued_fault")]
    pub queued_faults: Vec<QueuedFault>,
    /// Keep messages in task history (default). `false`: an agent that persists no history
    /// (spec §3.7): every Task it returns (send answers, `GetTask`, `ListTasks`, stream
    /// snapshots, `CancelTask`) carries no `history`, whatever `historyLength` asks; questions
    /// and final messages are only in `status.message`.
    #[serde(default = "yes")]
    pub keep_history: bool,
    /// The largest page `ListTasks` returns, whatever `pageSize` asks (which is still checked
    /// against 1..=100): a client must follow `nextPageToken` to see every task. Default: the
    /// requested size (50 when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_page_size_max: Option<u32>,
    /// The form of every timestamp the agent writes in JSON (HTTP+JSON and JSON-RPC bodies,
    /// stream events, push bodies); gRPC's binary `Timestamp` has one form. Default `millis`.
    #[serde(default)]
    pub timestamp_style: TimestampStyle,
    /// The card is signed (A2A §8.4): a JWS by the agent's own Ed25519 key, made from the
    /// network seed and the agent's name, in the card's `signatures`. A 1.0 agent only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card_signing: Option<CardSigning>,
    /// Serve this agent over TLS (its URLs become `https://`): the certificate it serves and
    /// the scheme of its card's interfaces ([`crate::tls::AgentTls`]). Absent: TLS only when
    /// the network's `tls` says so (with a valid certificate and `https` interfaces).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<crate::tls::AgentTls>,
}

/// How an agent writes timestamps in JSON (all valid ProtoJSON / RFC 3339 input, §5.6.1).
/// The instant is the same in every form: with `seconds` and `rotate` the agent's clock
/// stamps whole seconds, so no form drops a fraction.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TimestampStyle {
    /// `2026-03-20T10:00:01.123Z`: three fractional digits, `Z` (the default).
    #[default]
    Millis,
    /// `2026-03-20T10:00:01Z`: no fraction.
    Seconds,
    /// `2026-03-20T10:00:01.123000Z`: six fractional digits.
    Micros,
    /// `2026-03-20T10:00:01.123000000Z`: nine fractional digits.
    Nanos,
    /// `2026-03-20T15:30:01.123+05:30`: the same instant at another UTC offset (valid input;
    /// an agent SHOULD write `Z`, so conformance checkers flag it as the agent's deviation).
    Offset,
    /// Each timestamp written takes the next form: millis, seconds, micros, nanos, offset,
    /// then millis again.
    Rotate,
}

impl Default for AgentSpec {
    /// A well-behaved 1.0 agent with no name (give it one) and no rules.
    fn default() -> Self {
        AgentSpec {
            name: String::new(),
            protocol: ProtocolVersion::default(),
            bindings: None,
            advertised_bindings: None,
            streaming: yes(),
            push_notifications: yes(),
            dedup_message_id: yes(),
            enforce_x_deleg: yes(),
            max_depth: default_depth(),
            close_stream_on_interrupt: yes(),
            push_duplicates: 0,
            max_body_bytes: default_body_limit(),
            max_block_ms: default_block_ms(),
            header_timeout_ms: default_header_timeout(),
            body_timeout_ms: default_body_timeout(),
            max_connections: default_max_connections(),
            skills: Vec::new(),
            output_modes: Vec::new(),
            input_modes: Vec::new(),
            reject_unsupported_input_modes: false,
            extended_skills: Vec::new(),
            tenant: None,
            card_protocol_version: None,
            extensions: Vec::new(),
            card_max_age_s: default_card_max_age(),
            card_cache_headers: yes(),
            card_changes: Vec::new(),
            security: None,
            extended_tenant: None,
            id_style: IdStyle::default(),
            rules: Vec::new(),
            queued_faults: Vec::new(),
            keep_history: yes(),
            list_page_size_max: None,
            timestamp_style: TimestampStyle::default(),
            card_signing: None,
            tls: None,
        }
    }
}

impl AgentSpec {
    /// The bindings this agent serves, in card order, given the network's default (a 0.3
    /// agent serves JSON-RPC only).
    pub fn served_bindings(&self, network_default: Option<&[Binding]>) -> Vec<Binding> {
        if self.protocol == ProtocolVersion::V0_3 {
            return vec![Binding::JsonRpc];
        }
        self.bindings
            .as_deref()
            .or(network_default)
            .filter(|b| !b.is_empty())
            .map(<[Binding]>::to_vec)
            .unwrap_or_else(|| vec![Binding::JsonRpc])
    }

    /// The bindings its card lists, in order: `advertised_bindings`, else the served ones.
    pub fn advertised(&self, network_default: Option<&[Binding]>) -> Vec<Binding> {
        match &self.advertised_bindings {
            Some(b) => b.clone(),
            None => self.served_bindings(network_default),
        }
    }
}

/// A fault for the next `times` calls of one JSON-RPC method (`[[agent.queued_fault]]`).
///
/// Queued faults act before rule selection: a request they answer without processing
/// (`http_status`, `rpc_error`, `garbage_body`, `drop_before`) counts for no rule and no round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueuedFault {
    /// The JSON-RPC method (1.0 name, such as `SendMessage`; a 0.3 agent's calls are matched by
    /// their 1.0 name).
    pub method: String,
    /// How many calls of the method get the fault.
    #[serde(default = "one")]
    pub times: u32,
    /// The fault.
    pub fault: Fault,
}

fn yes() -> bool {
    true
}
fn default_card_max_age() -> u64 {
    60
}

/// An extension the card lists (`[[agent.extension]]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExtensionSpec {
    /// The extension's URI.
    pub uri: String,
    /// What it is for.
    #[serde(default)]
    pub description: String,
    /// Clients must request it (`A2A-Extensions`) in every request, else -32008.
    #[serde(default)]
    pub required: bool,
}

/// How an agent signs its card (`[agent.card_signing]`, A2A §8.4). The key id is
/// `<agent name>-key`; the public key is served as a JWKS at [`crate::JWKS_PATH`] on the agent's
/// origin (with `exp` when the key is expired).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CardSigning {
    /// Whether the key is one the delegator trusts (`init.card_signatures.trusted_keys`).
    #[serde(default)]
    pub key: SigningKeyTrust,
    /// The card is changed after it was signed (its `description` is edited), so the signature
    /// no longer verifies.
    #[serde(default)]
    pub altered: bool,
    /// The served card carries default-valued members the signature does not cover
    /// (`capabilities.extensions: []`, `securitySchemes: {}`, `securityRequirements: []`, each
    /// skill's `examples: []`): a verifier that does not drop default values (§8.4.1) rejects a
    /// good card.
    #[serde(default)]
    pub default_fields: bool,
    /// The protected header names the agent's JWKS URL in `jku` (default); `false`: `kid` only.
    #[serde(default = "yes")]
    pub jku: bool,
}

/// The standing of an agent's signing key with the delegator.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SigningKeyTrust {
    /// In the trusted keys, unexpired.
    #[default]
    Trusted,
    /// In the trusted keys (and the agent's JWKS) with an `exp` in the past
    /// ([`EXPIRED_KEY_EXP`]).
    Expired,
    /// Not in the trusted keys (the agent's own JWKS still serves it).
    Untrusted,
}

/// The `exp` of an expired signing key: 2000-01-01T00:00:00Z (a fixed instant, so runs are
/// deterministic).
pub const EXPIRED_KEY_EXP: i64 = 946_684_800;

/// A change of the card at a point in time (`[[agent.card_change]]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CardChange {
    /// Milliseconds after the agent created its first task (its first `task_created` in the
    /// journal); until then, and if it never creates one, the first card is served. Counting
    /// from the first task, not the network's start, keeps a slow-starting delegator from
    /// seeing a changed card before it delegated anything.
    pub after_ms: u64,
    /// The tenant every interface of the card carries from then on.
    pub tenant: String,
}

/// The card's security scheme and what it guards (`security = { … }`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SecuritySpec {
    /// The exact `Authorization` value that authenticates, `<scheme> <credentials>` such as
    /// `Bearer agent-cred-7`; the card declares an HTTP scheme of that `<scheme>`.
    pub credential: String,
    /// Which requests need it (default `extended_card`).
    #[serde(default)]
    pub scope: SecurityScope,
}

impl SecuritySpec {
    /// The HTTP authentication scheme: the credential's first word (`Bearer`).
    pub fn scheme(&self) -> &str {
        self.credential
            .split_whitespace()
            .next()
            .unwrap_or_default()
    }
}

/// Which requests the card's security scheme guards.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SecurityScope {
    /// Only `GetExtendedAgentCard`.
    #[default]
    ExtendedCard,
    /// Every A2A request (not the public card).
    All,
}

/// The shape of the task and context ids an agent mints, derived from the seed either way.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum IdStyle {
    /// A UUID.
    #[default]
    Uuid,
    /// A string with `/`, a space, `%2F`, `?`, `#`, `+`, `:`, `&`, `=` and a non-ASCII letter
    /// around seeded hex: it must be percent-encoded in a URL path and echoed byte-exactly.
    Opaque,
}

impl IdStyle {
    fn is_default(&self) -> bool {
        *self == IdStyle::Uuid
    }
}
fn default_depth() -> u32 {
    3
}
fn default_body_limit() -> usize {
    4 * 1024 * 1024
}
fn default_block_ms() -> u64 {
    30_000
}
fn default_header_timeout() -> u64 {
    10_000
}
fn default_body_timeout() -> u64 {
    30_000
}
fn default_max_connections() -> usize {
    1024
}

/// A skill advertised on the card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillSpec {
    /// Skill id.
    pub id: String,
    /// Output modes of this skill (default: the agent's).
    #[serde(default)]
    pub output_modes: Vec<String>,
    /// Tags (default: `["mock"]`).
    #[serde(default)]
    pub tags: Vec<String>,
}
