//! [`ConnectionCap`]: at most so many HTTP requests in flight to one agent at once.
//!
//! Over HTTP/1.1 every request in flight holds a connection of its own (a stream holds it until
//! its last event), and the HTTP client opens a new one whenever none of its idle keep-alive
//! connections to that origin is free. Without a bound, a thousand delegations to one agent
//! admitted together open a thousand connections at once: a thousand file descriptors here and
//! there, a thousand TLS handshakes, and each delegation waits on the others' work anyway. With
//! the cap, the first `max` requests go out and the others queue for a permit in the order they
//! asked (tokio's semaphore is fair); a finished request returns its connection to the keep-alive
//! pool and its permit to the next request, which reuses that connection.
//!
//! A permit is held for the whole exchange: a unary call until its body is read, a stream until
//! it is dropped. The wait for a permit counts against the caller's own timeout, so no wait is
//! unbounded. gRPC calls are not capped here: each agent's channel multiplexes them over one
//! HTTP/2 connection.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Requests in flight to one agent (origin) at once, by default.
pub const DEFAULT_MAX_PER_AGENT: usize = 256;

/// Per-origin permits for HTTP requests (see the module documentation).
#[derive(Debug)]
pub struct ConnectionCap {
    max: usize,
    per_origin: Mutex<HashMap<String, Arc<Semaphore>>>,
}

impl ConnectionCap {
    /// At most `max` requests in flight per origin (`0` is taken as 1).
    pub fn new(max: usize) -> Self {
        ConnectionCap {
            max: max.max(1),
            per_origin: Mutex::new(HashMap::new()),
        }
    }

    /// The bound per origin.
    pub fn max(&self) -> usize {
        self.max
    }

    /// A permit for one request to `url`, waiting at most `wait` for one; `None` when none came
    /// free in time.
    pub async fn acquire(&self, url: &str, wait: Duration) -> Option<OwnedSemaphorePermit> {
        let sem = {
            let mut m = self.per_origin.lock().unwrap_or_else(|p| p.into_inner());
            m.entry(origin_of(url).to_string())
                .or_insert_with(|| Arc::new(Semaphore::new(self.max)))
                .clone()
        };
        // The semaphore is never closed, so `acquire_owned` fails only by the timeout.
        tokio::time::timeout(wait, sem.acquire_owned())
            .await
            .ok()
            .and_then(Result::ok)
    }

    /// Requests in flight to `url`'s origin now (for tests and metrics).
    pub fn in_flight(&self, url: &str) -> usize {
        let m = self.per_origin.lock().unwrap_or_else(|p| p.into_inner());
        m.get(origin_of(url))
            .map_or(0, |s| self.max - s.available_permits())
    }
}

/// `scheme://authority` of an absolute URL (the whole string when it has no path).
fn origin_of(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url[after_scheme..].find(['/', '?', '#']) {
        Some(i) => &url[..after_scheme + i],
        None => url,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_ignore_path_query_and_fragment() {
        assert_eq!(origin_of("http://127.0.0.1:80/a2a"), "http://127.0.0.1:80");
        assert_eq!(origin_of("https://h:1?x=1"), "https://h:1");
        assert_eq!(origin_of("http://h:2#f"), "http://h:2");
        assert_eq!(origin_of("http://h:3"), "http://h:3");
        assert_eq!(origin_of("h:4/x"), "h:4");
    }

    #[tokio::test]
    async fn the_request_past_the_bound_waits_for_a_permit_of_its_own_origin() {
        let cap = ConnectionCap::new(2);
        let a = cap
            .acquire("http://127.0.0.1:1/a", Duration::from_secs(1))
            .await;
        let b = cap
            .acquire("http://127.0.0.1:1/b", Duration::from_secs(1))
            .await;
        assert!(a.is_some() && b.is_some());
        assert_eq!(cap.in_flight("http://127.0.0.1:1/"), 2);
        // The third to that origin gets none in time; another origin is not held up.
        assert!(
            cap.acquire("http://127.0.0.1:1/c", Duration::from_millis(20))
                .await
                .is_none()
        );
        assert!(
            cap.acquire("http://127.0.0.1:2/", Duration::from_millis(20))
                .await
                .is_some()
        );
        // A finished request hands its permit on.
        drop(a);
        assert!(
            cap.acquire("http://127.0.0.1:1/c", Duration::from_millis(20))
                .await
                .is_some()
        );
    }
}
