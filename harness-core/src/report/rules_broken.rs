//! The "rules broken" roll-up: which rules the delegator broke, in how many cases, with the
//! first evidence of each. The console, `summary.md`, `index.html` and `index.json` open with it.

use super::text::{rule_line, witness_line};
use crate::rules::Level;
use crate::runner::CaseResult;
use a2a_driver_contract::report::BrokenRule;
use std::fmt::Write as _;

/// The id under which cases that failed with no rule to blame are rolled up (the delegator
/// broke the driver contract, crashed, or never started).
pub const CONTRACT: &str = "CONTRACT";

/// The requirement shown for [`CONTRACT`].
const CONTRACT_REQUIREMENT: &str =
    "The delegator speaks the driver contract (docs/driver-protocol.md) and stays up";

/// How many case ids the console text names per rule before "and N more".
const CONSOLE_CASES: usize = 5;

/// The rules broken by `results`: every rule judged FAIL, NON-STRICT or UNKNOWN in some case
/// (XFAIL cases included: the rule is still broken, only expected to be), plus [`CONTRACT`] for
/// failed cases with no such rule. A case the delegator declined breaks no rule by declining:
/// its UNKNOWN rules do not count ([`CaseResult::broken_rules`]). Ordered by level (MUST first), then by how many cases broke
/// the rule (most first), then by id.
pub fn rules_broken(results: &[CaseResult]) -> Vec<BrokenRule> {
    let mut out: Vec<BrokenRule> = Vec::new();
    let mut add =
        |id: &str, level: Level, requirement: &str, case: &str, evidence: String| match out
            .iter_mut()
            .find(|b| b.id == id)
        {
            Some(b) => {
                if b.cases.last().map(String::as_str) != Some(case) {
                    b.cases.push(case.to_string());
                }
            }
            None => out.push(BrokenRule {
                id: id.to_string(),
                level,
                requirement: requirement.to_string(),
                cases: vec![case.to_string()],
                first_evidence: evidence,
            }),
        };
    for r in results {
        let mut blamed = false;
        for v in r.broken_rules() {
            blamed = true;
            let requirement = crate::invariants::describe(&v.id).map_or("", |(_, r)| r);
            let mut evidence = format!("{}: {}", r.id, rule_line(v));
            if let Some(w) = v.witnesses.first() {
                let _ = write!(evidence, " (witness {})", witness_line(w));
            }
            add(&v.id, v.level, requirement, &r.id, evidence);
        }
        let failed = r.verdict.fails_run() || r.verdict == crate::runner::Verdict::XFail;
        if failed && !blamed && r.verdict != crate::runner::Verdict::XPass {
            let why = r
                .notes
                .first()
                .cloned()
                .unwrap_or_else(|| format!("{} with no rule verdict", r.verdict.label()));
            add(
                CONTRACT,
                Level::Must,
                CONTRACT_REQUIREMENT,
                &r.id,
                format!("{}: {why}", r.id),
            );
        }
    }
    out.sort_by(|a, b| {
        a.level
            .cmp(&b.level)
            .then(b.cases.len().cmp(&a.cases.len()))
            .then(a.id.cmp(&b.id))
    });
    out
}

/// The roll-up as the console prints it: a heading, then per rule its level, id, case count,
/// requirement, the first few case ids and the first evidence. Empty when no rule was broken.
pub fn rules_broken_text(broken: &[BrokenRule]) -> String {
    if broken.is_empty() {
        return String::new();
    }
    let mut s = format!("Rules broken ({}):\n", broken.len());
    for b in broken {
        let n = b.cases.len();
        let _ = writeln!(
            s,
            "  {:<6} {:<14} {n} case{}  {}",
            b.level.label(),
            b.id,
            if n == 1 { "" } else { "s" },
            b.requirement
        );
        let shown: Vec<&str> = b
            .cases
            .iter()
            .take(CONSOLE_CASES)
            .map(String::as_str)
            .collect();
        let more = n.saturating_sub(CONSOLE_CASES);
        let _ = writeln!(
            s,
            "         cases: {}{}",
            shown.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        );
        let _ = writeln!(s, "         first: {}", b.first_evidence);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn case(id: &str, verdict: &str, rules: Value, outcomes: Value) -> CaseResult {
        serde_json::from_value(json!({
            "id": id, "title": id, "verdict": verdict, "rules": rules, "seed": 1,
            "repro": "r", "duration_ms": 1, "notes": [], "outcomes": outcomes,
            "messages": [], "stderr": "", "journal": [],
        }))
        .expect("a case result")
    }

    fn rule(id: &str, verdict: &str) -> Value {
        json!({"id": id, "level": "MUST", "verdict": verdict, "expected": "e", "observed": "o"})
    }

    #[test]
    fn a_declined_case_breaks_no_rule_by_declining() {
        let declined = json!({"d1": {"type": "error", "id": "d1", "code": "unsupported",
                                     "message": "no gRPC here"}});
        let results = [
            // Declined: its UNKNOWN rules had nothing to judge because the work was declined.
            case(
                "a",
                "UNSUPPORTED",
                json!([
                    rule("DLG-OBS-01", "UNKNOWN"),
                    rule("DLG-ART-01", "UNKNOWN"),
                    rule("DLG-SEND-04", "PASS")
                ]),
                declined.clone(),
            ),
            // Declined one delegation but broke a MUST before: the FAIL stands, the UNKNOWN not.
            case(
                "b",
                "FAIL",
                json!([rule("DLG-SEND-02", "FAIL"), rule("DLG-STATE-01", "UNKNOWN")]),
                declined,
            ),
            // Not declined: an UNKNOWN is still a rule with nothing observed, rolled up.
            case(
                "c",
                "UNKNOWN",
                json!([rule("DLG-OBS-01", "UNKNOWN")]),
                json!({}),
            ),
        ];
        assert!(results[0].declined() && results[1].declined() && !results[2].declined());
        let broken = rules_broken(&results);
        let ids: Vec<(&str, Vec<&str>)> = broken
            .iter()
            .map(|b| (b.id.as_str(), b.cases.iter().map(String::as_str).collect()))
            .collect();
        assert_eq!(
            ids,
            [("DLG-OBS-01", vec!["c"]), ("DLG-SEND-02", vec!["b"])],
            "{broken:#?}"
        );
        let failed: Vec<&str> = results[1].broken_rules().map(|v| v.id.as_str()).collect();
        assert_eq!(failed, ["DLG-SEND-02"]);
    }
}
