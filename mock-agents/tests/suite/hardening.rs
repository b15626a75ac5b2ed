//! A server hostile clients cannot wear down: slow headers (slowloris) are cut after the header
//! timeout, slow bodies after the body timeout, connections past the cap wait unaccepted, and a
//! normal client is served quickly while hundreds of half-open connections exist.

use crate::common;

use a2a_mock_agents::{Event, MockAgent};
use common::*;
use serde_json::json;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn addr_of(url: &str) -> String {
    url.trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_string()
}

/// Read until the server closes the connection (bounded); what it sent.
async fn read_to_close(s: &mut TcpStream, within: Duration) -> Result<Vec<u8>, &'static str> {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, s.read(&mut buf)).await {
            Err(_) => return Err("still open"),
            Ok(Ok(0)) | Ok(Err(_)) => return Ok(out),
            Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
        }
    }
}

#[tokio::test]
async fn a_slowloris_connection_is_cut_after_the_header_timeout() {
    let f = Fixture::agents(vec![
        MockAgent::builder("a")
            .header_timeout(Duration::from_millis(300))
            .build(),
    ])
    .await;
    let addr = addr_of(&f.url);
    // Headers that never end, and a connection that never sends anything.
    let mut slow = TcpStream::connect(&addr).await.unwrap();
    slow.write_all(b"POST /a2a HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n")
        .await
        .unwrap();
    let mut silent = TcpStream::connect(&addr).await.unwrap();
    // A kept-alive connection that goes quiet after one request.
    let mut idle = TcpStream::connect(&addr).await.unwrap();
    idle.write_all(b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let t0 = Instant::now();
    read_to_close(&mut slow, Duration::from_secs(5))
        .await
        .expect("the slow connection is closed");
    read_to_close(&mut silent, Duration::from_secs(5))
        .await
        .expect("the silent connection is closed");
    let answered = read_to_close(&mut idle, Duration::from_secs(5))
        .await
        .expect("the idle kept-alive connection is closed");
    assert!(String::from_utf8_lossy(&answered).starts_with("HTTP/1.1 200"));
    let took = t0.elapsed();
    assert!(took >= Duration::from_millis(250), "cut after {took:?}");
    // A normal request on a new connection is still answered.
    let v = f.rpc("GetTask", json!({"id": "x"})).await;
    assert_eq!(code(&v), Some(-32001));
    f.shutdown().await;
}

#[tokio::test]
async fn a_slow_body_gets_408_and_the_connection_is_closed() {
    let f = Fixture::agents(vec![
        MockAgent::builder("a")
            .body_timeout(Duration::from_millis(300))
            .build(),
    ])
    .await;
    let mut s = TcpStream::connect(addr_of(&f.url)).await.unwrap();
    s.write_all(
        b"POST /a2a HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\n\
          Content-Length: 100\r\n\r\n{\"jsonrpc\":",
    )
    .await
    .unwrap();
    let got = read_to_close(&mut s, Duration::from_secs(5))
        .await
        .expect("closed after the answer");
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains("-32600"), "{text}");
    assert!(f.j().entries().iter().any(|e| matches!(
        e.event,
        Event::Response {
            status: 408,
            rpc_error: Some(-32600),
            ..
        }
    )));
    f.shutdown().await;
}

/// A client that goes away in the middle of its body (a delegator killed while sending) is no
/// oversized request: the request is journaled as cut off, and nothing of it is judged.
#[tokio::test]
async fn a_body_cut_off_by_the_client_is_journaled_as_cut_not_too_large() {
    let f = Fixture::agents(vec![MockAgent::builder("a").build()]).await;
    let mut s = TcpStream::connect(addr_of(&f.url)).await.unwrap();
    s.write_all(
        b"POST /a2a HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\n\
          Content-Length: 100\r\n\r\n{\"jsonrpc\":",
    )
    .await
    .unwrap();
    drop(s);
    f.j()
        .wait_for(Duration::from_secs(5), |es| {
            es.iter().any(|e| {
                matches!(&e.event, Event::Request { params, .. }
                    if params.as_str() == Some(a2a_mock_agents::CUT_BODY))
            })
        })
        .await
        .expect("the cut request is journaled");
    assert!(!f.j().entries().iter().any(|e| matches!(
        &e.event,
        Event::Request { params, .. } if params.as_str().is_some_and(|p| p.contains("over"))
    )));
    f.shutdown().await;
}

#[tokio::test]
async fn at_the_cap_the_oldest_connection_without_a_request_makes_room() {
    let f = Fixture::agents(vec![
        MockAgent::builder("a")
            .max_connections(2)
            .header_timeout(Duration::from_secs(20))
            .build(),
    ])
    .await;
    let addr = addr_of(&f.url);
    let mut first = TcpStream::connect(&addr).await.unwrap();
    // Make sure the first is accepted before the second.
    first
        .write_all(b"GET /.well-known/agent-card.json HTTP/1.1\r\n")
        .await
        .unwrap();
    wait_for_conn(&f).await;
    let mut second = TcpStream::connect(&addr).await.unwrap();
    let t0 = Instant::now();
    let v = f.rpc("GetTask", json!({"id": "x"})).await;
    assert_eq!(code(&v), Some(-32001));
    assert!(t0.elapsed() < Duration::from_secs(1), "{:?}", t0.elapsed());
    read_to_close(&mut first, Duration::from_secs(5))
        .await
        .expect("the oldest waiting connection was closed");
    assert_eq!(
        read_to_close(&mut second, Duration::from_millis(300)).await,
        Err("still open"),
        "only the oldest is evicted"
    );
    f.shutdown().await;
}

/// A fresh client's request on its own connection succeeds (so earlier connections are accepted).
async fn wait_for_conn(f: &Fixture) {
    // The card on a client without pooling: its connection closes right after.
    let http = reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(0)
        .timeout(WAIT)
        .build()
        .unwrap();
    let r = http.get(f.net.card_url("a").unwrap()).send().await.unwrap();
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn at_the_cap_with_every_connection_busy_new_ones_wait_unaccepted() {
    let f = Fixture::agents(vec![
        MockAgent::builder("a")
            .max_connections(2)
            .mount(
                MockAgent::when()
                    .step(a2a_mock_agents::Step::gate("go"))
                    .state(a2a_protocol::TaskState::Completed),
            )
            .build(),
    ])
    .await;
    let one_shot = || {
        reqwest::Client::builder()
            .no_proxy()
            .pool_max_idle_per_host(0)
            .timeout(WAIT)
            .build()
            .unwrap()
    };
    // Two blocking sends hold both slots.
    let busy: Vec<_> = (0..2)
        .map(|_| {
            let (http, url) = (one_shot(), f.url.clone());
            tokio::spawn(async move { call(&http, &url, "SendMessage", send_params("hold")).await })
        })
        .collect();
    wait_for(f.j(), "two tasks", |es| {
        es.iter()
            .filter(|e| matches!(e.event, Event::TaskCreated { .. }))
            .count()
            == 2
    })
    .await;
    let (http, card) = (one_shot(), f.net.card_url("a").unwrap());
    let mut queued = tokio::spawn(async move { http.get(card).send().await.map(|r| r.status()) });
    assert!(
        tokio::time::timeout(Duration::from_millis(500), &mut queued)
            .await
            .is_err(),
        "served past the cap"
    );
    f.net.open_gate("go");
    for b in busy {
        assert_eq!(
            b.await.unwrap()["task"]["status"]["state"],
            "TASK_STATE_COMPLETED"
        );
    }
    let status = tokio::time::timeout(Duration::from_secs(5), queued)
        .await
        .expect("served once a slot is free")
        .unwrap()
        .unwrap();
    assert_eq!(status, 200);
    f.shutdown().await;
}

#[tokio::test]
async fn a_normal_client_is_served_within_a_second_among_500_half_open_connections() {
    let f = Fixture::agents(vec![
        MockAgent::builder("a")
            .header_timeout(Duration::from_secs(2))
            .build(),
    ])
    .await;
    let addr = addr_of(&f.url);
    let mut half_open = Vec::with_capacity(500);
    for i in 0..500 {
        let mut s = TcpStream::connect(&addr).await.unwrap();
        s.write_all(format!("POST /a2a HTTP/1.1\r\nHost: x\r\nX-N: {i}\r\n").as_bytes())
            .await
            .unwrap();
        half_open.push(s);
    }
    let t0 = Instant::now();
    let t = f.call("SendMessage", send_params("hello")).await;
    let took = t0.elapsed();
    assert_eq!(t["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert!(took < Duration::from_secs(1), "served in {took:?}");
    // And the half-open ones are all cut after the header timeout.
    for s in &mut half_open {
        read_to_close(s, Duration::from_secs(10))
            .await
            .expect("cut after the header timeout");
    }
    f.shutdown().await;
}
