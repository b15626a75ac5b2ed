//! Agents over TLS: HTTPS URLs, cards and calls over TLS for a client that trusts the network's
//! authority, and every refused or plain connection journaled by the TLS layer.

use a2a_mock_agents::tls::{AgentTls, CertKind, InterfaceScheme, client_config};
use a2a_mock_agents::{Event, MockAgent, Network};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use serde_json::json;
use std::time::Duration;

fn trusting(net: &Network) -> reqwest::Client {
    let pem = net.ca_pem().expect("a TLS network has an authority");
    let ca = CertificateDer::from_pem_slice(pem.as_bytes()).unwrap();
    let cfg = client_config(&[ca], &[b"http/1.1"]).unwrap();
    reqwest::Client::builder()
        .no_proxy()
        .tls_backend_preconfigured(cfg)
        .build()
        .unwrap()
}

fn tls_events(net: &Network) -> Vec<(String, String)> {
    net.journal()
        .entries()
        .iter()
        .filter_map(|e| match &e.event {
            Event::Tls { outcome, error, .. } => Some((
                outcome.clone(),
                error.as_deref().unwrap_or_default().to_string(),
            )),
            _ => None,
        })
        .collect()
}

fn http_requests(net: &Network) -> usize {
    net.journal()
        .entries()
        .iter()
        .filter(|e| matches!(e.event, Event::Request { .. }))
        .count()
}

async fn wait_tls(net: &Network, n: usize) {
    net.journal()
        .wait_for(Duration::from_secs(5), |es| {
            es.iter()
                .filter(|e| matches!(e.event, Event::Tls { .. }))
                .count()
                >= n
        })
        .await
        .unwrap();
}

#[tokio::test]
async fn a_tls_agent_serves_its_card_and_calls_over_https_to_a_trusting_client() {
    let mut spec = MockAgent::network(1, vec![MockAgent::builder("a").build()]);
    spec.tls = true;
    let net = Network::start(spec).await.unwrap();
    let card_url = net.card_url("a").unwrap();
    assert!(card_url.starts_with("https://127.0.0.1:"), "{card_url}");
    let http = trusting(&net);
    let card: serde_json::Value = http
        .get(&card_url)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let url = card["supportedInterfaces"][0]["url"].as_str().unwrap();
    assert!(url.starts_with("https://127.0.0.1:"), "{card}");
    let resp: serde_json::Value = http
        .post(url)
        .header("A2A-Version", "1.0")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
            "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "x"}]}}}),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(resp.get("result").is_some(), "{resp}");
    let ev = tls_events(&net);
    assert!(
        !ev.is_empty() && ev.iter().all(|(o, _)| o == "handshake"),
        "{ev:?}"
    );
    net.shutdown().await;
}

#[tokio::test]
async fn a_client_refusing_the_certificate_is_journaled_with_its_alert_and_sends_nothing() {
    for kind in [
        CertKind::UnknownAuthority,
        CertKind::Expired,
        CertKind::WrongHost,
    ] {
        let agent = MockAgent::builder("bad")
            .tls(AgentTls {
                certificate: kind,
                interfaces: InterfaceScheme::Https,
            })
            .build();
        let net = Network::start(MockAgent::network(1, vec![agent]))
            .await
            .unwrap();
        let err = trusting(&net)
            .get(net.card_url("bad").unwrap())
            .send()
            .await
            .unwrap_err();
        assert!(err.is_connect(), "{kind:?}: {err:?}");
        wait_tls(&net, 1).await;
        let ev = tls_events(&net);
        assert_eq!(ev[0].0, "handshake_failed", "{kind:?}: {ev:?}");
        assert!(ev[0].1.contains("alert"), "{kind:?}: {ev:?}");
        assert_eq!(http_requests(&net), 0);
        net.shutdown().await;
    }
}

#[tokio::test]
async fn https_card_with_http_interfaces_serves_both_and_journals_the_plain_connection() {
    let agent = MockAgent::builder("down")
        .tls(AgentTls {
            certificate: CertKind::Valid,
            interfaces: InterfaceScheme::Http,
        })
        .build();
    let net = Network::start(MockAgent::network(1, vec![agent]))
        .await
        .unwrap();
    assert!(net.card_url("down").unwrap().starts_with("https://"));
    let rpc = net.rpc_url("down").unwrap();
    assert!(rpc.starts_with("http://127.0.0.1:"), "{rpc}");
    let plain = reqwest::Client::builder().no_proxy().build().unwrap();
    let resp = plain
        .post(&rpc)
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let ev = tls_events(&net);
    assert_eq!(ev, vec![("plaintext".to_string(), String::new())]);
    assert_eq!(net.journal().requests().len(), 1);
    net.shutdown().await;
}

#[tokio::test]
async fn a_plain_client_on_an_https_agent_is_journaled_and_closed() {
    let mut spec = MockAgent::network(1, vec![MockAgent::builder("a").build()]);
    spec.tls = true;
    let net = Network::start(spec).await.unwrap();
    let url = net
        .card_url("a")
        .unwrap()
        .replacen("https://", "http://", 1);
    let plain = reqwest::Client::builder().no_proxy().build().unwrap();
    assert!(plain.get(&url).send().await.is_err());
    assert_eq!(tls_events(&net)[0].0, "plaintext");
    assert_eq!(http_requests(&net), 0);
    net.shutdown().await;
}
