//! Test support shared by the delegator's integration tests: mock agents from `a2a-mock-agents`
//! (started, and read back through the journal) and the `a2a-delegator drive` binary as a child
//! process. Tests wait on journal events or process output (with a bound), never on sleeps.

#![allow(dead_code)]

use a2a_delegator::EscalationKind;
use a2a_delegator::engine::{Done, Engine, EngineConfig, Event as EngineEvent, Options};
use a2a_delegator::request::DelegationRequest;
use a2a_delegator::store::SqliteStore;
use a2a_mock_agents::{
    AgentSpec, Event, Fault, MockAgent, MockAgentBuilder, Network, RpcRequest, ScriptStep, Step,
};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::sync::mpsc;

/// An engine started in its own temporary store, with its event channel.
pub struct EngineRun {
    /// The engine.
    pub engine: Engine,
    rx: mpsc::UnboundedReceiver<EngineEvent>,
    dir: tempfile::TempDir,
}

impl EngineRun {
    /// Start an engine with the configuration `config` makes for a fresh store directory.
    pub async fn start(config: impl FnOnce(&std::path::Path) -> EngineConfig) -> EngineRun {
        let dir = tempfile::tempdir().unwrap();
        let (tx, rx) = mpsc::unbounded_channel();
        let engine = Engine::start(config(dir.path()), tx).await.unwrap();
        EngineRun { engine, rx, dir }
    }

    /// The next event (at most 20 s).
    pub async fn next(&mut self) -> EngineEvent {
        tokio::time::timeout(Duration::from_secs(20), self.rx.recv())
            .await
            .expect("no event within 20 s")
            .expect("engine gone")
    }

    /// The outcome of delegation `id`.
    pub async fn done(&mut self, id: &str) -> Done {
        loop {
            if let EngineEvent::Done(o) = self.next().await
                && o.id == id
            {
                return o;
            }
        }
    }

    /// Delegate `r` and wait for its outcome.
    pub async fn run(&mut self, r: DelegationRequest) -> Done {
        let id = r.id.clone();
        self.engine.delegate(r).await.unwrap();
        self.done(&id).await
    }

    /// The next escalation: (delegation, kind, question).
    pub async fn escalation(&mut self) -> (String, EscalationKind, String) {
        loop {
            if let EngineEvent::Escalate {
                id, kind, question, ..
            } = self.next().await
            {
                return (id, kind, question);
            }
        }
    }

    /// The store directory.
    pub fn store_dir(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// The engine's store, opened again.
    pub fn store(&self) -> SqliteStore {
        SqliteStore::open_dir(self.dir.path()).unwrap()
    }

    /// True when some file under the store directory (the database, its WAL, artifacts, logs)
    /// holds `needle`.
    pub fn store_holds(&self, needle: &str) -> bool {
        fn walk(dir: &std::path::Path, needle: &[u8]) -> bool {
            std::fs::read_dir(dir).unwrap().any(|e| {
                let p = e.unwrap().path();
                if p.is_dir() {
                    walk(&p, needle)
                } else {
                    let b = std::fs::read(&p).unwrap();
                    b.windows(needle.len()).any(|w| w == needle)
                }
            })
        }
        walk(self.dir.path(), needle.as_bytes())
    }
}

/// Engine options for tests: fast retries and polls, short margins.
pub fn fast_options() -> Options {
    Options {
        retry_base_ms: 10,
        retry_cap_ms: 50,
        poll_interval_ms: 20,
        deadline_margin_ms: 500,
        terminal_grace_ms: 100,
        ..Options::default()
    }
}

/// A delegation of `do the work` to skill `work` accepting text or JSON up to 1000 bytes,
/// 30 s, two retries.
pub fn request(id: &str) -> DelegationRequest {
    let mut r = DelegationRequest::new(id, "work", "do the work");
    r.artifact_spec.mime_types = vec!["text/plain".into(), "application/json".into()];
    r.artifact_spec.max_size_bytes = 1000;
    r.artifact_spec.streaming_preferred = true;
    r.timeout_seconds = 30;
    r.max_retries = 2;
    r
}

/// HTTP 503 without `Retry-After`.
pub fn busy() -> Fault {
    Fault::HttpStatus {
        status: 503,
        retry_after_s: None,
    }
}

/// A JSON-RPC error answer with the code's standard message.
pub fn rpc_error(code: i64) -> Fault {
    Fault::RpcError {
        code,
        message: None,
    }
}

/// A network of one agent whose new sends all run these steps.
pub async fn scripted(a: MockAgentBuilder, steps: Vec<ScriptStep>) -> Network {
    let rule = steps.into_iter().fold(MockAgent::when(), |r, s| r.step(s));
    network(vec![a.mount(rule).build()]).await
}

/// One text chunk of artifact `id` with these flags.
pub fn chunk(id: &str, text: &str, append: bool, last: bool) -> ScriptStep {
    let c = Step::chunk(id, text);
    let c = if append { c.append() } else { c };
    if last { c.last() } else { c }.into()
}

/// Hex sha256, as the delegator reports it.
pub fn sha(b: &[u8]) -> String {
    use sha2::Digest;
    a2a_delegator::artifacts::hex(&sha2::Sha256::digest(b))
}

/// A mock agent with the card the tests route by: skill `work`, no streaming, no push (tests
/// turn them on where they are the point).
pub fn agent(name: &str) -> MockAgentBuilder {
    MockAgent::builder(name)
        .skill("work")
        .streaming(false)
        .push_notifications(false)
}

/// Start a network of these agents (seed 1).
pub async fn network(agents: Vec<AgentSpec>) -> Network {
    let spec = MockAgent::network(1, agents);
    spec.validate().expect("valid test network");
    Network::start(spec).await.expect("network starts")
}

/// The card URL of `agent`.
pub fn card(net: &Network, agent: &str) -> String {
    net.card_url(agent).expect("agent in the network")
}

/// The JSON-RPC requests `agent` received with this method (1.0 name), in order.
pub fn requests(net: &Network, agent: &str, method: &str) -> Vec<RpcRequest> {
    calls(net, agent)
        .into_iter()
        .filter(|r| r.method == method)
        .collect()
}

/// Every JSON-RPC request `agent` received, in order.
pub fn calls(net: &Network, agent: &str) -> Vec<RpcRequest> {
    let mut all = net.journal().requests();
    all.retain(|r| r.agent == agent);
    all
}

/// The tasks `agent` created (deduplicated resends excluded): (task id, creating message id).
pub fn tasks(net: &Network, agent: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in net.journal().entries() {
        if let Event::TaskCreated {
            task_id,
            message_id,
            dedup: false,
            ..
        } = e.event
            && e.agent == agent
        {
            out.push((task_id, message_id));
        }
    }
    out
}

/// The last state the agent gave `task_id`, from the journal.
pub fn task_state(net: &Network, task_id: &str) -> Option<String> {
    let mut last = None;
    for e in net.journal().entries() {
        if let Event::TaskState { task_id: t, state } = e.event
            && t == task_id
        {
            last = Some(state);
        }
    }
    last
}

/// Wait (at most `secs`) until the journal satisfies `cond`; `what` names it in the panic.
pub async fn wait_journal(
    net: &Network,
    what: &str,
    secs: u64,
    cond: impl FnMut(&[a2a_mock_agents::Entry]) -> bool,
) {
    let waited = net
        .journal()
        .wait_for(Duration::from_secs(secs), cond)
        .await;
    if waited.is_err() {
        let seen: Vec<String> = net
            .journal()
            .requests()
            .into_iter()
            .map(|r| format!("{}: {}", r.agent, r.method))
            .collect();
        panic!("timed out waiting for {what}; requests seen: {seen:?}");
    }
}

/// Wait (at most `secs`) until `agent` has received JSON-RPC requests satisfying `cond`.
pub async fn wait_calls(
    net: &Network,
    agent: &str,
    secs: u64,
    cond: impl Fn(&[RpcRequest]) -> bool,
) {
    wait_journal(net, &format!("requests to {agent}"), secs, |es| {
        let of_agent: Vec<RpcRequest> = es
            .iter()
            .filter_map(|e| e.rpc_request())
            .filter(|r| r.agent == agent)
            .collect();
        cond(&of_agent)
    })
    .await;
}

/// Wait until `agent` has created a task for the message `message_id`.
pub async fn wait_task_for(net: &Network, agent: &str, message_id: &str) {
    wait_journal(net, &format!("a task on {agent} for {message_id}"), 10, |es| {
        es.iter().any(|e| {
            e.agent == agent
                && matches!(&e.event, Event::TaskCreated { message_id: m, dedup: false, .. } if m == message_id)
        })
    })
    .await;
}

/// Wait until `agent` has received `n` (or more) requests of `method`.
pub async fn wait_count(net: &Network, agent: &str, method: &str, n: usize) {
    wait_calls(net, agent, 10, |rs| {
        rs.iter().filter(|r| r.method == method).count() >= n
    })
    .await;
}

/// The `a2a-delegator drive` binary as a child process, spoken to over stdin/stdout with raw
/// lines (the tests also send malformed ones and check every line against the schemas, so the
/// harness's typed process wrapper does not fit).
pub struct Driver {
    child: tokio::process::Child,
    stdin: Option<tokio::process::ChildStdin>,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    /// Every line received, in order.
    pub seen: Vec<Value>,
}

impl Driver {
    /// Start `a2a-delegator drive --store STORE EXTRA...`.
    pub fn spawn(store: &std::path::Path, extra: &[&str]) -> Driver {
        use tokio::io::AsyncBufReadExt;
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a-delegator"))
            .arg("drive")
            .arg("--store")
            .arg(store)
            .args(extra)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn a2a-delegator");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped stdout");
        Driver {
            child,
            stdin,
            lines: tokio::io::BufReader::new(stdout).lines(),
            seen: Vec::new(),
        }
    }

    /// Send one message.
    pub async fn send(&mut self, v: Value) {
        self.send_raw(&v.to_string()).await;
    }

    /// Send one line as is.
    pub async fn send_raw(&mut self, line: &str) {
        use tokio::io::AsyncWriteExt;
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        stdin.flush().await.unwrap();
    }

    /// Close stdin (EOF).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next line (at most `secs`), or `None` at EOF.
    pub async fn next(&mut self, secs: u64) -> Option<Value> {
        let read = tokio::time::timeout(Duration::from_secs(secs), self.lines.next_line()).await;
        let Ok(line) = read else {
            panic!(
                "no line from the delegator in time; lines so far: {:#?}",
                self.seen
            );
        };
        let line = line.expect("reading stdout")?;
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
        self.seen.push(v.clone());
        Some(v)
    }

    /// Read lines (at most `secs` in all) until one satisfies `pred`.
    pub async fn until(&mut self, secs: u64, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let v = self.next(left.as_secs().max(1)).await.expect("EOF first");
            if pred(&v) {
                return v;
            }
        }
    }

    /// Send `init` and read `init_ok`.
    pub async fn init(
        &mut self,
        store: &std::path::Path,
        agents: &[&str],
        recovering: bool,
        options: Value,
    ) -> Value {
        self.send(
            json!({"type": "init", "store_dir": store, "recovering": recovering,
            "agents": agents, "webhook_base_url": null, "self_url": "http://127.0.0.1:1/delegator",
            "credential": "Bearer own-secret-token", "options": options}),
        )
        .await;
        let v = self.next(20).await.expect("init_ok");
        assert_eq!(v["type"], "init_ok", "{v}");
        v
    }

    /// Send a signal to the process.
    pub fn signal(&mut self, sig: nix::sys::signal::Signal) {
        let pid = self.child.id().expect("running") as i32;
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig).unwrap();
    }

    /// SIGKILL and wait for the exit.
    pub async fn crash(&mut self) {
        self.signal(nix::sys::signal::Signal::SIGKILL);
        self.wait_exit(10).await;
    }

    /// Wait (at most `secs`) for the exit.
    pub async fn wait_exit(&mut self, secs: u64) -> std::process::ExitStatus {
        tokio::time::timeout(Duration::from_secs(secs), self.child.wait())
            .await
            .expect("process did not exit in time")
            .unwrap()
    }
}
