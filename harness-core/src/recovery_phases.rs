//! Recovery at every phase: which recovery rules (DLG-REC-*) and history invariants (HIST-*)
//! apply when the delegator is killed at each phase of a delegation, and the crash trigger that
//! puts the kill there. A unit test holds the catalog to this table (every applicable pair is
//! judged by a case with that trigger) and `scenarios/README.md` ("Recovery at every phase") to
//! its rendering.

use crate::scenario::CrashTrigger;

/// One phase of a delegation at which the delegator may die.
#[derive(Debug, Clone, Copy)]
pub struct Phase {
    /// Its label in the table: a letter and the phase in words.
    pub phase: &'static str,
    /// The crash trigger whose named point lies in this phase.
    pub trigger: CrashTrigger,
    /// The case that puts the kill in this phase, where the trigger alone does not (another
    /// phase shares it and the case's agents make the difference); `None`: any case with the
    /// trigger.
    pub case: Option<&'static str>,
    /// The recovery rules a kill there puts to the test; a catalog case with this trigger lists
    /// each of them.
    pub rules: &'static [&'static str],
}

/// The history invariants (`--invariants`) that apply at every phase: they judge every case
/// run with them, so each phase's cases judge them too.
pub const INVARIANTS_AT_EVERY_PHASE: &[&str] = &["HIST-01", "HIST-02"];

/// The recovery rules, in the table's column order.
pub const REC_RULES: &[&str] = &[
    "DLG-REC-01",
    "DLG-REC-02",
    "DLG-REC-03",
    "DLG-REC-04",
    "DLG-REC-05",
    "DLG-REC-06",
];

/// The phases and the recovery rules that apply at each.
///
/// - DLG-REC-01 (every open delegation driven to an outcome) applies wherever the outcome is
///   a result; after a purge the outcome is LOST, judged by DLG-REC-04.
/// - DLG-REC-02 (a record without a task id) and DLG-REC-05 (one task per intent) where a send
///   was in flight without an answer; DLG-REC-05 needs an agent that deduplicates `messageId`
///   (the backoff's agent answered 503 and created nothing).
/// - DLG-REC-03 (an open task id reconciled) wherever a task was open in the record.
/// - DLG-REC-04 (-32001 marks LOST) only after a purge.
/// - DLG-REC-06 (artifacts completed after the recovery are byte-exact) where an artifact is
///   still streaming at the kill.
pub const PHASES: &[Phase] = &[
    Phase {
        phase: "(a) before the first send: acknowledged and recorded, no request processed by any agent",
        trigger: CrashTrigger::BeforeFirstSend,
        case: None,
        rules: &["DLG-REC-01", "DLG-REC-02", "DLG-REC-05"],
    },
    Phase {
        phase: "(b) the send reached the agent, not yet processed",
        trigger: CrashTrigger::FirstRequest,
        case: None,
        rules: &["DLG-REC-01", "DLG-REC-02", "DLG-REC-05"],
    },
    Phase {
        phase: "(b) the send was processed, its answer lost",
        trigger: CrashTrigger::IndefiniteSend,
        case: None,
        rules: &["DLG-REC-01", "DLG-REC-02", "DLG-REC-05"],
    },
    Phase {
        phase: "(c) while streaming",
        trigger: CrashTrigger::AfterChunks,
        case: None,
        rules: &["DLG-REC-01", "DLG-REC-03", "DLG-REC-06"],
    },
    Phase {
        phase: "(d) waiting for an input answer",
        trigger: CrashTrigger::InputRound,
        case: None,
        rules: &["DLG-REC-01", "DLG-REC-03"],
    },
    Phase {
        phase: "(d) waiting for an auth answer",
        trigger: CrashTrigger::AuthRound,
        case: None,
        rules: &["DLG-REC-01", "DLG-REC-03"],
    },
    Phase {
        phase: "(e) during a retry backoff",
        trigger: CrashTrigger::RetryBackoff,
        case: None,
        rules: &["DLG-REC-01", "DLG-REC-02"],
    },
    Phase {
        phase: "(f) during cancel: CancelTask reached the agent",
        trigger: CrashTrigger::CancelRequest,
        case: None,
        rules: &["DLG-REC-01", "DLG-REC-03"],
    },
    Phase {
        phase: "(f) during cancel: the caller's cancel reached the delegator, no CancelTask took effect (the agent drops the first)",
        trigger: CrashTrigger::CancelRequest,
        case: Some("recovery.crash-during-cancel-undelivered"),
        rules: &["DLG-REC-01", "DLG-REC-03"],
    },
    Phase {
        phase: "(g) the agent purged the task while the delegator was down",
        trigger: CrashTrigger::AfterChunks,
        case: Some("recovery.purged-while-down"),
        rules: &["DLG-REC-03", "DLG-REC-04"],
    },
    Phase {
        phase: "(h) after the final state, before `done`",
        trigger: CrashTrigger::FinalState,
        case: None,
        rules: &["DLG-REC-01", "DLG-REC-03"],
    },
];

/// The trigger's name as a scenario writes it (`[crash] trigger = "..."`).
pub fn trigger_name(t: CrashTrigger) -> String {
    serde_json::to_value(t)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The table as `scenarios/README.md` shows it: one row per phase, one column per recovery
/// rule and one for the invariants.
pub fn markdown_table() -> String {
    let mut out = String::from("| phase | trigger |");
    for r in REC_RULES {
        out.push_str(&format!(" {} |", r.trim_start_matches("DLG-")));
    }
    out.push_str(&format!(" {} |\n", INVARIANTS_AT_EVERY_PHASE.join(", ")));
    out.push_str("| --- | --- |");
    for _ in REC_RULES {
        out.push_str(" --- |");
    }
    out.push_str(" --- |\n");
    for p in PHASES {
        out.push_str(&format!("| {} | `{}` |", p.phase, trigger_name(p.trigger)));
        for r in REC_RULES {
            out.push_str(if p.rules.contains(r) { " x |" } else { " |" });
        }
        out.push_str(" x |\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::builtin_catalog;

    #[test]
    fn every_applicable_phase_and_rule_is_judged_by_a_case_with_that_trigger() {
        let cat = builtin_catalog().expect("the embedded catalog parses");
        let mut missing = Vec::new();
        for p in PHASES {
            let with_trigger: Vec<_> = cat
                .iter()
                .filter(|s| s.crash.as_ref().is_some_and(|c| c.trigger == p.trigger))
                .filter(|s| p.case.is_none_or(|id| s.id == id))
                .collect();
            if with_trigger.is_empty() {
                missing.push(format!(
                    "{}: no case {}with trigger {:?}",
                    p.phase,
                    p.case.map(|c| format!("{c} ")).unwrap_or_default(),
                    p.trigger
                ));
            }
            for r in p.rules {
                assert!(REC_RULES.contains(r), "{r} is not a recovery rule");
                if !with_trigger.iter().any(|s| s.rules.iter().any(|x| x == r)) {
                    missing.push(format!(
                        "{}: no case with trigger {:?} lists {r}",
                        p.phase, p.trigger
                    ));
                }
            }
        }
        assert!(missing.is_empty(), "{missing:#?}");
        // Every crash trigger a case can name (but the sweep's `at_event`) has its phase.
        for s in &cat {
            if let Some(c) = &s.crash
                && c.trigger != CrashTrigger::AtEvent
            {
                assert!(
                    PHASES.iter().any(|p| p.trigger == c.trigger),
                    "{}: trigger {:?} has no phase",
                    s.id,
                    c.trigger
                );
            }
        }
    }

    #[test]
    fn the_rules_in_the_table_exist_and_the_readme_shows_the_table() {
        let ids: Vec<&str> = crate::rules::registry().iter().map(|r| r.id).collect();
        for r in REC_RULES {
            assert!(ids.contains(r), "{r}");
        }
        let hist: Vec<&str> = crate::invariants::INVARIANTS.iter().map(|i| i.id).collect();
        for h in INVARIANTS_AT_EVERY_PHASE {
            assert!(hist.contains(h), "{h}");
        }
        let readme = include_str!("../../scenarios/README.md");
        let table = markdown_table();
        assert!(
            readme.contains(&table),
            "scenarios/README.md (\"Recovery at every phase\") must show this table:\n{table}"
        );
    }
}
