//! Reports: `index.json` (the contract's [`RunIndex`], schema
//! `docs/report-schema/index.schema.json`, described in `reports/README.md`), `cases/<id>.json`,
//! `junit.xml`, `summary.md` and a self-contained `index.html` with a per-case message sequence
//! view.

use crate::rules::registry;
use crate::runner::{CaseResult, Verdict};
use crate::scenario::Scenario;
use a2a_driver_contract::report::{
    CaseSummary, Coverage, FailedRule, INDEX_SCHEMA_VERSION, RuleSummary, RunIndex, RunInfo, Tool,
};
use a2a_mock_agents::Event;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// Verdict counts: PASS, NON-STRICT and XFAIL pass; FAIL, XPASS and UNKNOWN fail; UNSUPPORTED
/// is skipped.
pub use a2a_driver_contract::report::Totals;

/// Count verdicts.
pub fn totals(results: &[CaseResult]) -> Totals {
    let mut t = Totals::default();
    for r in results {
        t.add(r.verdict);
    }
    t
}

/// How many catalog cases exercise each rule: the cases that list it, or every case for an
/// always-on rule (it is evaluated wherever its evidence appears). 0 means NOT TESTED.
pub fn coverage(catalog: &[Scenario]) -> BTreeMap<&'static str, usize> {
    let mut m = BTreeMap::new();
    for r in registry() {
        let n = if r.always {
            catalog.len()
        } else {
            catalog
                .iter()
                .filter(|s| s.rules.iter().any(|x| x == r.id))
                .count()
        };
        m.insert(r.id, if r.check.is_some() { n } else { 0 });
    }
    m
}

/// The UTC time `t` as a report directory name, `YYYYMMDD-HHMMSS`.
pub fn stamp_of(t: time::OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    t.format(time::macros::format_description!(
        "[year][month][day]-[hour][minute][second]"
    ))
    .unwrap_or_else(|_| t.unix_timestamp().to_string())
}

/// Now as a report directory name (see [`stamp_of`]).
pub fn stamp() -> String {
    stamp_of(time::OffsetDateTime::now_utc())
}

/// In how many of `results` each rule was actually evaluated (judged PASS, FAIL or NON-STRICT).
pub fn evaluated(results: &[CaseResult]) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for r in results {
        for v in &r.rules {
            if matches!(
                v.verdict,
                Verdict::Pass | Verdict::Fail | Verdict::NonStrict
            ) {
                *m.entry(v.id.clone()).or_default() += 1;
            }
        }
    }
    m
}

/// What a report says about the run as a whole (besides its cases).
#[derive(Debug, Clone)]
pub struct ReportRun<'a> {
    /// The delegator command line as given.
    pub delegator: &'a str,
    /// The run seed.
    pub seed: u64,
    /// Wall time of the whole run, in milliseconds.
    pub wall_ms: u64,
    /// The run was interrupted before every selected case ran.
    pub incomplete: bool,
}

/// The run index `index.json` of a run.
pub fn run_index(
    run: &ReportRun<'_>,
    coverage: &BTreeMap<&'static str, usize>,
    results: &[CaseResult],
) -> RunIndex {
    let (delegator, seed, wall_ms) = (run.delegator, run.seed, run.wall_ms);
    let judged = evaluated(results);
    let rules = registry()
        .iter()
        .map(|r| {
            let cases = coverage.get(r.id).copied().unwrap_or(0) as u64;
            RuleSummary {
                id: r.id.to_string(),
                level: r.level,
                requirement: r.requirement.to_string(),
                source: r.source.to_string(),
                cases,
                status: Coverage::of(cases),
                evaluated: judged.get(r.id).copied().unwrap_or(0),
            }
        })
        .collect();
    let cases = results
        .iter()
        .map(|r| CaseSummary {
            id: r.id.clone(),
            title: r.title.clone(),
            verdict: r.verdict,
            duration_ms: r.duration_ms,
            repro: r.repro.clone(),
            failed_rules: r
                .rules
                .iter()
                .filter(|v| v.verdict.is_listed_as_failed())
                .map(|v| FailedRule {
                    id: v.id.clone(),
                    verdict: v.verdict,
                })
                .collect(),
            file: format!("cases/{}.json", r.id),
        })
        .collect();
    RunIndex {
        schema_version: INDEX_SCHEMA_VERSION,
        tool: Tool {
            name: "a2a-harness".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        run: RunInfo {
            delegator: delegator.to_string(),
            seed,
            wall_ms,
            finished_at: a2a_protocol::Timestamp::now().to_rfc3339(),
            incomplete: run.incomplete,
        },
        totals: totals(results),
        matrix: BTreeMap::from([(
            delegator.to_string(),
            results.iter().map(|r| (r.id.clone(), r.verdict)).collect(),
        )]),
        cases,
        rules,
    }
}

/// Write every report file into `dir`.
pub fn write_all(
    dir: &Path,
    run: &ReportRun<'_>,
    catalog: &[Scenario],
    results: &[CaseResult],
) -> std::io::Result<()> {
    let (delegator, seed, wall_ms) = (run.delegator, run.seed, run.wall_ms);
    std::fs::create_dir_all(dir.join("cases"))?;
    let cov = coverage(catalog);
    let index = run_index(run, &cov, results);
    std::fs::write(dir.join("index.json"), serde_json::to_vec_pretty(&index)?)?;
    for r in results {
        std::fs::write(
            dir.join("cases").join(format!("{}.json", r.id)),
            serde_json::to_vec_pretty(r)?,
        )?;
    }
    std::fs::write(dir.join("junit.xml"), junit(delegator, results))?;
    std::fs::write(
        dir.join("summary.md"),
        summary(delegator, seed, results, &cov, wall_ms),
    )?;
    std::fs::write(dir.join("index.html"), html(delegator, seed, results, &cov))?;
    Ok(())
}

fn failure_text(r: &CaseResult) -> String {
    let mut s = String::new();
    for v in r.rules.iter().filter(|v| v.verdict != Verdict::Pass) {
        let _ = writeln!(
            s,
            "{} {}: expected {}; observed {}",
            v.verdict.label(),
            v.id,
            v.expected.as_deref().unwrap_or("-"),
            v.observed.as_deref().unwrap_or("-")
        );
        for w in &v.witnesses {
            let _ = writeln!(
                s,
                "  witness #{} {}: {}",
                w.seq,
                w.agent,
                serde_json::to_string(&w.event).unwrap_or_default()
            );
        }
    }
    for n in &r.notes {
        let _ = writeln!(s, "note: {n}");
    }
    let _ = writeln!(s, "repro: {}", r.repro);
    s
}

fn junit(delegator: &str, results: &[CaseResult]) -> String {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut report = Report::new("a2a-harness");
    let mut suite = TestSuite::new(delegator.to_string());
    for r in results {
        let status = match r.verdict {
            Verdict::Pass | Verdict::XFail | Verdict::NonStrict => TestCaseStatus::success(),
            Verdict::Unsupported | Verdict::NotExercised => TestCaseStatus::skipped(),
            _ => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                let first = r
                    .rules
                    .iter()
                    .find(|v| !matches!(v.verdict, Verdict::Pass | Verdict::NotExercised))
                    .map(|v| format!("{} {}", v.verdict.label(), v.id))
                    .unwrap_or_else(|| r.verdict.label().to_string());
                s.set_message(first);
                s.set_description(failure_text(r));
                s
            }
        };
        let mut tc = TestCase::new(r.id.clone(), status);
        tc.set_time(std::time::Duration::from_millis(r.duration_ms));
        suite.add_test_case(tc);
    }
    report.add_test_suite(suite);
    report.to_string().unwrap_or_default()
}

fn summary(
    delegator: &str,
    seed: u64,
    results: &[CaseResult],
    cov: &BTreeMap<&'static str, usize>,
    wall_ms: u64,
) -> String {
    let t = totals(results);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# a2a-harness report\n\nDelegator: `{delegator}`  \nSeed: {seed}  \nWall time: {:.1} s\n",
        wall_ms as f64 / 1000.0
    );
    let _ = writeln!(s, "| case | verdict | failed rules |\n| --- | --- | --- |");
    for r in results {
        let failed: Vec<&str> = r
            .rules
            .iter()
            .filter(|v| v.verdict != Verdict::Pass)
            .map(|v| v.id.as_str())
            .collect();
        let _ = writeln!(
            s,
            "| {} | {} | {} |",
            r.id,
            r.verdict.label(),
            failed.join(", ")
        );
    }
    let not_tested: Vec<&str> = cov
        .iter()
        .filter(|(_, n)| **n == 0)
        .map(|(id, _)| *id)
        .collect();
    let _ = writeln!(
        s,
        "\nNOT TESTED ({}): {}\n",
        not_tested.len(),
        not_tested.join(", ")
    );
    let judged = evaluated(results);
    let _ = writeln!(
        s,
        "## Rules\n\n| rule | catalog cases | evaluated in this run |\n| --- | --- | --- |"
    );
    for (id, n) in cov {
        let _ = writeln!(
            s,
            "| {id} | {} | {} |",
            if *n == 0 {
                "NOT TESTED".to_string()
            } else {
                n.to_string()
            },
            judged.get(*id).copied().unwrap_or(0)
        );
    }
    let _ = writeln!(s);
    for r in results.iter().filter(|r| r.verdict.fails_run()) {
        let _ = writeln!(
            s,
            "## {} ({})\n\n```\n{}```\n",
            r.id,
            r.verdict.label(),
            failure_text(r)
        );
    }
    let _ = writeln!(
        s,
        "{} passed, {} failed, {} skipped",
        t.passed, t.failed, t.skipped
    );
    s
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn sequence_rows(r: &CaseResult) -> String {
    let mut s = String::new();
    for e in &r.journal {
        let (arrow, what) = match &e.event {
            Event::Request {
                method,
                http_method,
                path,
                ..
            } => (
                "delegator → ",
                method.clone().unwrap_or(format!("{http_method} {path}")),
            ),
            Event::Response {
                status, rpc_error, ..
            } => (
                "← ",
                format!(
                    "HTTP {status}{}",
                    rpc_error.map(|c| format!(" error {c}")).unwrap_or_default()
                ),
            ),
            Event::SseEvent { index, data, .. } => (
                "← event ",
                format!(
                    "#{index} {}",
                    data.get("result")
                        .and_then(|r| r.as_object())
                        .and_then(|o| o.keys().next().cloned())
                        .unwrap_or_else(|| "raw".into())
                ),
            ),
            other => (
                "• ",
                serde_json::to_value(other)
                    .ok()
                    .and_then(|v| v.get("event").and_then(Value::as_str).map(str::to_string))
                    .unwrap_or_default(),
            ),
        };
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}{}</td><td><code>{}</code></td></tr>",
            e.seq,
            esc(&e.agent),
            arrow,
            esc(&what),
            esc(&serde_json::to_string(&e.event)
                .unwrap_or_default()
                .chars()
                .take(300)
                .collect::<String>())
        );
    }
    s
}

fn html(
    delegator: &str,
    seed: u64,
    results: &[CaseResult],
    cov: &BTreeMap<&'static str, usize>,
) -> String {
    let t = totals(results);
    let mut s = String::new();
    let _ = write!(
        s,
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>a2a-harness report</title><style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:2px 6px;font-size:13px;vertical-align:top}}.PASS{{background:#dfd}}.FAIL,.UNKNOWN,.XPASS{{background:#fdd}}.NON-STRICT,.XFAIL{{background:#ffd}}.UNSUPPORTED{{background:#eee}}details{{margin:.5em 0}}code{{font-size:11px}}</style></head><body>"
    );
    let _ = write!(
        s,
        "<h1>a2a-harness</h1><p>Delegator <code>{}</code>, seed {seed}: {} passed, {} failed, {} skipped</p><table><tr><th>case</th><th>verdict</th><th>rules</th></tr>",
        esc(delegator),
        t.passed,
        t.failed,
        t.skipped
    );
    for r in results {
        let failed: Vec<&str> = r
            .rules
            .iter()
            .filter(|v| v.verdict != Verdict::Pass)
            .map(|v| v.id.as_str())
            .collect();
        let _ = write!(
            s,
            "<tr><td><a href=\"#{0}\">{0}</a></td><td class=\"{1}\">{1}</td><td>{2}</td></tr>",
            esc(&r.id),
            r.verdict.label(),
            esc(&failed.join(", "))
        );
    }
    s.push_str("</table><h2>Rules</h2><table><tr><th>rule</th><th>catalog cases</th><th>evaluated in this run</th></tr>");
    let judged = evaluated(results);
    for (id, n) in cov {
        let _ = write!(
            s,
            "<tr><td>{id}</td><td>{}</td><td>{}</td></tr>",
            if *n == 0 {
                "NOT TESTED".to_string()
            } else {
                n.to_string()
            },
            judged.get(*id).copied().unwrap_or(0)
        );
    }
    s.push_str("</table><h2>Cases</h2>");
    for r in results {
        let _ = write!(
            s,
            "<details id=\"{0}\"><summary><b>{0}</b> <span class=\"{1}\">{1}</span> {2}</summary><pre>{3}</pre><table><tr><th>#</th><th>agent</th><th>message</th><th>detail</th></tr>{4}</table></details>",
            esc(&r.id),
            r.verdict.label(),
            esc(&r.title),
            esc(&failure_text(r)),
            sequence_rows(r)
        );
    }
    s.push_str("</body></html>");
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn report_directories_are_named_by_utc_time() {
        let t = time::macros::datetime!(2026-03-04 05:06:07 +02:00);
        assert_eq!(super::stamp_of(t), "20260304-030607");
        assert_eq!(super::stamp().len(), "YYYYMMDD-HHMMSS".len());
    }
}
