//! The origins of one upstream agent and the proxy's listen address for each: the `--upstream`
//! origin, and every other plain origin its card's interfaces name (a gRPC interface served on
//! a port of its own, say), opened when a card naming it is first read. All of them journal
//! under the agent's one name.

use super::card::plain_origin;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use tokio::sync::watch;
use tokio_util::task::TaskTracker;

/// Further origins one agent's cards may open; past it a note says an origin is not proxied
/// (a card that names a new port on every read opens no listener without end).
pub const MAX_FURTHER_ORIGINS: usize = 16;

/// One agent's routes (upstream origin to listen address) and what a new listener needs.
pub struct Origins {
    /// Where listeners for further origins bind (the first listen address's IP, port 0).
    ip: IpAddr,
    /// Upstream `host:port` to the proxy's listen address, first the `--upstream` one.
    routes: Mutex<Vec<(String, SocketAddr)>>,
    /// Every `--upstream` of the recording and its listen address: an interface at another
    /// upstream's origin points at that upstream's proxy (journaled under that agent).
    upstreams: Arc<Vec<(String, SocketAddr)>>,
    /// The recording's serving tasks.
    pub tasks: TaskTracker,
    /// Turns true when the recording stops.
    pub shutdown: watch::Receiver<bool>,
}

/// A listener opened for a further origin of a card.
pub struct Opened {
    /// The upstream origin.
    pub upstream: String,
    /// The listener (bound to the agent's listen IP, a free port).
    pub listener: tokio::net::TcpListener,
    /// Its address.
    pub addr: SocketAddr,
}

impl Origins {
    /// The routes of an agent proxied at `listen` for `upstream`.
    pub fn new(
        upstream: &str,
        listen: SocketAddr,
        upstreams: Arc<Vec<(String, SocketAddr)>>,
        tasks: TaskTracker,
        shutdown: watch::Receiver<bool>,
    ) -> Origins {
        Origins {
            ip: listen.ip(),
            routes: Mutex::new(vec![(upstream.to_string(), listen)]),
            upstreams,
            tasks,
            shutdown,
        }
    }

    fn routes(&self) -> std::sync::MutexGuard<'_, Vec<(String, SocketAddr)>> {
        self.routes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The proxy's `host:port` for an upstream origin, if it has one (this agent's, else
    /// another `--upstream`'s).
    pub fn route(&self, upstream: &str) -> Option<String> {
        let found = |list: &[(String, SocketAddr)]| {
            list.iter()
                .find(|(u, _)| u.eq_ignore_ascii_case(upstream))
                .map(|(_, a)| a.to_string())
        };
        found(&self.routes()).or_else(|| found(&self.upstreams))
    }

    /// Every route, the `--upstream` one first.
    pub fn all(&self) -> Vec<(String, SocketAddr)> {
        self.routes().clone()
    }

    /// Open a listener for each plain origin of `urls` (a card's interface URLs) that has no
    /// route yet; the route is in place when this returns. An address that cannot be bound is
    /// returned as an error text with its origin (the interface stays unproxied).
    pub fn open(&self, urls: &[&str]) -> (Vec<Opened>, Vec<String>) {
        let mut opened = Vec::new();
        let mut failed = Vec::new();
        let mut routes = self.routes();
        for origin in urls.iter().filter_map(|u| plain_origin(u)) {
            let known = |list: &[(String, SocketAddr)]| {
                list.iter().any(|(u, _)| u.eq_ignore_ascii_case(origin))
            };
            if known(&routes) || known(&self.upstreams) {
                continue;
            }
            if routes.len() > MAX_FURTHER_ORIGINS {
                failed.push(format!(
                    "the card's origin {origin} is not proxied: this agent's cards already named {MAX_FURTHER_ORIGINS} further origins"
                ));
                continue;
            }
            let bound = std::net::TcpListener::bind(SocketAddr::new(self.ip, 0))
                .and_then(|l| l.set_nonblocking(true).map(|()| l))
                .and_then(tokio::net::TcpListener::from_std)
                .and_then(|l| l.local_addr().map(|a| (l, a)));
            match bound {
                Ok((listener, addr)) => {
                    routes.push((origin.to_string(), addr));
                    opened.push(Opened {
                        upstream: origin.to_string(),
                        listener,
                        addr,
                    });
                }
                Err(e) => failed.push(format!(
                    "no listen address for the card's origin {origin} ({}:0: {e}): its interfaces are not proxied",
                    self.ip
                )),
            }
        }
        (opened, failed)
    }
}
