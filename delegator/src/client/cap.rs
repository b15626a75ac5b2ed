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
//! it ends. No wait is unbounded: a request waits for a permit at most its own timeout, or,
//! inside [`waiting_until`] (every delegation's run is), until that instant when it is later:
//! waiting for a turn on the wire is no failed attempt, so a delegation queued behind thousands
//! of others waits up to its deadline instead of failing its send at the request timeout and
//! spending a retry. gRPC calls are not capped here: each agent's channel multiplexes them
//! over one HTTP/2 connection.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

tokio::task_local! {
    /// Until when the current task's requests may wait for a connection (see [`waiting_until`]).
    static WAIT_UNTIL: Instant;
}

/// Run `f` with its requests allowed to wait for a connection until `until` (when that is later
/// than a request's own timeout).
///
/// `f` is wrapped, not awaited inside another future: the result is only the deadline and a
/// slot larger than `f`.
pub fn waiting_until<F: Future>(until: Instant, f: F) -> impl Future<Output = F::Output> {
    WAIT_UNTIL.scope(until, f)
}

/// How long a request with this `timeout` may wait for a permit here.
fn wait_bound(timeout: Duration) -> Duration {
    WAIT_UNTIL
        .try_with(|until| until.saturating_duration_since(Instant::now()))
        .map_or(timeout, |left| left.max(timeout))
}

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

    /// A permit for one request to `url`, waiting at most `wait` for one (or, inside
    /// [`waiting_until`], until that instant if later); `None` when none came free in time.
    pub async fn acquire(&self, url: &str, wait: Duration) -> Option<OwnedSemaphorePermit> {
        let wait = wait_bound(wait);
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

    #[tokio::test(start_paused = true)]
    async fn inside_waiting_until_a_request_waits_past_its_timeout_for_its_turn() {
        let cap = Arc::new(ConnectionCap::new(1));
        let url = "http://127.0.0.1:1/";
        let held = cap.acquire(url, Duration::from_secs(1)).await.unwrap();
        let (waiter, lone) = (cap.clone(), cap.clone());
        let until = Instant::now() + Duration::from_secs(60);
        let queued = tokio::spawn(waiting_until(until, async move {
            waiter
                .acquire(url, Duration::from_millis(50))
                .await
                .is_some()
        }));
        let alone =
            tokio::spawn(
                async move { lone.acquire(url, Duration::from_millis(50)).await.is_some() },
            );
        // Far past the 50 ms timeout (the clock is paused: it jumps, nothing sleeps).
        tokio::time::advance(Duration::from_secs(5)).await;
        assert!(
            !alone.await.unwrap(),
            "outside waiting_until the timeout bounds the wait"
        );
        assert!(
            !queued.is_finished(),
            "inside it the request still waits for its turn"
        );
        drop(held);
        assert!(
            queued.await.unwrap(),
            "and gets the connection once it is free"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn waiting_until_an_instant_already_past_leaves_the_timeout() {
        let cap = ConnectionCap::new(1);
        let url = "http://127.0.0.1:1/";
        let _held = cap.acquire(url, Duration::from_secs(1)).await.unwrap();
        let got = waiting_until(Instant::now(), cap.acquire(url, Duration::from_millis(50))).await;
        assert!(got.is_none());
    }
}
