//! `a2a-mock`: serve a scripted network of mock A2A agents from a TOML file.

use a2a_mock_agents::{Network, NetworkSpec};
use anyhow::Context;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

const FORMAT_HELP: &str = r#"SCRIPT FORMAT (TOML; unknown keys are rejected; see mock-agents/README.md):

  seed = 42                          # everything random derives from it
  [[agent]]
  name = "flights"                   # unique; steps refer to agents by name
  protocol = "1.0"                   # or "0.3" (spoken through the adapter)
  streaming = true                   # card capabilities
  push_notifications = true
  dedup_message_id = true            # resent messageId returns the first task
  max_depth = 3                      # x-deleg checks (enforce_x_deleg = true)
  [[agent.skill]]
  id = "book-flight"
  [[agent.rule]]                     # first matching rule wins
  when = { text_contains = "book" }  # method, skill, text_contains, text_equals, data, task_id, round
  times = 1                          # then fall through to later rules
  fault = { kind = "http_status", status = 503, retry_after_s = 1 }
  steps = [
    { do = "state", state = "TASK_STATE_WORKING", delay_ms = 10 },
    { do = "input_required", question = "From which airport?", expect = { text_contains = "SFO" } },
    { do = "artifacts", count = 1, chunks = 4, chunk_bytes = 1024 },
    { do = "state", state = "TASK_STATE_COMPLETED" },
  ]

STEPS: reply, state, artifacts, artifact_url, data_artifact, input_required, auth_required,
       delegate, wait, raw_event, raw_sse, append_unknown, huge_event, purge, close_streams
FAULTS: drop_before, drop_response, http_status, stall, close_after, reset_after, trickle
MUTATIONS (rule.mutate): wrong_rpc_id, legacy_fields, lowercase_enums, unknown_field"#;

/// Serve a scripted network of mock A2A 1.0 agents on 127.0.0.1.
#[derive(Parser)]
#[command(name = "a2a-mock", version, about, after_help = FORMAT_HELP)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Start the network of FILE, print each agent's card URL, serve until Ctrl-C, write the journal.
    ///
    /// Example: a2a-mock serve mock-agents/examples/flights.toml --journal journal.jsonl
    Serve {
        /// The network script (TOML).
        file: PathBuf,
        /// Where to write the journal (JSON lines) on exit.
        #[arg(long, default_value = "journal.jsonl")]
        journal: PathBuf,
        /// Override the script's seed.
        #[arg(long)]
        seed: Option<u64>,
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
        } => {
            let mut spec = NetworkSpec::load(&file)?;
            if let Some(s) = seed {
                spec.seed = s;
            }
            let rt = tokio::runtime::Runtime::new().context("starting the runtime")?;
            rt.block_on(async move {
                let net = Network::start(spec).await?;
                for name in net.names() {
                    println!("{name}\t{}", net.card_url(name).unwrap_or_default());
                }
                println!(
                    "serving; press Ctrl-C to stop (journal -> {})",
                    journal.display()
                );
                tokio::signal::ctrl_c()
                    .await
                    .context("waiting for Ctrl-C")?;
                let f = std::fs::File::create(&journal)
                    .with_context(|| format!("creating {}", journal.display()))?;
                net.journal().write_jsonl(std::io::BufWriter::new(f))?;
                eprintln!(
                    "wrote {} journal entries to {}",
                    net.journal().len(),
                    journal.display()
                );
                net.shutdown().await;
                Ok(())
            })
        }
    }
}
