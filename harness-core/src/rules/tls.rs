//! Transport security (DLG-TLS-*): agents served over TLS with certificates made for each case
//! (A2A §7.1, §7.2, §13.4). What the delegator did is read from the mock's TLS layer (an
//! `Event::Tls` per connection: a completed handshake with its version, a handshake the client
//! aborted with its alert, a plain client on a TLS port) and from the requests that reached each
//! agent; a handshake the client aborted is not a send.

use super::evidence::*;
use super::front::*;
use super::registry::{Check, fail};
use a2a_mock_agents::Event;
use a2a_mock_agents::script::AgentSpec;
use a2a_mock_agents::tls::{CertKind, InterfaceScheme};

/// One connection as the agent's TLS layer saw it.
struct TlsSeen<'a> {
    seq: u64,
    agent: &'a str,
    outcome: &'a str,
    version: Option<&'a str>,
}

fn tls_events<'a>(ev: &Evidence<'a>) -> Vec<TlsSeen<'a>> {
    ev.journal
        .iter()
        .filter_map(|e| match &e.event {
            Event::Tls {
                outcome, version, ..
            } => Some(TlsSeen {
                seq: e.seq,
                agent: &e.agent,
                outcome,
                version: version.as_deref(),
            }),
            _ => None,
        })
        .collect()
}

/// The certificate an agent serves over TLS, when it serves TLS by its own `[agent.tls]`.
fn own_tls(a: &AgentSpec) -> Option<a2a_mock_agents::tls::AgentTls> {
    a.tls
}

fn cert_words(k: CertKind) -> &'static str {
    match k {
        CertKind::Valid => "a valid certificate",
        CertKind::UnknownAuthority => "a certificate from an authority it was not told to trust",
        CertKind::Expired => "an expired certificate",
        CertKind::WrongHost => "a certificate for another host name",
    }
}

/// Every delegation of the case reached an outcome (done or escalated): the refusal is visible
/// (failed, escalated, or completed through a sound agent), never a hang.
fn outcomes_visible(ev: &Evidence<'_>, why: &str, witness: u64) -> Check {
    match ev
        .scenario
        .delegations
        .iter()
        .find(|d| !ev.outcomes.contains_key(&d.id))
    {
        Some(d) => fail(
            format!("delegation {} reaches a visible outcome after {why}", d.id),
            format!("no outcome for {} by the end of the case", d.id),
            vec![witness],
        ),
        None => Check::Pass,
    }
}

/// DLG-TLS-01 (spec §7.2, SHOULD; C-53): an agent whose certificate does not verify against the
/// trusted roots (`init.tls_roots`) — issued by an unknown authority, expired, or for another
/// host name — gets nothing from the delegator: no HTTP request reaches it, not even a card
/// fetch (accepting the certificate is the failure). The situation: the delegator tried to
/// connect to such an agent (its TLS layer saw a handshake). The delegation must then reach a
/// visible outcome (fail, escalate, or complete through a sound agent).
pub(super) fn bad_certificates_refused(ev: &Evidence) -> Check {
    let http = delegator_http(ev.journal);
    let tls = tls_events(ev);
    let mut seen = None;
    for a in &ev.scenario.network.agents {
        let Some(t) = own_tls(a).filter(|t| t.certificate != CertKind::Valid) else {
            continue;
        };
        if let Some(h) = http.iter().find(|h| h.agent == a.name) {
            return fail(
                format!(
                    "nothing sent to {}: it serves {}, which does not verify against init.tls_roots",
                    a.name,
                    cert_words(t.certificate)
                ),
                format!("{} reached it over TLS", h.what()),
                vec![h.seq],
            );
        }
        if let Some(s) = tls.iter().find(|s| s.agent == a.name) {
            seen.get_or_insert(s.seq);
        }
    }
    match seen {
        Some(w) => outcomes_visible(ev, "refusing the certificate", w),
        None => Check::NotApplicable,
    }
}

/// DLG-TLS-02 (spec §7.1, §13.4; judged SHOULD; C-51): an agent whose card the delegator read
/// over HTTPS but whose interfaces are plain `http://` URLs is not called: no A2A request
/// reaches it (over plain HTTP, or at an `https://` URL its card does not list). §7.1 makes
/// encrypted transport a MUST of production deployments; this rule judges the client's share at
/// SHOULD because the plaintext interface is the agent's deployment fault and §7.1 states no
/// client duty to refuse it in so many words, while §7.2 (verify the server: SHOULD) and §13.4
/// (credentials only over encrypted connections: SHOULD) are the client duties it carries. The
/// situation: the delegator fetched that agent's card. The delegation must then reach a visible
/// outcome.
pub(super) fn https_card_not_downgraded(ev: &Evidence) -> Check {
    let http = delegator_http(ev.journal);
    let mut seen = None;
    for a in &ev.scenario.network.agents {
        let Some(_) = own_tls(a).filter(|t| t.interfaces == InterfaceScheme::Http) else {
            continue;
        };
        let to_it: Vec<&Http> = http.iter().filter(|h| h.agent == a.name).collect();
        if let Some(h) = to_it.iter().find(|h| h.is_a2a()) {
            return fail(
                format!(
                    "{} not called: its card came over HTTPS but lists only plain http:// interfaces",
                    a.name
                ),
                format!("{} reached it", h.what()),
                vec![h.seq],
            );
        }
        if let Some(h) = to_it.first() {
            seen.get_or_insert(h.seq);
        }
    }
    match seen {
        Some(w) => outcomes_visible(ev, "leaving the plaintext interfaces alone", w),
        None => Check::NotApplicable,
    }
}

/// DLG-TLS-03 (spec §7.1, §13.4, SHOULD; C-52): every TLS connection the delegator completes
/// negotiates TLS 1.3 (every agent offers TLS 1.3 and 1.2, so 1.2 means the client offered no
/// 1.3). The situation: a completed handshake.
pub(super) fn modern_tls_negotiated(ev: &Evidence) -> Check {
    let mut seen = false;
    for s in tls_events(ev).iter().filter(|s| s.outcome == "handshake") {
        if s.version != Some("TLSv1.3") {
            return fail(
                format!("TLS 1.3 with {} (it offers TLS 1.3 and 1.2)", s.agent),
                format!(
                    "a handshake negotiated {}",
                    s.version.unwrap_or("an unknown version")
                ),
                vec![s.seq],
            );
        }
        seen = true;
    }
    Check::held_if_seen(seen)
}

#[cfg(test)]
mod tests {
    use crate::rules::registry::Check;
    use crate::rules::test_support::*;
    use a2a_mock_agents::Event;
    use a2a_mock_agents::tls::{AgentTls, CertKind, InterfaceScheme};
    use a2a_protocol::Binding::Grpc;
    use serde_json::json;

    fn tls_event(c: &mut Case, agent: &str, outcome: &str, version: Option<&str>) -> u64 {
        c.j.push(
            agent,
            Event::Tls {
                outcome: outcome.into(),
                certificate: CertKind::Valid,
                version: version.map(Into::into),
                alpn: None,
                sni: None,
                error: (outcome == "handshake_failed")
                    .then(|| "received fatal alert: UnknownCA".into()),
            },
        )
    }

    /// Agent `a` serves `cert` with `interfaces`; agent `old` is the sound one (made 1.0).
    fn with_tls(cert: CertKind, interfaces: InterfaceScheme) -> Case {
        let mut c = Case::new(&delegation(""));
        c.s.network.tls = true;
        c.s.network.agents[0].tls = Some(AgentTls {
            certificate: cert,
            interfaces,
        });
        c.s.network.agents[1].protocol = a2a_mock_agents::script::ProtocolVersion::V1_0;
        c
    }

    #[test]
    fn tls_01_a_certificate_that_does_not_verify_gets_nothing() {
        let r = checker("DLG-TLS-01");
        for cert in [
            CertKind::UnknownAuthority,
            CertKind::Expired,
            CertKind::WrongHost,
        ] {
            // Refused at the handshake, then completed through the sound agent.
            let mut c = with_tls(cert, InterfaceScheme::Https);
            tls_event(&mut c, "a", "handshake_failed", None);
            tls_event(&mut c, "old", "handshake", Some("TLSv1.3"));
            c.j.card("old", &[], 200, 0);
            c.j.send("old", "m1", "do the thing", json!({}));
            c.done("d1", "COMPLETED", json!([]));
            assert_eq!(c.check(r), Check::Pass, "{cert:?}");
            // Correct but different: handshake completed, then closed without a request (a
            // client checking the certificate after the handshake); failed visibly.
            let mut c = with_tls(cert, InterfaceScheme::Https);
            tls_event(&mut c, "a", "handshake", Some("TLSv1.3"));
            c.done("d1", "FAILED", json!([]));
            assert_eq!(c.check(r), Check::Pass, "{cert:?}");
            // Accepted: the card fetch reached it.
            let mut c = with_tls(cert, InterfaceScheme::Https);
            tls_event(&mut c, "a", "handshake", Some("TLSv1.3"));
            c.j.card("a", &[], 200, 0);
            c.done("d1", "COMPLETED", json!([]));
            assert!(fails(c.check(r)), "{cert:?}");
            // Accepted over gRPC: a call reached it.
            let mut c = with_tls(cert, InterfaceScheme::Https);
            c.j.http(
                "a",
                Grpc,
                "POST",
                "/lf.a2a.v1.A2AService/SendMessage",
                Some("SendMessage"),
                json!({}),
                &[],
                None,
            );
            assert!(fails(c.check(r)), "{cert:?}");
        }
        // Refused, but the delegation never ends: not visible.
        let mut c = with_tls(CertKind::Expired, InterfaceScheme::Https);
        tls_event(&mut c, "a", "handshake_failed", None);
        assert!(fails(c.check(r)));
        // A delegator that never tried the bad agent: nothing to judge.
        let mut c = with_tls(CertKind::Expired, InterfaceScheme::Https);
        c.done("d1", "COMPLETED", json!([]));
        assert_eq!(c.check(r), Check::NotApplicable);
        // Every agent valid: nothing to judge.
        let mut c = with_tls(CertKind::Valid, InterfaceScheme::Https);
        tls_event(&mut c, "a", "handshake", Some("TLSv1.3"));
        c.j.card("a", &[], 200, 0);
        assert_eq!(c.check(r), Check::NotApplicable);
    }

    #[test]
    fn tls_02_an_https_card_with_http_interfaces_is_not_followed() {
        let r = checker("DLG-TLS-02");
        // Card read over HTTPS, agent left alone, work done elsewhere.
        let mut c = with_tls(CertKind::Valid, InterfaceScheme::Http);
        tls_event(&mut c, "a", "handshake", Some("TLSv1.3"));
        c.j.card("a", &[], 200, 0);
        c.j.card("old", &[], 200, 0);
        c.j.send("old", "m1", "do the thing", json!({}));
        c.done("d1", "COMPLETED", json!([]));
        assert_eq!(c.check(r), Check::Pass);
        // Correct but different: the only agent, so the delegation fails visibly.
        let mut c = with_tls(CertKind::Valid, InterfaceScheme::Http);
        c.j.card("a", &[], 200, 0);
        c.done("d1", "FAILED", json!([]));
        assert_eq!(c.check(r), Check::Pass);
        // Downgraded: the message went to the plain interface.
        let mut c = with_tls(CertKind::Valid, InterfaceScheme::Http);
        c.j.card("a", &[], 200, 0);
        tls_event(&mut c, "a", "plaintext", None);
        c.j.send("a", "m1", "do the thing", json!({}));
        c.done("d1", "COMPLETED", json!([]));
        assert!(fails(c.check(r)));
        // Card read, but no outcome ever.
        let mut c = with_tls(CertKind::Valid, InterfaceScheme::Http);
        c.j.card("a", &[], 200, 0);
        assert!(fails(c.check(r)));
        // Card never read: not the situation.
        let mut c = with_tls(CertKind::Valid, InterfaceScheme::Http);
        c.done("d1", "COMPLETED", json!([]));
        assert_eq!(c.check(r), Check::NotApplicable);
    }

    #[test]
    fn tls_03_handshakes_negotiate_tls_1_3() {
        let r = checker("DLG-TLS-03");
        let mut c = with_tls(CertKind::Valid, InterfaceScheme::Https);
        tls_event(&mut c, "a", "handshake", Some("TLSv1.3"));
        tls_event(&mut c, "a", "handshake_failed", None);
        assert_eq!(c.check(r), Check::Pass);
        let mut c = with_tls(CertKind::Valid, InterfaceScheme::Https);
        tls_event(&mut c, "a", "handshake", Some("TLSv1.3"));
        tls_event(&mut c, "old", "handshake", Some("TLSv1.2"));
        assert!(fails(c.check(r)));
        // Plain HTTP only: nothing to judge.
        let c = Case::new(&delegation(""));
        assert_eq!(c.check(r), Check::NotApplicable);
    }
}
