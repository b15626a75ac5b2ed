//! How the engine is set up: [`EngineConfig`] (built with [`EngineConfig::new`] and its
//! builder methods) and the tunable [`Options`] (the driver's `init.options`).
//!
//! Planted bugs (the harness's self-test) are not part of a normal configuration: they can be
//! set only with [`EngineConfig::with_bugs`], which exists only with the cargo feature
//! `planted-bugs`.

use crate::bugs::Bugs;
use a2a_driver_contract::InitOptions;
use a2a_protocol::Binding;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Tunable behaviour (the driver's `init.options`). Every field has a default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Options {
    /// Incoming work deeper than this is refused.
    pub max_depth: u32,
    /// Input rounds per delegation; past it the delegation fails.
    pub input_round_cap: u32,
    /// Each child's deadline is this much earlier than ours.
    pub deadline_margin_ms: u64,
    /// Fraction of a budget kept back for retries.
    pub budget_reserve_fraction: f64,
    /// Retry backoff base.
    pub retry_base_ms: u64,
    /// Retry backoff cap.
    pub retry_cap_ms: u64,
    /// First polling interval (backs off ×1.5 up to 10× while nothing changes).
    pub poll_interval_ms: u64,
    /// Seed for the jitter (ChaCha8).
    pub seed: u64,
    /// Largest SSE event accepted.
    pub max_event_bytes: usize,
    /// Write buffer per open artifact file, for parts smaller than it (larger parts go to the
    /// file without being copied); two while a background write is in flight.
    pub write_buffer_bytes: usize,
    /// Timeout of one unary request.
    pub request_timeout_ms: u64,
    /// How long a stream is still read after the final state, to catch protocol errors.
    pub terminal_grace_ms: u64,
    /// The protocol bindings agents may be called over, in order of preference (`jsonrpc`,
    /// `rest`, `grpc`). Empty (the default): every binding this delegator speaks, in the order
    /// of the agent's card (specification §8.3.2). Given: only these, in this order; the other
    /// usable interfaces of the card are fallbacks, tried in this order too.
    pub bindings: Vec<Binding>,
    /// HTTP requests in flight to one agent at once (each holds an HTTP/1.1 connection; a
    /// stream until its end); more wait for one to finish (see [`crate::client::cap`]).
    pub max_requests_per_agent: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_depth: 3,
            input_round_cap: 3,
            deadline_margin_ms: 2000,
            budget_reserve_fraction: 0.1,
            retry_base_ms: 2000,
            retry_cap_ms: 60_000,
            poll_interval_ms: 500,
            seed: 0,
            max_event_bytes: 16 * 1024 * 1024,
            write_buffer_bytes: 64 * 1024,
            request_timeout_ms: 30_000,
            terminal_grace_ms: 1000,
            bindings: Vec::new(),
            max_requests_per_agent: crate::client::cap::DEFAULT_MAX_PER_AGENT,
        }
    }
}

impl Options {
    /// The options of a driver `init` (the contract's [`InitOptions`]): each option given
    /// there, and the default for every other; unknown extra options are ignored. The error
    /// names the offending option.
    pub fn from_init(init: &InitOptions) -> Result<Options, a2a_protocol::codec::DecodeError> {
        let value =
            serde_json::to_value(init).map_err(|e| a2a_protocol::codec::DecodeError::Shape {
                path: String::new(),
                message: e.to_string(),
            })?;
        a2a_protocol::codec::decode_value(&value)
    }
}

/// The credentials for agents' security schemes, by card URL. Secrets: `Debug` shows the card
/// URLs only, and nothing writes them anywhere.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct AgentCredentials(BTreeMap<String, String>);

impl AgentCredentials {
    /// The credential for the agent whose card is at `card_url`.
    pub fn get(&self, card_url: &str) -> Option<&str> {
        self.0.get(card_url).map(String::as_str)
    }
}

impl std::fmt::Debug for AgentCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.0.keys().map(|k| (k, "<redacted>")))
            .finish()
    }
}

/// How the engine is set up (the driver's `init`).
///
/// ```
/// use a2a_delegator::{EngineConfig, Options};
///
/// let cfg = EngineConfig::new("/tmp/store", "http://127.0.0.1:9000/delegator")
///     .agents(vec!["http://127.0.0.1:9001/.well-known/agent-card.json".into()])
///     .options(Options {
///         retry_base_ms: 100,
///         ..Options::default()
///     });
/// # let _ = cfg;
/// ```
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Directory of the store and artifact files.
    pub(crate) store_dir: PathBuf,
    /// Agent card URLs, in routing preference order.
    pub(crate) agents: Vec<String>,
    /// Base URL agents post push notifications to (`None`: no push).
    pub(crate) webhook_base_url: Option<String>,
    /// Address the webhook receiver binds (default: host and port of `webhook_base_url`).
    pub(crate) webhook_listen: Option<String>,
    /// This delegator's own URL, appended to the chain.
    pub(crate) self_url: String,
    /// The delegator's own credential: never sent to an agent.
    pub(crate) own_credential: Option<String>,
    /// The credentials for agents' security schemes, by card URL (`init.agent_credentials`).
    pub(crate) agent_credentials: AgentCredentials,
    /// The A2A extensions this delegator supports (`init.extensions`).
    pub(crate) extensions: Vec<String>,
    /// The origins url parts may be fetched from (`init.fetch_origins`; empty: no list).
    pub(crate) fetch_origins: Vec<String>,
    /// Signed agent cards: trusted keys and whether a signature is required
    /// (`init.card_signatures`; `None`: no policy).
    pub(crate) card_signatures: Option<a2a_driver_contract::CardSignaturePolicy>,
    /// The PEM file of the certificate authorities to trust for `https://` agents
    /// (`init.tls_roots`); `None`: plain HTTP only.
    pub(crate) tls_roots: Option<PathBuf>,
    /// Options.
    pub(crate) options: Options,
    /// Planted bugs: none unless set with `with_bugs` (feature `planted-bugs`).
    pub(crate) bugs: Bugs,
}

impl EngineConfig {
    /// A configuration with the store in `store_dir` and this delegator's own URL `self_url`
    /// (appended to the chain of every delegation); no agents, no push, no own credential,
    /// default [`Options`].
    pub fn new(store_dir: impl Into<PathBuf>, self_url: impl Into<String>) -> Self {
        EngineConfig {
            store_dir: store_dir.into(),
            agents: Vec::new(),
            webhook_base_url: None,
            webhook_listen: None,
            self_url: self_url.into(),
            own_credential: None,
            agent_credentials: AgentCredentials::default(),
            extensions: Vec::new(),
            fetch_origins: Vec::new(),
            card_signatures: None,
            tls_roots: None,
            options: Options::default(),
            bugs: Bugs::none(),
        }
    }

    /// Agent card URLs, in routing preference order.
    pub fn agents(mut self, agents: Vec<String>) -> Self {
        self.agents = agents;
        self
    }

    /// The base URL agents post push notifications to (`None`: no push). Port 0 is replaced by
    /// the port the receiver binds.
    pub fn webhook_base_url(mut self, url: Option<String>) -> Self {
        self.webhook_base_url = url;
        self
    }

    /// The address the webhook receiver binds (`None`: host and port of the base URL).
    pub fn webhook_listen(mut self, addr: Option<String>) -> Self {
        self.webhook_listen = addr;
        self
    }

    /// The delegator's own credential: never sent to an agent.
    pub fn own_credential(mut self, credential: Option<String>) -> Self {
        self.own_credential = credential;
        self
    }

    /// The credentials the delegator holds for agents' security schemes, by card URL
    /// (`init.agent_credentials`): each goes to its agent only, with GetExtendedAgentCard and,
    /// when the agent's card requires it for every call, with every request (A2A §3.1.11, §7.3).
    pub fn agent_credentials(mut self, credentials: BTreeMap<String, String>) -> Self {
        self.agent_credentials = AgentCredentials(credentials);
        self
    }

    /// The A2A extensions this delegator supports (`init.extensions`): an agent whose card
    /// requires another one is not used; the required ones it supports are activated with
    /// `A2A-Extensions` on every request to that agent.
    pub fn extensions(mut self, extensions: Vec<String>) -> Self {
        self.extensions = extensions;
        self
    }

    /// The origins (`scheme://host:port`) url parts may be fetched from (`init.fetch_origins`):
    /// see [`crate::fetch`]. Empty: no list (any http(s) origin, still no userinfo).
    pub fn fetch_origins(mut self, origins: Vec<String>) -> Self {
        self.fetch_origins = origins;
        self
    }

    /// The signed-card policy (`init.card_signatures`, A2A §8.4): a card whose signatures do
    /// not verify with a trusted, unexpired key is not used, nor an unsigned one when
    /// signatures are required (see [`crate::signatures`]).
    pub fn card_signatures(
        mut self,
        policy: Option<a2a_driver_contract::CardSignaturePolicy>,
    ) -> Self {
        self.card_signatures = policy;
        self
    }

    /// Trust exactly the certificate authorities of this PEM file for agents served over TLS
    /// (`init.tls_roots`; see [`crate::tls`]): every call then goes over HTTPS (gRPC over TLS)
    /// and an interface whose URL is not `https://` is not used.
    pub fn tls_roots(mut self, path: Option<PathBuf>) -> Self {
        self.tls_roots = path;
        self
    }

    /// The tunable options.
    pub fn options(mut self, options: Options) -> Self {
        self.options = options;
        self
    }

    /// Plant bugs, for the harness's self-test (feature `planted-bugs` only).
    #[cfg(feature = "planted-bugs")]
    pub fn with_bugs(mut self, bugs: Bugs) -> Self {
        self.bugs = bugs;
        self
    }
}
