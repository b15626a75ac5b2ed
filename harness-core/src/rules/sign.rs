//! Signed agent cards (DLG-SIGN-*, A2A §8.4): a good signature is accepted (the card is
//! canonicalised as §8.4.1 says, default-valued members dropped), a card whose signatures do not
//! verify (altered after signing, an expired key, a key the delegator does not trust) is never
//! used, and an unsigned card is not used where the policy requires signatures.
//!
//! What the delegator was told is `init.card_signatures` ([`Scenario::card_signature_policy`]:
//! the trusted keys are every signing agent's but the `untrusted` ones; `required` from the
//! case). Each agent's standing follows from its `card_signing`. Using an agent means any A2A
//! request to it (GetExtendedAgentCard included); fetching its card or its JWKS is not using
//! it. A rule is judged only where the delegator fetched the card in question.
//!
//! [`Scenario::card_signature_policy`]: crate::scenario::Scenario::card_signature_policy

use super::evidence::*;
use super::front::*;
use super::registry::{Check, fail};
use a2a_mock_agents::script::{AgentSpec, SigningKeyTrust};

/// How an agent's card stands with the delegator's policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Standing {
    /// Signed by a trusted, unexpired key, unchanged since: it verifies.
    Good,
    /// Signed, but the signature cannot verify under the policy; the reason.
    Bad(&'static str),
    /// No signature.
    Unsigned,
}

fn standing(a: &AgentSpec) -> Standing {
    match &a.card_signing {
        None => Standing::Unsigned,
        Some(s) if s.altered => Standing::Bad("the card was altered after it was signed"),
        Some(s) => match s.key {
            SigningKeyTrust::Trusted => Standing::Good,
            SigningKeyTrust::Expired => Standing::Bad("its signing key has expired"),
            SigningKeyTrust::Untrusted => Standing::Bad("its signing key is not a trusted key"),
        },
    }
}

/// Was a signature policy sent, and does it require signatures?
fn policy(ev: &Evidence) -> Option<bool> {
    let s = ev.scenario;
    let signing = s.network.agents.iter().any(|a| a.card_signing.is_some());
    (signing || s.card_signatures_required.is_some())
        .then(|| s.card_signatures_required.unwrap_or(false))
}

fn offers(a: &AgentSpec, capability: &str) -> bool {
    a.skills
        .iter()
        .chain(&a.extended_skills)
        .any(|s| s.id == capability)
}

/// Agents of `standing`-predicate `which` whose card the delegator fetched and that it must not
/// use: none may get an A2A request, and every delegation such an agent could have served must
/// reach an outcome (the work went to another agent, or ended visibly). `None`: no such card
/// was fetched.
fn never_used(ev: &Evidence, which: impl Fn(Standing) -> Option<String>) -> Check {
    let http = delegator_http(ev.journal);
    let mut seen = false;
    for a in &ev.scenario.network.agents {
        let Some(why) = which(standing(a)) else {
            continue;
        };
        if !http.iter().any(|h| h.agent == a.name && h.is_card_fetch()) {
            continue;
        }
        seen = true;
        if let Some(h) = http.iter().find(|h| h.agent == a.name && h.is_a2a()) {
            return fail(
                format!("{} is not used: {why}", a.name),
                format!("{} sent to it", h.what()),
                vec![h.seq],
            );
        }
        for d in &ev.scenario.delegations {
            if offers(a, &d.capability) && !ev.outcomes.contains_key(&d.id) {
                return fail(
                    format!(
                        "delegation {} reaches a visible outcome without {} ({why})",
                        d.id, a.name
                    ),
                    "no outcome was reported".to_string(),
                    vec![],
                );
            }
        }
    }
    Check::held_if_seen(seen)
}

/// DLG-SIGN-01 (spec §8.4.1, §8.4.3, MUST): a card whose signature verifies with a trusted,
/// unexpired key is accepted, also when it is served with default-valued members that the
/// signature does not cover. The situation: a delegation that such an agent could serve, whose
/// card the delegator fetched. It holds when a good capable agent got the work; it fails when
/// the delegation ended without any capable agent getting it (the good card was refused). Work
/// sent to another capable agent instead is not this rule's business (DLG-SIGN-02 and
/// DLG-SIGN-03 judge a card that should not have been used).
pub(super) fn good_signature_accepted(ev: &Evidence) -> Check {
    if policy(ev).is_none() {
        return Check::NotApplicable;
    }
    let http = delegator_http(ev.journal);
    let agents = &ev.scenario.network.agents;
    let sent_to = |pred: &dyn Fn(&AgentSpec) -> bool| {
        http.iter()
            .any(|h| h.is_new_send() && agents.iter().any(|a| a.name == h.agent && pred(a)))
    };
    let mut seen = false;
    for d in &ev.scenario.delegations {
        let good: Vec<&AgentSpec> = agents
            .iter()
            .filter(|a| offers(a, &d.capability) && standing(a) == Standing::Good)
            .filter(|a| http.iter().any(|h| h.agent == a.name && h.is_card_fetch()))
            .collect();
        if good.is_empty() {
            continue;
        }
        if sent_to(&|a| offers(a, &d.capability) && standing(a) == Standing::Good) {
            seen = true;
            continue;
        }
        if sent_to(&|a| offers(a, &d.capability)) {
            continue;
        }
        if let Some(out) = ev.outcomes.get(&d.id) {
            let names: Vec<&str> = good.iter().map(|a| a.name.as_str()).collect();
            return fail(
                format!(
                    "delegation {} goes to {} (its card's signature verifies; default-valued members are dropped before canonicalisation)",
                    d.id,
                    names.join(" or ")
                ),
                format!(
                    "it ended ({}) without being sent to any agent",
                    outcome_word(out)
                ),
                vec![],
            );
        }
    }
    Check::held_if_seen(seen)
}

fn outcome_word(m: &a2a_driver_contract::FromDelegator) -> String {
    match m {
        a2a_driver_contract::FromDelegator::Done(d) => match &d.reason {
            Some(r) => format!("{:?}: {r}", d.state),
            None => format!("{:?}", d.state),
        },
        other => format!("{other:?}").chars().take(60).collect(),
    }
}

/// DLG-SIGN-02 (spec §8.4.3, MUST): a delegator told to require signatures never uses a card
/// whose signatures do not verify (altered, an expired key, an untrusted key): nothing goes to
/// that agent's interfaces and its work reaches a visible outcome. The situation: such a card
/// fetched while `init.card_signatures.required` is true.
pub(super) fn bad_signature_never_trusted(ev: &Evidence) -> Check {
    if policy(ev) != Some(true) {
        return Check::NotApplicable;
    }
    never_used(ev, |s| match s {
        Standing::Bad(why) => Some(why.to_string()),
        _ => None,
    })
}

/// DLG-SIGN-03 (spec §8.4.3, §14.3, SHOULD verify at least one signature before trusting a
/// card): a signed card whose signatures do not verify is not used even where signatures are
/// not required, and an unsigned card is not used where they are. The situations: such a card
/// fetched under that policy.
pub(super) fn card_trusted_only_once_verified(ev: &Evidence) -> Check {
    let Some(required) = policy(ev) else {
        return Check::NotApplicable;
    };
    never_used(ev, |s| match s {
        Standing::Bad(why) if !required => Some(format!(
            "{why} (signatures are not required, but a card is trusted only once one verifies)"
        )),
        Standing::Unsigned if required => {
            Some("its card carries no signature and signatures are required".into())
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use crate::rules::registry::Check;
    use crate::rules::test_support::*;
    use a2a_mock_agents::script::{CardSigning, SigningKeyTrust};
    use a2a_protocol::Binding::JsonRpc;
    use serde_json::json;

    /// Agent `a` signs as `how`; agent `attacker` offers skill `s` too, signed well (a
    /// fallback); `required` as given.
    fn signed(how: CardSigning, required: Option<bool>) -> Case {
        let mut c = Case::new(&delegation(""));
        c.s.network.agents[0].card_signing = Some(how);
        let skills = c.s.network.agents[0].skills.clone();
        c.s.network.agents[2].skills = skills;
        c.s.network.agents[2].card_signing = Some(CardSigning::default());
        c.s.card_signatures_required = required;
        c
    }

    fn key(k: SigningKeyTrust) -> CardSigning {
        CardSigning {
            key: k,
            ..CardSigning::default()
        }
    }

    fn altered() -> CardSigning {
        CardSigning {
            altered: true,
            ..CardSigning::default()
        }
    }

    fn jwks(c: &mut Case, agent: &str) {
        c.j.http(
            agent,
            JsonRpc,
            "GET",
            a2a_mock_agents::JWKS_PATH,
            None,
            serde_json::Value::Null,
            &[],
            None,
        );
    }

    #[test]
    fn sign_01_a_good_signature_is_accepted() {
        let r = checker("DLG-SIGN-01");
        let good = CardSigning {
            default_fields: true,
            ..CardSigning::default()
        };
        // Accepted: the work went to the good agent.
        let mut c = signed(good.clone(), Some(true));
        c.j.card("a", &[], 200, 0);
        c.j.send("a", "m1", "do the thing", json!({}));
        c.done("d1", "COMPLETED", json!([]));
        assert_eq!(c.check(r), Check::Pass);
        // Refused (a canonicalisation that keeps default-valued members): nothing sent, failed.
        let mut c = signed(good.clone(), Some(true));
        c.s.network.agents[2].card_signing = None;
        c.j.card("a", &[], 200, 0);
        c.done("d1", "FAILED", json!([]));
        assert!(fails(c.check(r)));
        // Correct but different: the other good agent took it.
        let mut c = signed(good.clone(), Some(false));
        c.j.card("a", &[], 200, 0);
        c.j.card("attacker", &[], 200, 0);
        c.j.send("attacker", "m1", "do the thing", json!({}));
        c.done("d1", "COMPLETED", json!([]));
        assert_eq!(c.check(r), Check::Pass);
        // The work went to a card that should not have been used: DLG-SIGN-02's business.
        let mut c = signed(altered(), Some(true));
        c.j.card("a", &[], 200, 0);
        c.j.card("attacker", &[], 200, 0);
        c.j.send("a", "m1", "do the thing", json!({}));
        c.done("d1", "COMPLETED", json!([]));
        assert_eq!(c.check(r), Check::NotApplicable);
        // Nothing done: nothing judged.
        let c = signed(good.clone(), Some(true));
        assert_eq!(c.check(r), Check::NotApplicable);
        // No policy at all: not this rule's case.
        let c = Case::new(&delegation(""));
        assert_eq!(c.check(r), Check::NotApplicable);
    }

    #[test]
    fn sign_02_a_failing_signature_is_never_trusted_when_required() {
        let r = checker("DLG-SIGN-02");
        for how in [
            altered(),
            key(SigningKeyTrust::Expired),
            key(SigningKeyTrust::Untrusted),
        ] {
            // Used anyway.
            let mut c = signed(how.clone(), Some(true));
            c.j.card("a", &[], 200, 0);
            c.j.send("a", "m1", "do the thing", json!({}));
            c.done("d1", "COMPLETED", json!([]));
            assert!(fails(c.check(r)), "{how:?}");
            // Left alone, the work went to the trusted fallback; fetching its keys is fine.
            let mut c = signed(how.clone(), Some(true));
            c.j.card("a", &[], 200, 0);
            jwks(&mut c, "a");
            c.j.card("attacker", &[], 200, 0);
            c.j.send("attacker", "m1", "do the thing", json!({}));
            c.done("d1", "COMPLETED", json!([]));
            assert_eq!(c.check(r), Check::Pass, "{how:?}");
            // Left alone and failed visibly: also correct.
            let mut c = signed(how.clone(), Some(true));
            c.j.card("a", &[], 200, 0);
            c.done("d1", "FAILED", json!([]));
            assert_eq!(c.check(r), Check::Pass, "{how:?}");
            // Left alone but the delegation never ended.
            let mut c = signed(how.clone(), Some(true));
            c.j.card("a", &[], 200, 0);
            assert!(fails(c.check(r)), "{how:?}");
            // Card never fetched: nothing judged; signatures not required: another rule.
            let c = signed(how.clone(), Some(true));
            assert_eq!(c.check(r), Check::NotApplicable);
            let mut c = signed(how, Some(false));
            c.j.card("a", &[], 200, 0);
            c.j.send("a", "m1", "do the thing", json!({}));
            assert_eq!(c.check(r), Check::NotApplicable);
        }
    }

    #[test]
    fn sign_03_a_card_is_trusted_only_once_a_signature_verifies() {
        let r = checker("DLG-SIGN-03");
        // Bad signature, not required: used anyway fails, left alone passes.
        let mut c = signed(altered(), Some(false));
        c.j.card("a", &[], 200, 0);
        c.j.send("a", "m1", "do the thing", json!({}));
        assert!(fails(c.check(r)));
        let mut c = signed(key(SigningKeyTrust::Untrusted), None);
        c.j.card("a", &[], 200, 0);
        c.j.card("attacker", &[], 200, 0);
        c.j.send("attacker", "m1", "do the thing", json!({}));
        c.done("d1", "COMPLETED", json!([]));
        assert_eq!(c.check(r), Check::Pass);
        // Unsigned while required: used fails; left alone (failed visibly) passes.
        let mut c = signed(CardSigning::default(), Some(true));
        c.s.network.agents[0].card_signing = None;
        c.j.card("a", &[], 200, 0);
        c.j.send("a", "m1", "do the thing", json!({}));
        assert!(fails(c.check(r)));
        let mut c = signed(CardSigning::default(), Some(true));
        c.s.network.agents[0].card_signing = None;
        c.j.card("a", &[], 200, 0);
        c.done("d1", "FAILED", json!([]));
        assert_eq!(c.check(r), Check::Pass);
        // Unsigned, not required: using it is fine (nothing to judge).
        let mut c = signed(CardSigning::default(), Some(false));
        c.s.network.agents[0].card_signing = None;
        c.j.card("a", &[], 200, 0);
        c.j.send("a", "m1", "do the thing", json!({}));
        c.done("d1", "COMPLETED", json!([]));
        assert_eq!(c.check(r), Check::NotApplicable);
    }
}
