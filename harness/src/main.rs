//! `a2a-harness`: run the conformance catalog against a delegator and write reports.
//!
//! What is left in this file is the command line only: the clap definitions (every option,
//! its `--help` text and the exit-code paragraphs), the conversion of the parsed arguments
//! into the settings of the commands, the dispatch to them, and the mapping of their end to
//! the process exit code (errors printed as `a2a-harness: ...`, exit 2). What each command
//! checks, runs, writes and prints is in [`cli`] (one module per command or group of commands,
//! the binary's edge: `anyhow` errors whose text is what the binary prints), over the library
//! crates' tools; the live console of `run` is [`a2a_harness_core::console`].
//!
//! This package holds the binary and nothing else, and that is why so little is left here:
//! everything a run needs is in `a2a-harness-core`; the tools only some commands use are crates
//! beside it (`a2a-harness-explore` for `explore`, `a2a-harness-record` for `record` and
//! `scenario from-journal`, `a2a-journal-diff` for `journal diff`), which depend on core. A
//! library target in this package would have to be core (the tool crates and the integration
//! tests need it) while the binary needs the tool crates: a package cycle, which Cargo forbids.
//! So the binary is its own package, a thin command line: clap definitions and dispatch,
//! `anyhow` at the edge.

// The doc comments below are clap's `--help` text, whose placeholders (`reports/<timestamp>`,
// `found/<rule>-<seed>.toml`) are meant for a terminal, not HTML. Rustdoc documents this binary
// now that no library of the same name hides it; the help text stays as users read it.
#![allow(rustdoc::invalid_html_tags)]

use a2a_driver_contract::HarnessExitCode;
use a2a_harness_core::catalog::{CaseGlob, Partition, Selection};
use a2a_harness_core::delegator_process::shell_quote;
use clap::{Parser, Subcommand};
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

mod cli;

use cli::Ended;

/// The exit codes, [`HarnessExitCode`] (`a2a_driver_contract`), as `--help` shows them.
const EXIT_HELP: &str = "EXIT CODES: 0 every MUST passed (NON-STRICT, XFAIL and UNSUPPORTED do not fail the run); 1 a failure (FAIL, UNKNOWN or XPASS; reports are written); 2 bad usage or configuration, nothing judged; 130 interrupted (Ctrl-C): a partial report marked incomplete is written.";

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
    #[command(after_help = a2a_harness_core::explain::GROUPING)]
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
    /// its own addresses in the interface URLs (an interface at another plain origin, such as
    /// gRPC on a port of its own, gets a listen address of its own) and forwards every other
    /// call unchanged (JSON-RPC, HTTP+JSON, gRPC; streams pass through as they arrive). One documented change: a push
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
    ///   a2a-harness bench --workload stream-64mib-text --baseline python-sdk --baseline js-sdk
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
        /// Also run baselines in the same session (repeatable, or comma-separated; each is
        /// reported beside the others): `python-sdk` (the official a2a-sdk client from the
        /// interop venv, see --python), `js-sdk` (the official @a2a-js/sdk client installed by
        /// scripts/setup-node.sh, see --node) or `reference` (the reference delegator).
        #[arg(
            long,
            value_name = "python-sdk|js-sdk|reference",
            value_delimiter = ','
        )]
        baseline: Vec<BaselineArg>,
        /// The Python interpreter for `--baseline python-sdk`.
        #[arg(long, default_value = ".venv/bin/python", env = "A2A_BENCH_PYTHON")]
        python: PathBuf,
        /// The Node.js executable for `--baseline js-sdk` (a name is looked up on PATH).
        #[arg(long, default_value = "node", env = "A2A_BENCH_NODE")]
        node: PathBuf,
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
    /// port; the bound address is printed); repeatable. Each further origin the upstream's
    /// card names (a gRPC interface on a port of its own) gets a free port on the same IP,
    /// printed too and journaled under the same agent.
    #[arg(long, value_name = "ADDR")]
    listen: Vec<std::net::SocketAddr>,
    /// Output directory: the journal is written to DIR/journal.jsonl.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// A payload path to redact in every recorded body: a JSON pointer whose segments may be
    /// `*` (any key or index), matched from the root and from every nested value, such as
    /// /metadata/ssn or /parts/*/data/iban; repeatable.
    #[arg(long, value_name = "JSON_POINTER")]
    redact: Vec<a2a_harness_record::record::RedactPath>,
    /// Strings longer than this are recorded as length + sha256 + their first 32 bytes, except
    /// artifact content within --max-artifact-bytes.
    #[arg(long, value_name = "BYTES", default_value_t = a2a_harness_record::record::DEFAULT_MAX_INLINE_BYTES)]
    max_inline_bytes: usize,
    /// Artifact content (text, raw and data of artifact parts) recorded whole per artifact, so
    /// that `scenario from-journal` replays the recorded bytes (4 MiB; 0: summarise artifacts
    /// like other strings). Beyond it the artifact is summarised and replayed as generated
    /// content of the same length.
    #[arg(long, value_name = "BYTES", default_value_t = a2a_harness_record::record::DEFAULT_MAX_ARTIFACT_BYTES)]
    max_artifact_bytes: u64,
    /// Artifact content recorded whole over the whole recording (64 MiB).
    #[arg(long, value_name = "BYTES", default_value_t = a2a_harness_record::record::DEFAULT_MAX_RECORDED_ARTIFACT_BYTES)]
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
    /// A and B are each a JSON-lines journal (`a2a-harness serve --journal FILE`, `a2a-harness
    /// record`), a case result (`cases/<id>.json` of a report: its `journal` field), or a report
    /// directory with `--case ID`.
    ///
    /// With --agent-behaviour only what the agents did is compared: the check that the replay
    /// of a recording (`scenario from-journal`, then `run`) is the recorded agent.
    ///
    /// Example: a2a-harness journal diff reports/passing reports/failing --case states.completed
    ///
    /// Example: a2a-harness journal diff --agent-behaviour rec/journal.jsonl reports/replay --case recorded.journal
    #[command(after_help = journal_diff_help())]
    Diff {
        /// The first journal.
        a: PathBuf,
        /// The second journal.
        b: PathBuf,
        /// The case whose journal to take from a report directory (A, B or both).
        #[arg(long, value_name = "ID")]
        case: Option<String>,
        /// Compare only what the agents did (task lives, artifacts byte for byte, the kind and
        /// status of each answer), not the delegator's requests nor how answers were
        /// serialised; see AGENT BEHAVIOUR below.
        #[arg(long)]
        agent_behaviour: bool,
    },
}

/// What `journal diff` ignores, and its exit codes.
fn journal_diff_help() -> String {
    format!(
        "WHAT IS COMPARED: both journals are put in a canonical form first. {}\n\nAGENT BEHAVIOUR (--agent-behaviour): {}\n\nEXIT CODES: 0 identical modulo ids, ports and timing (with --agent-behaviour: no difference in agent behaviour); 1 different (the first difference is printed, with the entries before it and the seq of each side; without --agent-behaviour, whether the agents' behaviour differs too); 2 bad input (an unreadable file, a line that is no journal entry: the file and line are named).",
        a2a_journal_diff::IGNORED,
        a2a_journal_diff::AGENT_BEHAVIOUR
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
    /// Cases run in parallel (default: eight per core, at most 64: cases mostly wait on timers).
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
    /// Crash sweep: run each selected case once clean to learn N, the last journal position
    /// every run records before the delegations have their outcomes (up to each task's final
    /// state and the entry that handed it over), then once per position k = 1..N with its
    /// crash replaced by a SIGKILL when journal entry k is recorded (restart on the same store),
    /// each reported as `<case id>@event<k>` and judged by its rules and the history invariants
    /// (HIST-*). The summary lists every position at which a rule broke.
    #[arg(long, conflicts_with_all = ["repeat", "binding", "crash_at_event"])]
    crash_sweep: bool,
    /// With --crash-sweep: at most N positions per case; a longer case is sampled with --seed
    /// (first and last position always included).
    #[arg(long, value_name = "N", requires = "crash_sweep", default_value_t = a2a_harness_core::sweep::DEFAULT_SWEEP_MAX, value_parser = clap::value_parser!(u64).range(2..))]
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
    /// Aim every scenario at one rule family: send, wire, route (with TLS and signed cards),
    /// state, input, auth, limit, obs, art, retry, rec (default: families drawn with weights).
    #[arg(long, value_name = "TOPIC")]
    topic: Option<String>,
    /// Report directory (default: reports/explore-<timestamp>); checked as for `run`.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Runs at once, exploring and shrinking (default: eight per core, at most 64).
    #[arg(long)]
    jobs: Option<usize>,
    /// A shrinking candidate counts as failing only if it fails the rule in every one of N
    /// runs; the final scenario is confirmed the same way.
    #[arg(long, value_name = "N", default_value_t = a2a_harness_explore::explore::DEFAULT_CONFIRM)]
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

/// The exit codes of `explore`.
const EXPLORE_EXIT_HELP: &str = "EXIT CODES: 0 nothing found; 1 a finding (a rule judged FAIL or NON-STRICT, or a contract break or crash; reports and found files are written); 2 bad usage or configuration, nothing run; 130 interrupted (Ctrl-C or SIGTERM): what was found so far is written, unshrunk if shrinking had not begun.";

/// A `--baseline` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum BaselineArg {
    /// The official Python SDK client.
    PythonSdk,
    /// The official JavaScript SDK client (@a2a-js/sdk).
    JsSdk,
    /// The reference delegator.
    Reference,
}

/// The exit codes of `bench`.
const BENCH_EXIT_HELP: &str = "EXIT CODES: 0 every delegator run verified byte-exact; 1 a run failed verification (a corrupted artifact, a failed or missing done, the time limit passed: reports are written, no throughput figure for it); 2 bad usage or a bad workload file (file:line:col), nothing run.";

fn main() -> ExitCode {
    // Clap exits with 2 (`HarnessExitCode::Usage`) on bad usage by itself.
    let cli = Cli::parse();
    match run(cli) {
        Ok(ended) => ended.into(),
        // A reader that went away (`a2a-harness rules | head`) is no error of ours.
        Err(e) if cli::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "a2a-harness: {e:#}");
            HarnessExitCode::Usage.into()
        }
    }
}

impl CatalogArgs {
    /// The catalog of `--scenarios` and `--no-builtin` ([`cli::load_catalog`]).
    fn load(&self) -> anyhow::Result<a2a_harness_core::catalog::Catalog> {
        cli::load_catalog(&self.scenarios, self.no_builtin)
    }
}

impl RunArgs {
    /// The settings of [`cli::run::run`]; `selection` is built from `--case`, `--rule` and
    /// `--partition` by the caller (after the catalog loaded, as its errors come first).
    fn settings(self, selection: Selection) -> cli::run::RunSettings {
        cli::run::RunSettings {
            delegator: self.delegator,
            selection,
            seed: self.seed,
            jobs: self.jobs,
            repeat: self.repeat,
            known_failing: self.known_failing,
            out: self.out,
            bindings: BindingArg::expand(&self.binding),
            binding_names: self
                .binding
                .iter()
                .map(|b| format!("{b:?}").to_lowercase())
                .collect(),
            tls: self.tls,
            crash_sweep: self.crash_sweep,
            sweep_max: self.sweep_max,
            crash_at_event: self.crash_at_event,
            check_determinism: self.check_determinism,
            invariants: self.invariants,
        }
    }
}

impl From<ExploreArgs> for cli::explore::ExploreSettings {
    fn from(a: ExploreArgs) -> Self {
        cli::explore::ExploreSettings {
            delegator: a.delegator,
            time: a.time,
            runs: a.runs,
            seed: a.seed,
            topic: a.topic,
            out: a.out,
            jobs: a.jobs,
            confirm: a.confirm,
            baseline: a.baseline,
            no_baseline: a.no_baseline,
            shrink_runs: a.shrink_runs,
            shrink_time: a.shrink_time,
            shrink_rule: a.shrink_rule,
        }
    }
}

impl From<RecordArgs> for cli::network::RecordSettings {
    fn from(a: RecordArgs) -> Self {
        cli::network::RecordSettings {
            upstream: a.upstream,
            listen: a.listen,
            out: a.out,
            redact: a.redact,
            max_inline_bytes: a.max_inline_bytes,
            max_artifact_bytes: a.max_artifact_bytes,
            max_recorded_artifact_bytes: a.max_recorded_artifact_bytes,
            keep_bytes: a.keep_bytes,
            upstream_timeout_s: a.upstream_timeout_s,
        }
    }
}

impl From<BaselineArg> for cli::bench::BenchBaseline {
    fn from(b: BaselineArg) -> Self {
        match b {
            BaselineArg::PythonSdk => cli::bench::BenchBaseline::PythonSdk,
            BaselineArg::JsSdk => cli::bench::BenchBaseline::JsSdk,
            BaselineArg::Reference => cli::bench::BenchBaseline::Reference,
        }
    }
}

/// Run the command `cli` names.
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
            node,
            out,
            compare,
            seed,
        } => cli::bench::bench(cli::bench::BenchSettings {
            workloads,
            workload,
            heavy,
            quick,
            repeat,
            delegator,
            baseline: baseline.into_iter().map(Into::into).collect(),
            python,
            node,
            out,
            compare,
            seed,
            command: std::env::args()
                .map(|s| shell_quote(&s))
                .collect::<Vec<_>>()
                .join(" "),
        })?
        .into(),
        Cmd::Report(ReportCmd::Merge { dirs, out: dir }) => {
            cli::reports::merge(&dirs, &dir, &mut out)?.into()
        }
        Cmd::Journal(JournalCmd::Diff {
            a,
            b,
            case,
            agent_behaviour,
        }) => cli::journals::diff(&a, &b, case.as_deref(), agent_behaviour, &mut out)?.into(),
        Cmd::Scenario(ScenarioCmd::FromJournal {
            journal,
            out: file,
            id,
        }) => cli::journals::from_journal(&journal, &file, id, &mut out)?.into(),
        Cmd::Schema => cli::describe::schema(&mut out)?.into(),
        Cmd::List { select } => {
            let cat = cli.catalog.load()?;
            cli::describe::list(&cat.cases, &select.selection()?, &mut out)?.into()
        }
        Cmd::Rules { report: from } => {
            cli::describe::rules(&cli.catalog.load()?.cases, from.as_deref(), &mut out)?.into()
        }
        Cmd::Explain { what, report: from } => {
            cli::describe::explain(&cli.catalog.load()?.cases, &what, from.as_deref(), &mut out)?
                .into()
        }
        Cmd::Serve {
            case,
            seed,
            journal,
        } => {
            cli::network::serve(&cli.catalog.load()?.cases, &case, seed, journal.as_deref())?.into()
        }
        Cmd::Explore(args) => cli::explore::explore(args.into(), &mut out)?,
        Cmd::Record(args) => cli::network::record(args.into())?.into(),
        Cmd::Run(args) => {
            let cat = cli.catalog.load()?;
            let selection = args.select.selection()?;
            cli::run::run(&cat, args.settings(selection), &mut out)?
        }
    };
    out.flush()?;
    Ok(ended)
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
