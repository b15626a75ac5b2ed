//! `run --check-determinism`: every selected case runs twice with the same seed, and the two
//! runs are compared: the case verdict, every rule's verdict and the network journals modulo
//! ids, ports and timing ([`a2a_journal_diff`]). A difference is a nondeterminism finding,
//! reported as a failed result `<case id>#determinism` whose notes name what differed.

use crate::runner::{CaseResult, Verdict};
use a2a_journal_diff::{IGNORED, compare};
use std::collections::BTreeMap;

/// The suffix of the label of a case's second run (never reported: it is folded into the
/// determinism result).
pub const RERUN_SUFFIX: &str = "#rerun";
/// The suffix of the id of a case's determinism result.
pub const RESULT_SUFFIX: &str = "#determinism";

/// What differs between two runs of one case: one readable note per difference (the case
/// verdict, each rule whose verdict differs, the first journal difference). Empty: none. An
/// always-on rule judged in one run only counts unless it passed (or was not exercised) there.
pub fn differences(first: &CaseResult, second: &CaseResult) -> Vec<String> {
    let mut out = Vec::new();
    if first.verdict != second.verdict {
        out.push(format!(
            "case verdict: {} in the first run, {} in the second",
            first.verdict, second.verdict
        ));
    }
    let rules = |r: &CaseResult| -> BTreeMap<String, Verdict> {
        r.rules.iter().map(|v| (v.id.clone(), v.verdict)).collect()
    };
    let (a, b) = (rules(first), rules(second));
    let mut ids: Vec<&String> = a.keys().chain(b.keys()).collect();
    ids.sort();
    ids.dedup();
    for id in ids {
        let show = |v: Option<&Verdict>| v.map_or("not judged".to_string(), |v| v.to_string());
        // An always-on rule whose situation arose in one run only (a path a timed wait
        // decided) is compared only when it did not pass there; a rule the case lists is judged in
        // every run.
        let one_sided_pass = match (a.get(id), b.get(id)) {
            (Some(v), None) | (None, Some(v)) => matches!(v, Verdict::Pass | Verdict::NotExercised),
            _ => false,
        };
        if a.get(id) != b.get(id) && !one_sided_pass {
            out.push(format!(
                "rule {id}: {} in the first run, {} in the second",
                show(a.get(id)),
                show(b.get(id))
            ));
        }
    }
    if let Some(d) = compare(&first.journal, &second.journal) {
        out.push(format!(
            "journal (A: first run, B: second run; {} and {} entries): {d}",
            first.journal.len(),
            second.journal.len()
        ));
    }
    out
}

/// The determinism result of a case from its two runs: PASS when nothing differs, FAIL with a
/// note per difference otherwise. A failing result carries the second run's journal, so that
/// `a2a-harness journal diff cases/<id>.json 'cases/<id>#determinism.json'` shows the
/// difference again.
pub fn determinism_result(first: &CaseResult, second: &CaseResult) -> CaseResult {
    let found = differences(first, second);
    let mut notes = vec![format!(
        "ran twice with seed {}: {}",
        first.seed,
        if found.is_empty() {
            "the same verdicts, rule verdicts and journal (modulo ids, ports and timing)"
        } else {
            "nondeterminism: the two runs differ (the second run's journal is this result's)"
        }
    )];
    let failed = !found.is_empty();
    notes.extend(found);
    if failed {
        notes.push(IGNORED.to_string());
    }
    CaseResult {
        id: format!("{}{RESULT_SUFFIX}", first.id),
        title: format!("determinism of {}", first.id),
        verdict: if failed { Verdict::Fail } else { Verdict::Pass },
        rules: Vec::new(),
        seed: first.seed,
        binding: first.binding,
        tls: first.tls,
        repro: format!("{} --check-determinism", first.repro),
        duration_ms: first.duration_ms.max(second.duration_ms),
        notes,
        outcomes: BTreeMap::new(),
        messages: Vec::new(),
        stderr: String::new(),
        journal: if failed {
            second.journal.clone()
        } else {
            Vec::new()
        },
        crash: None,
        started_at_us: None,
        done_at: BTreeMap::new(),
    }
}

/// The label of the first run a result belongs to: its own, or the one a rerun repeats.
pub fn first_run_label(id: &str) -> &str {
    id.strip_suffix(RERUN_SUFFIX).unwrap_or(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Level;
    use crate::runner::RuleVerdict;
    use a2a_mock_agents::{Entry, Event};

    fn result(verdict: Verdict, rule: Verdict, state: &str) -> CaseResult {
        CaseResult {
            id: "c".into(),
            title: "t".into(),
            verdict,
            rules: vec![RuleVerdict {
                id: "DLG-X-01".into(),
                level: Level::Must,
                verdict: rule,
                expected: None,
                observed: None,
                witnesses: vec![],
            }],
            seed: 7,
            binding: None,
            tls: false,
            repro: "a2a-harness run --case c --seed 7".into(),
            duration_ms: 1,
            notes: vec![],
            outcomes: BTreeMap::new(),
            messages: vec![],
            stderr: String::new(),
            journal: vec![Entry {
                seq: 1,
                at_us: 5,
                agent: "a".into(),
                event: Event::TaskState {
                    task_id: "t".into(),
                    state: state.into(),
                },
            }],
            crash: None,
            started_at_us: None,
            done_at: BTreeMap::new(),
        }
    }

    #[test]
    fn two_equal_runs_pass_and_differing_ones_fail_naming_what_differs() {
        let a = result(Verdict::Pass, Verdict::Pass, "TASK_STATE_COMPLETED");
        let d = determinism_result(&a, &a.clone());
        assert_eq!(d.verdict, Verdict::Pass);
        assert_eq!(d.id, "c#determinism");
        assert!(d.journal.is_empty());
        assert!(d.repro.ends_with("--check-determinism"));

        let b = result(Verdict::Fail, Verdict::Fail, "TASK_STATE_FAILED");
        let d = determinism_result(&a, &b);
        assert_eq!(d.verdict, Verdict::Fail);
        let notes = d.notes.join("\n");
        assert!(
            notes.contains("case verdict: PASS in the first run, FAIL in the second"),
            "{notes}"
        );
        assert!(
            notes.contains("rule DLG-X-01: PASS in the first run, FAIL in the second"),
            "{notes}"
        );
        assert!(notes.contains("they differ at state"), "{notes}");
        assert_eq!(d.journal, b.journal);
        assert_eq!(first_run_label("c#rerun"), "c");
        assert_eq!(first_run_label("c"), "c");
    }
}
