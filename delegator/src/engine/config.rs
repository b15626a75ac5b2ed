//! How the engine is set up: [`EngineConfig`] and the tunable [`Options`] (the driver's
//! `init.options`).

use crate::bugs::Bugs;
use serde::{Deserialize, Serialize};
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
    /// Write buffer per artifact file.
    pub write_buffer_bytes: usize,
    /// Timeout of one unary request.
    pub request_timeout_ms: u64,
    /// How long a stream is still read after the final state, to catch protocol errors.
    pub terminal_grace_ms: u64,
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
        }
    }
}

/// How the engine is set up (the driver's `init`).
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Directory of the store and artifact files.
    pub store_dir: PathBuf,
    /// Agent card URLs, in routing preference order.
    pub agents: Vec<String>,
    /// Base URL agents post push notifications to (`None`: no push).
    pub webhook_base_url: Option<String>,
    /// Address the webhook receiver binds (default: host and port of `webhook_base_url`).
    pub webhook_listen: Option<String>,
    /// This delegator's own URL, appended to the chain.
    pub self_url: String,
    /// The delegator's own credential: never sent to an agent.
    pub own_credential: Option<String>,
    /// Options.
    pub options: Options,
    /// Planted bugs (test builds only).
    pub bugs: Bugs,
}
