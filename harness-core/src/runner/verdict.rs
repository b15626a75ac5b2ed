//! Case results and verdicts: the judgement of every rule of a case over its evidence, the
//! verdict of the case, and known-failing lists.

use super::RunSettings;
use crate::catalog::CaseGlob;
use crate::rules::{Check, Evidence, Level, registry};
use crate::scenario::Scenario;
use a2a_driver_contract::FromDelegator;
use a2a_mock_agents::Entry;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The verdict of a case or a rule: the report vocabulary of the driver contract.
pub use a2a_driver_contract::report::Verdict;

/// The verdict of one rule in one case.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RuleVerdict {
    /// Rule id.
    pub id: String,
    /// MUST/SHOULD/MAY.
    pub level: Level,
    /// Verdict.
    pub verdict: Verdict,
    /// What should have happened (on failure).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// What happened (on failure).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed: Option<String>,
    /// Witness journal entries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub witnesses: Vec<Entry>,
}

/// How the `observed` of a listed rule's FAIL starts when the delegator never sent the case's
/// work to any agent (the case's situation was not exercised; see [`judge`]).
const NEVER_SENT: &str = "not exercised: the delegator never sent";

impl RuleVerdict {
    /// True for the FAIL of a listed rule that had nothing to judge because the delegator never
    /// sent the case's work to any agent: the case failed, but the rule itself was not broken.
    pub fn never_sent(&self) -> bool {
        self.verdict == Verdict::Fail
            && self
                .observed
                .as_deref()
                .is_some_and(|o| o.starts_with(NEVER_SENT))
    }
}

/// Everything about one case run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CaseResult {
    /// Case id.
    pub id: String,
    /// Title.
    pub title: String,
    /// Verdict.
    pub verdict: Verdict,
    /// Per-rule verdicts.
    pub rules: Vec<RuleVerdict>,
    /// The seed used.
    pub seed: u64,
    /// The binding the case's unpinned agents served (`run --binding`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binding: Option<a2a_protocol::Binding>,
    /// Every agent served TLS (`run --tls`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tls: bool,
    /// The command that reproduces this case.
    pub repro: String,
    /// Wall time.
    pub duration_ms: u64,
    /// Harness notes (contract violations, crashes, timeouts).
    pub notes: Vec<String>,
    /// How each delegation ended, as the delegator reported it (`done`, or the `error` that
    /// declined it).
    pub outcomes: BTreeMap<String, FromDelegator>,
    /// Every protocol message from the delegator.
    pub messages: Vec<Value>,
    /// The delegator's stderr (tail).
    pub stderr: String,
    /// The case's journal.
    pub journal: Vec<Entry>,
    /// Where the crash was injected, for a case with a crash trigger that fired.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crash: Option<super::CrashRecord>,
    /// Journal time (µs since the network started) of the delegator's first `init_ok`, from
    /// which the case's deadlines count; an upper bound (taken by the harness's clock, started
    /// just before the network's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at_us: Option<u64>,
    /// Per delegation, the journal's last sequence when the harness received its outcome.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub done_at: BTreeMap<String, u64>,
}

/// The command that reproduces a case (shell-quoted), from any directory: it names the local
/// catalog directory of a local case (absolute) and the binding, seed and delegator.
pub fn repro_command(s: &Scenario, cfg: &RunSettings) -> String {
    let binding = cfg
        .binding
        .map(|b| format!(" --binding {b}"))
        .unwrap_or_default();
    let scenarios = s
        .local_dir
        .as_ref()
        .map(|d| {
            format!(
                " --scenarios {}",
                crate::delegator_process::shell_quote(&d.display().to_string())
            )
        })
        .unwrap_or_default();
    let tls = if cfg.tls { " --tls" } else { "" };
    format!(
        "a2a-harness run --case {}{scenarios}{binding}{tls} --seed {} --delegator {}",
        crate::delegator_process::shell_quote(&s.id),
        cfg.seed,
        crate::delegator_process::shell_quote(&cfg.delegator)
    )
}

impl CaseResult {
    pub(super) fn empty(s: &Scenario, cfg: &RunSettings) -> CaseResult {
        CaseResult {
            id: s.id.clone(),
            title: s.title.clone(),
            verdict: Verdict::Unknown,
            rules: Vec::new(),
            seed: cfg.seed,
            binding: cfg.binding,
            tls: cfg.tls,
            repro: repro_command(s, cfg),
            duration_ms: 0,
            notes: Vec::new(),
            outcomes: BTreeMap::new(),
            messages: Vec::new(),
            stderr: String::new(),
            journal: Vec::new(),
            crash: None,
            started_at_us: None,
            done_at: BTreeMap::new(),
        }
    }

    /// True when the delegator declined this case, or a delegation of it, through the contract
    /// (`error` code `unsupported`): the case's verdict is UNSUPPORTED, or an outcome is such an
    /// error (a broken MUST makes the verdict FAIL all the same).
    pub fn declined(&self) -> bool {
        self.verdict == Verdict::Unsupported
            || self.outcomes.values().any(|o| {
                matches!(o, FromDelegator::Error(e) if e.code == a2a_driver_contract::DriverErrorCode::Unsupported)
            })
    }

    /// The rules this case broke: those judged FAIL, NON-STRICT or UNKNOWN. A declined case
    /// ([`declined`](Self::declined)) breaks no rule by what it did not do: its UNKNOWN rules
    /// (nothing to judge, since the work was declined) are left out, while a FAIL or NON-STRICT
    /// witnessed in what it did before declining stands.
    pub fn broken_rules(&self) -> impl Iterator<Item = &RuleVerdict> {
        let declined = self.declined();
        self.rules.iter().filter(move |v| {
            v.verdict.is_listed_as_failed() && !(declined && v.verdict == Verdict::Unknown)
        })
    }

    /// A FAIL for a case the harness could not finish (for example a panic in its task).
    pub fn harness_failure(s: &Scenario, cfg: &RunSettings, note: String) -> CaseResult {
        let mut r = CaseResult::empty(s, cfg);
        r.verdict = Verdict::Fail;
        r.notes.push(note);
        r
    }
}

/// Judge every rule the case lists, and every always-on rule, over the evidence: a listed rule
/// with nothing to judge is UNKNOWN, a broken MUST is FAIL, a broken SHOULD NON-STRICT. A listed
/// rule with nothing to judge because the delegator never sent the case's work to any agent is
/// not unknown: the case's purpose was not exercised, a FAIL (whatever the rule's level) naming
/// that.
pub(super) fn judge(s: &Scenario, ev: &Evidence, entries: &[Entry]) -> Vec<RuleVerdict> {
    let unsent = crate::rules::unsent_work(ev);
    let mut verdicts = Vec::new();
    for r in registry() {
        let listed = s.rules.iter().any(|x| x == r.id);
        if !listed && !r.always {
            continue;
        }
        let Some(check) = r.check else {
            continue;
        };
        let (verdict, expected, observed, witnesses) = match check(ev) {
            Check::Pass => (Verdict::Pass, None, None, vec![]),
            Check::NotApplicable | Check::NotExercised { .. } if listed && !unsent.is_empty() => (
                Verdict::Fail,
                Some(format!(
                    "the situation of this case: {} sent to an agent",
                    unsent.join(", ")
                )),
                Some(format!("{NEVER_SENT} {} to any agent", unsent.join(", "))),
                vec![],
            ),
            // A crash sweep's position is not the crash point the case was written for.
            Check::NotApplicable if listed && s.crash.as_ref().is_some_and(|c| c.swept) => (
                Verdict::NotExercised,
                Some("the situation this rule is about".to_string()),
                Some(
                    "it did not arise with the crash at this position (the case lists the rule for its own crash point)"
                        .to_string(),
                ),
                vec![],
            ),
            Check::NotApplicable if listed => (
                Verdict::Unknown,
                Some("evidence for this rule".to_string()),
                Some("nothing observed that bears on it".to_string()),
                vec![],
            ),
            // An always-on rule about a path the delegator did not take, in a case not about
            // it, is simply not applicable there.
            Check::NotApplicable | Check::NotExercised { .. } if !listed => continue,
            Check::NotApplicable => continue,
            Check::NotExercised { why } => (
                Verdict::NotExercised,
                Some("the situation this rule is about".to_string()),
                Some(why),
                vec![],
            ),
            Check::Fail {
                expected,
                observed,
                witnesses,
            } => {
                let w: Vec<Entry> = entries
                    .iter()
                    .filter(|e| witnesses.contains(&e.seq))
                    .cloned()
                    .collect();
                let v = if r.level == Level::Must {
                    Verdict::Fail
                } else {
                    Verdict::NonStrict
                };
                (v, Some(expected), Some(observed), w)
            }
        };
        verdicts.push(RuleVerdict {
            id: r.id.to_string(),
            level: r.level,
            verdict,
            expected,
            observed,
            witnesses,
        });
    }
    verdicts
}

/// The verdict of a case: a broken MUST or contract wins over UNSUPPORTED, which wins over the
/// rest (a delegator that declined some work is not judged on what it declined).
pub(super) fn case_verdict(
    verdicts: &[RuleVerdict],
    contract_broken: bool,
    unsupported: bool,
    inited: bool,
) -> Verdict {
    let any = |v: Verdict| verdicts.iter().any(|r| r.verdict == v);
    if contract_broken || any(Verdict::Fail) {
        Verdict::Fail
    } else if unsupported {
        Verdict::Unsupported
    } else if !inited {
        Verdict::Fail
    } else if any(Verdict::Unknown) {
        Verdict::Unknown
    } else if any(Verdict::NonStrict) {
        Verdict::NonStrict
    } else {
        Verdict::Pass
    }
}

/// Apply a known-failing list: FAIL becomes XFAIL, PASS becomes XPASS.
pub fn apply_known_failing(results: &mut [CaseResult], known: &[CaseGlob]) {
    for r in results {
        // With `--repeat` and `--binding`, result ids are `<case id>:<binding>@<seed>`: an
        // entry names either the result or its case.
        if known
            .iter()
            .any(|k| crate::catalog::known_failing_matches(k, &r.id))
        {
            r.verdict = match r.verdict {
                Verdict::Fail | Verdict::NonStrict | Verdict::Unknown => Verdict::XFail,
                Verdict::Pass => Verdict::XPass,
                v => v,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_must_failure_or_contract_break_wins_over_unsupported() {
        let rule = |verdict| RuleVerdict {
            id: "X".into(),
            level: Level::Must,
            verdict,
            expected: None,
            observed: None,
            witnesses: vec![],
        };
        let failed = [rule(Verdict::Pass), rule(Verdict::Fail)];
        assert_eq!(case_verdict(&failed, false, true, true), Verdict::Fail);
        assert_eq!(case_verdict(&[], true, true, true), Verdict::Fail);
        let unknown = [rule(Verdict::Unknown)];
        assert_eq!(
            case_verdict(&unknown, false, true, true),
            Verdict::Unsupported
        );
        assert_eq!(case_verdict(&[], false, true, false), Verdict::Unsupported);
        assert_eq!(case_verdict(&[], false, false, false), Verdict::Fail);
        assert_eq!(case_verdict(&unknown, false, false, true), Verdict::Unknown);
    }

    #[test]
    fn a_rule_not_exercised_neither_fails_nor_passes_a_case_alone() {
        let rule = |verdict| RuleVerdict {
            id: "X".into(),
            level: Level::Must,
            verdict,
            expected: None,
            observed: None,
            witnesses: vec![],
        };
        let other_path = [rule(Verdict::Pass), rule(Verdict::NotExercised)];
        assert_eq!(case_verdict(&other_path, false, false, true), Verdict::Pass);
        let with_failure = [rule(Verdict::NotExercised), rule(Verdict::Fail)];
        assert_eq!(
            case_verdict(&with_failure, false, false, true),
            Verdict::Fail
        );
        assert!(!Verdict::NotExercised.fails_run());
    }

    #[test]
    fn a_listed_rule_unexercised_because_nothing_was_sent_fails_naming_that() {
        use crate::rules::test_support::{Case, delegation};
        let mut c = Case::new(&delegation("expect = { state = [\"COMPLETED\"] }"));
        c.s.rules = vec!["DLG-SEND-08".into()];
        c.done("d1", "FAILED", serde_json::json!([]));
        let v = c.with_evidence(|ev| judge(&c.s, ev, &[]));
        let send08 = v.iter().find(|r| r.id == "DLG-SEND-08").unwrap();
        assert_eq!(
            send08.verdict,
            Verdict::Fail,
            "the case, not the SHOULD, failed"
        );
        assert!(
            send08
                .observed
                .as_deref()
                .unwrap()
                .contains("never sent d1")
        );
        assert_eq!(case_verdict(&v, false, false, true), Verdict::Fail);
        // Sent: the listed rule with nothing to judge is merely UNKNOWN.
        c.j.send(
            "a",
            "m1",
            "do the thing",
            serde_json::json!({"configuration": {"acceptedOutputModes": null}}),
        );
        let v = c.with_evidence(|ev| judge(&c.s, ev, &[]));
        let send08 = v.iter().find(|r| r.id == "DLG-SEND-08").unwrap();
        assert_ne!(send08.verdict, Verdict::Fail);
        // "Another path" needs a path: nothing sent is no push-instead-of-polling.
        let mut c = Case::new(&delegation("expect = { state = [\"COMPLETED\"] }"));
        c.s.rules = vec!["DLG-OBS-04".into()];
        c.s.forge_push = true;
        c.done("d1", "FAILED", serde_json::json!([]));
        let v = c.with_evidence(|ev| judge(&c.s, ev, &[]));
        let obs04 = v.iter().find(|r| r.id == "DLG-OBS-04").unwrap();
        assert_eq!(obs04.verdict, Verdict::Fail);
        // An always-on rule not exercised in a case that does not list it is left out.
        let mut c = Case::new(&delegation(""));
        let (_, r) = c.j.send("a", "m1", "do the thing", serde_json::json!({}));
        c.j.sse("a", r);
        let v = c.with_evidence(|ev| judge(&c.s, ev, &[]));
        assert!(!v.iter().any(|r| r.id == "DLG-OBS-05"), "{v:?}");
        c.s.rules.push("DLG-OBS-05".into());
        let v = c.with_evidence(|ev| judge(&c.s, ev, &[]));
        let obs05 = v.iter().find(|r| r.id == "DLG-OBS-05").unwrap();
        assert_eq!(obs05.verdict, Verdict::NotExercised);
    }
}
