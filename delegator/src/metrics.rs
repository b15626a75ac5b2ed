//! Operational metrics from the store (seed 000, Operations): per agent and skill, the number of
//! delegations, completion and rejection rates, input rounds per task, time to a final state and
//! cost per completed task; plus the open delegations already past their deadline (which almost
//! always means a watcher died).

use crate::store::{DelegationRecord, DelegationState};
use serde::Serialize;
use std::collections::BTreeMap;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Metrics of one (agent, skill) pair.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentSkillMetrics {
    /// Agent card URL (`-` when no agent was chosen).
    pub agent: String,
    /// Skill id.
    pub skill: String,
    /// Delegations.
    pub delegations: u64,
    /// Finished ones.
    pub finished: u64,
    /// COMPLETED / finished.
    pub completion_rate: f64,
    /// REJECTED / finished.
    pub rejection_rate: f64,
    /// Mean input rounds per delegation that had a task.
    pub input_rounds_per_task: f64,
    /// Mean seconds from creation to the final state.
    pub mean_seconds_to_final: Option<f64>,
    /// Spend of completed delegations / completed delegations.
    pub cost_per_completed_usd: Option<f64>,
}

/// An open delegation past its deadline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Overdue {
    /// Delegation id.
    pub id: String,
    /// State.
    pub state: String,
    /// Deadline.
    pub deadline: String,
    /// Seconds past it.
    pub seconds_over: f64,
}

/// The whole status report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Status {
    /// Per agent and skill.
    pub per_agent_skill: Vec<AgentSkillMetrics>,
    /// Open delegations past their deadline.
    pub overdue: Vec<Overdue>,
    /// Records in the dead-letter queue.
    pub dead_lettered: u64,
}

fn ts(s: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(s, &Rfc3339).ok()
}

/// Compute the status at `now`.
pub fn compute(records: &[DelegationRecord], now: OffsetDateTime) -> Status {
    #[derive(Default)]
    struct Acc {
        n: u64,
        finished: u64,
        completed: u64,
        rejected: u64,
        with_task: u64,
        rounds: u64,
        secs: Vec<f64>,
        spend_completed: f64,
    }
    let mut acc: BTreeMap<(String, String), Acc> = BTreeMap::new();
    let mut overdue = Vec::new();
    let mut dlq = 0;
    for r in records {
        if r.request.children.is_some() {
            continue; // fan-out parents are counted through their children
        }
        let key = (
            r.agent_url.clone().unwrap_or_else(|| "-".into()),
            r.skill.clone(),
        );
        let a = acc.entry(key).or_default();
        a.n += 1;
        if r.dlq {
            dlq += 1;
        }
        if r.state.is_final() {
            a.finished += 1;
            if let (Some(c), Some(t)) = (ts(&r.created_at), r.terminal_at.as_deref().and_then(ts)) {
                a.secs.push((t - c).as_seconds_f64().max(0.0));
            }
        }
        match r.state {
            DelegationState::Completed => {
                a.completed += 1;
                a.spend_completed += r.spend_usd;
            }
            DelegationState::Rejected => a.rejected += 1,
            _ => {}
        }
        if r.task_id.is_some() {
            a.with_task += 1;
            a.rounds += r
                .input_rounds
                .iter()
                .filter(|q| q.kind == a2a_driver_contract::EscalationKind::Input)
                .count() as u64;
        }
        if !r.state.is_final()
            && let Some(d) = ts(&r.deadline)
            && d < now
        {
            overdue.push(Overdue {
                id: r.id.clone(),
                state: r.state.as_str().to_string(),
                deadline: r.deadline.clone(),
                seconds_over: (now - d).as_seconds_f64(),
            });
        }
    }
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let per_agent_skill = acc
        .into_iter()
        .map(|((agent, skill), a)| AgentSkillMetrics {
            agent,
            skill,
            delegations: a.n,
            finished: a.finished,
            completion_rate: ratio(a.completed, a.finished),
            rejection_rate: ratio(a.rejected, a.finished),
            input_rounds_per_task: ratio(a.rounds, a.with_task),
            mean_seconds_to_final: (!a.secs.is_empty())
                .then(|| a.secs.iter().sum::<f64>() / a.secs.len() as f64),
            cost_per_completed_usd: (a.completed > 0)
                .then(|| a.spend_completed / a.completed as f64),
        })
        .collect();
    Status {
        per_agent_skill,
        overdue,
        dead_lettered: dlq,
    }
}

/// A human-readable rendering.
pub fn render(s: &Status) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<48} {:<20} {:>6} {:>6} {:>7} {:>7} {:>7} {:>9} {:>10}",
        "agent", "skill", "deleg", "final", "compl%", "rej%", "rounds", "t_final_s", "usd/compl"
    );
    for m in &s.per_agent_skill {
        let _ = writeln!(
            out,
            "{:<48} {:<20} {:>6} {:>6} {:>7.1} {:>7.1} {:>7.2} {:>9} {:>10}",
            m.agent,
            m.skill,
            m.delegations,
            m.finished,
            m.completion_rate * 100.0,
            m.rejection_rate * 100.0,
            m.input_rounds_per_task,
            m.mean_seconds_to_final
                .map(|v| format!("{v:.1}"))
                .unwrap_or_else(|| "-".into()),
            m.cost_per_completed_usd
                .map(|v| format!("{v:.4}"))
                .unwrap_or_else(|| "-".into()),
        );
    }
    let _ = writeln!(out, "dead-lettered: {}", s.dead_lettered);
    if s.overdue.is_empty() {
        let _ = writeln!(out, "open delegations past their deadline: none");
    } else {
        let _ = writeln!(out, "open delegations past their deadline (watcher died?):");
        for o in &s.overdue {
            let _ = writeln!(
                out,
                "  {} {} deadline {} ({:.0} s over)",
                o.id, o.state, o.deadline, o.seconds_over
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::DelegationRequest;
    use crate::store::{InputRound, now_text};

    fn rec(id: &str, state: DelegationState, spend: f64) -> DelegationRecord {
        let req = DelegationRequest::new(id, "s", "t");
        DelegationRecord {
            id: id.into(),
            parent_id: None,
            skill: "s".into(),
            request: req,
            agent_url: Some("http://a".into()),
            rpc_url: None,
            protocol_version: None,
            message_ids: Default::default(),
            task_id: Some("t".into()),
            context_id: None,
            state,
            reason: None,
            budget_usd: 1.0,
            budget_share: 0.9,
            spend_usd: spend,
            deadline: "2000-01-01T00:00:00.000Z".into(),
            depth: 0,
            chain: vec![],
            refine_of: None,
            reference_task_ids: vec![],
            streaming: false,
            push_token_sha256: vec![],
            attempts: 1,
            last_error: None,
            error_code: None,
            final_message: None,
            priority: "normal".into(),
            created_at: "2026-01-01T00:00:00.000Z".into(),
            updated_at: now_text(),
            terminal_at: Some("2026-01-01T00:00:10.000Z".into()),
            dlq: false,
            input_rounds: vec![],
            artifacts: vec![],
            errors: vec![],
        }
    }

    #[test]
    fn rates_rounds_cost_and_overdue() {
        let mut a = rec("a", DelegationState::Completed, 0.5);
        a.input_rounds.push(InputRound {
            round: 1,
            kind: a2a_driver_contract::EscalationKind::Input,
            question: "q".into(),
            question_message_id: None,
            answer: None,
            source: None,
            answer_message_id: None,
            asked_at: Some(now_text()),
            answered_at: None,
            sent_at: None,
        });
        let b = rec("b", DelegationState::Rejected, 0.0);
        let mut c = rec("c", DelegationState::Working, 0.0);
        c.terminal_at = None;
        let s = compute(&[a, b, c], OffsetDateTime::now_utc());
        let m = &s.per_agent_skill[0];
        assert_eq!(m.delegations, 3);
        assert_eq!(m.finished, 2);
        assert_eq!(m.completion_rate, 0.5);
        assert_eq!(m.rejection_rate, 0.5);
        assert!((m.input_rounds_per_task - 1.0 / 3.0).abs() < 1e-9);
        assert_eq!(m.mean_seconds_to_final, Some(10.0));
        assert_eq!(m.cost_per_completed_usd, Some(0.5));
        assert_eq!(s.overdue.len(), 1);
        assert_eq!(s.overdue[0].id, "c");
        assert!(render(&s).contains("c WORKING"));
    }
}
