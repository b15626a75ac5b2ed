//! Reports, one module per output: `index.json` ([`index`], the contract's [`RunIndex`], schema
//! `docs/report-schema/index.schema.json`, described in `reports/README.md`), `cases/<id>.json`,
//! `journals/<id>.html` and `index.html` ([`html`](mod@html), with per-case sequence diagrams),
//! `junit.xml` ([`junit`](mod@junit)), `summary.md` ([`summary`](mod@summary)), the rules-broken
//! roll-up all of them open with ([`rules_broken`](mod@rules_broken)), the A2A client
//! compatibility section ([`compatibility`](mod@compatibility): a verdict per client requirement
//! of the specification), and reading reports back and merging shards ([`merge`](mod@merge)).
//!
//! Every writer renders from a [`RunIndex`] and the case results, the data a report directory
//! holds, so a run and `a2a-harness report merge` share one rendering path.

pub mod compatibility;
pub mod html;
pub mod index;
pub mod junit;
pub mod merge;
pub mod rules_broken;
mod sequence;
pub mod summary;
mod text;

use crate::rules::registry;
use crate::runner::{CaseResult, Verdict};
use crate::scenario::Scenario;
use a2a_driver_contract::report::RunIndex;
use std::collections::BTreeMap;
use std::path::Path;

pub use compatibility::{compatibility, compatibility_line, compatibility_note};
pub use html::{html, journal_page};
pub use index::run_index;
pub use junit::junit;
pub use merge::{ReportError, load, merge};
pub use rules_broken::{CONTRACT, rules_broken, rules_broken_text};
pub use summary::summary;

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

/// Write every report file of a run into `dir` (see [`write_report`]).
pub fn write_all(
    dir: &Path,
    run: &ReportRun<'_>,
    catalog: &[Scenario],
    results: &[CaseResult],
) -> std::io::Result<()> {
    let index = run_index(run, &coverage(catalog), results);
    write_report(dir, &index, results)
}

/// Write a report into `dir` from its index and case results: `index.json`, `cases/<id>.json`,
/// `journals/<id>.html`, `junit.xml`, `summary.md` and `index.html`. A run and `report merge`
/// both write through here, so a report renders the same from memory or from its files.
pub fn write_report(dir: &Path, index: &RunIndex, results: &[CaseResult]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir.join("cases"))?;
    std::fs::create_dir_all(dir.join("journals"))?;
    std::fs::write(dir.join("index.json"), serde_json::to_vec_pretty(index)?)?;
    for r in results {
        std::fs::write(
            dir.join("cases").join(format!("{}.json", r.id)),
            serde_json::to_vec_pretty(r)?,
        )?;
        std::fs::write(
            dir.join("journals").join(format!("{}.html", r.id)),
            journal_page(r),
        )?;
    }
    std::fs::write(dir.join("junit.xml"), junit(index, results))?;
    std::fs::write(dir.join("summary.md"), summary(index, results))?;
    std::fs::write(dir.join("index.html"), html(index, results))?;
    Ok(())
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
