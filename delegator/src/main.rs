//! `a2a-delegator`: the reference delegator's command line (driver protocol, one-shot delegation,
//! dead-letter queue, status).

#[cfg(feature = "planted-bugs")]
use a2a_delegator::bugs::Bugs;
use a2a_delegator::driver::{self, DriveOptions};
use a2a_delegator::engine::{Engine, EngineConfig, Event, Options};
use a2a_delegator::metrics;
use a2a_delegator::request::RequestExt;
use a2a_delegator::request::{ArtifactSpec, DelegationRequest, Priority};
use a2a_delegator::store::{DelegationState, DelegationStore, SqliteStore};
use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use serde_json::{Map, Value};
use std::path::PathBuf;
use tokio::io::AsyncBufReadExt;

const EXAMPLES: &str = "\
Examples:
  # Be driven by the harness (newline-delimited JSON on stdin/stdout, see docs/driver-protocol.md):
  a2a-delegator drive --store ./store

  # One delegation from the command line:
  a2a-delegator delegate --agent http://127.0.0.1:9101/.well-known/agent-card.json \\
      --skill clause-extraction --text 'Extract the clauses' --input jurisdiction=England \\
      --accept application/json --accept text/plain --timeout 120

  # The dead-letter queue:
  a2a-delegator dlq list --store ./store
  a2a-delegator dlq resubmit d1 --store ./store

  # Metrics per agent and skill, and open delegations past their deadline:
  a2a-delegator status --store ./store";

/// The reference A2A 1.0 delegator.
#[derive(Parser, Debug)]
#[command(name = "a2a-delegator", version, about, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
// Parsed once at start-up: the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
enum Cmd {
    /// Speak the driver protocol on stdin/stdout (logs on stderr).
    Drive {
        /// Store directory, used when `init.store_dir` is absent.
        #[arg(long, env = "A2A_DELEGATOR_STORE")]
        store: Option<PathBuf>,
        /// Plant a named bug (test builds with the `planted-bugs` feature only).
        #[cfg(feature = "planted-bugs")]
        #[arg(long = "bug", hide = true)]
        bugs: Vec<String>,
        /// Append the name of every planted bug whose site the run reaches to this file (test
        /// builds with the `planted-bugs` feature only).
        #[cfg(feature = "planted-bugs")]
        #[arg(long = "trace-bug-sites", hide = true)]
        trace_bug_sites: Option<PathBuf>,
    },
    /// Run one delegation and print its events as JSON lines; escalations are answered from
    /// stdin, one line each.
    Delegate(DelegateArgs),
    /// The dead-letter queue.
    Dlq {
        #[command(subcommand)]
        cmd: DlqCmd,
    },
    /// Metrics per agent and skill, and open delegations past their deadline.
    Status {
        /// Store directory.
        #[arg(
            long,
            default_value = "a2a-delegator-store",
            env = "A2A_DELEGATOR_STORE"
        )]
        store: PathBuf,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand, Debug)]
enum DlqCmd {
    /// List dead-lettered delegations (JSON lines).
    List {
        /// Store directory.
        #[arg(
            long,
            default_value = "a2a-delegator-store",
            env = "A2A_DELEGATOR_STORE"
        )]
        store: PathBuf,
    },
    /// Resubmit a dead-lettered delegation as a new delegation `<ID>.r<N>`, and run it.
    Resubmit {
        /// The dead-lettered delegation id.
        id: String,
        /// Store directory.
        #[arg(
            long,
            default_value = "a2a-delegator-store",
            env = "A2A_DELEGATOR_STORE"
        )]
        store: PathBuf,
        /// This delegator's URL (for the x-deleg chain).
        #[arg(long, default_value = "http://127.0.0.1/a2a-delegator")]
        self_url: String,
    },
}

#[derive(clap::Args, Debug)]
struct DelegateArgs {
    /// Agent card URL.
    #[arg(long)]
    agent: String,
    /// Skill id the agent must advertise.
    #[arg(long)]
    skill: String,
    /// Instructions.
    #[arg(long)]
    text: String,
    /// Delegation id (default: a random uuid).
    #[arg(long)]
    id: Option<String>,
    /// An input the delegation holds, `key=value` (repeatable; values that parse as JSON are JSON).
    #[arg(long = "input", value_name = "KEY=VALUE")]
    inputs: Vec<String>,
    /// Accepted media type (repeatable; default application/json and text/plain).
    #[arg(long = "accept", value_name = "MIME")]
    accept: Vec<String>,
    /// Largest accepted artifact in bytes.
    #[arg(long, default_value_t = 10 * 1024 * 1024)]
    max_size: u64,
    /// Do not stream even when the agent can.
    #[arg(long)]
    no_stream: bool,
    /// JSON Schema file for data parts.
    #[arg(long)]
    schema: Option<PathBuf>,
    /// Timeout in seconds (10..=3600).
    #[arg(long, default_value_t = 300)]
    timeout: u64,
    /// Absolute deadline (RFC 3339).
    #[arg(long)]
    deadline: Option<String>,
    /// Budget in USD.
    #[arg(long, default_value_t = 1.0)]
    budget: f64,
    /// Retries of transient failures (0..=10).
    #[arg(long, default_value_t = 3)]
    max_retries: u32,
    /// Priority: low, normal, high, critical.
    #[arg(long, default_value = "normal")]
    priority: String,
    /// Store directory.
    #[arg(
        long,
        default_value = "a2a-delegator-store",
        env = "A2A_DELEGATOR_STORE"
    )]
    store: PathBuf,
    /// This delegator's URL (for the x-deleg chain).
    #[arg(long, default_value = "http://127.0.0.1/a2a-delegator")]
    self_url: String,
    /// Base URL for push notifications (enables push).
    #[arg(long)]
    webhook_base_url: Option<String>,
    /// Retry backoff base in milliseconds.
    #[arg(long, default_value_t = 2000)]
    retry_base_ms: u64,
}

fn init_logs() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("A2A_DELEGATOR_LOG")
        .or_else(|_| tracing_subscriber::EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

fn parse_priority(s: &str) -> Result<Priority> {
    Ok(match s {
        "low" => Priority::Low,
        "normal" => Priority::Normal,
        "high" => Priority::High,
        "critical" => Priority::Critical,
        other => bail!("--priority: {other:?} is not one of low, normal, high, critical"),
    })
}

#[tokio::main]
async fn main() -> Result<()> {
    init_logs();
    let cli = Cli::parse();
    match cli.cmd {
        #[cfg(feature = "planted-bugs")]
        Cmd::Drive {
            store,
            bugs,
            trace_bug_sites,
        } => {
            if let Some(path) = trace_bug_sites {
                a2a_delegator::bugs::site_trace::write_to(path);
            }
            let mut set = Bugs::none();
            for b in &bugs {
                let bug = a2a_delegator::bugs::Bug::parse(b).with_context(|| {
                    let known: Vec<&str> = a2a_delegator::bugs::Bug::ALL
                        .iter()
                        .map(|b| b.name())
                        .collect();
                    format!("--bug: unknown bug {b:?} (known: {})", known.join(", "))
                })?;
                set = set.with(bug);
            }
            drive(DriveOptions { store, bugs: set }).await
        }
        #[cfg(not(feature = "planted-bugs"))]
        Cmd::Drive { store } => drive(DriveOptions { store }).await,
        Cmd::Delegate(args) => delegate(args).await,
        Cmd::Dlq {
            cmd: DlqCmd::List { store },
        } => {
            let s = SqliteStore::open_dir(&store).context("opening the store")?;
            for e in s.dlq_list()? {
                println!("{}", serde_json::to_string(&e)?);
            }
            Ok(())
        }
        Cmd::Dlq {
            cmd:
                DlqCmd::Resubmit {
                    id,
                    store,
                    self_url,
                },
        } => resubmit(id, store, self_url).await,
        Cmd::Status { store, json } => {
            let s = SqliteStore::open_dir(&store).context("opening the store")?;
            let status = metrics::compute(&s.list()?, time::OffsetDateTime::now_utc());
            if json {
                println!("{}", serde_json::to_string_pretty(&status)?);
            } else {
                print!("{}", metrics::render(&status));
            }
            Ok(())
        }
    }
}

async fn drive(opts: DriveOptions) -> Result<()> {
    let stdin = tokio::io::BufReader::new(tokio::io::stdin());
    let stdout = tokio::io::stdout();
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("installing the SIGTERM handler")?;
    tokio::select! {
        r = driver::drive(stdin, stdout, opts) => {
            r.context("driver")?;
            Ok(())
        }
        _ = term.recv() => {
            // SIGTERM: exit now. Every acknowledged change is already durable.
            std::process::exit(0);
        }
    }
}

fn parse_inputs(items: &[String]) -> Result<Map<String, Value>> {
    let mut m = Map::new();
    for it in items {
        let (k, v) = it
            .split_once('=')
            .with_context(|| format!("--input {it:?}: expected KEY=VALUE"))?;
        let value = serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.to_string()));
        m.insert(k.to_string(), value);
    }
    Ok(m)
}

async fn run_one(cfg: EngineConfig, req: DelegationRequest) -> Result<DelegationState> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let engine = Engine::start(cfg, tx).await?;
    for e in engine.card_errors() {
        eprintln!("warning: {e}");
    }
    let id = req.id.clone();
    engine.delegate(req).await?;
    let mut stdin = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    while let Some(ev) = rx.recv().await {
        print!("{}", driver::event_message(&ev).to_line()?);
        match ev {
            Event::Escalate { id: eid, kind, .. } => {
                let line = stdin
                    .next_line()
                    .await?
                    .context("stdin closed while an escalation was waiting")?;
                match kind {
                    a2a_delegator::EscalationKind::Input => engine.answer(&eid, line)?,
                    a2a_delegator::EscalationKind::Auth => engine.credential(&eid, line)?,
                }
            }
            Event::Done(o) if o.id == id => return Ok(o.state.into()),
            _ => {}
        }
    }
    bail!("the engine stopped without an outcome")
}

async fn delegate(a: DelegateArgs) -> Result<()> {
    let schema = match &a.schema {
        Some(p) => Some(
            serde_json::from_slice(&std::fs::read(p).with_context(|| format!("{}", p.display()))?)
                .with_context(|| format!("{}: not JSON", p.display()))?,
        ),
        None => None,
    };
    let mut req = DelegationRequest::new(
        a.id.clone()
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string()),
        a.skill.clone(),
        a.text.clone(),
    );
    req.inputs = parse_inputs(&a.inputs)?;
    req.artifact_spec = ArtifactSpec {
        mime_types: if a.accept.is_empty() {
            vec!["application/json".into(), "text/plain".into()]
        } else {
            a.accept.clone()
        },
        max_size_bytes: a.max_size,
        streaming_preferred: !a.no_stream,
        schema,
    };
    req.timeout_seconds = a.timeout;
    req.deadline = a.deadline.clone();
    req.budget_usd = a.budget;
    req.max_retries = a.max_retries;
    req.priority = parse_priority(&a.priority)?;
    req.agent = Some(a.agent.clone());
    req.validate()?;
    let cfg = EngineConfig::new(a.store.clone(), a.self_url.clone())
        .agents(vec![a.agent.clone()])
        .webhook_base_url(a.webhook_base_url.clone())
        .options(Options {
            retry_base_ms: a.retry_base_ms,
            ..Options::default()
        });
    let state = run_one(cfg, req).await?;
    if matches!(
        state,
        DelegationState::Completed | DelegationState::AnsweredDirect
    ) {
        Ok(())
    } else {
        std::process::exit(1);
    }
}

async fn resubmit(id: String, store: PathBuf, self_url: String) -> Result<()> {
    let s = SqliteStore::open_dir(&store).context("opening the store")?;
    let entry = s
        .dlq_list()?
        .into_iter()
        .find(|e| e.delegation_id == id)
        .with_context(|| format!("{id:?} is not in the dead-letter queue"))?;
    let mut n = 1;
    let new_id = loop {
        let candidate = format!("{id}.r{n}");
        if s.get(&candidate)?.is_none() {
            break candidate;
        }
        n += 1;
    };
    let mut req = entry.request.clone();
    req.id = new_id.clone();
    req.deadline = None; // a fresh deadline from timeout_seconds
    req.agent = entry.agent_url.clone();
    let agents: Vec<String> = entry.agent_url.clone().into_iter().collect();
    drop(s);
    let cfg = EngineConfig::new(store.clone(), self_url).agents(agents);
    let s = SqliteStore::open_dir(&store)?;
    s.dlq_mark_resubmitted(&id, &new_id)?;
    drop(s);
    let state = run_one(cfg, req).await?;
    eprintln!("{id} resubmitted as {new_id}: {state}");
    Ok(())
}
