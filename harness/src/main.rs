//! `a2a-harness`: run the conformance catalog against a delegator and write reports.

use a2a_driver_contract::HarnessExitCode;
use a2a_harness::catalog::{CaseGlob, load_catalog, read_known_failing, select};
use a2a_harness::delegator_process::{resolve_program, shell_quote, split_command};
use a2a_harness::report;
use a2a_harness::rules::registry;
use a2a_harness::run::{RunOptions, default_jobs, run_with_progress};
use a2a_harness::scenario::Scenario;
use anyhow::Context;
use clap::{Parser, Subcommand};
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The exit codes, [`HarnessExitCode`] (`a2a_driver_contract`), as `--help` shows them.
const EXIT_HELP: &str = "EXIT CODES: 0 every MUST passed (NON-STRICT, XFAIL and UNSUPPORTED do not fail the run); 1 a failure (FAIL, UNKNOWN or XPASS; reports are written); 2 bad usage or configuration, nothing judged.";

/// The A2A delegation conformance harness: drives a delegator through simulated A2A agents and
/// checks every rule against what the network observed.
#[derive(Parser)]
#[command(name = "a2a-harness", version, about, after_help = EXIT_HELP)]
struct Cli {
    /// The scenario catalog directory.
    #[arg(
        long,
        global = true,
        default_value = "scenarios",
        env = "A2A_HARNESS_SCENARIOS"
    )]
    scenarios: PathBuf,
    #[command(subcommand)]
    cmd: Cmd,
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
    Run {
        /// The delegator command (speaks docs/driver-protocol.md). Default: the reference delegator next to this binary.
        #[arg(long)]
        delegator: Option<String>,
        /// Only cases whose id matches this glob (`*`, `?`).
        #[arg(long = "case", default_value = "*")]
        case: String,
        /// Seed for every random choice; the report prints it.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Cases run in parallel (default: four per core, at most 32: cases mostly wait on timers).
        #[arg(long)]
        jobs: Option<usize>,
        /// Run each case this many times (seeds seed, seed+1, ...); with N > 1 each result is reported as `<case id>@<seed>`.
        #[arg(long, default_value_t = 1)]
        repeat: u32,
        /// A file of case ids (or globs) known to fail: FAIL becomes XFAIL, PASS becomes XPASS (which fails the run).
        #[arg(long)]
        known_failing: Option<PathBuf>,
        /// Report directory (default: reports/<timestamp>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Run the catalog over these protocol bindings, one pass each (comma-separated, or
        /// `all`): agents that do not pin their own bindings serve only that one, and each result
        /// is reported as `<case id>:<binding>`. Cases list the bindings they have a meaning for;
        /// a case whose agents all pin theirs runs once. Default: each case as it says
        /// (JSON-RPC unless pinned), ids unsuffixed.
        #[arg(long, value_delimiter = ',', value_name = "jsonrpc|rest|grpc|all")]
        binding: Vec<BindingArg>,
    },
    /// Work with report directories.
    #[command(subcommand)]
    Report(ReportCmd),
    /// List the cases of the catalog.
    List,
    /// List the rules with how many catalog cases list each (NOT TESTED when none; always-on
    /// rules are judged wherever their situation arises), and with `--report`, in how many cases
    /// of that run each was actually evaluated.
    ///
    /// Example: a2a-harness rules --report reports/20260101-120000
    Rules {
        /// A report directory (or its index.json) whose per-rule evaluated counts to show.
        #[arg(long)]
        report: Option<PathBuf>,
    },
    /// Explain a rule (by id) or a case (by id).
    ///
    /// Example: a2a-harness explain DLG-SEND-02
    Explain {
        /// A rule id such as DLG-SEND-02, or a case id.
        what: String,
        /// A report directory (or its index.json) whose evaluated count of the rule to show.
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
    },
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
        Ok(c) => c.into(),
        Err(e) => {
            eprintln!("a2a-harness: {e:#}");
            HarnessExitCode::Usage.into()
        }
    }
}

/// The reference delegator next to this binary, else `a2a-delegator` from `PATH` (said on
/// stderr, since it may not be the build the user expects).
fn default_delegator() -> String {
    let exe = std::env::current_exe().ok();
    let sibling = exe
        .as_deref()
        .and_then(Path::parent)
        .map(|d| d.join("a2a-delegator"));
    match sibling {
        Some(p) if p.exists() => {
            // Quoted the way `--delegator` is split.
            format!("{} drive", shell_quote(&p.display().to_string()))
        }
        other => {
            let found = resolve_program("a2a-delegator");
            eprintln!(
                "a2a-harness: note: no a2a-delegator next to this binary{}; using `a2a-delegator drive` from PATH ({})",
                other
                    .map(|p| format!(" ({})", p.display()))
                    .unwrap_or_default(),
                match &found {
                    Ok(p) => p.display().to_string(),
                    Err(_) => "not found there either".to_string(),
                }
            );
            "a2a-delegator drive".to_string()
        }
    }
}

/// Check the delegator command before running anything: it parses, and its program exists
/// and is executable (bad usage otherwise, exit 2).
fn check_delegator(cmd: &str) -> anyhow::Result<()> {
    let line = split_command(cmd)?;
    resolve_program(&line.program).with_context(|| format!("delegator command {cmd:?}"))?;
    Ok(())
}

fn catalog(dir: &Path) -> anyhow::Result<Vec<Scenario>> {
    load_catalog(dir).map_err(|e| anyhow::anyhow!("{e}"))
}

fn run(cli: Cli) -> anyhow::Result<HarnessExitCode> {
    match cli.cmd {
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
        }),
        Cmd::Report(ReportCmd::Merge { dirs, out }) => {
            let index = report::merge(&dirs, &out)?;
            print!("{}", report::rules_broken_text(&index.rules_broken));
            let t = index.totals;
            println!("reports: {}", out.display());
            println!(
                "{} passed, {} failed, {} skipped",
                t.passed, t.failed, t.skipped
            );
            Ok(HarnessExitCode::for_run(t.failed))
        }
        Cmd::Schema => {
            println!(
                "{}",
                serde_json::to_string_pretty(&a2a_harness::scenario::json_schema())?
            );
            Ok(HarnessExitCode::Success)
        }
        Cmd::List => {
            for s in catalog(&cli.scenarios)? {
                println!("{:<40} {}  [{}]", s.id, s.title, s.rules.join(", "));
            }
            Ok(HarnessExitCode::Success)
        }
        Cmd::Rules { report: from } => {
            let cat = catalog(&cli.scenarios)?;
            let listed = listed_counts(&cat);
            let judged = from.as_deref().map(evaluated_counts).transpose()?;
            for r in registry() {
                let n = listed.get(r.id).copied().unwrap_or(0);
                let mut status = if r.check.is_none() || (n == 0 && !r.always) {
                    "NOT TESTED".to_string()
                } else if r.always {
                    format!("always-on, listed in {n}")
                } else {
                    format!("{n} cases")
                };
                if let Some(j) = &judged {
                    let _ = write!(
                        status,
                        ", evaluated in {}",
                        j.get(r.id).copied().unwrap_or(0)
                    );
                }
                println!(
                    "{:<18} {:<6} {:<24} {}",
                    r.id,
                    format!("{:?}", r.level).to_uppercase(),
                    status,
                    r.requirement
                );
            }
            Ok(HarnessExitCode::Success)
        }
        Cmd::Explain { what, report: from } => {
            if let Some(r) = registry().into_iter().find(|r| r.id == what) {
                println!(
                    "{} ({:?})\n  {}\n  source: {}\n  checker: {}",
                    r.id,
                    r.level,
                    r.requirement,
                    r.source,
                    if r.check.is_some() {
                        "yes"
                    } else {
                        "none yet (NOT TESTED)"
                    }
                );
                let cat = catalog(&cli.scenarios)?;
                if r.always {
                    println!(
                        "  always-on: judged in every case where its situation arises (of {} catalog cases); listed in:",
                        cat.len()
                    );
                }
                for s in cat.iter().filter(|s| s.rules.contains(&what)) {
                    println!("  case {}: {}", s.id, s.title);
                }
                if let Some(from) = from.as_deref() {
                    let j = evaluated_counts(from)?;
                    println!(
                        "  evaluated in {} cases of the run in {}",
                        j.get(r.id).copied().unwrap_or(0),
                        from.display()
                    );
                }
                return Ok(HarnessExitCode::Success);
            }
            let cat = catalog(&cli.scenarios)?;
            match cat.iter().find(|s| s.id == what) {
                Some(s) => {
                    println!(
                        "{} — {}\n  file: {}\n  rules: {}\n  agents: {}\n  delegations: {}",
                        s.id,
                        s.title,
                        s.file.display(),
                        s.rules.join(", "),
                        s.network
                            .agents
                            .iter()
                            .map(|a| a.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                        s.delegations
                            .iter()
                            .map(|d| d.id.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                    if let Some(c) = &s.crash {
                        println!("  crash: {:?}", c.trigger);
                    }
                    Ok(HarnessExitCode::Success)
                }
                None => anyhow::bail!(
                    "no rule or case named {what:?} (see `a2a-harness rules` and `a2a-harness list`)"
                ),
            }
        }
        Cmd::Serve { case, seed } => {
            let cat = catalog(&cli.scenarios)?;
            let s = cat
                .into_iter()
                .find(|s| s.id == case)
                .with_context(|| format!("no case {case:?}"))?;
            let rt = tokio::runtime::Runtime::new()?;
            rt.block_on(async move {
                // The same network as `run --seed N` gives this case.
                let mut spec = s.network.clone();
                let case_seed = spec.seed;
                spec.seed ^= seed;
                let net = a2a_mock_agents::Network::start(spec.clone()).await?;
                for n in net.names() {
                    println!("{n}\t{}", net.card_url(n).unwrap_or_default());
                }
                println!(
                    "serving case {} with network seed {} (the case's {case_seed} XOR --seed {seed}); Ctrl-C to stop",
                    s.id, spec.seed
                );
                tokio::signal::ctrl_c().await?;
                net.shutdown().await;
                Ok::<_, anyhow::Error>(HarnessExitCode::Success)
            })
        }
        Cmd::Run {
            delegator,
            case,
            seed,
            jobs,
            repeat,
            known_failing,
            out,
            binding,
        } => {
            let cat = catalog(&cli.scenarios)?;
            let selected: Vec<Scenario> = select(&cat, &CaseGlob::new(&case)?);
            if selected.is_empty() {
                anyhow::bail!("no case matches {case:?} (see `a2a-harness list`)");
            }
            let known = match &known_failing {
                Some(p) => read_known_failing(p)?,
                None => Vec::new(),
            };
            let delegator = delegator.unwrap_or_else(default_delegator);
            check_delegator(&delegator)?;
            let out = out.unwrap_or_else(|| PathBuf::from(format!("reports/{}", report::stamp())));
            let work = tempfile::tempdir().context("creating the store directory")?;
            let options = RunOptions {
                delegator: delegator.clone(),
                seed,
                jobs: jobs.unwrap_or_else(default_jobs).max(1),
                repeat,
                known_failing: known,
                work_dir: Some(work.path().to_path_buf()),
                bindings: BindingArg::expand(&binding),
            };
            let per_repeat = a2a_harness::run::passes(&selected, &options.bindings).len();
            if per_repeat == 0 {
                anyhow::bail!(
                    "no case matching {case:?} has a meaning over {} (see each case's `bindings`)",
                    binding
                        .iter()
                        .map(|b| format!("{b:?}").to_lowercase())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            let bar = indicatif::ProgressBar::new((per_repeat * repeat.max(1) as usize) as u64);
            if !std::io::stderr().is_terminal() {
                bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
            }
            bar.set_style(
                indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            let run = rt.block_on(run_with_progress(&selected, &options, |p| {
                let r = p.result;
                bar.set_message(format!("{} {}", r.id, r.verdict.label()));
                bar.inc(1);
                // Without a terminal there is no bar: print one line per case instead.
                if bar.is_hidden() {
                    eprintln!("{:<11} {}", r.verdict.label(), r.id);
                }
            }));
            bar.finish_and_clear();
            let results = &run.results;
            report::write_all(
                &out,
                &report::ReportRun {
                    delegator: &delegator,
                    seed,
                    wall_ms: run.wall_ms,
                    incomplete: false,
                },
                &cat,
                results,
            )
            .with_context(|| format!("writing reports to {}", out.display()))?;
            for r in results.iter().filter(|r| r.verdict.fails_run()) {
                println!("{} {}", r.verdict.label(), r.id);
                for v in r.rules.iter().filter(|v| v.verdict.fails_run()) {
                    println!(
                        "  {} {}: expected {}; observed {}",
                        v.verdict.label(),
                        v.id,
                        v.expected.as_deref().unwrap_or("-"),
                        v.observed.as_deref().unwrap_or("-")
                    );
                }
                for n in r.notes.iter().filter(|n| !n.starts_with("crash injected")) {
                    println!("  note: {n}");
                }
                println!("  repro: {}", r.repro);
            }
            let t = run.totals();
            print!(
                "{}",
                report::rules_broken_text(&report::rules_broken(results))
            );
            println!("reports: {}", out.display());
            if !options.bindings.is_empty() {
                for b in &options.bindings {
                    let of_b: Vec<_> = results
                        .iter()
                        .filter(|r| r.binding == Some(*b))
                        .cloned()
                        .collect();
                    let bt = a2a_harness::report::totals(&of_b);
                    println!(
                        "{b}: {} passed, {} failed, {} skipped",
                        bt.passed, bt.failed, bt.skipped
                    );
                }
            }
            println!(
                "{} passed, {} failed, {} skipped",
                t.passed, t.failed, t.skipped
            );
            Ok(HarnessExitCode::for_run(t.failed))
        }
    }
}

/// How many catalog cases list each rule.
fn listed_counts(
    cat: &[a2a_harness::scenario::Scenario],
) -> std::collections::BTreeMap<String, usize> {
    let mut m = std::collections::BTreeMap::new();
    for s in cat {
        for r in &s.rules {
            *m.entry(r.clone()).or_default() += 1;
        }
    }
    m
}

/// The per-rule evaluated counts of a run's `index.json` (a report directory or the file).
fn evaluated_counts(
    from: &std::path::Path,
) -> anyhow::Result<std::collections::BTreeMap<String, u64>> {
    let file = if from.is_dir() {
        from.join("index.json")
    } else {
        from.to_path_buf()
    };
    let text =
        std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
    let index: a2a_driver_contract::report::RunIndex = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a run index", file.display()))?;
    Ok(index
        .rules
        .into_iter()
        .map(|r| (r.id, r.evaluated))
        .collect())
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
    let delegator = a.delegator.unwrap_or_else(|| reference.clone());
    check_delegator(&delegator)?;
    let mut baselines = Vec::new();
    for b in &a.baseline {
        baselines.push(match b {
            BaselineArg::Reference => {
                check_delegator(&reference)?;
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
