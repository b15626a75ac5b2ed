//! `junit.xml` in the Ant JUnit format (valid against the Ant JUnit schema as vendored in
//! `harness/tests/data/ant-junit.xsd`): one `<testsuite>` with `timestamp`, `hostname`, counts
//! and the run's properties; one `<testcase>` per case with `classname` `a2a.<group>`.
//!
//! XFAIL, UNSUPPORTED and NOT EXERCISED are skipped (with a message); FAIL, UNKNOWN and XPASS are
//! failures whose message names the first broken rule (or, for XPASS, says to remove the entry
//! from the known-failing list), whose text is the evidence, and whose `<system-err>` holds the
//! tail of the delegator's stderr.

use super::rules_broken_text;
use super::text::{failure_text, known_failing_note, rule_line, stderr_tail};
use crate::runner::{CaseResult, Verdict};
use a2a_driver_contract::report::RunIndex;
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use std::time::Duration;

/// The JUnit `classname` of a case: `a2a.` and the group its id starts with (`a2a.artifacts`
/// for `artifacts.interleaved`), `a2a` for an id without a group.
pub fn classname(case_id: &str) -> String {
    match case_id.split_once('.') {
        Some((group, _)) if !group.is_empty() => format!("a2a.{group}"),
        _ => "a2a".to_string(),
    }
}

/// When the run started, as Ant writes a suite `timestamp` (`YYYY-MM-DDTHH:MM:SS`, UTC, no
/// offset): the index's `finished_at` less its wall time.
pub fn ant_timestamp(index: &RunIndex) -> String {
    let finished = time::OffsetDateTime::parse(
        &index.run.finished_at,
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap_or_else(|_| time::OffsetDateTime::now_utc());
    let started = (finished - time::Duration::milliseconds(index.run.wall_ms as i64))
        .to_offset(time::UtcOffset::UTC);
    started
        .format(time::macros::format_description!(
            "[year]-[month]-[day]T[hour]:[minute]:[second]"
        ))
        .unwrap_or_else(|_| "1970-01-01T00:00:00".to_string())
}

fn status_of(r: &CaseResult) -> TestCaseStatus {
    match r.verdict {
        Verdict::Pass | Verdict::NonStrict => TestCaseStatus::success(),
        Verdict::XFail | Verdict::Unsupported | Verdict::NotExercised => {
            let mut s = TestCaseStatus::skipped();
            let why = match r.verdict {
                Verdict::XFail => known_failing_note(r.verdict)
                    .unwrap_or_default()
                    .to_string(),
                Verdict::Unsupported => {
                    "the delegator declined the work (error code unsupported)".to_string()
                }
                _ => "the case's situation did not arise".to_string(),
            };
            s.set_message(format!("{}: {why}", r.verdict.label()));
            s.set_type(r.verdict.label());
            if r.verdict == Verdict::XFail {
                s.set_description(failure_text(r));
            }
            s
        }
        Verdict::Fail | Verdict::Unknown | Verdict::XPass => {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            let message = if r.verdict == Verdict::XPass {
                format!(
                    "XPASS: {}",
                    known_failing_note(r.verdict).unwrap_or_default()
                )
            } else {
                r.rules
                    .iter()
                    .find(|v| v.verdict.is_listed_as_failed())
                    .map(rule_line)
                    .or_else(|| {
                        r.notes
                            .first()
                            .map(|n| format!("{}: {n}", r.verdict.label()))
                    })
                    .unwrap_or_else(|| r.verdict.label().to_string())
            };
            s.set_message(message);
            s.set_type(r.verdict.label());
            s.set_description(failure_text(r));
            s
        }
    }
}

/// `junit.xml` of a report.
pub fn junit(index: &RunIndex, results: &[CaseResult]) -> String {
    let mut report = Report::new("a2a-harness");
    let mut suite = TestSuite::new(index.run.delegator.clone());
    suite.set_time(Duration::from_millis(index.run.wall_ms));
    suite
        .extra
        .insert("timestamp".into(), ant_timestamp(index).into());
    let host = if index.run.hostname.is_empty() {
        "localhost"
    } else {
        index.run.hostname.as_str()
    };
    suite.extra.insert("hostname".into(), host.into());
    suite.add_property(("delegator", index.run.delegator.as_str()));
    suite.add_property(("seed", index.run.seed.to_string().as_str()));
    suite.add_property(("finished_at", index.run.finished_at.as_str()));
    suite.add_property(("harness_version", index.tool.version.as_str()));
    suite.add_property(("incomplete", index.run.incomplete.to_string().as_str()));
    for r in results {
        let mut tc = TestCase::new(r.id.clone(), status_of(r));
        tc.set_classname(classname(&r.id));
        tc.set_time(Duration::from_millis(r.duration_ms));
        if !matches!(r.verdict, Verdict::Pass | Verdict::Unsupported) && !r.stderr.is_empty() {
            let (tail, skipped) = stderr_tail(&r.stderr);
            let head = if skipped > 0 {
                format!("[{skipped} earlier lines of the delegator's stderr left out]\n")
            } else {
                String::new()
            };
            tc.set_system_err(format!("{head}{tail}"));
        }
        suite.add_test_case(tc);
    }
    suite.set_system_out(rules_broken_text(&index.rules_broken));
    suite.set_system_err("");
    report.add_test_suite(suite);
    report.to_string().unwrap_or_default()
}
