//! The scenario generator of `explore` (`a2a_harness_explore::generate`): deterministic, every scenario
//! loads back through the catalog loader, the reference delegator passes what it generates (its
//! rules and the history invariants), and
//! every planted bug is caught by a generated scenario within a bounded number of seeds.
//!
//! Knobs for longer local runs (the defaults keep `.ci/run` short):
//! - `GENERATE_SEEDS=N` and `GENERATE_START=S`: the seeds run against the reference delegator
//!   (default 48 from 0), `GENERATE_TOPIC=T` aimed at one family;
//! - `GENERATE_BUGS_UNAIMED=1`: hunt each planted bug without a topic (the CI run aims at the
//!   bug's family), `GENERATE_BUG_LIMIT=N` seeds at most per bug.

use crate::common;

use a2a_harness_core::catalog::parse_case;
use a2a_harness_core::run::{RunOptions, run};
use a2a_harness_core::runner::{CaseResult, Verdict};
use a2a_harness_core::scenario::Scenario;
use a2a_harness_explore::generate::{Topic, generate, to_toml};
use std::path::Path;
use std::time::Instant;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn same(a: &Scenario, b: &Scenario) -> bool {
    serde_json::to_value(a).ok() == serde_json::to_value(b).ok()
}

#[test]
fn the_same_seed_gives_the_same_scenario() {
    for seed in 0..100 {
        for topic in [None, Some(Topic::ALL[(seed % 11) as usize])] {
            let a = generate(seed, topic);
            let b = generate(seed, topic);
            assert!(
                same(&a, &b),
                "seed {seed} {topic:?} differs between two calls"
            );
        }
    }
    // Different seeds give different scenarios (not one scenario renamed).
    let distinct: std::collections::BTreeSet<String> = (0..50)
        .map(|s| {
            let mut g = generate(s, Some(Topic::Art));
            g.id.clear();
            serde_json::to_string(&g).unwrap_or_default()
        })
        .collect();
    assert!(distinct.len() > 40, "{} distinct of 50", distinct.len());
}

/// Explore skips a scenario whose scripts would send more than its byte bound; the generator
/// sizes every scenario below it, so that no seed is lost (about 3 % were, from one situation
/// that scripted 100 MB it never sent).
#[test]
fn every_generated_scenario_fits_explores_byte_bound() {
    let bound = a2a_harness_explore::explore::ExploreOptions::new("unused", "unused").max_bytes;
    let topics = std::iter::once(None).chain(Topic::ALL.iter().map(|t| Some(*t)));
    for topic in topics {
        for seed in 0..1000 {
            let s = generate(seed, topic);
            let bytes = a2a_harness_explore::explore::scripted_bytes(&s);
            assert!(
                bytes <= bound,
                "seed {seed} ({topic:?}): {bytes} bytes over {bound}: {}",
                s.title
            );
        }
    }
}

#[test]
fn five_hundred_seeds_round_trip_through_toml_and_the_catalog_loader() {
    for seed in 0..500 {
        let topic = (seed % 3 == 0).then(|| Topic::ALL[(seed % 11) as usize]);
        let s = generate(seed, topic);
        let text = to_toml(&s).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let file = Path::new("generated").join(format!("{}.toml", s.id));
        let back = parse_case(&file, &text).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        assert!(
            same(&s, &back),
            "seed {seed}: differs after loading\n{text}"
        );
        // The plain serialization loads too (what a tool writing the struct directly gets).
        let plain = toml::to_string(&s).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let back = parse_case(&file, &plain).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert!(same(&s, &back), "seed {seed}: plain TOML differs");
    }
}

/// Run `scenarios` against `delegator`, in parallel.
fn run_all(delegator: &str, scenarios: &[Scenario]) -> Vec<CaseResult> {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(run(scenarios, &RunOptions::new(delegator)))
        .results
}

/// What in a result counts against the delegator: failed or non-strict rules, a failed case.
fn problems(r: &CaseResult) -> Vec<String> {
    let mut out: Vec<String> = r
        .rules
        .iter()
        .filter(|v| matches!(v.verdict, Verdict::Fail | Verdict::NonStrict))
        .map(|v| {
            format!(
                "{} {:?}: expected {} / observed {}",
                v.id,
                v.verdict,
                v.expected.as_deref().unwrap_or("-"),
                v.observed.as_deref().unwrap_or("-")
            )
        })
        .collect();
    if r.verdict == Verdict::Fail && out.is_empty() {
        out.push(format!("case FAIL: {:?}", r.notes));
    }
    out
}

#[test]
fn the_reference_delegator_passes_generated_scenarios() {
    let delegator = common::delegator();
    let start = env_u64("GENERATE_START", 0);
    let n = env_u64("GENERATE_SEEDS", 48);
    let topic = std::env::var("GENERATE_TOPIC").ok().map(|t| {
        t.parse::<Topic>()
            .unwrap_or_else(|e| panic!("GENERATE_TOPIC: {e}"))
    });
    let scenarios: Vec<Scenario> = (start..start + n).map(|s| generate(s, topic)).collect();
    let t0 = Instant::now();
    let mut results = run_all(&format!("{} drive", delegator.display()), &scenarios);
    // The history invariants judge every generated run too (as explore does).
    for (s, r) in scenarios.iter().zip(results.iter_mut()) {
        a2a_harness_core::invariants::apply(s, r);
    }
    let mut bad = Vec::new();
    let mut unknown = 0;
    for (s, r) in scenarios.iter().zip(&results) {
        let p = problems(r);
        if r.verdict == Verdict::Unknown {
            unknown += 1;
            let why: Vec<_> = r
                .rules
                .iter()
                .filter(|v| v.verdict == Verdict::Unknown)
                .map(|v| v.id.as_str())
                .collect();
            eprintln!(
                "{}: UNKNOWN ({why:?})\n{}",
                s.id,
                to_toml(s).unwrap_or_default()
            );
        }
        if !p.is_empty() {
            bad.push(format!(
                "{} ({}):\n  {}\n  notes: {:?}\n{}",
                s.id,
                s.title,
                p.join("\n  "),
                r.notes,
                to_toml(s).unwrap_or_default()
            ));
        }
    }
    eprintln!(
        "{n} generated scenarios from seed {start}: {} with problems, {unknown} unknown, in {:.1} s",
        bad.len(),
        t0.elapsed().as_secs_f64()
    );
    assert!(bad.is_empty(), "{}", bad.join("\n\n"));
}

/// (bug, the rules it breaks (its core, as in the self-test), the family to aim at)
const BUGS: &[(&str, &[&str], Topic)] = &[
    (
        "random-message-id-on-retry",
        &["DLG-SEND-02", "DLG-RETRY-03", "DLG-REC-05"],
        Topic::Retry,
    ),
    ("blocking-send", &["DLG-SEND-03"], Topic::Route),
    ("assume-task", &["DLG-SEND-05"], Topic::Send),
    ("message-terminal-task", &["DLG-STATE-05"], Topic::State),
    ("guess-inputs", &["DLG-INPUT-03"], Topic::Input),
    ("forward-own-credential", &["DLG-AUTH-01"], Topic::Auth),
    (
        "no-limit-checks",
        &["DLG-LIMIT-01", "DLG-LIMIT-07", "DLG-LIMIT-09"],
        Topic::Limit,
    ),
    ("ignore-append", &["DLG-ART-01", "DLG-ART-02"], Topic::Art),
    (
        "keep-last-chunk-only",
        &["DLG-ART-01", "DLG-ART-02"],
        Topic::Art,
    ),
    ("no-local-deadline", &["DLG-LIMIT-03"], Topic::Limit),
    ("misreport-sha256", &["DLG-ART-04"], Topic::Art),
    (
        "no-recovery",
        &["DLG-REC-01", "DLG-REC-02", "DLG-REC-03", "DLG-SEND-01"],
        Topic::Rec,
    ),
    ("ignore-unknown-state", &["DLG-STATE-04"], Topic::State),
    ("no-input-cap", &["DLG-INPUT-04"], Topic::Input),
    ("persist-secrets", &["DLG-SECRET-01"], Topic::Auth),
];

/// Seeds run at once while hunting a bug.
const BATCH: u64 = 8;

#[test]
fn every_planted_bug_is_caught_by_a_generated_scenario() {
    let delegator = common::delegator();
    let unaimed = std::env::var_os("GENERATE_BUGS_UNAIMED").is_some();
    let limit = env_u64("GENERATE_BUG_LIMIT", if unaimed { 96 } else { 32 });
    let start = env_u64("GENERATE_START", 0);
    let mut table = Vec::new();
    let mut missed = Vec::new();
    for (bug, core, topic) in BUGS {
        let aim = (!unaimed).then_some(*topic);
        let cmd = format!("{} drive --bug {bug}", delegator.display());
        let t0 = Instant::now();
        let mut found = None;
        let mut seed = start;
        while found.is_none() && seed < start + limit {
            let batch: Vec<Scenario> = (seed..(seed + BATCH).min(start + limit))
                .map(|s| generate(s, aim))
                .collect();
            let results = run_all(&cmd, &batch);
            for (i, r) in results.iter().enumerate() {
                assert!(
                    !r.notes.iter().any(|n| n.contains("init refused")),
                    "the delegator refused --bug {bug}: build it with `--features planted-bugs`"
                );
                if let Some(v) = r.rules.iter().find(|v| {
                    core.contains(&v.id.as_str())
                        && matches!(v.verdict, Verdict::Fail | Verdict::NonStrict)
                }) {
                    found = Some((seed + i as u64, v.id.clone(), batch[i].id.clone()));
                    break;
                }
            }
            seed += BATCH;
        }
        let secs = t0.elapsed().as_secs_f64();
        match found {
            Some((s, rule, id)) => table.push(format!(
                "| {bug} | {rule} | {} | {secs:.1} s | {id} |",
                s - start + 1
            )),
            None => {
                table.push(format!("| {bug} | - | not in {limit} | {secs:.1} s | - |"));
                missed.push(*bug);
            }
        }
    }
    eprintln!(
        "planted bugs, seeds from {start} {}:\n| bug | rule | seeds needed | wall time | scenario |\n|---|---|---|---|---|\n{}",
        if unaimed {
            "without a topic"
        } else {
            "aimed at the bug's family"
        },
        table.join("\n")
    );
    assert!(
        missed.is_empty(),
        "not caught within {limit} seeds: {missed:?}"
    );
}
