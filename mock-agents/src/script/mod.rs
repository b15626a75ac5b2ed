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
}

impl Default for JournalSpec {
    fn default() -> Self {
        JournalSpec {
            max_entries: 200_000,
            max_string_bytes: 2048,
        }
    }
}

/// Which protocol version an agent speaks: the protocol crate's one version type (`"1.0"`,
/// the default, or `"0.3"`, spoken through the protocol crate's adapter).
pub use a2a_protocol::ProtocolVersion;

/// A protocol binding: `"jsonrpc"`, `"rest"` (HTTP+JSON) or `"grpc"`.
pub use a2a_protocol::Binding;

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

/// What to do with requests that match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// A name for reports (default: a description of the matcher).
    #[serde(default)]
    pub name: Option<String>,
    /// How many requests this rule must match, checked when the network stops (and by
    /// `Network::verify`): `expect = 2`, or a range as a string (`"1.."`, `"2..=4"`, `"..3"`).
    #[serde(default)]
    #[schemars(with = "Option<TimesSchema>")]
    pub expect: Option<Times>,
    /// Which requests this rule applies to (default: every new send).
    #[serde(default)]
    pub when: Matcher,
    /// Rules are tried by descending priority (default 0); within one priority a rule with a
    /// longer `when.message_id_prefix` goes first, otherwise file order.
    #[serde(default)]
    pub priority: i32,
    /// Apply this rule to at most this many requests, then fall through to later rules.
    #[serde(default)]
    pub times: Option<u32>,
    /// A fault applied to the matching request.
    #[serde(default)]
    pub fault: Option<Fault>,
    /// Deliberate wire mutations of everything sent about the task this rule creates.
    #[serde(default)]
    pub mutate: Vec<Mutation>,
    /// What a `CancelTask` does while the task is open.
    #[serde(default)]
    pub on_cancel: CancelBehaviour,
    /// Steps run for new work, in order.
    #[serde(default)]
    pub steps: Vec<ScriptStep>,
}

/// Selects incoming requests. Every given field must match; an empty matcher matches every new
/// send (`SendMessage` or `SendStreamingMessage` without a `taskId`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Matcher {
    /// The JSON-RPC method (default: the two send methods).
    #[serde(default)]
    pub method: Option<String>,
    /// The skill id, read from message or request metadata key `skill`.
    #[serde(default)]
    pub skill: Option<String>,
    /// The message text contains this.
    #[serde(default)]
    pub text_contains: Option<String>,
    /// The message text equals this.
    #[serde(default)]
    pub text_equals: Option<String>,
    /// A data part holds this value at this JSON pointer (`{"/jurisdiction" = "England"}`).
    #[serde(default)]
    pub data: Option<serde_json::Map<String, Value>>,
    /// The message continues this task id.
    #[serde(default)]
    pub task_id: Option<String>,
    /// The n-th (1-based) new send this agent receives.
    #[serde(default)]
    pub round: Option<u32>,
    /// The message's `messageId` equals this.
    #[serde(default)]
    pub message_id: Option<String>,
    /// The message's `messageId` starts with this (the longest matching prefix wins, see
    /// [`Rule::priority`]).
    #[serde(default)]
    pub message_id_prefix: Option<String>,
    /// The message's `messageId` matches this regular expression (`regex` crate syntax,
    /// unanchored: use `^…$` for a whole-id match).
    #[serde(default)]
    pub message_id_regex: Option<Pattern>,
    /// The message's `contextId` equals this.
    #[serde(default)]
    pub context_id: Option<String>,
    /// `true`: the message continues a task (any `taskId`); `false`: it carries no `taskId`.
    /// Without it (and without `task_id`) only new sends match.
    #[serde(default)]
    pub has_task_id: Option<bool>,
    /// Every one of these keys is present in the message's or the request's `metadata`.
    #[serde(default)]
    pub metadata_keys: Option<Vec<String>>,
    /// `true`: the message lists at least one `referenceTaskIds` entry; `false`: none.
    #[serde(default)]
    pub has_reference_task_ids: Option<bool>,
}

/// A regular expression in a script, written as a string (`regex` crate syntax).
#[derive(Debug, Clone)]
pub struct Pattern(regex::Regex);

impl Pattern {
    /// Compile a pattern.
    pub fn new(re: &str) -> Result<Self, regex::Error> {
        regex::Regex::new(re).map(Pattern)
    }

    /// Does the pattern match somewhere in `s`?
    pub fn is_match(&self, s: &str) -> bool {
        self.0.is_match(s)
    }

    /// The pattern's source text.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Serialize for Pattern {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Pattern::new(&s).map_err(|e| serde::de::Error::custom(format!("invalid regex: {e}")))
    }
}

impl schemars::JsonSchema for Pattern {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Pattern".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "format": "regex"})
    }
}

impl Matcher {
    /// A one-line description for reports, such as `method=GetTask text_contains="book"`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(m) = &self.method {
            parts.push(format!("method={m}"));
        }
        if let Some(s) = &self.skill {
            parts.push(format!("skill={s:?}"));
        }
        if let Some(t) = &self.text_contains {
            parts.push(format!("text_contains={t:?}"));
        }
        if let Some(t) = &self.text_equals {
            parts.push(format!("text_equals={t:?}"));
        }
        if let Some(d) = &self.data {
            parts.push(format!("data={}", Value::Object(d.clone())));
        }
        if let Some(t) = &self.task_id {
            parts.push(format!("task_id={t:?}"));
        }
        if let Some(r) = self.round {
            parts.push(format!("round={r}"));
        }
        if let Some(m) = &self.message_id {
            parts.push(format!("message_id={m:?}"));
        }
        if let Some(m) = &self.message_id_prefix {
            parts.push(format!("message_id_prefix={m:?}"));
        }
        if let Some(m) = &self.message_id_regex {
            parts.push(format!("message_id_regex={:?}", m.as_str()));
        }
        if let Some(c) = &self.context_id {
            parts.push(format!("context_id={c:?}"));
        }
        if let Some(b) = self.has_task_id {
            parts.push(format!("has_task_id={b}"));
        }
        if let Some(k) = &self.metadata_keys {
            parts.push(format!("metadata_keys={k:?}"));
        }
        if let Some(b) = self.has_reference_task_ids {
            parts.push(format!("has_reference_task_ids={b}"));
        }
        if parts.is_empty() {
            "every new send".into()
        } else {
            parts.join(" ")
        }
    }
}

/// What `CancelTask` does to an open task.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum CancelBehaviour {
    /// Cancel the task (default).
    #[default]
    Cancel,
    /// The task completes first: the cancel loses the race and gets -32002.
    CompleteFirst,
    /// Acknowledge with the current task but keep working (an agent that ignores cancels).
    Ignore,
}

/// A fault applied to one request, in the transport or HTTP layer.
///
/// Names follow the issue; toxiproxy equivalents: `stall` ≈ `latency`/`timeout`, `trickle` ≈
/// `bandwidth`, `close_after` ≈ `limit_data`, `reset_after` ≈ `reset_peer`.
///
/// Every fault applies to every binding the agent serves, in that transport's terms:
///
/// | fault | JSON-RPC | HTTP+JSON | gRPC |
/// |---|---|---|---|
/// | `drop_before`, `drop_response` | TCP reset | TCP reset | TCP reset (the whole HTTP/2 connection) |
/// | `http_status` | that status, text body | that status, AIP-193 error body | the gRPC code of that status (503 `UNAVAILABLE`, 429 `RESOURCE_EXHAUSTED`, 500 `INTERNAL`, …), trailers-only; `retry-after` kept as response metadata |
/// | `stall`, `stall_response` | no answer meanwhile | same | same |
/// | `close_after` | the SSE stream ends cleanly | same | the call ends with `OK` after that many messages (a premature clean end) |
/// | `reset_after` | half an SSE event, then TCP reset | same | half a frame, then TCP reset |
/// | `trickle` | the body (unary or SSE) sent slowly | same | the frames sent slowly, trailers last |
/// | `rpc_error` | HTTP 200 with the JSON-RPC error | the mapped HTTP status and error body | the mapped gRPC status with `ErrorInfo` details |
/// | `garbage_body` | HTTP 200, body not JSON | HTTP 200, body not JSON | one frame that is not protobuf (`0xFF` + the text), then `OK` |
/// | `omit_fields` | the envelope without the pointers | the body (the `result`) without them | the message encoded without them: a message field absent, a string or enum at its default |
///
/// Stream steps follow the same rule: `raw_sse` is that `data:` text over SSE and a frame of
/// undecodable protobuf (`0xFF` + the text) over gRPC; `huge_event` an SSE event or a gRPC
/// frame of that many bytes; `unknown_state` the unknown name over SSE and the unknown enum
/// number 99 (or the state itself when it is a number) over gRPC; `raw_event` its `result`
/// as the bare event (HTTP+JSON) or encoded as a `StreamResponse` (gRPC, sent as an
/// undecodable frame when it is no valid `StreamResponse`); `malformed_event` its event without
/// the field (gRPC: the field at its default, or an absent message). Mutations are defined on the
/// JSON-RPC envelope: `wrong_rpc_id` has no meaning on the other bindings, `unknown_field`,
/// `legacy_fields` and `lowercase_enums` act on HTTP+JSON bodies and have no protobuf form
/// (a gRPC answer they would make unencodable is sent unmutated).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Fault {
    /// Close the connection before the request is processed: nothing happened.
    DropBefore,
    /// Process the request, then close the connection instead of answering: an indefinite outcome.
    DropResponse,
    /// Answer with this HTTP status (and `Retry-After` seconds if given) without processing.
    HttpStatus {
        /// The HTTP status such as 500, 503 or 429.
        status: u16,
        /// `Retry-After` header value in seconds.
        #[serde(default)]
        retry_after_s: Option<u64>,
    },
    /// Wait this long before processing.
    Stall {
        /// Milliseconds.
        ms: u64,
    },
    /// Process the request (the task exists), then hold the answer this long: the client sees
    /// no reply meanwhile, an indefinite outcome (for example while it is killed).
    StallResponse {
        /// Milliseconds.
        ms: u64,
    },
    /// On a stream: close cleanly after this many events.
    CloseAfter {
        /// Events sent before the close.
        events: u32,
    },
    /// On a stream: after this many events send half an event and reset the connection.
    ResetAfter {
        /// Events sent before the reset.
        events: u32,
    },
    /// Send the response body at this many bytes per second.
    Trickle {
        /// Bytes per second (at least 1).
        bytes_per_sec: u64,
    },
    /// Answer with this JSON-RPC error without processing (HTTP 200).
    RpcError {
        /// The JSON-RPC error code, such as -32603.
        code: i64,
        /// The error message (default: the code's standard message).
        #[serde(default)]
        message: Option<String>,
    },
    /// Answer HTTP 200 with a body that is not JSON, without processing.
    GarbageBody {
        /// The body (default `<<garbage>>`).
        #[serde(default)]
        body: Option<String>,
    },
    /// Process the request normally, then remove these JSON pointers (into the JSON-RPC
    /// envelope, each starting with `/result/`) from the answer: a unary answer, or the first
    /// stream event in which any of them exists. A well-formed answer lacking REQUIRED fields
    /// (spec §5.7, §14.1.1). Journal: a `fault` entry `omit_fields:<the pointers removed>`
    /// just before the `response` or `sse_event` that lacks them.
    OmitFields {
        /// JSON pointers such as `/result/task/status` or `/result/statusUpdate/taskId`.
        pointers: Vec<String>,
    },
}

impl Fault {
    /// [`Fault::OmitFields`]: process normally, then remove these JSON pointers (each starting
    /// with `/result/`) from the answer.
    pub fn omit_fields<'a>(pointers: impl IntoIterator<Item = &'a str>) -> Fault {
        Fault::OmitFields {
            pointers: pointers.into_iter().map(str::to_string).collect(),
        }
    }
}

/// A deliberate deviation applied to every payload sent about a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mutation {
    /// Answer with a JSON-RPC `id` different from the request's.
    WrongRpcId,
    /// Add 0.3 `kind` discriminators and `final` flags.
    LegacyFields,
    /// Emit states and roles in lowercase 0.3 spelling.
    LowercaseEnums,
    /// Add a field no proto has.
    UnknownField,
}

/// Where an `artifact_url` step's url points. Every address is loopback; the trap is the
/// network's trap server on `127.0.0.9` (started when a script names a target that needs it),
/// which journals every connection it accepts (`trap_connection`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum UrlTarget {
    /// This agent's own blob endpoint (`http://127.0.0.1:PORT/blobs/KEY`): an allowed origin.
    #[default]
    Blob,
    /// The trap: `http://127.0.0.9:TRAP/trap/KEY`, an origin outside the allowed ones.
    Trap,
    /// This agent's own blob endpoint, which answers `302 Found` with `Location` the trap.
    RedirectToTrap,
    /// This agent's own blob endpoint with userinfo: `http://a2a:trap@127.0.0.1:PORT/blobs/KEY`
    /// (the blob is served: a delegator that drops the userinfo and fetches it is seen).
    Userinfo,
    /// `file:///etc/passwd`.
    File,
    /// `ftp://127.0.0.9:TRAP/KEY` (the trap sees any connection).
    Ftp,
    /// A `data:` URL holding a few bytes.
    Data,
}

impl UrlTarget {
    /// The agent's own blob, fetched as usual.
    pub fn is_blob(&self) -> bool {
        *self == UrlTarget::Blob
    }

    /// The trap server must listen for this target.
    pub fn needs_trap(&self) -> bool {
        matches!(
            self,
            UrlTarget::Trap | UrlTarget::RedirectToTrap | UrlTarget::Ftp
        )
    }

    /// Why a delegator must not fetch it (`None` for the own blob), as journaled in
    /// `forbidden_url`.
    pub fn forbidden_because(&self) -> Option<&'static str> {
        match self {
            UrlTarget::Blob => None,
            UrlTarget::Trap => Some("origin outside the allowed fetch origins"),
            UrlTarget::RedirectToTrap => {
                Some("the allowed origin redirects to an origin outside the allowed ones")
            }
            UrlTarget::Userinfo => Some("userinfo in the url"),
            UrlTarget::File => Some("scheme file"),
            UrlTarget::Ftp => Some("scheme ftp"),
            UrlTarget::Data => Some("scheme data"),
        }
    }
}

/// How generated artifact content is encoded in parts.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ContentKind {
    /// `text` parts of printable ASCII.
    #[default]
    Text,
    /// `raw` parts (base64 bytes).
    Raw,
}

/// What to do with a wrong answer to an input request.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum OnWrongAnswer {
    /// Ask the same question again (a new INPUT_REQUIRED status); after `max_wrong` wrong
    /// answers the task fails.
    #[default]
    Reask,
    /// Fail the task at the first wrong answer.
    Fail,
}

/// One behaviour step of a task's script.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "do", rename_all = "snake_case", deny_unknown_fields)]
pub enum ScriptStep {
    /// Answer with a `Message` and create no task (must be the only step).
    Reply {
        /// The answer text (a first text part; may be empty when `parts` are given).
        #[serde(default)]
        text: String,
        /// Literal parts after the text.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        parts: Vec<PartSpec>,
    },
    /// Answer the request with this JSON-RPC error and do nothing else (must be the only step).
    /// Applies to whatever method the rule matches (by default the two send methods); A2A codes
    /// (-32001..-32099) carry an `ErrorInfo` detail.
    Error {
        /// The JSON-RPC error code, such as -32001 or -32603.
        code: i64,
        /// The error message (default: the code's standard message).
        #[serde(default)]
        message: Option<String>,
    },
    /// Move the task to a state after a delay.
    State {
        /// A `TASK_STATE_*` name.
        state: String,
        /// The status message text (a reason or progress note).
        #[serde(default)]
        message: Option<String>,
        /// Literal parts of the status message (after `message`'s text part, if any).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        parts: Vec<PartSpec>,
        /// Milliseconds to wait first.
        #[serde(default)]
        delay_ms: u64,
    },
    /// An artifact of literal parts, sent whole (`parts`) or in chunks (`chunks`: the first
    /// starts the artifact, later ones have `append`, the last has `lastChunk`).
    Artifact {
        /// The artifact id (default `artifact-N`, N counting this task's artifacts).
        #[serde(default)]
        artifact_id: Option<String>,
        /// The artifact's `name` (default: its id).
        #[serde(default)]
        name: Option<String>,
        /// The artifact's `description`.
        #[serde(default)]
        description: Option<String>,
        /// The artifact's `metadata`.
        #[serde(default)]
        metadata: Option<serde_json::Map<String, Value>>,
        /// The parts, sent in one event.
        #[serde(default)]
        parts: Vec<PartSpec>,
        /// The parts of each chunk, one event per chunk.
        #[serde(default)]
        chunks: Vec<Vec<PartSpec>>,
        /// Milliseconds between chunks.
        #[serde(default)]
        delay_ms: u64,
    },
    /// Stream N artifacts of M chunks each, generated from the seed (or from `text`).
    Artifacts {
        /// Number of artifacts.
        #[serde(default = "one")]
        count: u32,
        /// Chunks per artifact.
        #[serde(default = "one")]
        chunks: u32,
        /// Bytes per chunk.
        #[serde(default = "default_chunk")]
        chunk_bytes: usize,
        /// Text or raw parts.
        #[serde(default)]
        content: ContentKind,
        /// Literal content instead of generated bytes (split into `chunks`).
        #[serde(default)]
        text: Option<String>,
        /// Send the chunks of all artifacts interleaved (round robin).
        #[serde(default)]
        interleave: bool,
        /// `mediaType` of every part.
        #[serde(default)]
        media_type: Option<String>,
        /// Never set `lastChunk` (a protocol violation).
        #[serde(default)]
        omit_last_chunk: bool,
        /// Milliseconds between chunks.
        #[serde(default)]
        delay_ms: u64,
    },
    /// An artifact whose part is a `url` to this agent's blob endpoint, serving `bytes` bytes.
    ArtifactUrl {
        /// Size of the blob.
        bytes: u64,
        /// `mediaType` of the part.
        #[serde(default)]
        media_type: Option<String>,
        /// Where the url points (default `blob`: this agent's own blob endpoint). The other
        /// targets are url parts a delegator must not fetch (A2A §14.1.1): the agent journals
        /// `forbidden_url` when it sends one, and no `artifact_sent` (there is nothing to commit).
        #[serde(default, skip_serializing_if = "UrlTarget::is_blob")]
        target: UrlTarget,
    },
    /// An artifact with one `data` part holding this value.
    DataArtifact {
        /// The data.
        data: Value,
        /// `mediaType` (default `application/json`).
        #[serde(default)]
        media_type: Option<String>,
    },
    /// Ask for input and wait for the answer on the same task, for `rounds` rounds.
    InputRequired {
        /// The question.
        question: String,
        /// The answer must match this (default: any answer).
        #[serde(default)]
        expect: Option<Matcher>,
        /// Number of questions asked in a row.
        #[serde(default = "one")]
        rounds: u32,
        /// What a wrong answer does.
        #[serde(default)]
        on_wrong: OnWrongAnswer,
        /// With `on_wrong = "reask"`: wrong answers tolerated before the task fails.
        #[serde(default = "default_max_wrong")]
        max_wrong: u32,
        /// Longest wait for an answer before failing the task.
        #[serde(default = "default_wait")]
        timeout_ms: u64,
    },
    /// Ask for credentials; only a message sent with `Authorization: <credential>` continues.
    AuthRequired {
        /// The exact `Authorization` header value required.
        credential: String,
        /// The status message.
        #[serde(default)]
        message: Option<String>,
        /// Messages with a wrong or missing credential tolerated (each answered with
        /// AUTH_REQUIRED again) before the task fails.
        #[serde(default = "default_max_wrong")]
        max_wrong: u32,
        /// Longest wait before failing the task.
        #[serde(default = "default_wait")]
        timeout_ms: u64,
        /// Resume this long after AUTH_REQUIRED without any client message, as if the
        /// credential arrived out of band (§7.6.2): the task goes on with the next step
        /// (journal: `continued` with outcome `out_of_band`). Must be below `timeout_ms`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resume_after_ms: Option<u64>,
    },
    /// Delegate to another agent of the network, propagating `x-deleg`, and wait for it.
    Delegate {
        /// The other agent's name.
        to: String,
        /// The text sent.
        text: String,
        /// The skill requested (`metadata.skill`).
        #[serde(default)]
        skill: Option<String>,
        /// Deadline margin kept for this hop.
        #[serde(default = "default_margin")]
        margin_ms: u64,
        /// Share of the remaining budget given to the child.
        #[serde(default = "half")]
        budget_share: f64,
    },
    /// Wait.
    Wait {
        /// Milliseconds.
        ms: u64,
    },
    /// Emit this value as the `result` of a stream event (raw access: anything goes).
    RawEvent {
        /// The `result` value.
        result: Value,
    },
    /// Emit this exact text as an SSE `data:` payload (for invalid JSON).
    RawSse {
        /// The data text.
        data: String,
    },
    /// Emit an `append: true` chunk for an artifact id never sent.
    AppendUnknown,
    /// Emit one hand-made artifact chunk: one text part for the artifact `artifact_id`, with the
    /// given `append` and `lastChunk` flags (the task's artifacts follow A2A's append/replace
    /// semantics, as for `artifacts`).
    Chunk {
        /// The artifact's id (a chunk without `append` starts or replaces it).
        artifact_id: String,
        /// The chunk's text.
        text: String,
        /// Append to the artifact instead of replacing it.
        #[serde(default)]
        append: bool,
        /// Mark the artifact complete.
        #[serde(default)]
        last_chunk: bool,
    },
    /// Emit a status update for the task whose `state` is this name outside the protocol's
    /// enum, such as `TASK_STATE_PAUSED` (the task's own state does not change).
    UnknownState {
        /// The state name sent; a known state is rejected (use `state`).
        state: String,
    },
    /// Emit one stream event larger than any sane limit.
    HugeEvent {
        /// Size of the event in bytes.
        bytes: usize,
    },
    /// Hold the task here until the test opens this gate (`Network::open_gate`); the task
    /// fails if it is not opened within `timeout_ms`. Gates are shared by the whole network and
    /// stay open once opened.
    Gate {
        /// The gate's name.
        gate: String,
        /// Longest wait for the gate.
        #[serde(default = "default_wait")]
        timeout_ms: u64,
    },
    /// Forget the task: later calls get -32001.
    Purge,
    /// Close every open stream of the task now, whatever its state.
    CloseStreams,
    /// POST, to every webhook configured for this task (with that config's token and
    /// authentication, as genuine pushes), a status update for a task and context the client
    /// never saw (fresh ids from the seed). Journal: `push` entries whose `task_id` is the
    /// foreign task's.
    PushForeign {
        /// The state of the foreign status update (a `TASK_STATE_*` name).
        state: String,
        /// Its status message text.
        #[serde(default)]
        message: Option<String>,
    },
    /// Send the task's stream subscribers a copy of a well-formed event of the task with one
    /// REQUIRED field removed (spec §5.7, §14.1.1); the task itself does not change.
    MalformedEvent {
        /// The event copied (default: `artifact_update` when `omit` starts with `artifact`,
        /// `task` for `id`, else `status_update`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        event: Option<EventKind>,
        /// The REQUIRED field removed, as a dotted path in the event: `taskId`, `contextId`,
        /// `status`, `status.state` (status update), `taskId`, `contextId`, `artifact`,
        /// `artifact.artifactId`, `artifact.parts` (artifact update), `id`, `status`,
        /// `status.state` (task).
        omit: String,
    },
}

/// Which event a `malformed_event` step copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A status update repeating the task's current status.
    StatusUpdate,
    /// An artifact update of a fresh one-chunk text artifact (`artifact-malformed-N`).
    ArtifactUpdate,
    /// The task snapshot.
    Task,
}

impl EventKind {
    /// The event a `malformed_event` step copies when it names none.
    pub fn for_omitted(omit: &str) -> EventKind {
        if omit == "artifact" || omit.starts_with("artifact.") {
            EventKind::ArtifactUpdate
        } else if omit == "id" {
            EventKind::Task
        } else {
            EventKind::StatusUpdate
        }
    }

    /// The REQUIRED fields a `malformed_event` step may omit from this event.
    pub fn omittable(self) -> &'static [&'static str] {
        match self {
            EventKind::StatusUpdate => &["taskId", "contextId", "status", "status.state"],
            EventKind::ArtifactUpdate => &[
                "taskId",
                "contextId",
                "artifact",
                "artifact.artifactId",
                "artifact.parts",
            ],
            EventKind::Task => &["id", "status", "status.state"],
        }
    }

    /// The member of `StreamResponse` that holds this event.
    pub fn member(self) -> &'static str {
        match self {
            EventKind::StatusUpdate => "statusUpdate",
            EventKind::ArtifactUpdate => "artifactUpdate",
            EventKind::Task => "task",
        }
    }
}

fn one() -> u32 {
    1
}
fn default_chunk() -> usize {
    1024
}
fn default_wait() -> u64 {
    30_000
}
fn default_max_wrong() -> u32 {
    3
}
fn default_margin() -> u64 {
    1000
}
fn half() -> f64 {
    0.5
}

mod files;
mod load;
mod parts;
mod validate;

pub use files::read_beside;
pub use parts::{Base64Bytes, PartSpec};

pub use load::{ScriptError, line_col, toml_error};
pub use validate::{Problem, ValidationError};
