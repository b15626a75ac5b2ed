//! `a2a-harness record`: an A2A-aware recording proxy.
//!
//! Each upstream agent gets a listen address, and each further origin its card's interfaces
//! name (a gRPC interface on a port of its own) one more on the same IP. The proxy serves the
//! upstream's agent card with its interface URLs pointing at itself and forwards every other
//! call unchanged (JSON-RPC,
//! HTTP+JSON, gRPC over HTTP/2 prior knowledge; unary and streaming; bodies streamed through as
//! they arrive), while it writes the traffic to one journal in the mock network's format
//! (`a2a_mock_agents::Entry` JSON lines, `journal.jsonl` in the output directory), each entry
//! named after the upstream's card name. The one change to traffic: a webhook URL the delegator
//! gives an upstream (push config) is replaced by a relay URL of the proxy, which records each
//! notification and forwards it to the delegator's webhook (answers naming the relay get the
//! delegator's URL back).
//!
//! Module map: `proxy` (accept loop, card, forwarding, push relay), `origins` (an agent's
//! origins and their listen addresses), `exchange` (decoding
//! requests and answers per binding into entries), `tasks` (the agent-side entries derived
//! from tasks and updates), `body` (pass-through bodies), `card` (URL substitution), `redact`
//! (credentials, push tokens, `--redact` paths, long strings), `sink` (the journal file).

mod body;
mod card;
mod exchange;
mod origins;
mod proxy;
pub mod redact;
mod sink;
mod tasks;

pub use card::{interface_urls, plain_origin, rewrite_card, rewrite_url};
pub use proxy::{Bounds, PUSH_PREFIX};
pub use redact::{ArtifactBudget, BadRedactPath, RedactPath, Redactor};
pub use sink::{JournalSink, SinkError};

use a2a_mock_agents::{AgentName, Event};
use a2a_protocol::AGENT_CARD_PATH;
use exchange::Recording;
use origins::Origins;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_util::task::TaskTracker;

/// The journal's file name inside the output directory.
pub const JOURNAL_FILE: &str = "journal.jsonl";

/// Default of `--max-inline-bytes`.
pub const DEFAULT_MAX_INLINE_BYTES: usize = 4096;

/// Default of `--max-artifact-bytes`: artifact content kept whole per artifact (4 MiB).
pub const DEFAULT_MAX_ARTIFACT_BYTES: u64 = 4 << 20;

/// Default of `--max-recorded-artifact-bytes`: artifact content kept whole per recording
/// (64 MiB).
pub const DEFAULT_MAX_RECORDED_ARTIFACT_BYTES: u64 = 64 << 20;

/// One upstream to proxy.
#[derive(Debug, Clone)]
pub struct UpstreamSpec {
    /// The upstream's origin (`http://host:port`) or card URL.
    pub url: String,
    /// Where the proxy listens for it (port 0: any free port).
    pub listen: SocketAddr,
}

/// How to record.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// Output directory (created): the journal goes to [`JOURNAL_FILE`] in it.
    pub out_dir: PathBuf,
    /// Payload paths to redact.
    pub redact: Vec<RedactPath>,
    /// Strings longer than this are kept as length + sha256 + their first bytes.
    pub max_inline_bytes: usize,
    /// Keep every string whole (ignore `max_inline_bytes`).
    pub keep_bytes: bool,
    /// Artifact content (the `text`, `raw` and `data` of artifact parts) kept whole per artifact
    /// despite `max_inline_bytes`, so that `scenario from-journal` replays the recorded bytes
    /// (0: artifacts are summarised like other strings).
    pub max_artifact_bytes: u64,
    /// Artifact content kept whole over the recording; beyond it artifacts are summarised.
    pub max_recorded_artifact_bytes: u64,
    /// Entries kept in memory for [`JournalSink::wait_for`] (0 for none).
    pub keep_in_memory: usize,
    /// Time bounds.
    pub bounds: Bounds,
}

impl RecordOptions {
    /// Defaults for `out_dir`.
    pub fn new(out_dir: impl Into<PathBuf>) -> Self {
        RecordOptions {
            out_dir: out_dir.into(),
            redact: Vec::new(),
            max_inline_bytes: DEFAULT_MAX_INLINE_BYTES,
            keep_bytes: false,
            max_artifact_bytes: DEFAULT_MAX_ARTIFACT_BYTES,
            max_recorded_artifact_bytes: DEFAULT_MAX_RECORDED_ARTIFACT_BYTES,
            keep_in_memory: 0,
            bounds: Bounds {
                connect: Duration::from_secs(10),
                upstream: Duration::from_secs(300),
                request_body: Duration::from_secs(30),
            },
        }
    }
}

/// A recording could not start.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// An `--upstream` that is no plain-HTTP origin or card URL.
    #[error("--upstream {url:?}: {why}")]
    BadUpstream {
        /// The value.
        url: String,
        /// Why.
        why: String,
    },
    /// The output directory cannot be made.
    #[error("--out {dir}: {source}")]
    Out {
        /// The directory.
        dir: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The journal file cannot be created.
    #[error(transparent)]
    Journal(#[from] SinkError),
    /// A listen address cannot be bound.
    #[error("--listen {addr}: {source}")]
    Listen {
        /// The address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// One running proxy.
#[derive(Debug, Clone)]
pub struct ProxiedAgent {
    /// The agent's name in the journal (the upstream card's name, or its `host:port` when the
    /// card could not be read at start).
    pub name: String,
    /// The upstream's `host:port`.
    pub upstream: String,
    /// Where the proxy listens.
    pub listen: SocketAddr,
    /// The further origins of the card read at start (`host:port`, such as a gRPC interface's
    /// own port) and where the proxy listens for each; a card read later may add more (the
    /// journal notes each).
    pub origins: Vec<(String, SocketAddr)>,
}

impl ProxiedAgent {
    /// The card URL to give a delegator.
    pub fn card_url(&self) -> String {
        format!("http://{}{AGENT_CARD_PATH}", self.listen)
    }
}

/// A running recording: one proxy per upstream, one journal.
pub struct Recorder {
    agents: Vec<ProxiedAgent>,
    sink: JournalSink,
    shutdown: watch::Sender<bool>,
    tasks: TaskTracker,
}

/// The `host:port` of an upstream URL (plain HTTP; the origin or the card URL).
fn upstream_authority(url: &str) -> Result<String, String> {
    let rest = url.strip_prefix("http://").ok_or_else(|| {
        "expected a plain http:// URL (the proxy speaks HTTP/1.1 and h2c, not TLS)".to_string()
    })?;
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let path = path.trim_end_matches('/');
    if !(path.is_empty() || path == AGENT_CARD_PATH) {
        return Err(format!(
            "give the upstream's origin (http://host:port) or its card URL (…{AGENT_CARD_PATH}), not the path {path:?}"
        ));
    }
    if authority.is_empty() || !authority.contains(':') {
        return Err("expected host:port".into());
    }
    Ok(authority.to_string())
}

impl Recorder {
    /// Bind every listen address, read each upstream's card (for its name; an unreadable card
    /// is a note, not an error) and start serving.
    pub async fn start(
        upstreams: &[UpstreamSpec],
        opts: RecordOptions,
    ) -> Result<Recorder, RecordError> {
        let mut parsed = Vec::new();
        for u in upstreams {
            let a = upstream_authority(&u.url).map_err(|why| RecordError::BadUpstream {
                url: u.url.clone(),
                why,
            })?;
            parsed.push((a, u.listen));
        }
        std::fs::create_dir_all(&opts.out_dir).map_err(|source| RecordError::Out {
            dir: opts.out_dir.clone(),
            source,
        })?;
        let sink = JournalSink::create(&opts.out_dir.join(JOURNAL_FILE), opts.keep_in_memory)?;
        let redactor = Redactor {
            paths: opts.redact.clone(),
            max_inline_bytes: (!opts.keep_bytes).then_some(opts.max_inline_bytes),
            artifacts: (opts.max_artifact_bytes > 0 && opts.max_recorded_artifact_bytes > 0).then(
                || ArtifactBudget::new(opts.max_artifact_bytes, opts.max_recorded_artifact_bytes),
            ),
        };
        let (tx, rx) = watch::channel(false);
        let tasks = TaskTracker::new();
        let mut agents: Vec<ProxiedAgent> = Vec::new();
        // Every listen address first: a card may name another upstream's origin.
        let mut listeners = Vec::new();
        for (upstream, listen) in parsed {
            let listener =
                TcpListener::bind(listen)
                    .await
                    .map_err(|source| RecordError::Listen {
                        addr: listen,
                        source,
                    })?;
            let bound = listener
                .local_addr()
                .map_err(|source| RecordError::Listen {
                    addr: listen,
                    source,
                })?;
            listeners.push((upstream, listener, bound));
        }
        let upstreams: Arc<Vec<(String, SocketAddr)>> =
            Arc::new(listeners.iter().map(|(u, _, b)| (u.clone(), *b)).collect());
        for (upstream, listener, bound) in listeners {
            let card = proxy::fetch_card(&upstream, opts.bounds).await;
            let base = match &card {
                Ok(c) => c
                    .get("name")
                    .and_then(serde_json::Value::as_str)
                    .filter(|n| !n.is_empty())
                    .unwrap_or(&upstream)
                    .to_string(),
                Err(_) => upstream.clone(),
            };
            let mut name = base.clone();
            let mut k = 2;
            while agents.iter().any(|a| a.name == name) {
                name = format!("{base}-{k}");
                k += 1;
            }
            let rec = Arc::new(Recording {
                agent: AgentName::from(name.as_str()),
                sink: sink.clone(),
                redactor: redactor.clone(),
                tracker: Mutex::new(tasks::TaskTracker::default()),
            });
            let origins = Arc::new(Origins::new(
                &upstream,
                bound,
                upstreams.clone(),
                tasks.clone(),
                rx.clone(),
            ));
            let p = Arc::new(proxy::Proxy {
                rec: rec.clone(),
                upstream: upstream.clone(),
                own: bound.to_string(),
                rest_prefixes: Arc::new(Mutex::new(vec![String::new()])),
                origins: origins.clone(),
                webhooks: Arc::new(Mutex::new(Vec::new())),
                bounds: opts.bounds,
            });
            match card {
                Ok(mut c) => {
                    p.proxy_card(&mut c);
                    p.learn_card(&c);
                }
                Err(e) => {
                    rec.record(Event::Note {
                        req: None,
                        text: format!("the card of {upstream} could not be read at start ({e}): the agent is named after its address"),
                    });
                }
            }
            tasks.spawn(proxy::serve(p, listener, rx.clone()));
            agents.push(ProxiedAgent {
                name,
                upstream,
                listen: bound,
                origins: origins.all().into_iter().skip(1).collect(),
            });
        }
        Ok(Recorder {
            agents,
            sink,
            shutdown: tx,
            tasks,
        })
    }

    /// The proxies, in `--upstream` order.
    pub fn agents(&self) -> &[ProxiedAgent] {
        &self.agents
    }

    /// The journal.
    pub fn journal(&self) -> &JournalSink {
        &self.sink
    }

    /// Stop accepting and close every connection. Every entry is already on disk.
    pub async fn shutdown(self) {
        let _ = self.shutdown.send(true);
        self.tasks.close();
        self.tasks.wait().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstreams_are_origins_or_card_urls() {
        assert_eq!(
            upstream_authority("http://127.0.0.1:9/").unwrap(),
            "127.0.0.1:9"
        );
        assert_eq!(
            upstream_authority("http://h:1/.well-known/agent-card.json").unwrap(),
            "h:1"
        );
        assert!(upstream_authority("https://h:1").is_err());
        assert!(upstream_authority("http://h:1/a2a").is_err());
        assert!(upstream_authority("http://h").is_err());
    }
}
