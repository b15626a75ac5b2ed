//! Transport and card security situations (DLG-TLS-*, DLG-SIGN-*): a TLS agent with a
//! certificate the delegator must refuse or plain-HTTP interfaces behind an HTTPS card, and a
//! signed card that does not verify, each next to a sound agent offering the same skill.

use super::*;
use a2a_mock_agents::script::{CardSigning, SigningKeyTrust};
use a2a_mock_agents::tls::{AgentTls, CertKind, InterfaceScheme};

/// Every agent over TLS (the network's `tls`): an agent whose certificate comes from an
/// authority the delegator does not trust, names another host or has expired, and a sound one.
pub(super) fn tls_bad_certificate(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let certificate = pick(
        rng,
        &[
            CertKind::UnknownAuthority,
            CertKind::WrongHost,
            CertKind::Expired,
        ],
    );
    tls_with_a_sound_agent(
        d,
        rng,
        AgentTls {
            certificate,
            interfaces: InterfaceScheme::Https,
        },
    );
    d.list(&["DLG-TLS-01", "DLG-TLS-03", "DLG-ROUTE-01", "DLG-STATE-02"]);
    d.titles.push(format!(
        "a TLS agent with a bad certificate ({certificate:?})"
    ));
}

/// Every agent over TLS: one serves its card over HTTPS but lists plain `http://` interfaces,
/// next to a sound one.
pub(super) fn tls_plain_interfaces(d: &mut Draft, rng: &mut ChaCha8Rng) {
    tls_with_a_sound_agent(
        d,
        rng,
        AgentTls {
            certificate: CertKind::Valid,
            interfaces: InterfaceScheme::Http,
        },
    );
    d.list(&["DLG-TLS-02", "DLG-TLS-03", "DLG-ROUTE-01", "DLG-STATE-02"]);
    d.titles
        .push("an HTTPS card listing plain http:// interfaces".into());
}

/// The network over TLS, a faulty agent (`tls`) and a sound one for the same skill, in either
/// order, and a delegation that completes at the sound one. The case has TLS to itself: the
/// other situations' agents keep to plain HTTP.
fn tls_with_a_sound_agent(d: &mut Draft, rng: &mut ChaCha8Rng, tls: AgentTls) {
    d.tls = true;
    d.alone = true;
    let skill = d.skill("summarize");
    let faulty = d.agent("faulty", &skill);
    d.agents[faulty].tls = Some(tls);
    d.agents[faulty].rules.push(rule(vec![state("COMPLETED")]));
    let mut sound = d.agent("sound", &skill);
    if rng.random_bool(0.5) {
        d.agents.swap(faulty, sound);
        sound = faulty;
    }
    let mut del = d.delegation(&skill, "Summarize the audit log");
    del.streaming_preferred = rng.random_bool(0.5);
    let w = work(rng, Shapes::Any);
    completing(d, sound, &del, &w);
    expect(&mut del, &[Outcome::Completed]);
    d.delegations.push(del);
}

/// Signatures required (`init.card_signatures.required`): an agent whose card signature is
/// altered, whose key has expired or is not trusted, and one whose signature verifies. Every
/// other agent of the case would be refused unsigned, so the case has it to itself.
pub(super) fn signed_cards_required(d: &mut Draft, rng: &mut ChaCha8Rng) {
    d.alone = true;
    signed_cards(d, rng, true);
    d.list(&["DLG-SIGN-01", "DLG-SIGN-02", "DLG-STATE-02"]);
}

/// Signatures not required: a card whose signature fails is still not trusted (SHOULD), the
/// one that verifies is used.
pub(super) fn signed_cards_optional(d: &mut Draft, rng: &mut ChaCha8Rng) {
    signed_cards(d, rng, false);
    d.list(&["DLG-SIGN-01", "DLG-SIGN-03", "DLG-STATE-02"]);
}

fn signed_cards(d: &mut Draft, rng: &mut ChaCha8Rng, required: bool) {
    d.signatures_required(required);
    let skill = d.skill("translate");
    let (key, altered, what) = pick(
        rng,
        &[
            (SigningKeyTrust::Trusted, true, "altered after signing"),
            (
                SigningKeyTrust::Expired,
                false,
                "signed with an expired key",
            ),
            (
                SigningKeyTrust::Untrusted,
                false,
                "signed with an untrusted key",
            ),
        ],
    );
    let forged = d.agent("forged", &skill);
    d.agents[forged].card_signing = Some(CardSigning {
        key,
        altered,
        default_fields: rng.random_bool(0.5),
        jku: true,
    });
    d.agents[forged].rules.push(rule(vec![state("COMPLETED")]));
    let honest = d.agent("honest", &skill);
    d.agents[honest].card_signing = Some(CardSigning {
        key: SigningKeyTrust::Trusted,
        altered: false,
        // Default-valued members the signature does not cover: a delegator that canonicalises
        // the card as served rejects a good agent.
        default_fields: rng.random_bool(0.7),
        jku: rng.random_bool(0.7),
    });
    let mut del = d.delegation(&skill, "Translate the signed report");
    let w = work(rng, Shapes::Any);
    completing(d, honest, &del, &w);
    expect(&mut del, &[Outcome::Completed]);
    d.delegations.push(del);
    d.titles.push(format!(
        "a card {what} beside a verified one (signatures {})",
        if required { "required" } else { "optional" }
    ));
}
