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
/// failed cases with no such rule. Ordered by level (MUST first), then by how many cases broke
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
        for v in r.rules.iter().filter(|v| v.verdict.is_listed_as_failed()) {
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
