//! The one definition of a finding, used by the exploring loop, the shrinking oracle and the
//! report, and the per-rule counts of the coverage.

use a2a_harness_core::report::CONTRACT;
use a2a_harness_core::runner::{CaseResult, RuleVerdict, Verdict};
use serde::Serialize;

/// A finding: a rule judged FAIL or NON-STRICT (a broken MUST or SHOULD), or a case that
/// FAILed with no rule to blame (the delegator broke the driver contract, crashed or never
/// started: rule [`CONTRACT`]). A listed rule with nothing to judge (UNKNOWN), and a listed
/// rule FAILed only because the delegator never sent the case's work anywhere (the case's
/// situation was not exercised, see [`RuleVerdict::never_sent`]), are not findings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The rule id, or [`CONTRACT`].
    pub rule: String,
    /// FAIL or NON-STRICT.
    pub verdict: Verdict,
    /// What was observed (the rule's `observed`, or the case's first note).
    pub observed: String,
}

/// The findings of one case result (see [`Finding`]).
pub fn findings(r: &CaseResult) -> Vec<Finding> {
    let mut out: Vec<Finding> = r
        .rules
        .iter()
        .filter(|v| is_broken(v))
        .map(|v| Finding {
            rule: v.id.clone(),
            verdict: v.verdict,
            observed: v.observed.clone().unwrap_or_default(),
        })
        .collect();
    if r.verdict == Verdict::Fail && !r.rules.iter().any(|v| v.verdict == Verdict::Fail) {
        out.push(Finding {
            rule: CONTRACT.to_string(),
            verdict: Verdict::Fail,
            observed: r
                .notes
                .first()
                .cloned()
                .unwrap_or_else(|| "the case failed with no rule verdict".into()),
        });
    }
    out
}

/// A rule verdict that is a finding.
fn is_broken(v: &RuleVerdict) -> bool {
    matches!(v.verdict, Verdict::Fail | Verdict::NonStrict) && !v.never_sent()
}

/// True when `r` shows a finding for `rule`.
pub fn shows(r: &CaseResult, rule: &str) -> bool {
    findings(r).iter().any(|f| f.rule == rule)
}

/// How often a rule was judged each way over the runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RuleCounts {
    /// PASS.
    pub pass: u64,
    /// FAIL.
    pub fail: u64,
    /// NON-STRICT.
    pub non_strict: u64,
    /// Listed but nothing to judge (UNKNOWN or NOT EXERCISED).
    pub not_judged: u64,
    /// Runs whose scenario listed the rule (an always-on rule or a history invariant: every
    /// run).
    pub listed: u64,
}

impl RuleCounts {
    /// Times the rule was evaluated (PASS, FAIL or NON-STRICT).
    pub fn evaluated(&self) -> u64 {
        self.pass + self.fail + self.non_strict
    }
}
