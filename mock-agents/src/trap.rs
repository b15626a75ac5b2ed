//! The trap server: a listener on `127.0.0.9` (an address no agent uses, outside every allowed
//! fetch origin) that journals every connection it accepts as `trap_connection`, under the agent
//! name `trap`. Url parts a delegator must not fetch (A2A §14.1.1) point at it, directly or
//! through a redirect, so a delegator that follows them is seen. It answers any HTTP request
//! with `200` and a few marker bytes, then closes. Loopback only: it never connects anywhere.

use crate::journal::{Event, Journal};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// The trap's address: loopback, but not the agents' `127.0.0.1`.
pub const TRAP_HOST: &str = "127.0.0.9";

/// The path prefix of the trap urls the agents send (`http://127.0.0.9:PORT/trap/KEY`).
pub const TRAP_PATH_PREFIX: &str = "/trap/";

/// The agent name of the trap's journal entries.
pub(crate) const TRAP_AGENT: &str = "trap";

/// What the trap answers: content a delegator must never take in.
const TRAP_BODY: &[u8] = b"a2a-trap: content from a forbidden url\n";

/// How long the trap waits for the first line of a connection before journaling it without one.
const FIRST_LINE_WAIT: Duration = Duration::from_millis(200);

/// The most bytes read for the first line.
const FIRST_LINE_MAX: usize = 2048;

/// Bind the trap on `127.0.0.9:0`.
pub(crate) async fn bind() -> std::io::Result<(TcpListener, SocketAddr)> {
    let l = TcpListener::bind((TRAP_HOST, 0)).await?;
    let addr = l.local_addr()?;
    Ok((l, addr))
}

/// Accept connections until shutdown, journaling each one.
pub(crate) async fn serve(l: TcpListener, journal: Journal, mut shutdown: watch::Receiver<bool>) {
    loop {
        tokio::select! {
            _ = shutdown.changed() => return,
            accepted = l.accept() => {
                let Ok((stream, peer)) = accepted else { continue };
                let journal = journal.clone();
                tokio::spawn(handle(stream, peer, journal));
            }
        }
    }
}

/// Read the first line (bounded in time and size), journal the connection, answer, close.
async fn handle(mut stream: TcpStream, peer: SocketAddr, journal: Journal) {
    let local = stream
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    let mut buf = Vec::new();
    let _ = tokio::time::timeout(FIRST_LINE_WAIT, read_first_line(&mut stream, &mut buf)).await;
    let first_line = first_line_of(&buf);
    journal.record(
        TRAP_AGENT,
        Event::TrapConnection {
            peer: peer.to_string(),
            local,
            first_line,
        },
    );
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        TRAP_BODY.len()
    );
    let _ = tokio::time::timeout(FIRST_LINE_WAIT, async {
        let _ = stream.write_all(head.as_bytes()).await;
        let _ = stream.write_all(TRAP_BODY).await;
        let _ = stream.shutdown().await;
    })
    .await;
}

/// Read until a line end, the size bound, or the end of the stream.
async fn read_first_line(stream: &mut TcpStream, buf: &mut Vec<u8>) {
    let mut chunk = [0u8; 512];
    while buf.len() < FIRST_LINE_MAX && !buf.contains(&b'\n') {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// The first line of what arrived, if any (lossy UTF-8, without the line end).
fn first_line_of(buf: &[u8]) -> Option<String> {
    if buf.is_empty() {
        return None;
    }
    let end = buf.iter().position(|b| *b == b'\n').unwrap_or(buf.len());
    let line = String::from_utf8_lossy(&buf[..end]);
    Some(line.trim_end_matches('\r').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_line_is_cut_at_the_line_end() {
        assert_eq!(
            first_line_of(b"GET /trap/k HTTP/1.1\r\nHost: x\r\n").as_deref(),
            Some("GET /trap/k HTTP/1.1")
        );
        assert_eq!(first_line_of(b""), None);
        assert_eq!(first_line_of(b"partial").as_deref(), Some("partial"));
    }
}
