//! `a2a-mock`: serve a scripted network of mock A2A agents from a TOML file.

use a2a_mock_agents::{Network, NetworkSpec};
use anyhow::Context;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

const FORMAT_HELP: &str = r#"SCRIPT FORMAT (TOML; unknown keys are rejected; errors name file:line:column and the field;
a worked example of every step, fault and mutation is in mock-agents/README.md):

  seed = 42                         # task ids, artifact bytes, everything random derives from it
  [journal]
  max_entries = 200000              # later entries are counted, not kept
  max_string_bytes = 2048           # longer strings in recorded payloads are summarised
  detail = "full"                   # or "truth": what a benchmark verifies, without payloads
  [[agent]]
  name = "flights"                  # unique; `delegate` steps name agents
  protocol = "1.0"                  # or "0.3" (spoken through the protocol adapter)
  streaming = true                  # capabilities.streaming (false: streaming methods -32004)
  push_notifications = true         # capabilities.pushNotifications (false: push methods -32003)
  dedup_message_id = true           # a resent messageId returns the task it created first
  enforce_x_deleg = true            # REJECT past deadlines, depth > max_depth, own URL in chain
  max_depth = 3
  close_stream_on_interrupt = true  # close streams on INPUT_REQUIRED / AUTH_REQUIRED
  push_duplicates = 0               # extra deliveries of every push notification
  max_body_bytes = 4194304          # larger bodies: HTTP 413 with -32600
  max_block_ms = 30000              # longest wait of a blocking SendMessage
  header_timeout_ms = 10000         # no complete request headers this long: connection closed
  body_timeout_ms = 30000           # body not received this long: -32600 (HTTP 408), closed
  max_connections = 1024            # at the cap the oldest connection without a request is closed
  input_modes = ["text/plain", "application/json"]   # card defaultInputModes
  reject_unsupported_input_modes = false             # true: other part mediaTypes get -32005
  tenant = "acme"                   # on every card interface; requests must carry it (else -32602)
  card_protocol_version = "1.0.3"   # the interfaces' protocolVersion (a 1.0 version)
  card_max_age_s = 60               # card Cache-Control max-age
  card_cache_headers = true         # false: no Cache-Control, ETag, Last-Modified
  security = { credential = "Bearer agent-cred-7", scope = "extended_card" }  # or "all": 401
  extended_tenant = "premium"       # extended card interfaces with this tenant, listed first
  id_style = "uuid"                 # or "opaque": ids that must be percent-encoded in paths
  [[agent.extension]]               # capabilities.extensions; a required one missing from
  uri = "https://example.com/ext/v1"  # A2A-Extensions gets -32008
  required = true
  [[agent.card_change]]             # after_ms after the first task, the interfaces carry this tenant
  after_ms = 2000
  tenant = "acme-v2"
  keep_history = true               # false: no Task returned carries `history`
  list_page_size_max = 100          # ListTasks pages hold at most this many tasks
  timestamp_style = "millis"        # seconds, micros, nanos, offset, rotate (JSON bindings)
  [[agent.skill]]
  id = "book-flight"
  [[agent.extended_skill]]          # only on the extended card (GetExtendedAgentCard)
  id = "premium"
  [[agent.rule]]                    # first match wins (priority, then longest message_id_prefix,
                                    # then file order); no match: WORKING, 64-byte artifact, COMPLETED
  priority = 0
  when = { text_contains = "book" } # method, skill, text_contains, text_equals, data, task_id, round,
                                    # message_id, message_id_prefix, message_id_regex, context_id,
                                    # has_task_id, metadata_keys, has_reference_task_ids
  times = 1                         # apply to this many requests, then fall through
  fault = { kind = "http_status", status = 503, retry_after_s = 1 }
  mutate = ["legacy_fields"]
  on_cancel = "cancel"              # or "complete_first" (cancel gets -32002), "ignore"
  steps = [
    { do = "state", state = "TASK_STATE_WORKING", delay_ms = 10 },
    { do = "input_required", question = "From which airport?", expect = { text_contains = "SFO" } },
    { do = "artifacts", count = 1, chunks = 4, chunk_bytes = 1024 },
    { do = "state", state = "TASK_STATE_COMPLETED" },
  ]

STEPS (do = ...): reply, error, state, artifact, artifacts, artifact_url, data_artifact, input_required,
  auth_required, delegate, wait, gate, chunk, unknown_state, raw_event, raw_sse, append_unknown,
  huge_event, purge, close_streams, push_foreign, malformed_event
FAULTS (kind = ...): drop_before, drop_response, http_status, rpc_error, garbage_body, stall,
  stall_response, close_after, reset_after, trickle, omit_fields
QUEUED FAULTS: [[agent.queued_fault]] method = "SendMessage", times = 2, fault = { kind = ... }
  (the next calls of that method get the fault, before any rule; then normal behaviour)
EXPECTATIONS: a rule's `name` and `expect = 2` (or "1..", "2..=4") are checked when the network
  stops; `serve` reports unmet ones
MUTATIONS (mutate = [...]): wrong_rpc_id, legacy_fields, lowercase_enums, unknown_field
PARTS (reply/state `parts`, artifact `parts`/`chunks`): { text | raw (UTF-8) | raw_base64 | url |
  data = ..., filename, media_type, metadata }

Each agent listens on 127.0.0.1 (ephemeral port): card at /.well-known/agent-card.json,
JSON-RPC at /a2a and /a2a/ (A2A-Version: 1.0 required by 1.0 agents), blobs at /blobs/{key};
any other path gets a JSON 404. The reference agent for A2A clients and conformance kits:
mock-agents/examples/reference-agent.toml.
The journal (JSON lines) records every request, response, stream event, state change,
artifact (length and sha256), push delivery, delegation and fault, across all agents."#;

/// Serve a scripted network of mock A2A 1.0 agents on 127.0.0.1.
#[derive(Parser)]
#[command(name = "a2a-mock", version, about, after_help = FORMAT_HELP)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Start the network of FILE, print each agent's card URL, serve until Ctrl-C (or SIGTERM),
    /// then write the journal.
    ///
    /// Prints one line per agent: `NAME<TAB>CARD_URL`, then `trust roots: PATH` when agents serve
    /// TLS. Example:
    /// a2a-mock serve mock-agents/examples/flights.toml --journal journal.jsonl [--tls]
    Serve {
        /// The network script (TOML).
        file: PathBuf,
        /// Where to write the journal (JSON lines) on exit.
        #[arg(long, default_value = "journal.jsonl")]
        journal: PathBuf,
        /// Override the script's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Serve every agent over TLS (HTTPS; gRPC over TLS with ALPN h2), as the script's
        /// `[network] tls = true` does: a certificate authority made for this run issues each
        /// agent a certificate for 127.0.0.1 and localhost.
        #[arg(long)]
        tls: bool,
        /// Where to write the run's certificate authority (PEM) when any agent serves TLS: the
        /// trust root to give a client. Printed as `trust roots: PATH` before `serving`.
        #[arg(long, default_value = "ca.pem", value_name = "PATH")]
        ca: PathBuf,
    },
    /// Parse and validate FILE, then exit (0 when valid, 2 with the file, line and field otherwise).
    Check {
        /// The network script (TOML).
        file: PathBuf,
    },
}

fn main() {
    let cli = Cli::parse();
    let code = match run(cli) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("a2a-mock: {e:#}");
            2
        }
    };
    std::process::exit(code);
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.cmd {
        Cmd::Check { file } => {
            let spec = NetworkSpec::load(&file)?;
            println!("{}: ok ({} agents)", file.display(), spec.agents.len());
            Ok(())
        }
        Cmd::Serve {
            file,
            journal,
            seed,
            tls,
            ca,
        } => {
            let mut spec = NetworkSpec::load(&file)?;
            if let Some(s) = seed {
                spec.seed = s;
            }
            spec.tls |= tls;
            let rt = tokio::runtime::Runtime::new().context("starting the runtime")?;
            rt.block_on(async move {
                let mut stop = StopSignals::install()?;
                let net = Network::start(spec).await?;
                for name in net.names() {
                    println!("{name}\t{}", net.card_url(name).unwrap_or_default());
                }
                if let Some(pem) = net.ca_pem() {
                    std::fs::write(&ca, pem)
                        .with_context(|| format!("writing {}", ca.display()))?;
                    println!("trust roots: {}", ca.display());
                }
                println!(
                    "serving; press Ctrl-C to stop (journal -> {})",
                    journal.display()
                );
                stop.wait().await?;
                let f = std::fs::File::create(&journal)
                    .with_context(|| format!("creating {}", journal.display()))?;
                let mut w = std::io::BufWriter::new(f);
                net.journal().write_jsonl(&mut w)?;
                std::io::Write::flush(&mut w)
                    .with_context(|| format!("writing {}", journal.display()))?;
                eprintln!(
                    "wrote {} journal entries to {}",
                    net.journal().len(),
                    journal.display()
                );
                net.finish().await?;
                Ok(())
            })
        }
    }
}

/// Ctrl-C (SIGINT) and SIGTERM, registered before the URLs are printed so that a signal sent
/// as soon as they appear is never lost.
struct StopSignals {
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
}

impl StopSignals {
    fn install() -> anyhow::Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(StopSignals {
                int: signal(SignalKind::interrupt()).context("installing the SIGINT handler")?,
                term: signal(SignalKind::terminate()).context("installing the SIGTERM handler")?,
            })
        }
        #[cfg(not(unix))]
        Ok(StopSignals {})
    }

    async fn wait(&mut self) -> anyhow::Result<()> {
        #[cfg(unix)]
        tokio::select! {
            _ = self.int.recv() => {}
            _ = self.term.recv() => {}
        }
        #[cfg(not(unix))]
        tokio::signal::ctrl_c()
            .await
            .context("waiting for Ctrl-C")?;
        Ok(())
    }
}
