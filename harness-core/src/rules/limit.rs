//! Limits (DLG-LIMIT-*): refusals, deadlines, cancellation, budgets, depth and chain.

use super::evidence::*;
use super::registry::{Check, fail};
use super::state::outcome_expected;
use a2a_driver_contract::Outcome;
use a2a_protocol::Method;
use serde_json::Value;
use std::collections::BTreeMap;

/// Every delegation that breaks `limit` (by `breaks`) and is expected to send nothing: refused
/// before anything is sent, with a `reason` that names the limit (one of `words`,
/// case-insensitive), so that a delegator refusing everything does not pass by chance. A
/// delegation refused for another limit in the same case is that limit's rule's business.
fn refused_nothing_sent(
    ev: &Evidence,
    limit: &str,
    words: &[&str],
    breaks: impl Fn(&crate::scenario::Delegation) -> bool,
) -> Check {
    let mut any = false;
    for d in &ev.scenario.delegations {
        if !d.expect.nothing_sent || !breaks(d) {
            continue;
        }
        any = true;
        if let Some(r) = requests(ev.journal)
            .into_iter()
            .find(|r| r.is_send() && delegation_of(ev, r).is_some_and(|x| x.id == d.id))
        {
            return fail(
                format!("{} refused before anything is sent", d.id),
                format!("{} sent to {}", r.method, r.agent),
                vec![r.seq],
            );
        }
        let Some(done) = done_of(ev, &d.id) else {
            return fail(
                format!("{} refused with a reason", d.id),
                "no outcome",
                vec![],
            );
        };
        if !matches!(
            done.state,
            Outcome::Refused | Outcome::Rejected | Outcome::Failed
        ) {
            return fail(
                format!("{} refused with a reason", d.id),
                format!("outcome {}", done.state),
                vec![],
            );
        }
        let reason = done.reason.as_deref().unwrap_or_default().to_lowercase();
        if !words.iter().any(|w| reason.contains(w)) {
            return fail(
                format!(
                    "{}: done.reason names the {limit} (one of: {})",
                    d.id,
                    super::words::list(words.iter())
                ),
                format!(
                    "reason {}",
                    super::words::quoted_or(done.reason.as_deref(), "absent")
                ),
                vec![],
            );
        }
    }
    Check::held_if_seen(any)
}

/// DLG-LIMIT-01: work whose deadline already passed.
pub(super) fn past_deadline_refused(ev: &Evidence) -> Check {
    refused_nothing_sent(ev, "deadline", &["deadline", "expired"], |d| {
        d.deadline_in_ms.is_some_and(|ms| ms <= 0)
    })
}

/// DLG-LIMIT-07: work deeper than the limit.
pub(super) fn too_deep_refused(ev: &Evidence) -> Check {
    let limit = ev
        .scenario
        .options
        .get("max_depth")
        .and_then(Value::as_u64)
        .unwrap_or(DEFAULT_MAX_DEPTH);
    refused_nothing_sent(ev, "depth", &["depth", "deep"], |d| {
        u64::from(d.depth) > limit
    })
}

/// `init.options.max_depth` when the case does not set it (the driver contract's default).
const DEFAULT_MAX_DEPTH: u64 = 3;

/// DLG-LIMIT-09: work whose chain holds the delegator's identity.
pub(super) fn loop_refused(ev: &Evidence) -> Check {
    refused_nothing_sent(ev, "loop", &["loop", "chain", "cycle"], |d| {
        incoming_chain(ev, d).iter().any(|u| u == ev.self_url)
    })
}

/// The smallest safety margin DLG-LIMIT-02 accepts between a parent's and a child's deadline.
pub const MIN_DEADLINE_MARGIN_MS: i64 = 100;

/// DLG-LIMIT-02: every new send for a delegation with a deadline, each child of a fan-out
/// included, carries an `x-deleg` deadline at least [`MIN_DEADLINE_MARGIN_MS`] before the
/// parent's. (A send without one is DLG-SEND-07's failure.)
pub(super) fn child_deadline_has_margin(ev: &Evidence) -> Check {
    let mut any = false;
    for r in requests(ev.journal) {
        if !r.is_new_send() {
            continue;
        }
        let Some((d, child)) = work_of(ev, &r) else {
            continue;
        };
        let Some(parent_ms) = d.deadline_in_ms else {
            continue;
        };
        let Some(sent) = deadline_of(&r) else {
            continue;
        };
        any = true;
        let parent = ev.start + time::Duration::milliseconds(parent_ms);
        if sent > parent - time::Duration::milliseconds(MIN_DEADLINE_MARGIN_MS) {
            let who = child.map_or(String::new(), |c| format!("{} (child of {}): ", c.id, d.id));
            return fail(
                format!(
                    "{who}child deadline at least {MIN_DEADLINE_MARGIN_MS} ms before the parent's {parent}"
                ),
                format!("{sent}"),
                vec![r.seq],
            );
        }
    }
    Check::held_if_seen(any)
}

pub(super) fn cancel_at_local_deadline(ev: &Evidence) -> Check {
    let mut any = false;
    for d in &ev.scenario.delegations {
        if d.deadline_in_ms.is_none()
            || !d
                .expect
                .state
                .iter()
                .any(|s| matches!(s, Outcome::Canceled | Outcome::Failed))
        {
            continue;
        }
        for (t, _) in tasks_of(ev, &d.id) {
            any = true;
            let canceled = requests(ev.journal).iter().any(|r| {
                r.calls(&[Method::CancelTask])
                    && r.params.get("id").and_then(Value::as_str) == Some(t.as_str())
            });
            if !canceled {
                return fail(
                    format!("CancelTask for {t} at the local deadline"),
                    "no CancelTask",
                    vec![],
                );
            }
        }
    }
    Check::held_if_seen(any)
}

pub(super) fn cancel_not_found_resolved_by_reading(ev: &Evidence) -> Check {
    let reqs = requests(ev.journal);
    let mut any = false;
    for r in &reqs {
        if !r.calls(&[Method::CancelTask]) {
            continue;
        }
        let Some((-32002, seq)) = error_reply(ev.journal, r.req) else {
            continue;
        };
        any = true;
        let t = r
            .params
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let read = reqs.iter().any(|o| {
            o.seq > seq
                && o.calls(&[Method::GetTask, Method::SubscribeToTask])
                && o.params.get("id").and_then(Value::as_str) == Some(t)
        });
        // An open stream or a push that delivered the final state has read it already.
        let final_delivered = terminal_truth(ev.journal, t).is_some_and(|(_, at)| {
            deliveries(ev.journal, t).into_iter().any(|s| {
                s > at
                    && ev.journal.iter().any(|e| {
                        e.seq == s
                            && matches!(
                                e.event,
                                a2a_mock_agents::Event::SseEvent { .. }
                                    | a2a_mock_agents::Event::Push { .. }
                            )
                    })
            })
        });
        let read = read || final_delivered;
        if !read {
            return fail(
                format!("GetTask {t} after -32002"),
                "the final state was not read",
                vec![seq],
            );
        }
    }
    match (any, outcome_expected(ev)) {
        (false, _) => Check::NotApplicable,
        (
            true,
            Check::Fail {
                expected,
                observed,
                witnesses,
            },
        ) => Check::Fail {
            expected,
            observed,
            witnesses,
        },
        _ => Check::Pass,
    }
}

pub(super) fn child_budgets(ev: &Evidence) -> BTreeMap<String, Vec<(f64, u64)>> {
    // One grant per child: a resend of the same child (a retry of an ambiguous send, or the
    // restarted delegator resending what the killed one had sent) hands out no new budget, so
    // each child counts once, with the largest budget any of its sends carried.
    let mut per_child: BTreeMap<(String, String), (f64, u64)> = BTreeMap::new();
    for r in requests(ev.journal) {
        if !r.is_new_send() {
            continue;
        }
        let text = r.text();
        for d in &ev.scenario.delegations {
            let Some(child) = d.children.iter().find(|c| text.contains(&c.text)) else {
                continue;
            };
            let Some(b) = r
                .x_deleg()
                .and_then(|x| x.get("budget_usd"))
                .and_then(Value::as_f64)
            else {
                continue;
            };
            let e = per_child
                .entry((d.id.clone(), child.id.clone()))
                .or_insert((b, r.seq));
            if b > e.0 {
                *e = (b, r.seq);
            }
        }
    }
    let mut m: BTreeMap<String, Vec<(f64, u64)>> = BTreeMap::new();
    for ((parent, _), grant) in per_child {
        m.entry(parent).or_default().push(grant);
    }
    m
}

pub(super) fn child_budgets_within_parent(ev: &Evidence) -> Check {
    let mut any = false;
    for r in requests(ev.journal) {
        let Some(d) = (r.is_new_send()).then(|| delegation_of(ev, &r)).flatten() else {
            continue;
        };
        if let Some(b) = r
            .x_deleg()
            .and_then(|x| x.get("budget_usd"))
            .and_then(Value::as_f64)
        {
            any = true;
            if b > d.budget_usd + 1e-9 {
                return fail(
                    format!("a child budget at most {}", d.budget_usd),
                    format!("{b}"),
                    vec![r.seq],
                );
            }
        }
    }
    for (id, kids) in child_budgets(ev) {
        let Some(d) = ev.scenario.delegations.iter().find(|d| d.id == id) else {
            continue;
        };
        any = true;
        let sum: f64 = kids.iter().map(|(b, _)| b).sum();
        if sum > d.budget_usd + 1e-9 {
            return fail(
                format!("children's budgets sum to at most {}", d.budget_usd),
                format!("they sum to {sum}"),
                kids.iter().map(|(_, s)| *s).collect(),
            );
        }
    }
    Check::held_if_seen(any)
}

pub(super) fn budget_reserve_kept(ev: &Evidence) -> Check {
    let mut any = false;
    for (id, kids) in child_budgets(ev) {
        let Some(d) = ev.scenario.delegations.iter().find(|d| d.id == id) else {
            continue;
        };
        any = true;
        let sum: f64 = kids.iter().map(|(b, _)| b).sum();
        if sum >= d.budget_usd - 1e-9 {
            return fail(
                format!("a reserve kept from {}", d.budget_usd),
                format!("children got {sum}"),
                kids.iter().map(|(_, s)| *s).collect(),
            );
        }
    }
    Check::held_if_seen(any)
}

/// DLG-LIMIT-08: every new send for a delegation (each child of a fan-out included) carries
/// `x-deleg` with `depth` one more than the incoming depth and a `chain` that is the incoming
/// chain, kept whole as its prefix, followed by the delegator's own URL. URLs compare after
/// [`a2a_protocol::xdeleg::normalize_url`] (scheme and host case, default port, trailing
/// slash), so a delegator may forward them in any equivalent spelling.
pub(super) fn chain_and_depth_extended(ev: &Evidence) -> Check {
    let norm = a2a_protocol::xdeleg::normalize_url;
    let mut any = false;
    for r in requests(ev.journal) {
        if !r.is_new_send() {
            continue;
        }
        let Some((d, child)) = work_of(ev, &r) else {
            continue;
        };
        let Some(x) = r.x_deleg() else { continue };
        any = true;
        let depth = x
            .get("depth")
            .and_then(a2a_protocol::xdeleg::depth_of)
            .map(u64::from);
        let chain: Vec<&str> = x
            .get("chain")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut want = incoming_chain(ev, d);
        want.push(ev.self_url.to_string());
        let extended =
            chain.len() == want.len() && chain.iter().zip(&want).all(|(c, w)| norm(c) == norm(w));
        if depth != Some(u64::from(d.depth) + 1) || !extended {
            let who = child.map_or(d.id.clone(), |c| format!("{} (child of {})", c.id, d.id));
            return fail(
                format!(
                    "{who}: depth {} and chain {} (the incoming chain kept as its prefix, then the delegator's own URL)",
                    d.depth + 1,
                    super::words::list(&want)
                ),
                format!(
                    "depth {}, chain {}",
                    super::words::or_none(depth, "absent"),
                    super::words::list(&chain)
                ),
                vec![r.seq],
            );
        }
    }
    Check::held_if_seen(any)
}

#[cfg(test)]
mod tests {
    use super::super::registry::Check;
    use crate::rules::test_support::*;
    use serde_json::json;

    /// The situation of each refusal rule, as a delegation's fields.
    const REFUSALS: [(&str, &str, &str); 3] = [
        (
            "DLG-LIMIT-01",
            "deadline_in_ms = -5000",
            "deadline 2026-01-01T00:00:00Z has already passed",
        ),
        (
            "DLG-LIMIT-07",
            "depth = 4",
            "depth 4 exceeds the limit of 3",
        ),
        (
            "DLG-LIMIT-09",
            "depth = 1\nchain = [\"$self\"]",
            "delegation loop: own URL already in the chain",
        ),
    ];

    #[test]
    fn refusals_send_nothing() {
        for (rule, situation, reason) in REFUSALS {
            let mut c = Case::new(&delegation(&format!(
                "{situation}\nexpect = {{ state = [\"REFUSED\"], nothing_sent = true }}"
            )));
            c.done("d1", "REFUSED", json!([]));
            assert!(
                fails(c.check(checker(rule))),
                "{rule}: a refusal that does not name the limit (a delegator refusing everything)"
            );
            if let Some(a2a_driver_contract::FromDelegator::Done(d)) = c.outcomes.get_mut("d1") {
                d.reason = Some(reason.into());
            }
            assert_eq!(c.check(checker(rule)), Check::Pass);
            c.j.send("a", "m1", "do the thing", json!({}));
            assert!(fails(c.check(checker(rule))), "{rule}");
        }
    }

    /// In a case with one refusal per limit, each rule judges its own delegation only: the
    /// depth refusal's reason need not name the deadline. A refusal naming the wrong limit
    /// still fails the rule of its situation.
    #[test]
    fn each_refusal_rule_judges_its_own_situation() {
        let mut toml = String::new();
        for (i, (_, situation, _)) in REFUSALS.iter().enumerate() {
            toml.push_str(&format!(
                "[[delegate]]\nid = \"r{i}\"\ncapability = \"s\"\ntext = \"refuse {i}\"\n{situation}\nexpect = {{ state = [\"REFUSED\"], nothing_sent = true }}\n"
            ));
        }
        let mut c = Case::new(&toml);
        for (i, (_, _, reason)) in REFUSALS.iter().enumerate() {
            let id = format!("r{i}");
            c.done(&id, "REFUSED", json!([]));
            if let Some(a2a_driver_contract::FromDelegator::Done(d)) = c.outcomes.get_mut(&id) {
                d.reason = Some((*reason).into());
            }
        }
        for (rule, _, _) in REFUSALS {
            assert_eq!(c.check(checker(rule)), Check::Pass, "{rule}");
        }
        // The loop refused as "too deep": DLG-LIMIT-09 fails, the others still pass.
        if let Some(a2a_driver_contract::FromDelegator::Done(d)) = c.outcomes.get_mut("r2") {
            d.reason = Some("depth 2 exceeds the limit".into());
        }
        assert!(fails(c.check(checker("DLG-LIMIT-09"))));
        assert_eq!(c.check(checker("DLG-LIMIT-07")), Check::Pass);
    }

    #[test]
    fn limit_02_deadline_not_shrunk() {
        let mut c = Case::new(&delegation("deadline_in_ms = 1000"));
        c.j.send("a", "m1", "do the thing", json!({}));
        assert!(
            fails(c.check(checker("DLG-LIMIT-02"))),
            "2099 is after the parent's deadline"
        );
    }

    #[test]
    fn limit_03_no_cancel_at_the_deadline() {
        let mut c = Case::new(&delegation(
            "deadline_in_ms = 1000\nexpect = { state = [\"CANCELED\"] }",
        ));
        c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t1", "c1", "m1", false);
        assert!(fails(c.check(checker("DLG-LIMIT-03"))));
        c.j.rpc("a", "CancelTask", json!({"id": "t1"}), &[]);
        assert_eq!(c.check(checker("DLG-LIMIT-03")), Check::Pass);
    }

    #[test]
    fn limit_04_minus_32002_not_resolved() {
        let mut c = Case::new(&delegation("expect = { state = [\"COMPLETED\"] }"));
        c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t1", "c1", "m1", false);
        let (_, r) = c.j.rpc("a", "CancelTask", json!({"id": "t1"}), &[]);
        c.j.resp("a", r, 200, Some(-32002), json!({}));
        c.j.state("a", "t1", "TASK_STATE_COMPLETED");
        c.done("d1", "COMPLETED", json!([]));
        assert!(
            fails(c.check(checker("DLG-LIMIT-04"))),
            "no GetTask after -32002"
        );
        c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
        assert_eq!(c.check(checker("DLG-LIMIT-04")), Check::Pass);
    }

    #[test]
    fn limit_04_the_final_state_on_an_open_stream_is_read() {
        let mut c = Case::new(&delegation("expect = { state = [\"COMPLETED\"] }"));
        let (_, s) = c.j.rpc(
            "a",
            "SendStreamingMessage",
            json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "do the thing"}]}}),
            &[],
        );
        c.j.created("a", "t1", "c1", "m1", false);
        let (_, r) = c.j.rpc("a", "CancelTask", json!({"id": "t1"}), &[]);
        c.j.state("a", "t1", "TASK_STATE_COMPLETED");
        c.j.resp("a", r, 200, Some(-32002), json!({}));
        c.done("d1", "COMPLETED", json!([]));
        assert!(fails(c.check(checker("DLG-LIMIT-04"))), "never delivered");
        c.j.sse("a", s);
        assert_eq!(c.check(checker("DLG-LIMIT-04")), Check::Pass);
    }

    fn fan_out(budgets: [f64; 3]) -> Case {
        let mut c = Case::new(&delegation(
            "budget_usd = 2.0\nchildren = [{ id = \"a\", capability = \"s\", text = \"child A\" }, { id = \"b\", capability = \"s\", text = \"child B\" }, { id = \"c\", capability = \"s\", text = \"child C\" }]",
        ));
        for (i, b) in budgets.iter().enumerate() {
            let t = ["child A", "child B", "child C"][i];
            c.j.send(
                "a",
                &format!("m{i}"),
                t,
                json!({"metadata": {"x-deleg": {"budget_usd": b}}}),
            );
        }
        c
    }

    #[test]
    fn limit_05_and_06_budget_split() {
        let c = fan_out([0.6, 0.6, 0.6]);
        assert_eq!(c.check(checker("DLG-LIMIT-05")), Check::Pass);
        assert_eq!(c.check(checker("DLG-LIMIT-06")), Check::Pass);
        let c = fan_out([2.0, 2.0, 2.0]);
        assert!(fails(c.check(checker("DLG-LIMIT-05"))));
        let c = fan_out([0.7, 0.7, 0.6]);
        assert_eq!(c.check(checker("DLG-LIMIT-05")), Check::Pass);
        assert!(fails(c.check(checker("DLG-LIMIT-06"))), "no reserve");
    }

    #[test]
    fn limit_05_and_06_count_a_resent_child_once() {
        // The first child sent, the delegator killed and restarted, the first child resent
        // (same budget), then the other two: three grants of 0.6, not four.
        let mut c = fan_out([0.6, 0.6, 0.6]);
        c.j.send(
            "a",
            "m0",
            "child A",
            json!({"metadata": {"x-deleg": {"budget_usd": 0.6}}}),
        );
        assert_eq!(c.check(checker("DLG-LIMIT-05")), Check::Pass);
        assert_eq!(c.check(checker("DLG-LIMIT-06")), Check::Pass);
        // A resend that raises the child's budget past the split still fails.
        c.j.send(
            "a",
            "m0",
            "child A",
            json!({"metadata": {"x-deleg": {"budget_usd": 1.2}}}),
        );
        assert!(fails(c.check(checker("DLG-LIMIT-05"))));
        assert!(fails(c.check(checker("DLG-LIMIT-06"))));
    }

    /// d1 arriving at depth 1 with chain `incoming`, sent once with depth `depth` and `chain`.
    fn chained(incoming: &[&str], depth: u64, chain: &[&str]) -> Case {
        let quoted: Vec<String> = incoming.iter().map(|c| format!("\"{c}\"")).collect();
        let mut c = Case::new(&delegation(&format!(
            "depth = 1\nchain = [{}]",
            quoted.join(", ")
        )));
        c.j.send(
            "a",
            "m1",
            "do the thing",
            json!({"metadata": {"x-deleg": {"depth": depth, "chain": chain}}}),
        );
        c
    }

    const UP: &str = "http://127.0.0.1:9/upstream";
    const UP2: &str = "http://127.0.0.1:9/orchestrator";

    #[test]
    fn limit_08_chain_and_depth_not_extended() {
        assert_eq!(
            chained(&[UP], 2, &[UP, SELF]).check(checker("DLG-LIMIT-08")),
            Check::Pass
        );
        assert!(
            fails(chained(&[UP], 1, &[UP, SELF]).check(checker("DLG-LIMIT-08"))),
            "depth not incremented"
        );
        assert!(
            fails(chained(&[UP], 2, &[UP]).check(checker("DLG-LIMIT-08"))),
            "own URL not added"
        );
        assert!(fails(chained(&[], 1, &[]).check(checker("DLG-LIMIT-08"))));
    }

    #[test]
    fn limit_08_the_incoming_chain_stays_the_prefix() {
        // The defect: the chain replaced by the delegator alone (depth still right).
        assert!(fails(
            chained(&[UP], 2, &[SELF]).check(checker("DLG-LIMIT-08"))
        ));
        // Part of the incoming chain dropped, or its order changed.
        assert!(fails(
            chained(&[UP2, UP], 2, &[UP, SELF]).check(checker("DLG-LIMIT-08"))
        ));
        assert!(fails(
            chained(&[UP2, UP], 2, &[UP, UP2, SELF]).check(checker("DLG-LIMIT-08"))
        ));
        // The delegator's URL put first, or anything after it.
        assert!(fails(
            chained(&[UP], 2, &[SELF, UP]).check(checker("DLG-LIMIT-08"))
        ));
        assert!(fails(
            chained(&[UP], 2, &[UP, SELF, UP2]).check(checker("DLG-LIMIT-08"))
        ));
        // Correct, with two incoming hops.
        assert_eq!(
            chained(&[UP2, UP], 2, &[UP2, UP, SELF]).check(checker("DLG-LIMIT-08")),
            Check::Pass
        );
        // Correct in another spelling that normalize_url equates: scheme and host case, the
        // default port, a trailing slash.
        assert_eq!(
            chained(
                &[UP],
                2,
                &[
                    "HTTP://127.0.0.1:9/upstream/",
                    "HTTP://127.0.0.1:9/delegator-under-test/",
                ]
            )
            .check(checker("DLG-LIMIT-08")),
            Check::Pass
        );
        let mut c = Case::new(&delegation(
            "depth = 1\nchain = [\"http://Example.test:80/hop/\"]",
        ));
        c.j.send(
            "a",
            "m1",
            "do the thing",
            json!({"metadata": {"x-deleg": {"depth": 2, "chain": ["http://example.test/hop", SELF]}}}),
        );
        assert_eq!(c.check(checker("DLG-LIMIT-08")), Check::Pass);
    }

    /// A fan-out d1 (depth 1, chain [UP], deadline in 10 minutes) whose children a, b, c were
    /// sent with `x` merged into their `x-deleg` each (child b with `b` instead).
    fn fan_out_sent(x: serde_json::Value, b: serde_json::Value) -> Case {
        let mut c = Case::new(&delegation(&format!(
            "depth = 1\nchain = [\"{UP}\"]\ndeadline_in_ms = 600000\nchildren = [{{ id = \"a\", capability = \"s\", text = \"child A\" }}, {{ id = \"b\", capability = \"s\", text = \"child B\" }}, {{ id = \"c\", capability = \"s\", text = \"child C\" }}]"
        )));
        for (i, t) in ["child A", "child B", "child C"].iter().enumerate() {
            let x = if i == 1 { b.clone() } else { x.clone() };
            c.j.send(
                "a",
                &format!("m{i}"),
                t,
                json!({"metadata": {"x-deleg": x}}),
            );
        }
        c
    }

    fn at(ms: i64) -> String {
        a2a_protocol::Timestamp::from_datetime(
            time::OffsetDateTime::now_utc() + time::Duration::milliseconds(ms),
        )
        .to_rfc3339()
    }

    #[test]
    fn limit_02_and_08_judge_every_child_of_a_fan_out() {
        let good = json!({"deadline": at(300_000), "depth": 2, "chain": [UP, SELF]});
        let c = fan_out_sent(good.clone(), good.clone());
        assert_eq!(c.check(checker("DLG-LIMIT-02")), Check::Pass);
        assert_eq!(c.check(checker("DLG-LIMIT-08")), Check::Pass);
        // One child's deadline later than the parent's.
        let late = json!({"deadline": at(3_600_000), "depth": 2, "chain": [UP, SELF]});
        let c = fan_out_sent(good.clone(), late);
        assert!(fails(c.check(checker("DLG-LIMIT-02"))), "child b too late");
        assert_eq!(c.check(checker("DLG-LIMIT-08")), Check::Pass);
        // Another child deadline, still with a margin: a different correct split.
        let earlier = json!({"deadline": at(120_000), "depth": 2, "chain": [UP, SELF]});
        let c = fan_out_sent(good.clone(), earlier);
        assert_eq!(c.check(checker("DLG-LIMIT-02")), Check::Pass);
        // One child's chain replaced by the delegator alone.
        let replaced = json!({"deadline": at(300_000), "depth": 2, "chain": [SELF]});
        let c = fan_out_sent(good, replaced);
        assert!(fails(c.check(checker("DLG-LIMIT-08"))), "child b's chain");
        assert_eq!(c.check(checker("DLG-LIMIT-02")), Check::Pass);
    }

    #[test]
    fn limit_02_needs_a_margin() {
        let mut c = Case::new(&delegation("deadline_in_ms = 600000"));
        let start = time::OffsetDateTime::now_utc();
        let almost = a2a_protocol::Timestamp::from_datetime(
            start + time::Duration::milliseconds(600_000 - 10),
        )
        .to_rfc3339();
        c.j.send(
            "a",
            "m1",
            "do the thing",
            json!({"metadata": {"x-deleg": {"deadline": almost}}}),
        );
        assert!(
            fails(c.check(checker("DLG-LIMIT-02"))),
            "10 ms is no margin"
        );
    }
}
