//! A network: N agents started from one [`NetworkSpec`] on `127.0.0.1` ephemeral ports in one
//! process, every URL known before the first request, one journal, clean shutdown.

use crate::agent::{AgentState, NetShared};
use crate::journal::Journal;
use crate::rpc::router;
use crate::script::NetworkSpec;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use tokio::net::TcpListener;
use tokio::sync::watch;

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
    agents: BTreeMap<String, Arc<AgentState>>,
    journal: Journal,
    shutdown: watch::Sender<bool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
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
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
}

impl Network {
    /// Bind every agent's port first (so all URLs are known), then start serving.
    pub async fn start(spec: NetworkSpec) -> Result<Network, NetworkError> {
        let mut listeners = Vec::new();
        let mut urls = BTreeMap::new();
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
            urls.insert(a.name.clone(), format!("http://{addr}"));
            listeners.push(l);
        }
        let journal = Journal::new(spec.journal.clone());
        let http = reqwest::Client::builder()
            .no_proxy()
            .build()
            .map_err(|e| NetworkError::Client(e.to_string()))?;
        let shared = Arc::new(NetShared {
            journal: journal.clone(),
            urls: urls.clone(),
            seed: spec.seed,
            next_req: AtomicU64::new(1),
            http,
        });
        let (tx, rx) = watch::channel(false);
        let mut agents = BTreeMap::new();
        let mut tasks = Vec::new();
        for (a, l) in spec.agents.into_iter().zip(listeners) {
            let base = urls.get(&a.name).cloned().unwrap_or_default();
            let name = a.name.clone();
            let st = Arc::new(AgentState::new(a, base, shared.clone()));
            agents.insert(name, st.clone());
            tasks.push(tokio::spawn(crate::server::serve(
                l,
                router(st),
                rx.clone(),
            )));
        }
        Ok(Network {
            agents,
            journal,
            shutdown: tx,
            tasks,
        })
    }

    /// The journal of everything the network saw.
    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    /// Agent names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.agents.keys().map(String::as_str)
    }

    /// An agent's base URL (`http://127.0.0.1:PORT`).
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

    /// Stop every agent and wait for the servers to finish.
    pub async fn shutdown(self) {
        let _ = self.shutdown.send(true);
        for t in self.tasks {
            let _ = t.await;
        }
    }
}
