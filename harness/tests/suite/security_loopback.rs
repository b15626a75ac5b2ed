//! The transport-security cases (`security.url-*`, `security.tls-*`, `security.sign-*`) never
//! make anything leave loopback.
//!
//! For each case: its network listens only on loopback (the agents on 127.0.0.1, the trap on
//! 127.0.0.9), and every address the network hands the delegator (card and interface urls, url
//! parts, redirect `Location`s: every `scheme://host` string the journal recorded in a response,
//! stream event or forbidden url) names a loopback host or none (`file:`, `data:`). The cases run
//! against the reference delegator and against the planted bug `fetch-any-url`, which follows
//! every url it is given: the trap sees that bug (so the check is not vacuous), and every
//! connection the trap accepted came from and went to 127.0.0.0/8.

use crate::common;

use a2a_harness_core::catalog::load_catalog;
use a2a_harness_core::run::{Job, run_jobs};
use a2a_harness_core::runner::RunSettings;
use a2a_mock_agents::{Event, Network};
use reqwest::Url;
use serde_json::Value;
use std::net::{IpAddr, SocketAddr};

fn loopback_ip(ip: IpAddr) -> bool {
    ip.is_loopback()
}

fn loopback_addr(a: &str) -> bool {
    a.parse::<SocketAddr>().is_ok_and(|s| loopback_ip(s.ip()))
}

/// The url's host is loopback (127.0.0.0/8, ::1, `localhost`), or it has none.
fn loopback_url(u: &str) -> bool {
    let Ok(url) = Url::parse(u) else {
        return true;
    };
    match url.host_str() {
        None => true,
        Some(h) => {
            h == "localhost"
                || h.trim_start_matches('[')
                    .trim_end_matches(']')
                    .parse::<IpAddr>()
                    .is_ok_and(loopback_ip)
        }
    }
}

/// Every string in `v` that holds a `scheme://` url, cut at whitespace and quotes.
fn urls_in(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => {
            for word in s.split(|c: char| c.is_whitespace() || c == '"' || c == '\'') {
                if let Some(i) = word.find("://") {
                    let start = word[..i]
                        .rfind(|c: char| !(c.is_ascii_alphanumeric() || "+-.".contains(c)))
                        .map_or(0, |j| j + 1);
                    if start < i {
                        out.push(word[start..].to_string());
                    }
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| urls_in(x, out)),
        Value::Object(m) => m.values().for_each(|x| urls_in(x, out)),
        _ => {}
    }
}

/// Run every catalog case whose id starts with one of `prefixes` against the reference
/// delegator with each of `commands` (`drive`, `drive --bug …`), after checking that each case's
/// network listens on loopback only; assert that every url the network handed out is loopback
/// and every trap connection came from and went to 127.0.0.0/8. Returns (results, trap
/// connections).
fn run_on_loopback(
    prefixes: &[&str],
    commands: &[&str],
) -> (Vec<a2a_harness_core::runner::CaseResult>, usize) {
    let delegator = common::delegator();
    let cases: Vec<_> = load_catalog(&common::root().join("scenarios"))
        .expect("catalog loads")
        .into_iter()
        .filter(|s| prefixes.iter().any(|p| s.id.starts_with(p)))
        .collect();
    assert!(cases.len() >= 5, "{} cases for {prefixes:?}", cases.len());
    let rt = tokio::runtime::Runtime::new().unwrap();
    // The listeners: only loopback.
    for s in &cases {
        let net = rt
            .block_on(Network::start(s.network.clone()))
            .expect("network");
        let addrs = net.listen_addrs();
        assert!(
            addrs.iter().all(|a| loopback_addr(a)),
            "{}: {addrs:?}",
            s.id
        );
        if let Some(t) = net.trap_addr() {
            assert_eq!(t.ip().to_string(), "127.0.0.9", "{}", s.id);
        }
        rt.block_on(net.shutdown());
    }
    let work = tempfile::tempdir().unwrap();
    let mut jobs = Vec::new();
    for (i, s) in cases.iter().enumerate() {
        for (k, cmd) in commands.iter().enumerate() {
            jobs.push(Job {
                scenario: s.clone(),
                settings: RunSettings {
                    delegator: format!("{} {cmd}", delegator.display()),
                    seed: 1,
                    work_dir: work.path().join(format!("{i}-{k}")),
                    binding: None,
                    tls: false,
                },
                label: None,
            });
        }
    }
    let results = rt.block_on(run_jobs(jobs, 4, |_| {}));
    let mut trapped = 0;
    for r in &results {
        assert!(!r.journal.is_empty(), "{}: empty journal", r.id);
        for e in &r.journal {
            let mut urls = Vec::new();
            match &e.event {
                Event::Response { body, .. } => urls_in(body, &mut urls),
                Event::SseEvent { data, .. } => urls_in(data, &mut urls),
                Event::ForbiddenUrl { url, .. } => urls.push(url.clone()),
                Event::TrapConnection { peer, local, .. } => {
                    trapped += 1;
                    assert!(loopback_addr(peer), "{}: trap peer {peer}", r.id);
                    assert!(local.starts_with("127.0.0.9:"), "{}: trap {local}", r.id);
                }
                _ => {}
            }
            for u in urls {
                assert!(
                    loopback_url(&u),
                    "{}: the network handed out {u} (seq {})",
                    r.id,
                    e.seq
                );
            }
        }
    }
    (results, trapped)
}

#[test]
fn the_url_cases_never_leave_loopback() {
    let (_, trapped) = run_on_loopback(&["security.url-"], &["drive", "drive --bug fetch-any-url"]);
    assert!(
        trapped > 0,
        "the planted bug fetch-any-url never reached the trap: the check would be vacuous (build the delegator with --features planted-bugs)"
    );
}

/// The TLS and signed-card cases too: their networks listen on loopback only and hand out
/// loopback urls only (cards, interfaces, `jku`), so a delegator, however broken, has no other
/// address to reach; run against the reference delegator and the bugs that accept every
/// certificate, downgrade to plain HTTP and use every card. The TLS handshakes they journal
/// show the cases ran over TLS (not vacuous).
#[test]
fn the_tls_and_signed_card_cases_never_leave_loopback() {
    let (results, _) = run_on_loopback(
        &["security.tls-", "security.sign-"],
        &[
            "drive",
            "drive --bug accept-any-certificate",
            "drive --bug https-downgrade",
            "drive --bug skip-card-signature",
        ],
    );
    let handshakes = results
        .iter()
        .flat_map(|r| &r.journal)
        .filter(|e| matches!(e.event, Event::Tls { .. }))
        .count();
    assert!(handshakes > 0, "no TLS connection was journaled");
}

#[test]
fn the_address_checks_tell_loopback_from_anything_else() {
    assert!(loopback_url("http://127.0.0.9:1/x"));
    assert!(loopback_url("http://a:b@127.0.0.1:1/x"));
    assert!(loopback_url("http://[::1]:1/x"));
    assert!(loopback_url("file:///etc/passwd"));
    assert!(loopback_url("data:application/octet-stream;base64,eA=="));
    // Names only, never reached: a reserved `.invalid` host and an IPv6 address outside ::1.
    assert!(!loopback_url("http://agent.invalid/x"));
    assert!(!loopback_url("http://[::2]:1/x"));
    assert!(!loopback_url("ftp://example.com/x"));
    assert!(loopback_addr("127.0.0.9:80"));
    assert!(!loopback_addr("[::2]:80"));
    let mut found = Vec::new();
    urls_in(
        &serde_json::json!({"a": ["see http://agent.invalid:4/x now", {"url": "https://127.0.0.1:5/"}]}),
        &mut found,
    );
    assert_eq!(found, ["http://agent.invalid:4/x", "https://127.0.0.1:5/"]);
}
