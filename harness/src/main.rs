//! `a2a-harness`: run the conformance catalog against a delegator and write reports.

mod console;
mod sweep_cmd;

use a2a_driver_contract::HarnessExitCode;
use a2a_harness::catalog::{
    CaseGlob, Catalog, CatalogSources, Partition, Selection, load_sources, read_known_failing,
    stale_known_failing,
};
use a2a_harness::delegator_process::{resolve_program, shell_quote, split_command};
use a2a_harness::report;
use a2a_harness::rules::registry;
use a2a_harness::run::{RunOptions, default_jobs, run_with_progress};
use a2a_harness::runner::CaseResult;
use a2a_harness::scenario::Scenario;
use anyhow::Context;
use clap::{Parser, Subcommand};
use std::cell::RefCell;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tokio::signal::unix::{SignalKind, signal as unix_signal};

/// The exit codes, [`HarnessExitCode`] (`a2a_driver_contract`), as `--help` shows them.
const EXIT_HELP: &str = "EXIT CODES: 0 every MUST passed (NON-STRICT, XFAIL and UNSUPPORTED do not fail the run); 1 a failure (FAIL, UNKNOWN or XPASS; reports are written); 2 bad usage or configuration, nothing judged; 130 interrupted (Ctrl-C): a partial report marked incomplete is written.";

/// The exit code of a run interrupted by Ctrl-C (128 + SIGINT, as shells report it).
const INTERRUPTED: u8 = 130;

/// The A2A delegation conformance harness: drives a delegator through simulated A2A agents and
/// checks every rule against what the network observed.
///
/// The scenario catalog is built into this binary; `--scenarios DIR` adds local cases.
#[derive(Parser)]
#[command(name = "a2a-harness", version, about, long_about, after_help = EXIT_HELP)]
struct Cli {
    #[command(flatten)]
    catalog: CatalogArgs,
    #[command(subcommand)]
    cmd: Cmd,
}

/// Where the cases come from (global options).
#[derive(clap::Args, Debug, Clone)]
struct CatalogArgs {
    /// Add the cases of a local directory (`*.toml`, recursively) or of one case file to the
    /// built-in catalog; repeatable. A local case with the id of a built-in one replaces it (a note says so).
    #[arg(
        long,
        global = true,
        value_name = "DIR",
        env = "A2A_HARNESS_SCENARIOS",
        value_delimiter = ':'
    )]
    scenarios: Vec<PathBuf>,
    /// Leave out the built-in catalog: only the cases of `--scenarios` directories.
    #[arg(long, global = true)]
    no_builtin: bool,
}

/// Which cases a command takes (`run`, `list`).
#[derive(clap::Args, Debug, Clone)]
struct SelectArgs {
    /// Only cases whose id matches one of these globs (`*`, `?`, `{a,b}`); repeatable.
    #[arg(long = "case", value_name = "GLOB")]
    case: Vec<String>,
    /// Only cases that list this rule (such as DLG-ART-04); repeatable. With `--case`, a case
    /// must match both.
    #[arg(long = "rule", value_name = "RULE")]
    rule: Vec<String>,
    /// Only this shard of the selection, as in cargo-nextest: `count:K/N` deals the selected
    /// cases (sorted by id) round-robin to N shards, `hash:K/N` by a stable hash of the case id
    /// (a case keeps its shard when others are added). K is 1-based; the N shards together run
    /// every selected case once.
    #[arg(long, value_name = "count:K/N|hash:K/N")]
    partition: Option<Partition>,
}

impl SelectArgs {
    fn selection(&self) -> anyhow::Result<Selection> {
        let sel = Selection {
            cases: self
                .case
                .iter()
                .map(|c| CaseGlob::new(c))
                .collect::<Result<_, _>>()?,
            rules: self.rule.clone(),
            partition: self.partition,
        };
        sel.check()?;
        Ok(sel)
    }
}

/// A `--binding` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum BindingArg {
    /// JSON-RPC 2.0.
    Jsonrpc,
    /// HTTP+JSON.
    Rest,
    /// gRPC.
    Grpc,
    /// All three, in that order.
    All,
}

impl BindingArg {
    /// The bindings named, in order, without repeats.
    fn expand(args: &[BindingArg]) -> Vec<a2a_protocol::Binding> {
        use a2a_protocol::Binding;
        let mut out: Vec<Binding> = Vec::new();
        for a in args {
            let these: &[Binding] = match a {
                BindingArg::Jsonrpc => &[Binding::JsonRpc],
                BindingArg::Rest => &[Binding::Rest],
                BindingArg::Grpc => &[Binding::Grpc],
                BindingArg::All => &Binding::ALL,
            };
            for b in these {
                if !out.contains(b) {
                    out.push(*b);
                }
            }
        }
        out
    }
}

#[derive(Subcommand)]
enum Cmd {
    /// Run cases against a delegator and write reports.
    ///
    /// Example: a2a-harness run --case 'states.*' --seed 7 --out reports/mine
    #[command(after_help = EXIT_HELP)]
    Run(RunArgs),
    /// Explore: run generated scenarios (seeds S, S+1, ...) until --time or --runs, and shrink
    /// each finding (a rule judged FAIL or NON-STRICT, or a case failed by a contract break or
    /// crash) to a small scenario file that reproduces it.
    ///
    /// Writes the run report (index.json, junit.xml, summary.md, index.html), explore.json and
    /// explore.md (findings, per-rule PASS/FAIL/NON-STRICT counts) and found/<rule>-<seed>.toml
    /// to --out, and prints one repro line per finding.
    ///
    /// Examples:
    ///   a2a-harness explore --time 2m
    ///   a2a-harness explore --delegator './my-delegator --driver' --runs 200 --seed 7 --topic art
    #[command(after_help = EXPLORE_EXIT_HELP, verbatim_doc_comment)]
    Explore(ExploreArgs),
    /// List the cases of the catalog (the selection, with `--case`, `--rule`, `--partition`).
    ///
    /// Example: a2a-harness list --rule DLG-ART-04 --partition count:1/2
    List {
        #[command(flatten)]
        select: SelectArgs,
    },
    /// Work with report directories.
    #[command(subcommand)]
    Report(ReportCmd),
    /// Work with network journals.
    #[command(subcommand)]
    Journal(JournalCmd),
    /// Write scenarios.
    #[command(subcommand)]
    Scenario(ScenarioCmd),
    /// List the rules with how many catalog cases list each (NOT TESTED when none; always-on
    /// rules are judged wherever their situation arises), and with `--report`, in how many cases
    /// of that run each was actually evaluated; then the A2A client requirements at a glance.
    ///
    /// Example: a2a-harness rules --report reports/20260101-120000
    #[command(after_help = a2a_harness::explain::GROUPING)]
    Rules {
        /// A report directory (or its index.json) whose per-rule evaluated counts to show.
        #[arg(long)]
        report: Option<PathBuf>,
    },
    /// Explain a rule (by id, with the A2A client requirements it judges), an A2A client
    /// requirement (C-01..C-68: its section, keyword, coverage and the cases that judge it) or
    /// a case (by id).
    ///
    /// Examples:
    ///   a2a-harness explain DLG-SEND-02
    ///   a2a-harness explain C-19 --report reports/20260101-120000
    #[command(verbatim_doc_comment)]
    Explain {
        /// A rule id such as DLG-SEND-02, a requirement id such as C-19, or a case id.
        what: String,
        /// A report directory (or its index.json): the rule's evaluated count in that run, or
        /// the requirement's status there.
        #[arg(long)]
        report: Option<PathBuf>,
    },
    /// Print the JSON Schema of the scenario format (generated from the types), for editors.
    ///
    /// Example: a2a-harness schema > scenarios/scenario.schema.json
    Schema,
    /// Start only the network of a case and print its URLs, for reproducing by hand.
    ///
    /// Example: a2a-harness serve states.completed --seed 7
    Serve {
        /// The case id.
        case: String,
        /// The run seed to reproduce: the network seed is the case's XOR this, as in `run`.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Write the network's journal (JSON lines: every request, response and event) to this
        /// file on exit (Ctrl-C or SIGTERM).
        #[arg(long, value_name = "FILE")]
        journal: Option<PathBuf>,
    },
    /// Record real traffic: a proxy in front of each upstream agent writes what passes to a
    /// journal in the mock network's format (DIR/journal.jsonl), for `scenario from-journal`.
    ///
    /// Point the delegator at the printed card URLs. The proxy serves each upstream's card with
    /// its own address in the interface URLs and forwards every other call unchanged (JSON-RPC,
    /// HTTP+JSON, gRPC; streams pass through as they arrive). One documented change: a push
    /// webhook URL the delegator gives an upstream is replaced by a relay URL of the proxy,
    /// which records each notification and forwards it to the delegator's webhook. Credentials
    /// (Authorization, Cookie, X-API-Key-like headers), push tokens and the --redact paths are
    /// never written; strings over --max-inline-bytes are kept as length + sha256 + first bytes.
    /// Runs until Ctrl-C or SIGTERM; every entry is on disk as soon as it happens.
    ///
    /// Example: a2a-harness record --upstream http://127.0.0.1:9101 --upstream http://127.0.0.1:9102 --out rec/
    #[command(verbatim_doc_comment)]
    Record(RecordArgs),
    /// Benchmark streaming throughput: each workload's artifacts through the delegator, paired
    /// with the ceiling (a raw reader of the same responses from the same in-process mock
    /// source), every run verified byte-exact against the mock's journal.
    ///
    /// Writes bench.json (schema in benches/README.md), bench.md and bench.html (plots) to
    /// --out, and prints the table.
    ///
    /// Examples:
    ///   a2a-harness bench --quick
    ///   a2a-harness bench --workload stream-64mib-text --repeat 5
    ///   a2a-harness bench --delegator './my-delegator --driver' --baseline reference
    ///   a2a-harness bench --baseline python-sdk --out reports/bench-new --compare reports/bench-old/bench.json
    #[command(after_help = BENCH_EXIT_HELP, verbatim_doc_comment)]
    Bench {
        /// A workload file or a directory of them (*.toml).
        #[arg(long, default_value = "benches/workloads")]
        workloads: PathBuf,
        /// Only these workloads (by name; repeatable). Default: every one not marked heavy.
        #[arg(long = "workload")]
        workload: Vec<String>,
        /// Include workloads marked `heavy = true` (such as 10,000 delegations).
        #[arg(long)]
        heavy: bool,
        /// Shrink every workload (at most 1 MiB per artifact, 4 parallel delegations, 50 for
        /// scale workloads, one repetition): a smoke test for CI.
        #[arg(long)]
        quick: bool,
        /// Repetitions per workload (default: each workload's `repeat`).
        #[arg(long)]
        repeat: Option<u32>,
        /// The delegator command (speaks docs/driver-protocol.md). Default: the reference delegator next to this binary.
        #[arg(long)]
        delegator: Option<String>,
        /// Also run a baseline in the same session: `python-sdk` (the official a2a-sdk client
        /// from the interop venv, see --python) or `reference` (the reference delegator).
        #[arg(long, value_name = "python-sdk|reference")]
        baseline: Vec<BaselineArg>,
        /// The Python interpreter for `--baseline python-sdk`.
        #[arg(long, default_value = ".venv/bin/python", env = "A2A_BENCH_PYTHON")]
        python: PathBuf,
        /// Output directory (default: reports/bench-<timestamp>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// An earlier bench.json: print ratios per workload and flag changes beyond the noise.
        #[arg(long, value_name = "OLD.json")]
        compare: Option<PathBuf>,
        /// Seed of the generated artifact content.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

/// `a2a-harness record` options.
#[derive(clap::Args, Debug)]
struct RecordArgs {
    /// An upstream agent: its origin (http://host:port) or card URL; repeatable (a whole
    /// delegation chain at once: one listen address each).
    #[arg(long, value_name = "URL", required = true)]
    upstream: Vec<String>,
    /// Where to listen for the upstream of the same position (default 127.0.0.1:0, any free
    /// port; the bound address is printed); repeatable.
    #[arg(long, value_name = "ADDR")]
    listen: Vec<std::net::SocketAddr>,
    /// Output directory: the journal is written to DIR/journal.jsonl.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// A payload path to redact in every recorded body: a JSON pointer whose segments may be
    /// `*` (any key or index), matched from the root and from every nested value, such as
    /// /metadata/ssn or /parts/*/data/iban; repeatable.
    #[arg(long, value_name = "JSON_POINTER")]
    redact: Vec<a2a_harness::record::RedactPath>,
    /// Strings longer than this are recorded as length + sha256 + their first 32 bytes, except
    /// artifact content within --max-artifact-bytes.
    #[arg(long, value_name = "BYTES", default_value_t = a2a_harness::record::DEFAULT_MAX_INLINE_BYTES)]
    max_inline_bytes: usize,
    /// Artifact content (text, raw and data of artifact parts) recorded whole per artifact, so
    /// that `scenario from-journal` replays the recorded bytes (4 MiB; 0: summarise artifacts
    /// like other strings). Beyond it the artifact is summarised and replayed as generated
    /// content of the same length.
    #[arg(long, value_name = "BYTES", default_value_t = a2a_harness::record::DEFAULT_MAX_ARTIFACT_BYTES)]
    max_artifact_bytes: u64,
    /// Artifact content recorded whole over the whole recording (64 MiB).
    #[arg(long, value_name = "BYTES", default_value_t = a2a_harness::record::DEFAULT_MAX_RECORDED_ARTIFACT_BYTES)]
    max_recorded_artifact_bytes: u64,
    /// Record every string whole, however long.
    #[arg(long)]
    keep_bytes: bool,
    /// Longest wait for an upstream's answer, and between two pieces of a streamed answer.
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    upstream_timeout_s: u64,
}

/// `a2a-harness report ...`.
#[derive(Subcommand)]
enum ReportCmd {
    /// Combine shard reports (run directories with index.json and cases/) into one report:
    /// index.json, junit.xml, summary.md, index.html, cases/ and journals/.
    ///
    /// Example: a2a-harness report merge shard-1 shard-2 --out reports/all
    ///
    /// EXIT CODES: 0 merged, no case failed; 1 merged, some case failed; 2 the shards do not
    /// merge (another delegator, seed or schema, a case in two shards, unreadable files).
    Merge {
        /// The shard report directories.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Where to write the merged report (a new or empty directory).
        #[arg(long)]
        out: PathBuf,
    },
}

/// `a2a-harness journal ...`.
#[derive(Subcommand)]
enum JournalCmd {
    /// Print where two journals first differ, modulo ids, ports and timing (or that they are
    /// identical modulo those).
    ///
    /// A and B are each a JSON-lines journal (`a2a-harness serve --journal FILE`), a case
    /// result (`cases/<id>.json` of a report: its `journal` field), or a report directory with
    /// `--case ID`.
    ///
    /// Example: a2a-harness journal diff reports/passing reports/failing --case states.completed
    #[command(after_help = journal_diff_help())]
    Diff {
        /// The first journal.
        a: PathBuf,
        /// The second journal.
        b: PathBuf,
        /// The case whose journal to take from a report directory (A, B or both).
        #[arg(long, value_name = "ID")]
        case: Option<String>,
    },
}

/// What `journal diff` ignores, and its exit codes.
fn journal_diff_help() -> String {
    format!(
        "WHAT IS COMPARED: both journals are put in a canonical form first. {}\n\nEXIT CODES: 0 identical modulo ids, ports and timing; 1 different (the first difference is printed, with the entries before it and the seq of each side); 2 bad input (an unreadable file, a line that is no journal entry: the file and line are named).",
        a2a_harness::journal_diff::IGNORED
    )
}

/// `a2a-harness scenario ...`.
#[derive(Subcommand)]
enum ScenarioCmd {
    /// Turn a recorded journal (JSON lines from `record` or `serve --journal`, or a report's
    /// cases/<id>.json) into a catalog scenario: each agent becomes a mock agent that does what
    /// it did, the delegator's first request of each delegation a `[[delegate]]` entry.
    ///
    /// What cannot be expressed is named on stderr (seq, agent, what) and marked
    /// `# TODO (seq N)` in the file; the rest is still written, and the file loads with
    /// `--scenarios`.
    ///
    /// Example: a2a-harness scenario from-journal rec/journal.jsonl --out repro/case.toml
    ///
    /// EXIT CODES: 0 written (TODOs included); 2 the journal cannot be read or the file cannot
    /// be written or does not load.
    FromJournal {
        /// The journal file.
        journal: PathBuf,
        /// Where to write the scenario (TOML).
        #[arg(long)]
        out: PathBuf,
        /// The case id (default: `recorded.<file stem>`, `<case id>.replay` for a report case).
        #[arg(long)]
        id: Option<String>,
    },
}

/// The arguments of `run`.
#[derive(clap::Args, Debug, Clone)]
struct RunArgs {
    /// The delegator command (speaks docs/driver-protocol.md). Default: the reference
    /// delegator `a2a-delegator drive`, next to this binary or else on PATH.
    #[arg(long)]
    delegator: Option<String>,
    #[command(flatten)]
    select: SelectArgs,
    /// Seed for every random choice; the report prints it.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Cases run in parallel (default: four per core, at most 32: cases mostly wait on timers).
    #[arg(long)]
    jobs: Option<usize>,
    /// Run each case this many times (seeds seed, seed+1, ...); with N > 1 each result is reported as `<case id>@<seed>`.
    #[arg(long, default_value_t = 1)]
    repeat: u32,
    /// A file of case ids (or globs) known to fail: FAIL becomes XFAIL, PASS becomes XPASS
    /// (which fails the run); entries matching no selected case are reported.
    #[arg(long)]
    known_failing: Option<PathBuf>,
    /// Report directory (default: reports/<timestamp>). It is checked before anything runs: it
    /// must be writable, and if it holds an earlier report (an a2a-harness index.json) that
    /// report's files are removed first, so that no stale case file remains; a directory with
    /// some other index.json is refused.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Run the catalog over these protocol bindings, one pass each (comma-separated, or
    /// `all`): agents that do not pin their own bindings serve only that one, and each result
    /// is reported as `<case id>:<binding>`. Cases list the bindings they have a meaning for;
    /// a case whose agents all pin theirs runs once. Default: each case as it says
    /// (JSON-RPC unless pinned), ids unsuffixed.
    #[arg(long, value_delimiter = ',', value_name = "jsonrpc|rest|grpc|all")]
    binding: Vec<BindingArg>,
    /// Serve every agent over TLS (HTTPS; gRPC over TLS with ALPN h2), with certificates of an
    /// authority made for each case, and give the delegator that authority as
    /// `init.tls_roots` (result ids unchanged; `index.json` `run.tls` says so). The
    /// `security.tls-*` cases use TLS with or without it. Combines with --binding.
    #[arg(long, conflicts_with_all = ["crash_sweep", "crash_at_event"])]
    tls: bool,
    /// Crash sweep: run each selected case once clean to learn its journal length N (up to
    /// the moment every delegation had its outcome), then once per position k = 1..N with its
    /// crash replaced by a SIGKILL when journal entry k is recorded (restart on the same store),
    /// each reported as `<case id>@event<k>` and judged by its rules and the history invariants
    /// (HIST-*). The summary lists every position at which a rule broke.
    #[arg(long, conflicts_with_all = ["repeat", "binding", "crash_at_event"])]
    crash_sweep: bool,
    /// With --crash-sweep: at most N positions per case; a longer case is sampled with --seed
    /// (first and last position always included).
    #[arg(long, value_name = "N", requires = "crash_sweep", default_value_t = a2a_harness::sweep::DEFAULT_SWEEP_MAX, value_parser = clap::value_parser!(u64).range(2..))]
    sweep_max: u64,
    /// Run each selected case with its crash replaced by a SIGKILL when journal entry K is
    /// recorded (one crash-sweep position; its repro line), reported as `<case id>@event<K>`.
    #[arg(long, value_name = "K", conflicts_with_all = ["repeat", "binding"], value_parser = clap::value_parser!(u64).range(1..))]
    crash_at_event: Option<u64>,
    /// Run each selected case twice with the same seed and compare the case verdicts, the rule
    /// verdicts and the journals modulo ids, ports and timing (as `journal diff` does); each
    /// case gets a second result `<case id>#determinism`, FAIL with notes naming the
    /// difference when the runs differ (a nondeterminism finding).
    #[arg(long, conflicts_with_all = ["crash_sweep", "crash_at_event"])]
    check_determinism: bool,
    /// Judge every case by the history invariants too (HIST-01..03: every delegation ends once
    /// with a justified outcome, nothing open at a kill is lost, no send past a deadline), as
    /// explore, --crash-sweep and --crash-at-event always do; the repro of a HIST-* finding.
    #[arg(long)]
    invariants: bool,
}

/// The arguments of `explore`.
#[derive(clap::Args, Debug, Clone)]
struct ExploreArgs {
    /// The delegator command (speaks docs/driver-protocol.md). Default: the reference
    /// delegator `a2a-delegator drive`, next to this binary or else on PATH.
    #[arg(long)]
    delegator: Option<String>,
    /// Stop starting runs after this long (90s, 5m, 1h30m). Default 5m unless --runs is given.
    #[arg(long, value_name = "DURATION")]
    time: Option<String>,
    /// Stop after this many generated scenarios (whichever of --time and --runs comes first).
    #[arg(long, value_name = "N")]
    runs: Option<u64>,
    /// The first seed: run i generates and runs its scenario with seed S+i.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Aim every scenario at one rule family: send, wire, route, state, input, auth, limit,
    /// obs, art, retry, rec (default: families drawn with weights).
    #[arg(long, value_name = "TOPIC")]
    topic: Option<String>,
    /// Report directory (default: reports/explore-<timestamp>); checked as for `run`.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Runs at once, exploring and shrinking (default: four per core, at most 32).
    #[arg(long)]
    jobs: Option<usize>,
    /// A shrinking candidate counts as failing only if it fails the rule in every one of N
    /// runs; the final scenario is confirmed the same way.
    #[arg(long, value_name = "N", default_value_t = a2a_harness::explore::DEFAULT_CONFIRM)]
    confirm: u32,
    /// The baseline delegator: a shrinking candidate counts only if it passes there (without
    /// the finding), so shrinking never ends in a scenario every delegator fails.
    /// Default: the reference delegator (as for --delegator), when it is not the one explored.
    #[arg(long, value_name = "CMD", conflicts_with = "no_baseline")]
    baseline: Option<String>,
    /// Shrink without a baseline delegator.
    #[arg(long)]
    no_baseline: bool,
    /// Delegator runs per shrink at most (confirmations included).
    #[arg(long, value_name = "N", default_value_t = 300)]
    shrink_runs: usize,
    /// Wall time per shrink at most.
    #[arg(long, value_name = "DURATION", default_value = "3m")]
    shrink_time: String,
    /// Shrink only the findings of rules matching this id or glob (DLG-LIMIT-03,
    /// 'DLG-REC-*'); repeatable. The others are reported and written as found, unshrunk and
    /// unconfirmed. Default: every finding is shrunk.
    #[arg(long, value_name = "RULE")]
    shrink_rule: Vec<String>,
}

/// `--shrink-rule` values as globs, each matching some rule explore can report (a registry
/// rule, a history invariant or `CONTRACT`).
fn shrink_rule_globs(values: &[String]) -> anyhow::Result<Vec<CaseGlob>> {
    let ids: Vec<&str> = registry()
        .iter()
        .map(|r| r.id)
        .chain(a2a_harness::invariants::INVARIANTS.iter().map(|i| i.id))
        .chain([a2a_harness::report::CONTRACT])
        .collect();
    values
        .iter()
        .map(|v| {
            let g = CaseGlob::new(v).with_context(|| format!("--shrink-rule {v:?}"))?;
            if !ids.iter().any(|id| g.matches(id)) {
                anyhow::bail!(
                    "--shrink-rule {v:?} matches no rule (see `a2a-harness rules`; HIST-01..03 and CONTRACT too)"
                );
            }
            Ok(g)
        })
        .collect()
}

/// The exit codes of `explore`.
const EXPLORE_EXIT_HELP: &str = "EXIT CODES: 0 nothing found; 1 a finding (a rule judged FAIL or NON-STRICT, or a contract break or crash; reports and found files are written); 2 bad usage or configuration, nothing run; 130 interrupted (Ctrl-C or SIGTERM): what was found so far is written, unshrunk if shrinking had not begun.";

/// A `--baseline` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum BaselineArg {
    /// The official Python SDK client.
    PythonSdk,
    /// The reference delegator.
    Reference,
}

/// The exit codes of `bench`.
const BENCH_EXIT_HELP: &str = "EXIT CODES: 0 every delegator run verified byte-exact; 1 a run failed verification (a corrupted artifact, a failed or missing done, the time limit passed: reports are written, no throughput figure for it); 2 bad usage or a bad workload file (file:line:col), nothing run.";

fn main() -> ExitCode {
    // Clap exits with 2 (`HarnessExitCode::Usage`) on bad usage by itself.
    let cli = Cli::parse();
    match run(cli) {
        Ok(Ended::Code(c)) => c.into(),
        Ok(Ended::Interrupted) => ExitCode::from(INTERRUPTED),
        // A reader that went away (`a2a-harness rules | head`) is no error of ours.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "a2a-harness: {e:#}");
            HarnessExitCode::Usage.into()
        }
    }
}

/// How a command ended.
enum Ended {
    /// With this exit code.
    Code(HarnessExitCode),
    /// Interrupted by Ctrl-C (exit 130).
    Interrupted,
}

impl From<HarnessExitCode> for Ended {
    fn from(c: HarnessExitCode) -> Self {
        Ended::Code(c)
    }
}

/// True when the error is a write to a closed pipe.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The reference delegator command: `a2a-delegator drive` next to this binary, else from
/// `PATH` (said on stderr, since it may not be the build the user expects), by its absolute
/// path so that repro lines run from anywhere. Neither: an error naming both ways and
/// `--delegator`.
fn default_delegator() -> anyhow::Result<String> {
    let exe = std::env::current_exe().ok();
    let sibling = exe
        .as_deref()
        .and_then(Path::parent)
        .map(|d| d.join("a2a-delegator"));
    if let Some(p) = sibling.as_ref().filter(|p| p.is_file()) {
        // Quoted the way `--delegator` is split.
        return Ok(format!("{} drive", shell_quote(&p.display().to_string())));
    }
    let next_to = sibling
        .map(|p| format!(" ({})", p.display()))
        .unwrap_or_default();
    match resolve_program("a2a-delegator") {
        Ok(found) => {
            let _ = writeln!(
                std::io::stderr(),
                "a2a-harness: note: no a2a-delegator next to this binary{next_to}; using `a2a-delegator drive` from PATH ({})",
                found.display()
            );
            Ok(format!(
                "{} drive",
                shell_quote(&found.display().to_string())
            ))
        }
        Err(_) => anyhow::bail!(
            "no reference delegator: no a2a-delegator next to this binary{next_to}, and none on PATH; install it next to a2a-harness (`cargo install --locked --path delegator`) or put it on PATH, or name your own with --delegator CMD"
        ),
    }
}

/// Check the delegator command before running anything: it parses, and its program exists
/// and is executable (bad usage otherwise, exit 2).
fn check_delegator(cmd: &str) -> anyhow::Result<()> {
    let line = split_command(cmd)?;
    resolve_program(&line.program).with_context(|| format!("delegator command {cmd:?}"))?;
    Ok(())
}

impl CatalogArgs {
    /// The catalog: built-in unless `--no-builtin`, plus each `--scenarios` directory; a note
    /// on stderr for each built-in case a local one replaced.
    fn load(&self) -> anyhow::Result<Catalog> {
        if self.no_builtin && self.scenarios.is_empty() {
            anyhow::bail!("--no-builtin leaves no cases: add --scenarios DIR");
        }
        let cat = load_sources(&CatalogSources {
            builtin: !self.no_builtin,
            dirs: self.scenarios.clone(),
        })
        .map_err(|e| anyhow::anyhow!("{e}"))?;
        for (id, file) in &cat.replaced {
            let _ = writeln!(
                std::io::stderr(),
                "a2a-harness: note: case {id} from {} replaces the built-in one",
                file.display()
            );
        }
        Ok(cat)
    }
}

fn run(cli: Cli) -> anyhow::Result<Ended> {
    // Styles are stripped where colour is off; a closed pipe comes back as an error.
    let mut out = anstream::stdout();
    let ended = match cli.cmd {
        Cmd::Bench {
            workloads,
            workload,
            heavy,
            quick,
            repeat,
            delegator,
            baseline,
            python,
            out,
            compare,
            seed,
        } => bench(BenchArgs {
            workloads,
            workload,
            heavy,
            quick,
            repeat,
            delegator,
            baseline,
            python,
            out,
            compare,
            seed,
        })?
        .into(),
        Cmd::Report(ReportCmd::Merge { dirs, out: dir }) => {
            let index = report::merge(&dirs, &dir)?;
            write!(out, "{}", report::rules_broken_text(&index.rules_broken))?;
            let t = index.totals;
            writeln!(out, "reports: {}", dir.display())?;
            writeln!(
                out,
                "{} passed, {} failed, {} skipped",
                t.passed, t.failed, t.skipped
            )?;
            if let Some(c) = &index.compatibility {
                writeln!(out, "{}", report::compatibility_line(c))?;
                writeln!(out, "{}", report::compatibility_note(c))?;
            }
            HarnessExitCode::for_run(t.failed).into()
        }
        Cmd::Journal(JournalCmd::Diff { a, b, case }) => {
            journal_diff(&a, &b, case.as_deref(), &mut out)?.into()
        }
        Cmd::Scenario(ScenarioCmd::FromJournal {
            journal,
            out: file,
            id,
        }) => {
            use a2a_harness::from_journal::{ConvertOptions, convert, read_journal};
            let recorded = read_journal(&journal)?;
            let stem = file
                .file_stem()
                .map_or_else(|| "case".to_string(), |s| s.to_string_lossy().into_owned());
            let c = convert(
                &recorded,
                &ConvertOptions {
                    id,
                    files_dir: Some(format!("{stem}.d")),
                },
            );
            for u in &c.unsupported {
                writeln!(
                    std::io::stderr(),
                    "a2a-harness: from-journal: not expressible: {u}"
                )?;
            }
            let dir = file.parent().unwrap_or(std::path::Path::new("."));
            c.write(&file)?;
            // The written file must load as a catalog case.
            a2a_harness::catalog::load_case(&file).map_err(|e| anyhow::anyhow!("{e}"))?;
            writeln!(
                out,
                "{}: {} agents, {} rules, {} delegations, {} TODOs, {} bytes{}",
                file.display(),
                c.agents,
                c.rules,
                c.delegations,
                c.unsupported.len(),
                c.toml.len(),
                if c.files.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", {} part files in {}",
                        c.files.len(),
                        dir.join(format!("{stem}.d")).display()
                    )
                }
            )?;
            HarnessExitCode::Success.into()
        }
        Cmd::Schema => {
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&a2a_harness::scenario::json_schema())?
            )?;
            HarnessExitCode::Success.into()
        }
        Cmd::List { select } => {
            let cat = cli.catalog.load()?;
            for s in select.selection()?.apply(&cat.cases) {
                writeln!(out, "{:<40} {}  [{}]", s.id, s.title, s.rules.join(", "))?;
            }
            HarnessExitCode::Success.into()
        }
        Cmd::Rules { report: from } => {
            rules(&cli.catalog.load()?.cases, from.as_deref(), &mut out)?.into()
        }
        Cmd::Explain { what, report: from } => {
            explain(&cli.catalog.load()?.cases, &what, from.as_deref(), &mut out)?.into()
        }
        Cmd::Serve {
            case,
            seed,
            journal,
        } => serve(&cli.catalog.load()?.cases, &case, seed, journal.as_deref())?.into(),
        Cmd::Explore(args) => explore(args, &mut out)?,
        Cmd::Record(args) => record(args)?.into(),
        Cmd::Run(args) => {
            let cat = cli.catalog.load()?;
            if args.crash_sweep || args.crash_at_event.is_some() {
                sweep_cmd::sweep_cases(&cat, args, &mut out)?
            } else {
                run_cases(&cat, args, &mut out)?
            }
        }
    };
    out.flush()?;
    Ok(ended)
}

/// `journal diff`: the first difference of two journals, exit 1 when there is one.
fn journal_diff(
    a: &Path,
    b: &Path,
    case: Option<&str>,
    out: &mut impl std::io::Write,
) -> anyhow::Result<HarnessExitCode> {
    use a2a_harness::journal_diff::{compare, load_journal};
    // `--case` names the journal inside a report directory; a file is a journal itself.
    let load = |p: &Path| load_journal(p, case.filter(|_| p.is_dir()));
    let (ja, jb) = (load(a)?, load(b)?);
    match compare(&ja, &jb) {
        None => {
            writeln!(
                out,
                "identical modulo ids, ports and timing ({} and {} entries)",
                ja.len(),
                jb.len()
            )?;
            Ok(HarnessExitCode::Success)
        }
        Some(d) => {
            writeln!(out, "A: {}\nB: {}", a.display(), b.display())?;
            write!(out, "{d}")?;
            Ok(HarnessExitCode::Failure)
        }
    }
}

/// `rules`: the rules grouped by source, each with how many catalog cases list it, and with
/// `--report`, in how many cases of that run it was evaluated; the A2A client requirements at a
/// glance last ([`a2a_harness::explain::rules_text`]).
fn rules(
    cat: &[Scenario],
    from: Option<&Path>,
    out: &mut impl std::io::Write,
) -> anyhow::Result<HarnessExitCode> {
    let index = from.map(read_index).transpose()?;
    write!(
        out,
        "{}",
        a2a_harness::explain::rules_text(cat, index.as_ref())
    )?;
    Ok(HarnessExitCode::Success)
}

/// `explain`: a rule, a history invariant, an A2A client requirement (`C-19`) or a case
/// ([`a2a_harness::explain::explain_text`]).
fn explain(
    cat: &[Scenario],
    what: &str,
    from: Option<&Path>,
    out: &mut impl std::io::Write,
) -> anyhow::Result<HarnessExitCode> {
    let index = from.map(read_index).transpose()?;
    let shown = from.map(|p| p.display().to_string()).unwrap_or_default();
    let text =
        a2a_harness::explain::explain_text(cat, what, index.as_ref().map(|i| (i, shown.as_str())))?;
    write!(out, "{text}")?;
    Ok(HarnessExitCode::Success)
}

/// `serve`: the network of one case until Ctrl-C or SIGTERM; then its journal to `journal`.
fn serve(
    cat: &[Scenario],
    case: &str,
    seed: u64,
    journal: Option<&Path>,
) -> anyhow::Result<HarnessExitCode> {
    let s = cat
        .iter()
        .find(|s| s.id == case)
        .with_context(|| format!("no case {case:?} (see `a2a-harness list`)"))?;
    if let Some(j) = journal {
        // Unwritable: said now, not after the session.
        std::fs::File::create(j).with_context(|| format!("--journal {}", j.display()))?;
    }
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async move {
        // The same network as `run --seed N` gives this case.
        let mut spec = s.network.clone();
        let case_seed = spec.seed;
        spec.seed ^= seed;
        let net = a2a_mock_agents::Network::start(spec.clone()).await?;
        // Listening before the banner, so that a signal right after it is caught.
        let mut int = unix_signal(SignalKind::interrupt())?;
        let mut term = unix_signal(SignalKind::terminate())?;
        let mut out = std::io::stdout().lock();
        for n in net.names() {
            writeln!(out, "{n}\t{}", net.card_url(n).unwrap_or_default())?;
        }
        writeln!(
            out,
            "serving case {} with network seed {} (the case's {case_seed} XOR --seed {seed}); Ctrl-C to stop{}",
            s.id,
            spec.seed,
            journal
                .map(|j| format!(" (journal -> {})", j.display()))
                .unwrap_or_default()
        )?;
        out.flush()?;
        drop(out);
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
        if let Some(j) = journal {
            let f = std::fs::File::create(j).with_context(|| format!("--journal {}", j.display()))?;
            let mut w = std::io::BufWriter::new(f);
            net.journal()
                .write_jsonl(&mut w)
                .and_then(|()| w.flush())
                .with_context(|| format!("writing the journal to {}", j.display()))?;
        }
        net.shutdown().await;
        Ok::<_, anyhow::Error>(HarnessExitCode::Success)
    })
}

/// `record`: the recording proxies until Ctrl-C or SIGTERM.
fn record(args: RecordArgs) -> anyhow::Result<HarnessExitCode> {
    use a2a_harness::record::{RecordOptions, Recorder, UpstreamSpec};
    if args.listen.len() > args.upstream.len() {
        anyhow::bail!(
            "{} --listen addresses for {} --upstream URLs: give at most one each",
            args.listen.len(),
            args.upstream.len()
        );
    }
    let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let upstreams: Vec<UpstreamSpec> = args
        .upstream
        .iter()
        .enumerate()
        .map(|(i, url)| UpstreamSpec {
            url: url.clone(),
            listen: args.listen.get(i).copied().unwrap_or(any),
        })
        .collect();
    let mut opts = RecordOptions::new(&args.out);
    opts.redact = args.redact;
    opts.max_inline_bytes = args.max_inline_bytes;
    opts.keep_bytes = args.keep_bytes;
    opts.max_artifact_bytes = args.max_artifact_bytes;
    opts.max_recorded_artifact_bytes = args.max_recorded_artifact_bytes;
    opts.bounds.upstream = std::time::Duration::from_secs(args.upstream_timeout_s.max(1));
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async move {
        let mut int = unix_signal(SignalKind::interrupt())?;
        let mut term = unix_signal(SignalKind::terminate())?;
        let rec = Recorder::start(&upstreams, opts).await?;
        let mut out = std::io::stdout().lock();
        for a in rec.agents() {
            writeln!(
                out,
                "{}\t{}\t(upstream {})",
                a.name,
                a.card_url(),
                a.upstream
            )?;
        }
        writeln!(
            out,
            "recording to {}; Ctrl-C to stop",
            rec.journal().path().display()
        )?;
        out.flush()?;
        drop(out);
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
        let journal = rec.journal().clone();
        rec.shutdown().await;
        if let Some(e) = journal.write_error() {
            anyhow::bail!("writing the journal {}: {e}", journal.path().display());
        }
        println!("{} entries in {}", journal.len(), journal.path().display());
        Ok::<_, anyhow::Error>(HarnessExitCode::Success)
    })
}

/// Make `--out` ready before anything runs: refuse a directory holding someone else's
/// `index.json`, remove the files of an earlier a2a-harness report (so no stale case file
/// survives), and prove it writable. Returns whether an old report was removed.
fn prepare_out(dir: &Path) -> anyhow::Result<bool> {
    let index = dir.join("index.json");
    let mut emptied = false;
    if index.exists() {
        let ours = std::fs::read(&index)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .is_some_and(|v| v["tool"]["name"] == "a2a-harness");
        if !ours {
            anyhow::bail!(
                "--out {} holds an index.json that is no a2a-harness report: choose another directory",
                dir.display()
            );
        }
        for e in std::fs::read_dir(dir).with_context(|| format!("--out {}", dir.display()))? {
            let p = e?.path();
            let r = if p.is_dir() {
                std::fs::remove_dir_all(&p)
            } else {
                std::fs::remove_file(&p)
            };
            r.with_context(|| format!("--out: removing the old report's {}", p.display()))?;
        }
        emptied = true;
    }
    let not_writable = || {
        format!(
            "--out {} is not writable (the report could not be written there)",
            dir.display()
        )
    };
    std::fs::create_dir_all(dir).with_context(not_writable)?;
    let probe = dir.join(".a2a-harness-write-check");
    std::fs::write(&probe, b"").with_context(not_writable)?;
    std::fs::remove_file(&probe).with_context(not_writable)?;
    Ok(emptied)
}

/// `run`: everything is checked (selection, known-failing file, delegator, `--out`) before the
/// first case starts; results print as they come; Ctrl-C stops the run, writes a partial
/// report marked incomplete and removes the temporary directories.
/// What every form of `run` settles before anything runs: the selected cases, the
/// known-failing entries and the delegator command (checked).
struct RunPlan {
    selection: Selection,
    selected: Vec<Scenario>,
    known: Vec<CaseGlob>,
    delegator: String,
}

impl RunPlan {
    fn new(cat: &Catalog, a: &RunArgs) -> anyhow::Result<RunPlan> {
        let selection = a.select.selection()?;
        let selected = selection.apply(&cat.cases);
        if selected.is_empty() {
            anyhow::bail!(
                "no case matches {} (see `a2a-harness list`)",
                selection.describe()
            );
        }
        let known = match &a.known_failing {
            Some(p) => read_known_failing(p)?,
            None => Vec::new(),
        };
        let delegator = match &a.delegator {
            Some(d) => d.clone(),
            None => default_delegator()?,
        };
        check_delegator(&delegator)?;
        Ok(RunPlan {
            selection,
            selected,
            known,
            delegator,
        })
    }

    /// The report directory of `run` ([`report_dir`], default `reports/<timestamp>`).
    fn report_dir(a: &RunArgs, out: &mut impl std::io::Write) -> anyhow::Result<PathBuf> {
        report_dir(a.out.clone(), "", out)
    }

    /// Write the reports of `results` to `out_dir`, then `summary` (if any) and the closing
    /// lines on `out`; the exit.
    #[allow(clippy::too_many_arguments)]
    fn close(
        &self,
        cat: &Catalog,
        a: &RunArgs,
        out_dir: &Path,
        finished: Finished,
        bindings: &[a2a_protocol::Binding],
        summary: Option<String>,
        out: &mut impl std::io::Write,
    ) -> anyhow::Result<Ended> {
        let Finished {
            results,
            wall_ms,
            interrupted,
        } = finished;
        report::write_all(
            out_dir,
            &report::ReportRun {
                delegator: &self.delegator,
                seed: a.seed,
                wall_ms,
                incomplete: interrupted.is_some(),
            },
            &cat.cases,
            &results,
        )
        .with_context(|| format!("writing reports to {}", out_dir.display()))?;
        if let Some(s) = summary {
            write!(out, "{s}")?;
        }
        let ids: Vec<&str> = self.selected.iter().map(|s| s.id.as_str()).collect();
        let stale = stale_known_failing(&self.known, &ids);
        write!(
            out,
            "{}",
            console::closing(
                &results,
                &stale,
                a.known_failing.as_deref(),
                out_dir,
                bindings,
                interrupted,
            )
        )?;
        if interrupted.is_some() {
            return Ok(Ended::Interrupted);
        }
        let failing = console::Counts::of(&results).failing();
        Ok(HarnessExitCode::for_run(failing as u64).into())
    }
}

/// A report directory (`out`, default `reports/<prefix><timestamp>`), ready to be written: an
/// earlier report in it is removed (and said so on `w`).
fn report_dir(
    out: Option<PathBuf>,
    prefix: &str,
    w: &mut impl std::io::Write,
) -> anyhow::Result<PathBuf> {
    let dir = out.unwrap_or_else(|| PathBuf::from(format!("reports/{prefix}{}", report::stamp())));
    if prepare_out(&dir)? {
        writeln!(w, "note: removed the earlier report in {}", dir.display())?;
    }
    Ok(dir)
}

/// The results of a run, however it ended.
struct Finished {
    results: Vec<CaseResult>,
    wall_ms: u64,
    /// `Some(cases not run)` when Ctrl-C stopped it.
    interrupted: Option<usize>,
}

fn run_cases(cat: &Catalog, a: RunArgs, out: &mut impl std::io::Write) -> anyhow::Result<Ended> {
    let plan = RunPlan::new(cat, &a)?;
    let (selection, selected, known) = (&plan.selection, &plan.selected, &plan.known);
    for s in selected {
        for d in &s.bytes_differ {
            eprintln!(
                "a2a-harness: note: case {}: the recorded bytes are not replayed ({d}): the replayed artifact has the recorded length, not its bytes",
                s.id
            );
        }
    }
    let options = RunOptions {
        delegator: plan.delegator.clone(),
        seed: a.seed,
        jobs: a.jobs.unwrap_or_else(default_jobs).max(1),
        repeat: a.repeat,
        known_failing: known.clone(),
        work_dir: None,
        bindings: BindingArg::expand(&a.binding),
        tls: a.tls,
        running: Default::default(),
        check_determinism: a.check_determinism,
        invariants: a.invariants,
    };
    let per_repeat = a2a_harness::run::passes(selected, &options.bindings).len();
    if per_repeat == 0 {
        anyhow::bail!(
            "no case matching {} has a meaning over {} (see each case's `bindings`)",
            selection.describe(),
            a.binding
                .iter()
                .map(|b| format!("{b:?}").to_lowercase())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let out_dir = RunPlan::report_dir(&a, out)?;
    let work = tempfile::tempdir().context("creating the store directory")?;
    let options = RunOptions {
        work_dir: Some(work.path().to_path_buf()),
        ..options
    };
    let total = per_repeat * a.repeat.max(1) as usize * if a.check_determinism { 2 } else { 1 };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let live = RefCell::new(console::Live::new(
        total as u64,
        known.clone(),
        a.known_failing.clone(),
    ));
    let so_far: RefCell<Vec<CaseResult>> = RefCell::new(Vec::new());
    let t0 = std::time::Instant::now();
    let finished = rt.block_on(async {
        // Listening before the first case starts.
        let mut int = unix_signal(SignalKind::interrupt())?;
        let run = run_with_progress(selected, &options, |p| {
            live.borrow_mut().finished(p.result);
            so_far.borrow_mut().push(p.result.clone());
        });
        // Names a slow case on the bar while it runs.
        let ticker = async {
            let mut every = tokio::time::interval(std::time::Duration::from_secs(1));
            loop {
                every.tick().await;
                live.borrow_mut().tick(options.running.longest());
            }
        };
        Ok::<_, std::io::Error>(tokio::select! {
            run = run => Some(run),
            _ = int.recv() => None,
            _ = ticker => None,
        })
    })?;
    // Every case task is dropped with the runtime: their delegator process groups are killed
    // before the store directory goes.
    rt.shutdown_timeout(std::time::Duration::from_secs(5));
    live.into_inner().finish();
    let (results, wall_ms, interrupted) = match finished {
        Some(run) => (run.results, run.wall_ms, None),
        None => {
            let done = so_far.into_inner();
            let left = total.saturating_sub(done.len());
            (done, t0.elapsed().as_millis() as u64, Some(left))
        }
    };
    drop(work);
    plan.close(
        cat,
        &a,
        &out_dir,
        Finished {
            results,
            wall_ms,
            interrupted,
        },
        &options.bindings,
        None,
        out,
    )
}

/// `explore`: options checked (delegator, topic, durations, `--out`) before anything runs;
/// findings print as they come; Ctrl-C stops exploring or shrinking and writes what there is.
fn explore(a: ExploreArgs, out: &mut impl std::io::Write) -> anyhow::Result<Ended> {
    use a2a_harness::explore::{self as ex, ExploreOptions, parse_duration};
    let delegator = match a.delegator {
        Some(d) => d,
        None => default_delegator()?,
    };
    check_delegator(&delegator)?;
    let topic = a
        .topic
        .as_deref()
        .map(str::parse::<a2a_harness::generate::Topic>)
        .transpose()
        .context("--topic")?;
    let shrink_rules = shrink_rule_globs(&a.shrink_rule)?;
    let time = match (&a.time, a.runs) {
        (Some(t), _) => parse_duration(t).context("--time")?,
        // --runs alone: the runs bound it (still a day at most).
        (None, Some(_)) => std::time::Duration::from_secs(24 * 3600),
        (None, None) => std::time::Duration::from_secs(300),
    };
    if a.runs == Some(0) {
        anyhow::bail!("--runs must be at least 1");
    }
    anyhow::ensure!(a.confirm >= 1, "--confirm must be at least 1");
    let baseline = match (a.baseline, a.no_baseline) {
        (_, true) => None,
        (Some(b), false) => {
            check_delegator(&b).context("--baseline")?;
            Some(b)
        }
        (None, false) => default_delegator().ok(),
    };
    let out_dir = report_dir(a.out.clone(), "explore-", out)?;
    let opts = ExploreOptions {
        seed: a.seed,
        runs: a.runs,
        time,
        topic,
        jobs: a.jobs.unwrap_or_else(default_jobs).max(1),
        confirm: a.confirm,
        shrink_runs: a.shrink_runs,
        baseline,
        shrink_time: parse_duration(&a.shrink_time).context("--shrink-time")?,
        shrink_rules,
        ..ExploreOptions::new(delegator, out_dir.clone())
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let cancel = tokio_util::sync::CancellationToken::new();
    let log: ex::Log = std::sync::Arc::new(|line: &str| {
        let _ = writeln!(anstream::stderr(), "{line}");
    });
    let explored = rt.block_on(async {
        // Listening before the first run starts.
        // Ctrl-C, or SIGTERM (a CI job's timeout): stop and write what there is.
        let mut int = unix_signal(SignalKind::interrupt())?;
        let mut term = unix_signal(SignalKind::terminate())?;
        let on_int = cancel.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
            on_int.cancel();
        });
        ex::explore(&opts, cancel.clone(), log)
            .await
            .map_err(anyhow::Error::from)
    })?;
    rt.shutdown_timeout(std::time::Duration::from_secs(5));
    ex::write_report(&opts, &explored)
        .with_context(|| format!("writing reports to {}", out_dir.display()))?;
    write!(out, "{}", ex::summary_text(&explored.summary, &out_dir))?;
    if cancel.is_cancelled() {
        return Ok(Ended::Interrupted);
    }
    Ok(if explored.summary.found() {
        HarnessExitCode::Failure
    } else {
        HarnessExitCode::Success
    }
    .into())
}

/// A run's `index.json` (a report directory or the file).
fn read_index(from: &Path) -> anyhow::Result<a2a_driver_contract::report::RunIndex> {
    let file = if from.is_dir() {
        from.join("index.json")
    } else {
        from.to_path_buf()
    };
    let text =
        std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not a run index", file.display()))
}

/// The arguments of `bench`.
struct BenchArgs {
    workloads: PathBuf,
    workload: Vec<String>,
    heavy: bool,
    quick: bool,
    repeat: Option<u32>,
    delegator: Option<String>,
    baseline: Vec<BaselineArg>,
    python: PathBuf,
    out: Option<PathBuf>,
    compare: Option<PathBuf>,
    seed: u64,
}

/// `a2a-harness bench`: everything is checked (workloads, delegator, baselines, the old report)
/// before anything runs.
fn bench(a: BenchArgs) -> anyhow::Result<HarnessExitCode> {
    let all = a2a_benches::load_workloads(&a.workloads)?;
    let mut selected = a2a_benches::select(all, &a.workload, a.heavy)?;
    if selected.is_empty() {
        anyhow::bail!("no workloads in {}", a.workloads.display());
    }
    if a.quick {
        selected = selected.iter().map(a2a_benches::Workload::quick).collect();
    }
    if a.repeat == Some(0) {
        anyhow::bail!("--repeat must be at least 1");
    }
    let reference = default_delegator();
    let delegator = match a.delegator {
        Some(d) => d,
        None => reference
            .as_ref()
            .map_err(|e| anyhow::anyhow!("{e}"))?
            .clone(),
    };
    check_delegator(&delegator)?;
    let mut baselines = Vec::new();
    for b in &a.baseline {
        baselines.push(match b {
            BaselineArg::Reference => {
                let reference = reference.as_ref().map_err(|e| anyhow::anyhow!("{e}"))?;
                check_delegator(reference)?;
                a2a_benches::Baseline::Reference(reference.clone())
            }
            BaselineArg::PythonSdk => {
                let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                    .join("../benches/python/sdk_consumer.py");
                let script = if script.exists() {
                    script
                } else {
                    PathBuf::from("benches/python/sdk_consumer.py")
                };
                anyhow::ensure!(
                    a.python.exists(),
                    "--baseline python-sdk: no Python interpreter at {} (set --python or A2A_BENCH_PYTHON; the interop venv: scripts/test.sh builds .venv)",
                    a.python.display()
                );
                anyhow::ensure!(script.exists(), "--baseline python-sdk: {} is missing", script.display());
                a2a_benches::Baseline::PythonSdk {
                    python: a.python.clone(),
                    script,
                }
            }
        });
    }
    let old = a
        .compare
        .as_deref()
        .map(a2a_benches::read_report)
        .transpose()?;
    let out = a.out.unwrap_or_else(|| {
        let ts = time::OffsetDateTime::now_utc();
        PathBuf::from(format!(
            "reports/bench-{:04}{:02}{:02}-{:02}{:02}{:02}",
            ts.year(),
            u8::from(ts.month()),
            ts.day(),
            ts.hour(),
            ts.minute(),
            ts.second()
        ))
    });
    let opts = a2a_benches::BenchOptions {
        workloads: selected,
        repeat: a.repeat,
        delegator,
        baselines,
        out: out.clone(),
        quick: a.quick,
        command: std::env::args()
            .map(|s| shell_quote(&s))
            .collect::<Vec<_>>()
            .join(" "),
        seed: a.seed,
    };
    let rt = tokio::runtime::Runtime::new()?;
    let report = rt.block_on(a2a_benches::run_bench(&opts, |m| eprintln!("bench: {m}")))?;
    println!("{}", a2a_benches::report::table(&report));
    if let Some(old) = old {
        println!(
            "compared with {}:",
            a.compare
                .as_deref()
                .map(Path::display)
                .map(|d| d.to_string())
                .unwrap_or_default()
        );
        println!("{}", a2a_benches::report::compare(&old, &report));
    }
    println!(
        "reports: {}/bench.json, bench.md, bench.html",
        out.display()
    );
    Ok(if report.all_verified() {
        HarnessExitCode::Success
    } else {
        HarnessExitCode::Failure
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_documents_every_exit_code() {
        for c in HarnessExitCode::ALL {
            assert!(EXIT_HELP.contains(&format!(" {c} ")), "{c}: {EXIT_HELP}");
        }
        assert_eq!(HarnessExitCode::for_run(1).code(), 1);
    }
}
