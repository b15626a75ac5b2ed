//! A network: N agents started from one [`NetworkSpec`] on `127.0.0.1` ephemeral ports in one
//! process, every URL known before the first request, one journal, clean shutdown; gates the
//! test opens, faults it queues, and the rules' expectations verified on drop.

use crate::agent::{AgentState, NetShared, lock_map};
use crate::expect::{RuleCount, VerifyError};
use crate::journal::Journal;
use crate::rpc::router;
use crate::script::NetworkSpec;
use crate::script::{Fault, QueuedFault};
use a2a_protocol::Method;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use tokio::net::TcpListener;
use tokio::sync::{Notify, watch};

/// A running network of mock agents.
///
/// ```
/// # tokio_test_block_on(async {
/// use a2a_mock_agents::{Network, NetworkSpec};
/// let spec = NetworkSpec::from_toml("example.toml", r#"
///     seed = 1
///     [[agent]]
///     name = "echo"
///     [[agent.rule]]
///     steps = [{ do = "reply", text = "hello" }]
/// "#).unwrap();
/// let net = Network::start(spec).await.unwrap();
/// assert!(net.card_url("echo").unwrap().ends_with("/.well-known/agent-card.json"));
/// net.shutdown().await;
/// # });
/// # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     tokio::runtime::Runtime::new().unwrap().block_on(f)
/// # }
/// ```
pub struct Network {
    /// The PEM of the network's certificate authority, when some agent serves TLS.
    ca_pem: Option<String>,
    agents: BTreeMap<String, Arc<AgentState>>,
    shared: Arc<NetShared>,
    journal: Journal,
    shutdown: watch::Sender<bool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    /// The expectations were handed to the caller ([`Network::finish`]): do not check on drop.
    reported: bool,
}

/// The network could not start.
#[derive(Debug, thiserror::Error)]
pub enum NetworkError {
    /// Binding a loopback port failed.
    #[error("cannot bind 127.0.0.1:0 for agent {agent}: {source}")]
    Bind {
        /// The agent.
        agent: String,
        /// The IO error.
        source: std::io::Error,
    },
    /// Binding the trap server on `127.0.0.9:0` failed.
    #[error("cannot bind the trap server on 127.0.0.9:0: {source}")]
    TrapBind {
        /// The IO error.
        source: std::io::Error,
    },
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
    /// The TLS material could not be made.
    #[error("cannot set up TLS: {0}")]
    Tls(String),
    /// No agent of the network has this name.
    #[error("no agent named {0:?} in the network")]
    UnknownAgent(String),
}

impl Network {
    /// Bind every agent's port first (so all URLs are known), then start serving.
    pub async fn start(spec: NetworkSpec) -> Result<Network, NetworkError> {
        let mut listeners = Vec::new();
        let mut urls = BTreeMap::new();
        let mut interface_bases = BTreeMap::new();
        let tls_of = |a: &crate::script::AgentSpec| a.tls.or(spec.tls.then(Default::default));
        let authority = match spec.agents.iter().any(|a| tls_of(a).is_some()) {
            true => {
                Some(crate::tls::Authority::new().map_err(|e| NetworkError::Tls(e.to_string()))?)
            }
            false => None,
        };
        for a in &spec.agents {
            let l =
                TcpListener::bind("127.0.0.1:0")
                    .await
                    .map_err(|source| NetworkError::Bind {
                        agent: a.name.clone(),
                        source,
                    })?;
            let addr = l.local_addr().map_err(|source| NetworkError::Bind {
                agent: a.name.clone(),
                source,
            })?;
            let (scheme, iface) = match tls_of(a) {
                None => ("http", "http"),
                Some(t) if t.interfaces == crate::tls::InterfaceScheme::Http => ("https", "http"),
                Some(_) => ("https", "https"),
            };
            urls.insert(a.name.clone(), format!("{scheme}://{addr}"));
            interface_bases.insert(a.name.clone(), format!("{iface}://{addr}"));
            listeners.push(l);
        }
        let journal = Journal::new(spec.journal.clone());
        let trap = if needs_trap(&spec) {
            Some(
                crate::trap::bind()
                    .await
                    .map_err(|source| NetworkError::TrapBind { source })?,
            )
        } else {
            None
        };
        let mut http = reqwest::Client::builder().no_proxy();
        if let Some(ca) = &authority {
            // Sub-delegation to the network's TLS agents: trust exactly its authority.
            let cfg = crate::tls::client_config(std::slice::from_ref(ca.der()), &[b"http/1.1"])
                .map_err(|e| NetworkError::Tls(e.to_string()))?;
            http = http.tls_backend_preconfigured(cfg);
        }
        let http = http
            .build()
            .map_err(|e| NetworkError::Client(e.to_string()))?;
        static NETWORKS: AtomicU64 = AtomicU64::new(0);
        let shared = Arc::new(NetShared {
            id: format!(
                "{}-{}",
                std::process::id(),
                NETWORKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            ),
            journal: journal.clone(),
            urls: urls.clone(),
            seed: spec.seed,
            next_req: AtomicU64::new(1),
            http,
            gates: Mutex::new(BTreeSet::new()),
            gate_opened: Notify::new(),
            trap: trap.as_ref().map(|(_, a)| *a),
        });
        let (tx, rx) = watch::channel(false);
        let mut agents = BTreeMap::new();
        let mut tasks = Vec::new();
        if let Some((l, _)) = trap {
            tasks.push(tokio::spawn(crate::trap::serve(
                l,
                journal.clone(),
                rx.clone(),
            )));
        }
        let default_bindings = spec.default_bindings.clone();
        let network_tls = spec.tls;
        for (a, l) in spec.agents.into_iter().zip(listeners) {
            let base = urls.get(&a.name).cloned().unwrap_or_default();
            let interface_base = interface_bases.get(&a.name).cloned().unwrap_or_default();
            let name = a.name.clone();
            let limits = crate::server::Limits::of(&a);
            let tls = match (a.tls.or(network_tls.then(Default::default)), &authority) {
                (Some(t), Some(ca)) => {
                    let config = ca
                        .issue(t.certificate)
                        .and_then(|id| id.server_config())
                        .map_err(|e| NetworkError::Tls(e.to_string()))?;
                    Some(crate::server::TlsListener {
                        tls: crate::tls::ServerTls {
                            config,
                            plaintext: t.interfaces == crate::tls::InterfaceScheme::Http,
                        },
                        certificate: t.certificate,
                        journal: journal.clone(),
                        agent: name.clone(),
                    })
                }
                _ => None,
            };
            let st = Arc::new(AgentState::new(
                a,
                base,
                interface_base,
                shared.clone(),
                default_bindings.as_deref(),
            ));
            agents.insert(name, st.clone());
            tasks.push(tokio::spawn(crate::server::serve(
                l,
                router(st),
                limits,
                tls,
                rx.clone(),
            )));
        }
        Ok(Network {
            ca_pem: authority.as_ref().map(|a| a.pem().to_string()),
            agents,
            shared,
            journal,
            shutdown: tx,
            tasks,
            reported: false,
        })
    }

    /// The journal of everything the network saw.
    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    /// The trap server's address (`127.0.0.9:PORT`), when a script needs it (an `artifact_url`
    /// step whose target is the trap, a redirect to it or `ftp`).
    pub fn trap_addr(&self) -> Option<std::net::SocketAddr> {
        self.shared.trap
    }

    /// Every address the network listens on: each agent's, then the trap's.
    pub fn listen_addrs(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .agents
            .values()
            .map(|a| {
                a.base_url
                    .split_once("://")
                    .map_or(a.base_url.as_str(), |(_, rest)| rest)
                    .to_string()
            })
            .collect();
        out.extend(self.shared.trap.map(|a| a.to_string()));
        out
    }

    /// Agent names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.agents.keys().map(String::as_str)
    }

    /// The certificate authority that issued the agents' certificates (PEM), when some agent
    /// serves TLS: what a client must trust, and nothing else. A new authority is made for
    /// every network.
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    /// An agent's base URL (`http://127.0.0.1:PORT`, `https://` over TLS).
    pub fn base_url(&self, agent: &str) -> Option<String> {
        self.agents.get(agent).map(|a| a.base_url.clone())
    }

    /// An agent's card URL.
    pub fn card_url(&self, agent: &str) -> Option<String> {
        self.base_url(agent)
            .map(|b| format!("{b}{}", a2a_protocol::AGENT_CARD_PATH))
    }

    /// An agent's JSON-RPC URL.
    pub fn rpc_url(&self, agent: &str) -> Option<String> {
        self.agents.get(agent).map(|a| a.rpc_url())
    }

    /// An agent's HTTP+JSON base URL (`http://127.0.0.1:PORT/rest`).
    pub fn rest_url(&self, agent: &str) -> Option<String> {
        self.agents.get(agent).map(|a| a.rest_url())
    }

    /// An agent's gRPC address (`127.0.0.1:PORT`; a tonic client wants `http://` before it).
    pub fn grpc_url(&self, agent: &str) -> Option<String> {
        self.agents.get(agent).map(|a| a.grpc_url())
    }

    /// The URL of an agent's interface for `binding`, whether served or not.
    pub fn url(&self, agent: &str, binding: a2a_protocol::Binding) -> Option<String> {
        self.agents.get(agent).map(|a| a.url_of(binding))
    }

    /// The bindings an agent serves, in card order.
    pub fn bindings(&self, agent: &str) -> Option<Vec<a2a_protocol::Binding>> {
        self.agents.get(agent).map(|a| a.bindings.clone())
    }

    /// Open a gate: every task held by a `gate` step of this name continues, and later ones pass.
    pub fn open_gate(&self, gate: &str) {
        lock_map(&self.shared.gates).insert(gate.to_string());
        self.shared.gate_opened.notify_waiters();
    }

    /// Queue a fault for the next `times` calls of `method` (a 1.0 name) on `agent`, after the
    /// faults already queued for that method.
    pub fn queue_fault(
        &self,
        agent: &str,
        method: Method,
        fault: Fault,
        times: u32,
    ) -> Result<(), NetworkError> {
        let a = self
            .agents
            .get(agent)
            .ok_or_else(|| NetworkError::UnknownAgent(agent.to_string()))?;
        lock_map(&a.queued).push(QueuedFault {
            method: method.as_str().to_string(),
            times,
            fault,
        });
        Ok(())
    }

    /// Compare every rule's `expect` with the number of requests it matched so far.
    ///
    /// `Ok` when all expectations hold (or there are none); otherwise the error's text is the
    /// expected-vs-matched report. Dropping the network runs the same check and panics with it.
    pub fn verify(&self) -> Result<(), VerifyError> {
        let mut rules = Vec::new();
        for (name, a) in &self.agents {
            let hits = lock_map(&a.rule_hits).clone();
            for (i, r) in a.spec.rules.iter().enumerate() {
                if let Some(expected) = r.expect {
                    rules.push(RuleCount {
                        agent: name.clone(),
                        rule: i,
                        name: r.name.clone().unwrap_or_else(|| r.when.describe()),
                        expected,
                        matched: u64::from(hits.get(i).copied().unwrap_or(0)),
                    });
                }
            }
        }
        if rules.iter().all(RuleCount::ok) {
            Ok(())
        } else {
            Err(VerifyError { rules })
        }
    }

    /// Stop every agent, wait for the servers to finish, and return the expectation check instead
    /// of panicking on drop (for callers that report it themselves, such as `a2a-mock serve`).
    pub async fn finish(mut self) -> Result<(), VerifyError> {
        let _ = self.shutdown.send(true);
        for t in std::mem::take(&mut self.tasks) {
            let _ = t.await;
        }
        let result = self.verify();
        self.reported = true;
        result
    }

    /// Stop every agent and wait for the servers to finish (expectations are checked when the
    /// network is dropped, at the end of this call).
    pub async fn shutdown(mut self) {
        let _ = self.shutdown.send(true);
        for t in std::mem::take(&mut self.tasks) {
            let _ = t.await;
        }
    }
}

impl Drop for Network {
    /// Stop the servers and check the rules' expectations, panicking with the report when one
    /// fails (not while the thread is already panicking).
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
        if self.reported || std::thread::panicking() {
            return;
        }
        if let Err(e) = self.verify() {
            panic!("{e}");
        }
    }
}

/// A script of the network sends a url part that points at the trap (directly, by a redirect,
/// or over `ftp`).
fn needs_trap(spec: &NetworkSpec) -> bool {
    spec.agents
        .iter()
        .flat_map(|a| &a.rules)
        .flat_map(|r| &r.steps)
        .any(|s| matches!(s, crate::script::ScriptStep::ArtifactUrl { target, .. } if target.needs_trap()))
}
