//! What explore writes: found scenario files (TOML with a header comment), `explore.md` and the
//! console summary.

use super::{ExploreOptions, ExploreSummary, FoundRule, StoppedBy, shrink};
use a2a_harness_core::scenario::Scenario;
use serde_json::Value;
use std::fmt::Write as _;

/// The file name of a finding: `<rule>-<seed>.toml` (`CONTRACT-<seed>.toml` for a contract
/// break).
pub fn found_file_name(rule: &str, seed: u64) -> String {
    let safe: String = rule
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{safe}-{seed}.toml")
}

/// A scenario as catalog TOML (loadable with `a2a-harness run --scenarios FILE`): its id,
/// title, rules and time bound first, then the rest, leaving out every field that holds its
/// default (checked: the file parses back to the same scenario).
pub fn scenario_toml(s: &Scenario) -> Result<String, ToTomlError> {
    toml_text(s, true)
}

/// The scenario as TOML, every field written out (quicker than [`scenario_toml`]: for checking
/// that a candidate loads).
pub(super) fn scenario_toml_full(s: &Scenario) -> Result<String, ToTomlError> {
    toml_text(s, false)
}

fn toml_text(s: &Scenario, minimal: bool) -> Result<String, ToTomlError> {
    let full = serde_json::to_value(s).map_err(|e| ToTomlError(e.to_string()))?;
    let mut v = full.clone();
    drop_nulls(&mut v);
    if minimal {
        drop_defaults(&mut v, &full);
    }
    let Value::Object(mut rest) = v else {
        return Err(ToTomlError("not a table".into()));
    };
    let mut head = serde_json::Map::new();
    for key in ["id", "title", "rules", "timeout_ms"] {
        if let Some(x) = rest.remove(key) {
            head.insert(key.to_string(), x);
        }
    }
    // The head holds plain values only, so the two documents concatenate into one.
    let head = toml::to_string(&head).map_err(|e| ToTomlError(e.to_string()))?;
    let rest = toml::to_string(&rest).map_err(|e| ToTomlError(e.to_string()))?;
    Ok(format!("{head}{rest}"))
}

/// Remove every object key of `v` whose absence changes nothing: the value without it reads
/// back as a scenario serialising to `full`.
fn drop_defaults(v: &mut Value, full: &Value) {
    let mut paths = Vec::new();
    super::members::for_each_member(v, &mut |parent, key, _, _| {
        paths.push((parent.to_string(), key.to_string()))
    });
    // Deepest first, so a table emptied of defaults can go as a whole afterwards.
    paths.reverse();
    for (parent, key) in paths {
        let mut trial = v.clone();
        let removed = trial
            .pointer_mut(&parent)
            .and_then(Value::as_object_mut)
            .and_then(|m| m.remove(&key))
            .is_some();
        if !removed {
            continue;
        }
        let same = serde_json::from_value::<Scenario>(trial.clone())
            .ok()
            .and_then(|s| serde_json::to_value(&s).ok())
            .is_some_and(|back| &back == full);
        if same {
            *v = trial;
        }
    }
}

/// A scenario could not be written as TOML.
#[derive(Debug, thiserror::Error)]
#[error("the scenario cannot be written as TOML: {0}")]
pub struct ToTomlError(String);

/// TOML has no null: absent fields take their defaults.
fn drop_nulls(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|_, x| !x.is_null());
            m.values_mut().for_each(drop_nulls);
        }
        Value::Array(xs) => xs.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

/// The header comment of a found file: rule, seed, topic, sizes, shrinking steps, the command
/// that found it and the repro.
pub(super) fn header(opts: &ExploreOptions, f: &FoundRule, repro: &str) -> String {
    let mut h = String::new();
    let _ = writeln!(h, "# Found by a2a-harness explore.");
    let _ = writeln!(
        h,
        "# rule: {} ({:?}), {} in its first run: {}",
        f.rule,
        f.level,
        f.verdict.label(),
        one_line(&f.observed)
    );
    let _ = writeln!(
        h,
        "# seed: {}  topic: {}",
        f.seed,
        opts.topic
            .map_or("any (weighted)".to_string(), |t| t.to_string())
    );
    let _ = writeln!(
        h,
        "# size: {} -> {}  (size = {})",
        f.original_size,
        f.shrunk_size,
        shrink::SIZE_MEANS
    );
    let _ = writeln!(
        h,
        "# shrinking: {} candidates, {} delegator runs, each candidate confirmed by {} runs{}; final scenario {}",
        f.candidates,
        f.shrink_runs,
        opts.confirm,
        if f.cut_short {
            " (cut short by --shrink-runs/--shrink-time: maybe not minimal)"
        } else {
            ""
        },
        if f.confirmed {
            format!(
                "failed {} again in {} of {} runs",
                f.rule, opts.confirm, opts.confirm
            )
        } else {
            "NOT confirmed".to_string()
        }
    );
    if let Some(b) = opts.baseline.as_ref().filter(|b| **b != opts.delegator) {
        let _ = writeln!(
            h,
            "# baseline: a candidate counted only if {b} passed it (without {})",
            f.rule
        );
    }
    if let Some(p) = &f.problem {
        let _ = writeln!(h, "# note: {p}");
    }
    for (i, st) in f.steps.iter().enumerate() {
        let _ = writeln!(h, "#   {}. {}", i + 1, one_line(st));
    }
    let _ = writeln!(h, "# found by: {}", f.found_by);
    let _ = writeln!(h, "# repro: {repro}");
    h.push('\n');
    h
}

fn one_line(s: &str) -> String {
    let s = s.replace(['\n', '\r'], " ");
    if s.chars().count() > 300 {
        format!("{}…", s.chars().take(300).collect::<String>())
    } else {
        s
    }
}

fn stopped(s: &ExploreSummary) -> &'static str {
    match s.stopped_by {
        StoppedBy::Runs => "--runs reached",
        StoppedBy::Time => "--time reached",
        StoppedBy::Interrupted => "interrupted (Ctrl-C): partial",
    }
}

/// The console summary: runs, findings with their files and repros, the rules never
/// evaluated.
pub fn summary_text(s: &ExploreSummary, out_dir: &std::path::Path) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "explore: {} runs ({} skipped) from seed {}{} in {:.1} s ({}), {} failing",
        s.runs,
        s.skipped,
        s.seed,
        s.topic
            .as_ref()
            .map(|x| format!(", topic {x}"))
            .unwrap_or_default(),
        s.explore_ms as f64 / 1000.0,
        stopped(s),
        s.failing_runs
    );
    if s.findings.is_empty() {
        let _ = writeln!(t, "no findings");
    }
    for f in &s.findings {
        let _ = writeln!(
            t,
            "FINDING {} {} (seed {}, {} runs, first after {:.1} s): {}",
            f.rule,
            f.verdict.label(),
            f.seed,
            f.occurrences,
            f.first_after_ms as f64 / 1000.0,
            one_line(&f.observed)
        );
        match (&f.file, &f.repro) {
            (Some(file), Some(repro)) => {
                match &f.problem {
                    Some(p) => {
                        let _ = writeln!(t, "  {p}: {}", out_dir.join(file).display());
                    }
                    None => {
                        let _ = writeln!(
                            t,
                            "  shrunk {} -> {}{}: {}",
                            f.original_size,
                            f.shrunk_size,
                            if f.confirmed { "" } else { " (NOT confirmed)" },
                            out_dir.join(file).display()
                        );
                    }
                }
                let _ = writeln!(t, "  repro: {repro}");
            }
            _ => {
                let _ = writeln!(
                    t,
                    "  no file: {}",
                    f.problem.as_deref().unwrap_or("unknown")
                );
            }
        }
    }
    let never: Vec<&str> = s
        .coverage
        .iter()
        .filter(|(_, c)| c.evaluated() == 0)
        .map(|(id, _)| id.as_str())
        .collect();
    let _ = writeln!(
        t,
        "rules evaluated: {} of {}{}",
        s.coverage.len() - never.len(),
        s.coverage.len(),
        if never.is_empty() {
            String::new()
        } else {
            format!(" (never: {})", never.join(", "))
        }
    );
    let _ = writeln!(t, "report: {}", out_dir.display());
    t
}

/// `explore.md`: the summary, the findings and the per-rule coverage table.
pub fn summary_markdown(s: &ExploreSummary) -> String {
    let mut m = String::new();
    let _ = writeln!(m, "# Explore\n");
    let _ = writeln!(m, "- delegator: `{}`", s.delegator);
    let _ = writeln!(
        m,
        "- seed: {}; topic: {}",
        s.seed,
        s.topic.as_deref().unwrap_or("any (weighted)")
    );
    let _ = writeln!(
        m,
        "- runs: {} ({} skipped, {} failing); stopped: {}",
        s.runs,
        s.skipped,
        s.failing_runs,
        stopped(s)
    );
    let _ = writeln!(
        m,
        "- time: exploring {:.1} s, in all {:.1} s\n",
        s.explore_ms as f64 / 1000.0,
        s.wall_ms as f64 / 1000.0
    );
    let _ = writeln!(m, "## Findings\n");
    if s.findings.is_empty() {
        let _ = writeln!(m, "None.\n");
    } else {
        let _ = writeln!(
            m,
            "| rule | verdict | seed | runs | first after (s) | size before | after | confirmed | file |"
        );
        let _ = writeln!(m, "|---|---|---|---|---|---|---|---|---|");
        for f in &s.findings {
            let _ = writeln!(
                m,
                "| {} | {} | {} | {} | {:.1} | {} | {} | {} | {} |",
                f.rule,
                f.verdict.label(),
                f.seed,
                f.occurrences,
                f.first_after_ms as f64 / 1000.0,
                f.original_size,
                f.shrunk_size,
                if f.confirmed { "yes" } else { "no" },
                f.file
                    .as_ref()
                    .map_or_else(|| "-".to_string(), |p| format!("`{}`", p.display()))
            );
        }
        for f in &s.findings {
            if let Some(r) = &f.repro {
                let _ = writeln!(m, "\n- {}: `{r}`", f.rule);
            }
        }
        m.push('\n');
    }
    let _ = writeln!(m, "## Rule coverage\n");
    let _ = writeln!(
        m,
        "A rule counts as judged in a run when its verdict there is PASS, FAIL or NON-STRICT; \
         listed: the runs whose scenario listed it (an always-on rule or a history invariant: every run).\n"
    );
    let judged: Vec<u64> = s.coverage.values().map(|c| c.evaluated()).collect();
    if let Some(min) = judged.iter().min() {
        let never = judged.iter().filter(|n| **n == 0).count();
        let _ = writeln!(
            m,
            "- rules judged: {} of {} (fewest judgements of any rule: {min})\n",
            judged.len() - never,
            judged.len()
        );
    }
    let _ = writeln!(
        m,
        "| rule | level | listed | judged | PASS | FAIL | NON-STRICT | not judged | why never judged |"
    );
    let _ = writeln!(m, "|---|---|---|---|---|---|---|---|---|");
    let levels: std::collections::BTreeMap<&str, a2a_harness_core::rules::Level> =
        a2a_harness_core::rules::registry()
            .iter()
            .map(|r| (r.id, r.level))
            .chain(
                a2a_harness_core::invariants::INVARIANTS
                    .iter()
                    .map(|i| (i.id, i.level)),
            )
            .collect();
    for (id, c) in &s.coverage {
        let _ = writeln!(
            m,
            "| {id} | {} | {} | {} | {} | {} | {} | {} | {} |",
            levels.get(id.as_str()).map_or("-", |l| l.label()),
            c.listed,
            c.evaluated(),
            c.pass,
            c.fail,
            c.non_strict,
            c.not_judged,
            if c.evaluated() == 0 {
                never_judged_reason(id, c)
            } else {
                String::new()
            }
        );
    }
    m
}

/// Why a rule was never judged in an explore: the generator's own reason when it leaves the
/// rule to the catalog ([`crate::generate::NOT_GENERATED`]), else whether its situation never
/// came up (no run listed it) or came up without the rule having anything to judge.
pub fn never_judged_reason(id: &str, c: &super::RuleCounts) -> String {
    if let Some((_, why)) = crate::generate::NOT_GENERATED
        .iter()
        .find(|(rule, _)| *rule == id)
    {
        return format!("not generated: {why}");
    }
    if c.listed == 0 {
        "no run listed it: its situations did not come up in these runs (more runs, or \
         `--topic` of its family)"
            .to_string()
    } else {
        format!(
            "listed in {} runs, never judged: its situation did not arise there (UNKNOWN or \
             NOT EXERCISED)",
            c.listed
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_catalog_case_written_as_toml_loads_back_the_same() {
        let cases = a2a_harness_core::catalog::builtin_catalog().unwrap();
        assert!(cases.len() > 50);
        for s in cases {
            for text in [scenario_toml(&s).unwrap(), scenario_toml_full(&s).unwrap()] {
                let back =
                    a2a_harness_core::catalog::parse_case(std::path::Path::new("x.toml"), &text)
                        .unwrap_or_else(|e| panic!("{}: {e}\n{text}", s.id));
                assert_eq!(
                    serde_json::to_value(&back).unwrap(),
                    serde_json::to_value(&s).unwrap(),
                    "{}",
                    s.id
                );
            }
            let minimal = scenario_toml(&s).unwrap();
            assert!(minimal.starts_with("id = "), "{minimal}");
            assert!(!minimal.contains("max_connections"), "defaults left out");
        }
    }

    #[test]
    fn a_rule_never_judged_gets_its_reason() {
        let never = super::super::RuleCounts::default();
        assert!(never_judged_reason("DLG-ART-10", &never).starts_with("no run listed it"));
        let listed = super::super::RuleCounts {
            listed: 3,
            not_judged: 3,
            ..Default::default()
        };
        let why = never_judged_reason("DLG-ART-10", &listed);
        assert!(why.starts_with("listed in 3 runs, never judged"), "{why}");
        for (id, reason) in crate::generate::NOT_GENERATED {
            assert!(never_judged_reason(id, &never).contains(reason));
        }
    }

    #[test]
    fn found_file_names_are_safe() {
        assert_eq!(found_file_name("DLG-ART-04", 7), "DLG-ART-04-7.toml");
        assert_eq!(found_file_name("a/b c", 1), "a_b_c-1.toml");
    }
}
