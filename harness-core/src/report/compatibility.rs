//! The compatibility section: the delegator as an A2A 1.0 client, a verdict per client
//! requirement (C-01..C-68, [`crate::requirements`]) from the rule verdicts of every case of a
//! run, and the closing line `A2A client: MUST a/b SHOULD c/d MAY e/f`.
//!
//! How a requirement's status follows from the rule verdicts (the report is about behaviour,
//! not the known-failing list, so XFAIL cases count like any other):
//!
//! - **NOT TESTED**: no rule judges it (handed on to another issue, or not automatable: the
//!   reason is given), or one of its rules has no checker yet (or is not in the registry yet).
//! - **FAIL** (MUST and SHOULD rows): one of its rules was broken in some case: judged FAIL, or
//!   NON-STRICT (a broken SHOULD rule). A FAIL that only says the delegator never sent the case's
//!   work ([`RuleVerdict::never_sent`]) breaks no requirement. A FAIL wins over NOT TESTED.
//! - **PASS**: every one of its rules was judged PASS in at least one case, and none broke.
//! - **NOT EXERCISED**: otherwise; the reason names the rules not judged in this run.
//! - A **MAY** row is never FAIL: a MAY is permitted behaviour the harness accepts. It is PASS
//!   when every one of its rules was judged (PASS, FAIL or NON-STRICT) in some case, else NOT
//!   EXERCISED (or NOT TESTED as above).
//! - A case the delegator declined (UNSUPPORTED, [`CaseResult::declined`]) contributes only the
//!   rules it broke before declining, never a PASS.

use crate::requirements::{Coverage, DOC_PATH, LEVELS, REQUIREMENTS, Requirement, SPEC};
use crate::rules::{Level, Rule, registry};
use crate::runner::{CaseResult, RuleVerdict, Verdict};
use a2a_driver_contract::report::{
    Compatibility, LevelTally, RequirementEvidence, RequirementStatus, RequirementVerdict,
};
use std::collections::{BTreeMap, BTreeSet};

/// Whether a rule verdict counts as a break: FAIL or NON-STRICT on evidence (not the FAIL of a
/// case whose work was never sent).
fn breaks(v: &RuleVerdict) -> bool {
    matches!(v.verdict, Verdict::Fail | Verdict::NonStrict) && !v.never_sent()
}

/// The evidence of a rule verdict in a case.
fn evidence(r: &CaseResult, v: &RuleVerdict) -> RequirementEvidence {
    RequirementEvidence {
        case: r.id.clone(),
        rule: v.id.clone(),
        verdict: v.verdict,
        expected: v.expected.clone(),
        observed: v.observed.clone(),
        witnesses: v.witnesses.iter().map(|w| w.seq).collect(),
    }
}

/// What the cases of a run say about one requirement's rules.
struct Judged {
    /// The cases whose verdicts on the rules counted, in run order.
    cases: Vec<String>,
    /// Rules judged PASS in a case that was not declined.
    passed: BTreeSet<String>,
    /// Rules broken in some case.
    broken: BTreeSet<String>,
    first_break: Option<RequirementEvidence>,
    first_pass: Option<RequirementEvidence>,
    /// The first verdict that judged a rule (PASS or a break), for a MAY.
    first_judged: Option<RequirementEvidence>,
}

fn gather<'a>(rules: &[&str], results: impl IntoIterator<Item = &'a CaseResult>) -> Judged {
    let mut j = Judged {
        cases: Vec::new(),
        passed: BTreeSet::new(),
        broken: BTreeSet::new(),
        first_break: None,
        first_pass: None,
        first_judged: None,
    };
    for r in results {
        let declined = r.declined();
        let mut counted = false;
        for v in r.rules.iter().filter(|v| rules.contains(&v.id.as_str())) {
            let (is_break, is_pass) = (breaks(v), v.verdict == Verdict::Pass && !declined);
            if is_break {
                j.broken.insert(v.id.clone());
                j.first_break.get_or_insert_with(|| evidence(r, v));
            } else if is_pass {
                j.passed.insert(v.id.clone());
                j.first_pass.get_or_insert_with(|| evidence(r, v));
            } else {
                continue;
            }
            counted = true;
            j.first_judged.get_or_insert_with(|| evidence(r, v));
        }
        if counted {
            j.cases.push(r.id.clone());
        }
    }
    j
}

/// A requirement's status, cases, reason and evidence over `results`.
fn judge<'a>(
    req: &Requirement,
    registry: &[Rule],
    results: impl IntoIterator<Item = &'a CaseResult>,
) -> (
    RequirementStatus,
    Vec<String>,
    Option<String>,
    Option<RequirementEvidence>,
) {
    let Coverage::Rules(rules) = req.coverage else {
        return (
            RequirementStatus::NotTested,
            Vec::new(),
            req.coverage.not_judged(),
            None,
        );
    };
    let j = gather(rules, results);
    let may = req.level == Level::May;
    if !may && let Some(first) = j.first_break {
        return (RequirementStatus::Fail, j.cases, None, Some(first));
    }
    let judged = |id: &&str| j.passed.contains(*id) || (may && j.broken.contains(*id));
    if rules.iter().all(judged) {
        let first = if may { j.first_judged } else { j.first_pass };
        return (RequirementStatus::Pass, j.cases, None, first);
    }
    let unchecked: Vec<String> = rules
        .iter()
        .filter_map(|id| match registry.iter().find(|r| r.id == *id) {
            None => Some(format!("{id} (not in the registry yet)")),
            Some(r) if r.check.is_none() => Some(format!("{id} (no checker yet)")),
            Some(_) => None,
        })
        .collect();
    let first = if may { j.first_judged } else { j.first_pass };
    if !unchecked.is_empty() {
        return (
            RequirementStatus::NotTested,
            j.cases,
            Some(format!(
                "not judged by any case yet: {}",
                unchecked.join(", ")
            )),
            first,
        );
    }
    let missing: Vec<&str> = rules.iter().copied().filter(|id| !judged(id)).collect();
    (
        RequirementStatus::NotExercised,
        j.cases,
        Some(format!(
            "not judged in this run: {}{}",
            missing.join(", "),
            if may { "" } else { " (no case judged it PASS)" }
        )),
        first,
    )
}

/// The compatibility section of a run's `results`.
pub fn compatibility(results: &[CaseResult]) -> Compatibility {
    let registry = registry();
    let bindings: BTreeSet<a2a_protocol::Binding> =
        results.iter().filter_map(|r| r.binding).collect();
    let requirements: Vec<RequirementVerdict> = REQUIREMENTS
        .iter()
        .map(|req| {
            let (status, cases, reason, evidence) = judge(req, &registry, results);
            let per_binding = if req.coverage.rules().is_empty() {
                BTreeMap::new()
            } else {
                bindings
                    .iter()
                    .map(|b| {
                        let of_b = results.iter().filter(|r| r.binding == Some(*b));
                        (b.to_string(), judge(req, &registry, of_b).0)
                    })
                    .collect()
            };
            RequirementVerdict {
                id: req.id.to_string(),
                section: req.section.to_string(),
                keyword: req.keyword.to_string(),
                level: req.level,
                requirement: req.requirement.to_string(),
                status,
                rules: req.coverage.rules().iter().map(|r| r.to_string()).collect(),
                cases,
                reason,
                evidence,
                bindings: per_binding,
            }
        })
        .collect();
    let levels = LEVELS
        .iter()
        .map(|&level| {
            let mut t = LevelTally {
                level,
                total: 0,
                pass: 0,
                fail: 0,
                not_exercised: 0,
                not_tested: 0,
                handed_on: 0,
                not_automatable: 0,
            };
            for (v, req) in requirements.iter().zip(REQUIREMENTS.iter()) {
                if v.level != level {
                    continue;
                }
                t.total += 1;
                match v.status {
                    RequirementStatus::Pass => t.pass += 1,
                    RequirementStatus::Fail => t.fail += 1,
                    RequirementStatus::NotExercised => t.not_exercised += 1,
                    RequirementStatus::NotTested => t.not_tested += 1,
                }
                match req.coverage {
                    Coverage::HandedOn { .. } => t.handed_on += 1,
                    Coverage::NotAutomatable { .. } => t.not_automatable += 1,
                    Coverage::Rules(_) => {}
                }
            }
            t
        })
        .collect();
    Compatibility {
        spec: SPEC.to_string(),
        doc: DOC_PATH.to_string(),
        levels,
        requirements,
    }
}

/// The closing line: `A2A client: MUST a/b SHOULD c/d MAY e/f`, PASS rows over all rows of
/// each level.
pub fn compatibility_line(c: &Compatibility) -> String {
    let parts: Vec<String> = c
        .levels
        .iter()
        .map(|t| format!("{} {}/{}", t.level, t.pass, t.total))
        .collect();
    format!("A2A client: {}", parts.join(" "))
}

/// The line after [`compatibility_line`]: the rows not PASS, by status, and why the NOT TESTED
/// ones are not judged.
pub fn compatibility_note(c: &Compatibility) -> String {
    let sum = |f: fn(&LevelTally) -> u64| c.levels.iter().map(f).sum::<u64>();
    let (fail, not_ex, not_tested) = (
        sum(|t| t.fail),
        sum(|t| t.not_exercised),
        sum(|t| t.not_tested),
    );
    let (handed, not_auto) = (sum(|t| t.handed_on), sum(|t| t.not_automatable));
    let unchecked = not_tested.saturating_sub(handed + not_auto);
    let mut why = vec![
        format!("{handed} handed on to {}", crate::requirements::FOLLOW_UP),
        format!("{not_auto} not automatable"),
    ];
    if unchecked > 0 {
        why.push(format!("{unchecked} awaiting a checker"));
    }
    format!(
        "A2A client rows not passed: {fail} FAIL, {not_ex} NOT EXERCISED, {not_tested} NOT TESTED ({}); every row: summary.md, index.html, {}",
        why.join(", "),
        c.doc
    )
}

/// How many case ids a row names inline before "and N more".
pub const ROW_CASES: usize = 5;

/// The cases of a row in words: `2: a, b` (the first [`ROW_CASES`], then "and N more").
pub fn cases_text(v: &RequirementVerdict) -> String {
    if v.cases.is_empty() {
        return "-".to_string();
    }
    let shown: Vec<&str> = v.cases.iter().take(ROW_CASES).map(String::as_str).collect();
    let more = v.cases.len().saturating_sub(ROW_CASES);
    format!(
        "{}: {}{}",
        v.cases.len(),
        shown.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    )
}

/// A row's evidence in words: for a FAIL the first failing case, rule, expected, observed and
/// witness seqs; for a PASS the first case that judged it; otherwise the reason.
pub fn evidence_text(v: &RequirementVerdict) -> String {
    let reason = v.reason.clone().unwrap_or_default();
    let Some(e) = &v.evidence else {
        return reason;
    };
    let mut s = match v.status {
        RequirementStatus::Fail => format!(
            "{}: {} {}: expected {}; observed {}",
            e.case,
            e.verdict,
            e.rule,
            e.expected.as_deref().unwrap_or("-"),
            e.observed.as_deref().unwrap_or("-")
        ),
        _ => format!("first judged in {} ({} {})", e.case, e.rule, e.verdict),
    };
    if !e.witnesses.is_empty() {
        let seqs: Vec<String> = e.witnesses.iter().map(|w| format!("#{w}")).collect();
        s.push_str(&format!(" (witness {})", seqs.join(", ")));
    }
    if !reason.is_empty() {
        s.push_str(&format!("; {reason}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn case(id: &str, verdict: &str, rules: Value) -> CaseResult {
        serde_json::from_value(json!({
            "id": id, "title": id, "verdict": verdict, "rules": rules, "seed": 1,
            "repro": "r", "duration_ms": 1, "notes": [], "outcomes": {}, "messages": [],
            "stderr": "", "journal": [],
        }))
        .expect("a case result")
    }

    fn rule(id: &str, level: &str, verdict: &str) -> Value {
        json!({"id": id, "level": level, "verdict": verdict,
               "expected": "e", "observed": "o"})
    }

    fn row<'a>(c: &'a Compatibility, id: &str) -> &'a RequirementVerdict {
        c.requirements.iter().find(|r| r.id == id).expect("a row")
    }

    #[test]
    fn a_row_passes_when_every_rule_passed_somewhere_and_none_broke() {
        // C-17: ROUTE-05, -04, -03.
        let results = [
            case(
                "a",
                "PASS",
                json!([
                    rule("DLG-ROUTE-04", "MUST", "PASS"),
                    rule("DLG-ROUTE-05", "MUST", "PASS")
                ]),
            ),
            case(
                "b:rest",
                "PASS",
                json!([rule("DLG-ROUTE-03", "SHOULD", "PASS")]),
            ),
        ];
        let c = compatibility(&results);
        let r = row(&c, "C-17");
        assert_eq!(r.status, RequirementStatus::Pass);
        assert_eq!(r.cases, ["a", "b:rest"]);
        let e = r.evidence.as_ref().unwrap();
        assert_eq!((e.case.as_str(), e.rule.as_str()), ("a", "DLG-ROUTE-04"));
        // Only two of the three: NOT EXERCISED, naming the one not judged.
        let c = compatibility(&results[..1]);
        let r = row(&c, "C-17");
        assert_eq!(r.status, RequirementStatus::NotExercised);
        assert!(
            r.reason.as_deref().unwrap().contains("DLG-ROUTE-03"),
            "{r:?}"
        );
        assert!(
            !r.reason.as_deref().unwrap().contains("DLG-ROUTE-04"),
            "{r:?}"
        );
    }

    #[test]
    fn a_break_in_any_case_fails_must_and_should_rows_xfail_included() {
        let results = [
            case("ok", "PASS", json!([rule("DLG-WIRE-01", "MUST", "PASS")])),
            case(
                "known",
                "XFAIL",
                json!([
                    rule("DLG-WIRE-01", "MUST", "FAIL"),
                    {"id": "DLG-STATE-06", "level": "SHOULD", "verdict": "NON-STRICT",
                     "expected": "new task", "observed": "same task",
                     "witnesses": [{"seq": 7, "at_us": 1, "agent": "a", "event": "fault", "req": 1, "kind": "x"}]}
                ]),
            ),
        ];
        let c = compatibility(&results);
        // C-09 (MUST) by WIRE-01; C-13 (SHOULD) by STATE-02, ART-04, WIRE-01.
        for id in ["C-09", "C-13"] {
            let r = row(&c, id);
            assert_eq!(r.status, RequirementStatus::Fail, "{id}");
            let e = r.evidence.as_ref().unwrap();
            assert_eq!((e.case.as_str(), e.verdict), ("known", Verdict::Fail));
        }
        // A NON-STRICT SHOULD rule fails its SHOULD row, with its witness seqs.
        let r = row(&c, "C-40");
        assert_eq!(r.status, RequirementStatus::Fail);
        let e = r.evidence.as_ref().unwrap();
        assert_eq!(
            (e.rule.as_str(), e.witnesses.as_slice()),
            ("DLG-STATE-06", &[7][..])
        );
        assert_eq!(e.observed.as_deref(), Some("same task"));
    }

    #[test]
    fn a_may_row_is_never_failed() {
        // C-38 (MAY) and C-37 (MAY) by INPUT-01; C-39 (MAY) by STATE-06, not judged here.
        let results = [case(
            "x",
            "FAIL",
            json!([rule("DLG-INPUT-01", "MUST", "FAIL")]),
        )];
        let c = compatibility(&results);
        for id in ["C-37", "C-38"] {
            let r = row(&c, id);
            assert_eq!(
                r.status,
                RequirementStatus::Pass,
                "{id}: judged, never FAIL"
            );
            assert_eq!(r.cases, ["x"]);
        }
        assert_eq!(row(&c, "C-39").status, RequirementStatus::NotExercised);
        let may = c.levels.iter().find(|t| t.level == Level::May).unwrap();
        assert_eq!(may.fail, 0);
        // The MUST row of the same rule does fail.
        let r = c
            .requirements
            .iter()
            .filter(|r| r.rules == ["DLG-INPUT-01"]);
        assert!(r.clone().all(|r| r.level == Level::May));
        let c34 = row(&c, "C-34");
        assert_eq!(
            c34.status,
            RequirementStatus::Fail,
            "SHOULD row of INPUT-01"
        );
    }

    #[test]
    fn a_declined_case_contributes_only_what_it_broke() {
        let results = [case(
            "declined",
            "UNSUPPORTED",
            json!([
                rule("DLG-SEND-04", "MUST", "PASS"),
                rule("DLG-OBS-02", "MUST", "UNKNOWN"),
                rule("DLG-STATE-06", "SHOULD", "NON-STRICT"),
            ]),
        )];
        let c = compatibility(&results);
        assert_eq!(
            row(&c, "C-01").status,
            RequirementStatus::NotExercised,
            "no PASS from a declined case"
        );
        assert!(row(&c, "C-01").cases.is_empty());
        assert_eq!(row(&c, "C-41").status, RequirementStatus::NotExercised);
        assert_eq!(
            row(&c, "C-40").status,
            RequirementStatus::Fail,
            "a break before declining stands"
        );
        assert_eq!(row(&c, "C-40").cases, ["declined"]);
    }

    #[test]
    fn a_case_whose_work_was_never_sent_breaks_no_requirement() {
        let mut never = rule("DLG-WIRE-01", "MUST", "FAIL");
        never["observed"] = json!("not exercised: the delegator never sent d1 to any agent");
        let c = compatibility(&[case("x", "FAIL", json!([never]))]);
        assert_eq!(row(&c, "C-09").status, RequirementStatus::NotExercised);
    }

    #[test]
    fn rows_no_rule_judges_are_not_tested_with_the_reason() {
        let c = compatibility(&[]);
        let r = row(&c, "C-55");
        assert_eq!(r.status, RequirementStatus::NotTested);
        assert!(
            r.reason
                .as_deref()
                .unwrap()
                .starts_with("handed on to a follow-up of the transport-security work (#23)")
        );
        assert!(
            row(&c, "C-47")
                .reason
                .as_deref()
                .unwrap()
                .starts_with("not automatable")
        );
        // A rule without a checker yet: NOT TESTED, naming it (a registry where DLG-ROUTE-07
        // has none).
        let mut reg = registry();
        for r in reg.iter_mut().filter(|r| r.id == "DLG-ROUTE-07") {
            r.check = None;
        }
        let c18 = REQUIREMENTS
            .iter()
            .find(|r| r.id == "C-18")
            .expect("row C-18");
        let (status, _, reason, _) = judge(c18, &reg, std::iter::empty());
        assert_eq!(status, RequirementStatus::NotTested);
        assert!(
            reason
                .as_deref()
                .unwrap()
                .contains("DLG-ROUTE-07 (no checker yet)"),
            "{reason:?}"
        );
        let t: u64 = c.levels.iter().map(|t| t.total).sum();
        assert_eq!(t, 68);
        let handed: u64 = c.levels.iter().map(|t| t.handed_on).sum();
        assert_eq!(handed, 3);
        assert_eq!(c.levels.iter().map(|t| t.pass).sum::<u64>(), 0);
    }

    #[test]
    fn per_binding_statuses_come_from_the_cases_of_each_binding() {
        let mut rest = case(
            "a:rest",
            "PASS",
            json!([rule("DLG-WIRE-01", "MUST", "PASS")]),
        );
        rest.binding = Some(a2a_protocol::Binding::Rest);
        let mut grpc = case(
            "a:grpc",
            "FAIL",
            json!([rule("DLG-WIRE-01", "MUST", "FAIL")]),
        );
        grpc.binding = Some(a2a_protocol::Binding::Grpc);
        let c = compatibility(&[rest, grpc]);
        let r = row(&c, "C-09");
        assert_eq!(r.status, RequirementStatus::Fail);
        assert_eq!(r.bindings.get("rest"), Some(&RequirementStatus::Pass));
        assert_eq!(r.bindings.get("grpc"), Some(&RequirementStatus::Fail));
        assert!(row(&c, "C-55").bindings.is_empty());
    }

    #[test]
    fn the_closing_lines_count_pass_rows_over_all_rows_per_level() {
        let results = [case(
            "a",
            "PASS",
            json!([
                rule("DLG-SEND-04", "MUST", "PASS"),
                rule("DLG-ROUTE-04", "MUST", "PASS")
            ]),
        )];
        let c = compatibility(&results);
        // C-01 (MUST), C-02 and C-20 (MAY).
        assert_eq!(
            compatibility_line(&c),
            "A2A client: MUST 1/30 SHOULD 0/31 MAY 2/7"
        );
        let note = compatibility_note(&c);
        assert!(
            note.contains("3 handed on to a follow-up of the transport-security work (#23)"),
            "{note}"
        );
        assert!(note.contains("3 not automatable"), "{note}");
        assert!(
            note.starts_with("A2A client rows not passed: 0 FAIL"),
            "{note}"
        );
    }
}
