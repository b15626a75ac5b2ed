//! Agent cards (DLG-CARD-*): a patch version on the card, caching and revalidation (RFC 9111,
//! spec §8.6.2), the authenticated extended card and its use (spec §3.1.11, §13.3).

use super::evidence::*;
use super::front::*;
use super::registry::{Check, fail};
use super::words::list;
use a2a_driver_contract::FromDelegator;
use a2a_mock_agents::{AgentSpec, Event};

/// Whether a card's `protocolVersion` names 1.0 with a patch number (`1.0.3`).
fn patch_version_of_1_0(v: &str) -> bool {
    let parts: Vec<&str> = v.trim().split('.').collect();
    parts.len() >= 3 && parts[0] == "1" && parts[1] == "0"
}

/// The agents of the case that offer `capability` on their public or extended card.
fn offering<'a>(ev: &'a Evidence, capability: &str) -> Vec<&'a AgentSpec> {
    ev.scenario
        .network
        .agents
        .iter()
        .filter(|a| {
            a.skills
                .iter()
                .chain(&a.extended_skills)
                .any(|s| s.id == capability)
        })
        .collect()
}

/// The `done` state of delegation `id` in words, `declined` for an `error` that declined it.
fn ended(ev: &Evidence, id: &str) -> Option<String> {
    match ev.outcomes.get(id)? {
        FromDelegator::Done(d) => Some(d.state.as_str().to_string()),
        _ => Some("declined".to_string()),
    }
}

/// DLG-CARD-01 (spec §3.6: patch numbers are ignored in negotiation): an agent whose card's
/// interfaces say `1.0.3` is a 1.0 agent. Every request to it uses a 1.0 method name and asks
/// for version 1.0 (any 1.0.x is 1.0 here; DLG-SEND-10 judges the patch number), and work only
/// such agents offer reaches one of them: a delegator that ends it without a request (it took
/// the card for an unknown version) fails.
pub(super) fn patch_version_card_is_v1(ev: &Evidence) -> Check {
    let patched: Vec<&AgentSpec> = ev
        .scenario
        .network
        .agents
        .iter()
        .filter(|a| {
            a.card_protocol_version
                .as_deref()
                .is_some_and(patch_version_of_1_0)
        })
        .collect();
    if patched.is_empty() {
        return Check::NotApplicable;
    }
    let is_patched = |name: &str| patched.iter().any(|a| a.name == name);
    let card_says = |name: &str| {
        patched
            .iter()
            .find(|a| a.name == name)
            .and_then(|a| a.card_protocol_version.clone())
            .unwrap_or_default()
    };
    let http = delegator_http(ev.journal);
    let mut any = false;
    for h in http.iter().filter(|h| h.is_a2a() && is_patched(h.agent)) {
        let Some(method) = h.method else { continue };
        any = true;
        if a2a_protocol::Method::parse(method).is_none() {
            return fail(
                format!(
                    "1.0 method names to {} (its card's {} is version 1.0)",
                    h.agent,
                    card_says(h.agent)
                ),
                format!("{method:?}"),
                vec![h.seq],
            );
        }
        let version = h.version();
        if !version.as_deref().is_some_and(a2a_protocol::version::is_v1) {
            return fail(
                format!(
                    "version 1.0 asked of {} (its card's {} is version 1.0)",
                    h.agent,
                    card_says(h.agent)
                ),
                format!(
                    "{} with {}",
                    method,
                    super::words::quoted_or(version.as_deref(), "no A2A-Version")
                ),
                vec![h.seq],
            );
        }
    }
    for d in &ev.scenario.delegations {
        let capable = offering(ev, &d.capability);
        if capable.is_empty() || !capable.iter().all(|a| is_patched(&a.name)) {
            continue;
        }
        let reached = http.iter().any(|h| {
            h.is_new_send()
                && is_patched(h.agent)
                && delegation_of_http(ev, h).is_some_and(|x| x.id == d.id)
        });
        if reached {
            any = true;
            continue;
        }
        if let Some(state) = ended(ev, &d.id) {
            let names: Vec<&str> = capable.iter().map(|a| a.name.as_str()).collect();
            return fail(
                format!(
                    "delegation {} sent to {}, the only agent(s) with skill {} (card version {}, which is 1.0)",
                    d.id,
                    list(&names),
                    d.capability,
                    card_says(names[0])
                ),
                format!("it ended {state} without a request to them"),
                vec![],
            );
        }
    }
    Check::held_if_seen(any)
}

/// True when `agent` failed a request of the delegator between journal entries `from` and
/// `to`: an error answer (HTTP 4xx/5xx or an A2A error) or a dropped connection. A client may
/// read the card again then, whatever its freshness.
fn agent_failed_between(ev: &Evidence, agent: &str, from: u64, to: u64) -> bool {
    let ours: Vec<u64> = delegator_http(ev.journal)
        .iter()
        .filter(|h| h.agent == agent)
        .map(|h| h.req)
        .collect();
    ev.journal
        .iter()
        .filter(|e| e.seq > from && e.seq < to && e.agent == agent)
        .any(|e| match &e.event {
            Event::Response {
                req,
                status,
                rpc_error,
                ..
            } => ours.contains(req) && (*status >= 400 || rpc_error.is_some()),
            Event::ConnectionDropped { req, .. } => ours.contains(req),
            _ => false,
        })
}

/// DLG-CARD-02 (spec §8.6, §8.6.2; RFC 9111): a card served with `Cache-Control: max-age` is
/// not fetched again unconditionally while it is fresh, within one process life (a restarted
/// delegator may have lost its cache). Freshness counts from the journal time of the answer, so
/// it ends no later than the delegator's own count. Allowed: a conditional request at any time
/// (a client may revalidate early), a fetch after the agent failed a request (it may suspect a
/// changed card), and for a card without caching headers any default duration (MAY: refetch or
/// keep it). The situation: the delegator gave one agent new work twice in one process life
/// while a card it fetched in that life was fresh (or, without caching headers, at all).
pub(super) fn fresh_card_not_refetched(ev: &Evidence) -> Check {
    let http = delegator_http(ev.journal);
    let mut seen = false;
    for a in &ev.scenario.network.agents {
        let fetches = card_fetches(ev, &a.name);
        if fetches.is_empty() {
            continue;
        }
        let sends: Vec<&Http> = http
            .iter()
            .filter(|h| h.agent == a.name && h.is_new_send())
            .collect();
        let max_age = a.card_max_age_s;
        for (i, s) in sends.iter().enumerate() {
            let life_s = life(ev, s.seq);
            let again = sends[..i].iter().any(|p| life(ev, p.seq) == life_s);
            let fresh = !a.card_cache_headers
                || fetches
                    .iter()
                    .filter(|f| f.seq < s.seq && f.life == life_s)
                    .filter_map(|f| f.fresh_until(max_age))
                    .any(|until| s.at_us < until);
            seen |= again && fresh;
        }
        if !a.card_cache_headers {
            continue;
        }
        for (i, g) in fetches.iter().enumerate() {
            if g.conditional {
                continue;
            }
            let earlier: Vec<&CardFetch> =
                fetches[..i].iter().filter(|f| f.life == g.life).collect();
            let Some(until) = earlier.iter().filter_map(|f| f.fresh_until(max_age)).max() else {
                continue;
            };
            let last = earlier.last().map_or(0, |f| f.seq);
            if g.at_us < until && !agent_failed_between(ev, &a.name, last, g.seq) {
                return fail(
                    format!(
                        "{}'s card (max-age {max_age} s) fetched again only once stale, or revalidated",
                        a.name
                    ),
                    format!(
                        "fetched again unconditionally while fresh, {} ms before it went stale",
                        (until - g.at_us) / 1000
                    ),
                    vec![last, g.seq],
                );
            }
        }
    }
    Check::held_if_seen(seen)
}

/// How far past a card's freshness a new send must come before DLG-CARD-03 counts the card as
/// stale at the delegator: freshness counts from the journal time of the answer, which is
/// earlier than the delegator's receipt, so a send just past it may still be fresh there.
const STALE_MARGIN_US: u64 = 500_000;

/// DLG-CARD-03 (spec §8.6.2): once a cached card is stale, it is revalidated with
/// `If-None-Match` or `If-Modified-Since` (a fetch without them after it went stale fails, unless
/// it is the first of a new process life) before new work goes to the agent (a new send more
/// than [`STALE_MARGIN_US`] past the freshness of the last card read fails), and when the
/// revalidation brought a changed card, new work goes to the changed card's interfaces (its
/// tenant; the extended card's tenant, once obtained, still counts). Continuing a task already
/// created (polls, answers, cancels) is not new use. The situation: new work after a
/// revalidation (at expiry, early, or when the work came: each keeps the card from being used
/// stale).
pub(super) fn stale_card_revalidated(ev: &Evidence) -> Check {
    let http = delegator_http(ev.journal);
    let mut seen = false;
    for a in ev
        .scenario
        .network
        .agents
        .iter()
        .filter(|a| a.card_cache_headers)
    {
        let max_age = a.card_max_age_s;
        let fetches = card_fetches(ev, &a.name);
        if fetches.is_empty() {
            continue;
        }
        for (i, g) in fetches.iter().enumerate() {
            let prev = fetches[..i]
                .iter()
                .rev()
                .find(|f| f.life == g.life && f.fresh_until(max_age).is_some());
            if let Some(until) = prev.and_then(|p| p.fresh_until(max_age))
                && g.at_us >= until
                && !g.conditional
            {
                return fail(
                    format!(
                        "{}'s stale card revalidated with If-None-Match or If-Modified-Since",
                        a.name
                    ),
                    format!(
                        "fetched again without either, {} ms after it went stale",
                        (g.at_us - until) / 1000
                    ),
                    vec![g.seq],
                );
            }
        }
        for s in http.iter().filter(|h| h.agent == a.name && h.is_new_send()) {
            let read: Vec<&CardFetch> = fetches
                .iter()
                .filter(|f| f.seq < s.seq && f.fresh_until(max_age).is_some())
                .collect();
            let Some(last) = read.last() else { continue };
            let until = last.fresh_until(max_age).unwrap_or(u64::MAX);
            if s.at_us > until.saturating_add(STALE_MARGIN_US) {
                return fail(
                    format!(
                        "new work to {} only after revalidating its card (max-age {max_age} s)",
                        a.name
                    ),
                    format!(
                        "a new send {} ms after the card went stale, with no card request since",
                        (s.at_us - until) / 1000
                    ),
                    vec![last.seq, s.seq],
                );
            }
            // New work after a revalidation of a card read earlier in that life (whether the
            // delegator revalidated at expiry, early, or when the work came).
            if last.conditional && read.iter().rev().skip(1).any(|f| f.life == last.life) {
                seen = true;
            }
            // A changed card seen: new work goes to its interfaces.
            let versions: Vec<u64> = read.iter().filter_map(|f| f.version()).collect();
            let (Some(first), Some(&now)) = (versions.first(), versions.last()) else {
                continue;
            };
            if *first == now {
                continue;
            }
            let want = tenant_at(a, usize::try_from(now).unwrap_or(usize::MAX));
            let extended = a.extended_tenant.as_deref().filter(|_| {
                extended_card_obtained(ev, &a.name)
                    .iter()
                    .any(|x| *x < s.seq)
            });
            let sent = s.tenant();
            if sent.as_deref() != want && (extended.is_none() || sent.as_deref() != extended) {
                let changed_at = read
                    .iter()
                    .rev()
                    .find(|f| f.version() == Some(now))
                    .map_or(s.seq, |f| f.seq);
                return fail(
                    format!(
                        "new work to {} over its changed card's interfaces (version {now}: {})",
                        a.name,
                        shown_tenant(want)
                    ),
                    format!(
                        "a new send with {} after the change was read",
                        shown_tenant(sent.as_deref())
                    ),
                    vec![changed_at, s.seq],
                );
            }
        }
    }
    Check::held_if_seen(seen)
}

/// The same `Authorization` value, the scheme compared without case (RFC 9110 §11.1).
fn same_credential(sent: &str, credential: &str) -> bool {
    match (sent.trim().split_once(' '), credential.split_once(' ')) {
        (Some((s1, c1)), Some((s2, c2))) => s1.eq_ignore_ascii_case(s2) && c1.trim() == c2,
        _ => sent.trim() == credential,
    }
}

/// DLG-CARD-04 (spec §3.1.11, MUST): every GetExtendedAgentCard to an agent whose card declares a
/// security scheme carries exactly one `Authorization` line with the credential the harness gave
/// for that agent (`init.agent_credentials`). Agents whose card declares no scheme have nothing
/// to authenticate with: not judged.
pub(super) fn extended_card_authenticated(ev: &Evidence) -> Check {
    let mut any = false;
    for h in delegator_http(ev.journal)
        .into_iter()
        .filter(|h| h.method_v1() == Some(a2a_protocol::Method::GetExtendedAgentCard))
    {
        let Some((_, credential)) = ev
            .scenario
            .agent_credentials()
            .find(|(name, _)| *name == h.agent)
        else {
            continue;
        };
        any = true;
        let lines = h.header_lines("authorization");
        if lines.len() == 1 && same_credential(lines[0], credential) {
            continue;
        }
        let scheme = credential.split_whitespace().next().unwrap_or_default();
        let observed = match lines.as_slice() {
            [] => "no Authorization header".to_string(),
            [one] if same_credential(one, ev.credential) => {
                "the delegator's own credential".to_string()
            }
            [_] => "another credential".to_string(),
            many => format!("{} Authorization lines", many.len()),
        };
        return fail(
            format!(
                "GetExtendedAgentCard to {} authenticated with the credential given for its card's {scheme} scheme",
                h.agent
            ),
            observed,
            vec![h.seq],
        );
    }
    Check::held_if_seen(any)
}

/// DLG-CARD-05 (spec §3.1.11, §13.3): once the delegator obtained an agent's extended card
/// (GetExtendedAgentCard answered), it works from it in that process life: new work goes over
/// its interfaces (listed first: the extended tenant's, where the agent has one) and a skill
/// only it lists is used (a delegation only that card's skill serves, ended without reaching an
/// agent with the skill after the card was obtained, fails). A delegator that never obtained an
/// extended card it could read took the other allowed path (the extended card is optional):
/// NOT EXERCISED.
pub(super) fn extended_card_replaces_public(ev: &Evidence) -> Check {
    let http = delegator_http(ev.journal);
    let mut seen = false;
    let mut never = None;
    for a in ev
        .scenario
        .network
        .agents
        .iter()
        .filter(|a| has_extended_card(a))
    {
        let got = extended_card_obtained(ev, &a.name);
        if got.is_empty() {
            if http.iter().any(|h| h.agent == a.name) {
                never = Some(a.name.clone());
            }
            continue;
        }
        for s in http.iter().filter(|h| h.agent == a.name && h.is_new_send()) {
            let Some(g) = got
                .iter()
                .rev()
                .find(|g| **g < s.seq && life(ev, **g) == life(ev, s.seq))
            else {
                continue;
            };
            seen = true;
            if let Some(t) = &a.extended_tenant
                && s.tenant().as_deref() != Some(t.as_str())
            {
                return fail(
                    format!(
                        "new work to {} over its extended card's first interfaces (tenant \"{t}\") once that card was obtained",
                        a.name
                    ),
                    format!(
                        "a new send with {} (the public card's)",
                        shown_tenant(s.tenant().as_deref())
                    ),
                    vec![*g, s.seq],
                );
            }
        }
        for d in &ev.scenario.delegations {
            let only_extended = a.extended_skills.iter().any(|s| s.id == d.capability)
                && !a.skills.iter().any(|s| s.id == d.capability);
            let Some(first) = got.first() else { continue };
            if !only_extended || *first > seen_until(ev, &d.id) {
                continue;
            }
            let capable: Vec<&str> = offering(ev, &d.capability)
                .iter()
                .map(|x| x.name.as_str())
                .collect();
            let reached = http.iter().any(|h| {
                h.is_new_send()
                    && capable.contains(&h.agent)
                    && delegation_of_http(ev, h).is_some_and(|x| x.id == d.id)
            });
            if reached {
                continue;
            }
            if let Some(state) = ended(ev, &d.id) {
                return fail(
                    format!(
                        "delegation {} sent to {}, whose extended card (obtained) lists skill {}",
                        d.id, a.name, d.capability
                    ),
                    format!("it ended {state} without a request to an agent with that skill"),
                    vec![*first],
                );
            }
        }
    }
    match never {
        Some(agent) if !seen => Check::NotExercised {
            why: format!("the delegator never obtained {agent}'s extended card (it is optional)"),
        },
        _ => Check::held_if_seen(seen),
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::registry::Check;
    use crate::rules::test_support::*;
    use a2a_protocol::Binding::{JsonRpc, Rest};
    use serde_json::{Value, json};

    fn send(c: &mut Case, text: &str, tenant: Option<&str>, at_us: u64) -> u64 {
        let mut p = json!({"message": {"messageId": format!("m-{at_us}"), "role": "ROLE_USER", "parts": [{"text": text}]}});
        if let Some(t) = tenant {
            p["tenant"] = json!(t);
        }
        let (s, _) = c.j.http(
            "a",
            JsonRpc,
            "POST",
            "/a2a",
            Some("SendMessage"),
            p,
            &[("a2a-version", "1.0")],
            None,
        );
        c.j.at(s, at_us);
        s
    }

    fn card_at(
        c: &mut Case,
        headers: &[(&str, &str)],
        status: u16,
        version: u64,
        at_us: u64,
    ) -> u64 {
        let (s, r) = c.j.card("a", headers, status, version);
        c.j.at(s, at_us);
        c.j.at(r, at_us + 1000);
        s
    }

    /// Agent `a` with a patch version on its card; two delegations.
    fn patched() -> Case {
        let mut c = Case::new(&format!(
            "{}[[delegate]]\nid = \"d2\"\ncapability = \"s\"\ntext = \"do another thing\"\n",
            delegation("")
        ));
        c.s.network.agents[0].card_protocol_version = Some("1.0.3".into());
        // Only `a` offers the skill.
        c.s.network.agents[1].skills[0].id = "other".into();
        c
    }

    #[test]
    fn card_01_a_patch_version_card_is_1_0() {
        let r = checker("DLG-CARD-01");
        let mut c = patched();
        c.j.send("a", "m1", "do the thing", json!({}));
        // 1.0.3 in the header is still 1.0 (DLG-SEND-10 judges the patch number).
        c.j.rpc("a", "SendMessage", json!({"message": {"messageId": "m2", "role": "ROLE_USER", "parts": [{"text": "do another thing"}]}}), &[("a2a-version", "1.0.3")]);
        assert_eq!(c.check(r), Check::Pass);
        // Spoken to in 0.3.
        let mut c = patched();
        c.j.rpc("a", "message/send", json!({}), &[]);
        assert!(fails(c.check(r)));
        // No version asked: a server takes that for 0.3.
        let mut c = patched();
        c.j.http(
            "a",
            JsonRpc,
            "POST",
            "/a2a",
            Some("SendMessage"),
            json!({}),
            &[],
            None,
        );
        assert!(fails(c.check(r)));
        // The agent left unused: the work ended without it.
        let mut c = patched();
        c.done("d1", "REFUSED", json!([]));
        assert!(fails(c.check(r)));
        // No patch version anywhere: nothing to judge.
        let c = Case::new(&delegation(""));
        assert_eq!(c.check(r), Check::NotApplicable);
    }

    #[test]
    fn card_02_a_fresh_card_is_not_fetched_again() {
        let r = checker("DLG-CARD-02");
        // max-age 60 s: one fetch, two delegations.
        let mut c = Case::new(&delegation(""));
        card_at(&mut c, &[], 200, 0, 10_000);
        send(&mut c, "do the thing", None, 50_000);
        send(&mut c, "do the thing again", None, 2_000_000);
        assert_eq!(c.check(r), Check::Pass);
        // Fetched again, unconditionally, while fresh.
        let mut c = Case::new(&delegation(""));
        card_at(&mut c, &[], 200, 0, 10_000);
        send(&mut c, "do the thing", None, 50_000);
        card_at(&mut c, &[], 200, 0, 1_900_000);
        send(&mut c, "do the thing again", None, 2_000_000);
        assert!(fails(c.check(r)));
        // Revalidated early instead (allowed), with either validator.
        for v in [
            ("if-none-match", "\"v0\""),
            ("if-modified-since", "Thu, 01 Jan 2026 00:00:00 GMT"),
        ] {
            let mut c = Case::new(&delegation(""));
            card_at(&mut c, &[], 200, 0, 10_000);
            send(&mut c, "do the thing", None, 50_000);
            card_at(&mut c, &[v], 304, 0, 1_900_000);
            send(&mut c, "do the thing again", None, 2_000_000);
            assert_eq!(c.check(r), Check::Pass, "{v:?}");
        }
        // A restarted delegator lost its cache: a new process life may fetch again.
        let mut c = Case::new(&delegation(""));
        card_at(&mut c, &[], 200, 0, 10_000);
        let s = send(&mut c, "do the thing", None, 50_000);
        c.crash = Some(s);
        card_at(&mut c, &[], 200, 0, 1_900_000);
        send(&mut c, "do the thing again", None, 2_000_000);
        send(&mut c, "do a third thing", None, 2_100_000);
        assert_eq!(c.check(r), Check::Pass);
        // After the agent failed a request, reading the card again is allowed.
        let mut c = Case::new(&delegation(""));
        card_at(&mut c, &[], 200, 0, 10_000);
        let (_, q) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
        c.j.resp("a", q, 200, Some(-32602), Value::Null);
        card_at(&mut c, &[], 200, 0, 1_900_000);
        send(&mut c, "do the thing", None, 1_950_000);
        send(&mut c, "do the thing again", None, 2_000_000);
        assert_eq!(c.check(r), Check::Pass);
        // Without caching headers any default duration is allowed (MAY): refetching passes.
        let mut c = Case::new(&delegation(""));
        c.s.network.agents[0].card_cache_headers = false;
        card_at(&mut c, &[], 200, 0, 10_000);
        send(&mut c, "do the thing", None, 50_000);
        card_at(&mut c, &[], 200, 0, 1_900_000);
        send(&mut c, "do the thing again", None, 2_000_000);
        assert_eq!(c.check(r), Check::Pass);
        // One delegation only: the card was never needed again.
        let mut c = Case::new(&delegation(""));
        card_at(&mut c, &[], 200, 0, 10_000);
        send(&mut c, "do the thing", None, 50_000);
        assert_eq!(c.check(r), Check::NotApplicable);
    }

    /// Agent `a`: card max-age 1 s, tenant `acme`, from 1.2 s on `acme-v2`.
    fn changing() -> Case {
        let mut c = Case::new(&delegation(""));
        let a = &mut c.s.network.agents[0];
        a.card_max_age_s = 1;
        a.tenant = Some("acme".into());
        a.card_changes = vec![a2a_mock_agents::CardChange {
            after_ms: 1200,
            tenant: "acme-v2".into(),
        }];
        card_at(&mut c, &[], 200, 0, 10_000);
        send(&mut c, "do the thing", Some("acme"), 50_000);
        c
    }

    #[test]
    fn card_03_a_stale_card_is_revalidated_and_its_change_used() {
        let r = checker("DLG-CARD-03");
        // Revalidated with If-Modified-Since (a correct alternative to If-None-Match), the
        // changed card read, its tenant used.
        let mut c = changing();
        card_at(
            &mut c,
            &[("if-modified-since", "Thu, 01 Jan 2026 00:00:00 GMT")],
            200,
            1,
            3_000_000,
        );
        send(&mut c, "do the thing again", Some("acme-v2"), 3_100_000);
        assert_eq!(c.check(r), Check::Pass);
        // With If-None-Match, unchanged (304).
        let mut c = Case::new(&delegation(""));
        c.s.network.agents[0].card_max_age_s = 1;
        card_at(&mut c, &[], 200, 0, 10_000);
        send(&mut c, "do the thing", None, 50_000);
        card_at(&mut c, &[("if-none-match", "\"v0\"")], 304, 0, 3_000_000);
        send(&mut c, "do the thing again", None, 3_100_000);
        assert_eq!(c.check(r), Check::Pass);
        // A background refresher revalidating at expiry, before the work comes.
        let mut c = changing();
        card_at(&mut c, &[("if-none-match", "\"v0\"")], 304, 0, 1_020_000);
        card_at(&mut c, &[("if-none-match", "\"v0\"")], 200, 1, 2_030_000);
        send(&mut c, "do the thing again", Some("acme-v2"), 2_200_000);
        assert_eq!(c.check(r), Check::Pass);
        // The stale card used as it was.
        let mut c = changing();
        send(&mut c, "do the thing again", Some("acme"), 3_100_000);
        assert!(fails(c.check(r)));
        // Fetched again without validators.
        let mut c = changing();
        card_at(&mut c, &[], 200, 1, 3_000_000);
        send(&mut c, "do the thing again", Some("acme-v2"), 3_100_000);
        assert!(fails(c.check(r)));
        // The change read but the old interface kept.
        let mut c = changing();
        card_at(&mut c, &[("if-none-match", "\"v0\"")], 200, 1, 3_000_000);
        send(&mut c, "do the thing again", Some("acme"), 3_100_000);
        assert!(fails(c.check(r)));
        // Polling the first task past the staleness is no new use.
        let mut c = changing();
        let (s, _) = c.j.http(
            "a",
            JsonRpc,
            "POST",
            "/a2a",
            Some("GetTask"),
            json!({"id": "t1", "tenant": "acme"}),
            &[],
            None,
        );
        c.j.at(s, 2_900_000);
        assert_eq!(c.check(r), Check::NotApplicable);
    }

    /// Agent `a` behind a Bearer scheme with an extended card (tenant `premium` first).
    fn secured() -> Case {
        let mut c = Case::new(&delegation(""));
        let a = &mut c.s.network.agents[0];
        a.security = Some(a2a_mock_agents::SecuritySpec {
            credential: "Bearer agent-cred-7".into(),
            scope: a2a_mock_agents::SecurityScope::ExtendedCard,
        });
        a.extended_tenant = Some("premium".into());
        c
    }

    fn get_extended(c: &mut Case, auth: &[(&str, &str)]) -> u64 {
        let (_, q) = c.j.http(
            "a",
            Rest,
            "GET",
            "/rest/extendedAgentCard",
            Some("GetExtendedAgentCard"),
            json!({}),
            auth,
            None,
        );
        c.j.resp("a", q, 200, None, json!({"result": {}}))
    }

    #[test]
    fn card_04_the_extended_card_is_fetched_with_the_agent_credential() {
        let r = checker("DLG-CARD-04");
        let mut c = secured();
        get_extended(&mut c, &[("authorization", "Bearer agent-cred-7")]);
        assert_eq!(c.check(r), Check::Pass);
        // The scheme name is case-insensitive (RFC 9110).
        let mut c = secured();
        get_extended(&mut c, &[("authorization", "bearer agent-cred-7")]);
        assert_eq!(c.check(r), Check::Pass);
        for auth in [
            vec![],
            vec![("authorization", CRED)],
            vec![("authorization", "Bearer agent-cred-8")],
            vec![
                ("authorization", "Bearer agent-cred-7"),
                ("authorization", "Bearer agent-cred-7"),
            ],
        ] {
            let mut c = secured();
            get_extended(&mut c, &auth);
            assert!(fails(c.check(r)), "{auth:?}");
        }
        // An agent whose card declares no scheme: nothing to authenticate with.
        let mut c = Case::new(&delegation(""));
        c.s.network.agents[0].extended_tenant = Some("premium".into());
        get_extended(&mut c, &[]);
        assert_eq!(c.check(r), Check::NotApplicable);
    }

    #[test]
    fn card_05_the_extended_card_replaces_the_public_one() {
        let r = checker("DLG-CARD-05");
        let mut c = secured();
        get_extended(&mut c, &[("authorization", "Bearer agent-cred-7")]);
        send(&mut c, "do the thing", Some("premium"), 900_000);
        assert_eq!(c.check(r), Check::Pass);
        // The public interface kept once the extended card was obtained.
        let mut c = secured();
        get_extended(&mut c, &[("authorization", "Bearer agent-cred-7")]);
        send(&mut c, "do the thing", None, 900_000);
        assert!(fails(c.check(r)));
        // Work sent before it was obtained is not judged here.
        let mut c = secured();
        send(&mut c, "do the thing", None, 5_000);
        get_extended(&mut c, &[("authorization", "Bearer agent-cred-7")]);
        assert_eq!(c.check(r), Check::NotApplicable);
        // Never obtained: the extended card is optional.
        let mut c = secured();
        send(&mut c, "do the thing", None, 5_000);
        assert!(matches!(c.check(r), Check::NotExercised { .. }));
        // A skill only the extended card lists, obtained, yet the work refused.
        let mut c = secured();
        let a = &mut c.s.network.agents[0];
        a.extended_tenant = None;
        a.extended_skills = std::mem::take(&mut a.skills);
        c.s.network.agents[1].skills[0].id = "other".into();
        get_extended(&mut c, &[("authorization", "Bearer agent-cred-7")]);
        c.done("d1", "REFUSED", json!([]));
        assert!(fails(c.check(r)));
    }
}
