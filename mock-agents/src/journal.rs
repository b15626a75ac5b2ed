//! The journal: one ordered record of everything the network saw, with a sequence number across
//! all agents. Verdicts are taken from it, never from what a delegator claims.
//!
//! It is bounded (entries past `max_entries` are counted, not kept; long strings in payloads are
//! summarised), queryable from Rust ([`Journal::wait_for`] waits for a condition with a deadline)
//! and exportable as JSON lines. A synchronous [tripwire](Journal::set_tripwire) runs inside
//! [`Journal::record`], before the agent that recorded the event goes on (crash injection).

use crate::script::{Binding, JournalDetail, JournalSpec};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// One journal record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Sequence number across the whole network, from 1; without gaps except in a
    /// [`JournalDetail::Truth`] journal, which skips the numbers of the chunk entries it folds.
    pub seq: u64,
    /// Microseconds since the network started.
    pub at_us: u64,
    /// The agent that saw it.
    pub agent: AgentName,
    /// What happened.
    #[serde(flatten)]
    pub event: Event,
}

/// An agent's name as the journal keeps it: one shared copy per agent, not one per entry (a
/// streamed chunk records two entries). Serialised as a plain string; compares with `str`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AgentName(Arc<str>);

impl AgentName {
    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for AgentName {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for AgentName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for AgentName {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for AgentName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for AgentName {
    fn from(s: &str) -> Self {
        AgentName(Arc::from(s))
    }
}

impl From<String> for AgentName {
    fn from(s: String) -> Self {
        AgentName(Arc::from(s))
    }
}

impl From<AgentName> for String {
    fn from(a: AgentName) -> Self {
        a.0.to_string()
    }
}

impl PartialEq<str> for AgentName {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for AgentName {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for AgentName {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<AgentName> for str {
    fn eq(&self, other: &AgentName) -> bool {
        *self == *other.0
    }
}

impl PartialEq<AgentName> for &str {
    fn eq(&self, other: &AgentName) -> bool {
        **self == *other.0
    }
}

impl PartialEq<AgentName> for String {
    fn eq(&self, other: &AgentName) -> bool {
        **self == *other.0
    }
}

impl Serialize for AgentName {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for AgentName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(AgentName::from)
    }
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// An HTTP request arrived (`req` numbers requests within the network).
    Request {
        /// Request number.
        req: u64,
        /// The binding it arrived on (`jsonrpc` when absent, as in journals from before
        /// bindings): the card and other plain HTTP requests count as `jsonrpc`.
        #[serde(default = "jsonrpc")]
        binding: Binding,
        /// HTTP method.
        http_method: String,
        /// The path and query as sent (still percent-encoded, `?A2A-Version=1.0` and the
        /// HTTP+JSON query parameters included); gRPC calls have no query.
        path: String,
        /// The A2A method (1.0 name such as `SendMessage`, whatever the binding; a 0.3
        /// agent's requests carry the 0.3 name), if the request named one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        method: Option<String>,
        /// JSON-RPC id (boxed, as `params` and `headers`: every entry is as large as the
        /// largest variant, and this one is rare next to the per-chunk entries).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rpc_id: Option<Box<Value>>,
        /// The JSON-RPC-shaped params (long strings summarised): JSON-RPC `params`, the
        /// HTTP+JSON body merged with path and query fields, or the ProtoJSON of a gRPC
        /// request; the raw body text if it could not be decoded.
        #[serde(default)]
        params: Box<Value>,
        /// Headers (lowercase names); `authorization` is recorded so forwarded credentials show.
        /// A header sent on several lines is one entry, its values joined with `"\n"` (a
        /// header value cannot hold a newline), so `a, b` on one line and `a` and `b` on two
        /// lines stay distinguishable.
        headers: Box<BTreeMap<String, String>>,
        /// A JSON-RPC request's envelope as received, without `params`: `jsonrpc`, `id`,
        /// `method` and any other top-level member, raw (long strings summarised); a JSON body
        /// that is no object is recorded whole. Absent for a body that is not JSON, for the
        /// other bindings, and in journals written before it was recorded.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        envelope: Option<Box<Value>>,
    },
    /// A unary response was sent (for a stream: its start).
    Response {
        /// Request number.
        req: u64,
        /// HTTP status (200 for every gRPC response but a transport refusal such as 415).
        status: u16,
        /// The A2A error as its JSON-RPC code whatever the binding (-32001 for a
        /// `TASK_NOT_FOUND` HTTP 404 or gRPC `NOT_FOUND`), if an error.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rpc_error: Option<i64>,
        /// The `grpc-status` of a gRPC response (0 = OK) when it is known at this point: a
        /// stream's final status is in its [`Event::StreamClosed`] reason.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        grpc_status: Option<i32>,
        /// The `Retry-After` the response carried, in seconds (absent when it carried none
        /// or, in journals written before it was recorded, unknown).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after_s: Option<u64>,
        /// The body (long strings summarised).
        #[serde(default)]
        body: Value,
    },
    /// One SSE event was sent on a stream.
    SseEvent {
        /// Request number of the stream.
        req: u64,
        /// 0-based index within the stream.
        index: u32,
        /// The JSON-RPC response sent (long strings summarised).
        data: Value,
    },
    /// A stream ended.
    StreamClosed {
        /// Request number of the stream.
        req: u64,
        /// Events sent.
        events: u32,
        /// Why: `terminal`, `interrupted`, `fault`, `client_gone`, `script`.
        reason: String,
    },
    /// A connection was dropped on purpose.
    ConnectionDropped {
        /// Request number.
        req: u64,
        /// `before_processing`, `after_processing` or `mid_event`.
        phase: String,
    },
    /// The client closed the connection of a response that asked it to (`Connection: close`,
    /// sent with an `http_status` fault over HTTP/1.1): it had read that response (RFC 9112
    /// §9.6). Recorded when the agent reads the client's end of stream, after its own.
    ClientClosed {
        /// Request number of that response.
        req: u64,
    },
    /// A fault was applied to a request.
    Fault {
        /// Request number.
        req: u64,
        /// Fault kind.
        kind: String,
    },
    /// A task was created (or a resent `messageId` was deduplicated to it).
    TaskCreated {
        /// The task.
        task_id: String,
        /// Its context.
        context_id: String,
        /// The message that created it.
        message_id: String,
        /// True when this is a dedup hit: no new task was made.
        #[serde(default)]
        dedup: bool,
    },
    /// A task changed state.
    TaskState {
        /// The task.
        task_id: String,
        /// The new state.
        state: String,
    },
    /// A message continued an existing task (answer, credential).
    Continued {
        /// The task.
        task_id: String,
        /// The message id.
        message_id: String,
        /// What the agent made of it: `accepted`, `wrong_answer`, `wrong_credential`, `ignored`.
        outcome: String,
    },
    /// An artifact chunk was sent.
    ArtifactChunk {
        /// The task.
        task_id: String,
        /// The artifact.
        artifact_id: String,
        /// The `append` flag.
        append: bool,
        /// The `lastChunk` flag.
        last_chunk: bool,
        /// Content bytes in the chunk.
        bytes: u64,
    },
    /// The truth about an artifact after its last chunk: total bytes and sha256 of what was sent.
    ArtifactSent {
        /// The task.
        task_id: String,
        /// The artifact.
        artifact_id: String,
        /// Total bytes (after append/replace semantics).
        bytes: u64,
        /// Hex sha256 of those bytes.
        sha256: String,
        /// Chunk events with content parts (text, raw, data) that built those bytes since the
        /// artifact was last replaced (an `artifact_url` artifact: 1, its chunk with the url
        /// part; a recording, for an artifact only a task snapshot showed: 0); 0 in a journal
        /// written before this field.
        #[serde(default)]
        chunks: u64,
    },
    /// A blob was served by reference.
    BlobServed {
        /// The blob key.
        key: String,
        /// Bytes served.
        bytes: u64,
        /// Hex sha256.
        sha256: String,
    },
    /// The agent sent a url part a delegator must not fetch (A2A §14.1.1): another scheme than
    /// http(s), an origin outside the allowed ones, a redirect to one, userinfo. Journaled when
    /// the artifact is sent; no `artifact_sent` follows for it.
    ForbiddenUrl {
        /// The task.
        task_id: String,
        /// The artifact.
        artifact_id: String,
        /// The url of the part (for a redirect: the allowed url that redirects).
        url: String,
        /// Why it must not be fetched (`userinfo in the url`, `scheme file`, ...).
        why: String,
    },
    /// The trap server (`127.0.0.9`, agent name `trap`) accepted a connection: something
    /// followed a url part it must not fetch.
    TrapConnection {
        /// The connecting peer (`127.0.0.1:PORT`).
        peer: String,
        /// The trap's own address.
        local: String,
        /// The first line the peer sent (an HTTP request line), if any arrived in time.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        first_line: Option<String>,
    },
    /// A push notification was POSTed.
    Push {
        /// The task.
        task_id: String,
        /// The webhook URL.
        url: String,
        /// HTTP status, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
        /// The error, if delivery failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// An agent delegated to another.
    Delegated {
        /// The delegating task.
        task_id: String,
        /// The other agent.
        to: String,
        /// The child task, if one was created.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        child_task_id: Option<String>,
        /// The child's final state or error.
        outcome: String,
    },
    /// A task was purged by its script: later calls about it get -32001.
    TaskPurged {
        /// The task.
        task_id: String,
    },
    /// Incoming `x-deleg` limits were violated and the work rejected.
    LimitRejected {
        /// The task created in REJECTED.
        task_id: String,
        /// The reason.
        reason: String,
    },
    /// A connection reached an agent that serves TLS: what the agent's TLS layer saw, before
    /// any HTTP request on it (a handshake the client aborts carries no request, so this is
    /// how a journal shows a delegator met a certificate it refused).
    Tls {
        /// `handshake` (completed), `handshake_failed` (either side gave up: the client's alert
        /// is in `error`), or `plaintext` (a plain HTTP client on the TLS port: served only by
        /// an agent whose card lists `http://` interfaces, else closed).
        outcome: String,
        /// The certificate the agent served (`valid`, `unknown_authority`, `expired`,
        /// `wrong_host`).
        certificate: crate::tls::CertKind,
        /// The negotiated protocol version (`TLSv1.3`) of a completed handshake.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        version: Option<Box<str>>,
        /// The negotiated ALPN protocol (`h2`, `http/1.1`), if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        alpn: Option<Box<str>>,
        /// The server name (SNI) the client sent, if any (clients send none for an address).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sni: Option<Box<str>>,
        /// Why a handshake failed, in rustls's words (`received fatal alert: UnknownCA`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<Box<str>>,
    },
    /// Something a recorder saw that is no A2A event (malformed traffic, an unreachable
    /// upstream, a redaction): written by `a2a-harness record`, never by the mock network.
    Note {
        /// The request it concerns, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        req: Option<u64>,
        /// What was seen, in words.
        text: String,
    },
}

fn jsonrpc() -> Binding {
    Binding::JsonRpc
}

impl Event {
    /// The request number, for events tied to a request.
    pub fn req(&self) -> Option<u64> {
        match self {
            Event::Request { req, .. }
            | Event::Response { req, .. }
            | Event::SseEvent { req, .. }
            | Event::StreamClosed { req, .. }
            | Event::ConnectionDropped { req, .. }
            | Event::ClientClosed { req }
            | Event::Fault { req, .. } => Some(*req),
            Event::Note { req, .. } => *req,
            _ => None,
        }
    }
}

/// A JSON-RPC request as recorded: an owned view of one [`Event::Request`] entry with a method.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcRequest {
    /// Journal sequence.
    pub seq: u64,
    /// Request number.
    pub req: u64,
    /// The agent that received it.
    pub agent: String,
    /// The JSON-RPC method as sent (a 0.3 agent's requests carry 0.3 names); the A2A method
    /// name for the other bindings.
    pub method: String,
    /// The binding it arrived on.
    pub binding: Binding,
    /// The params (long strings summarised).
    pub params: Value,
    /// The headers (lowercase names; repeated lines joined with `"\n"`).
    pub headers: BTreeMap<String, String>,
    /// The JSON-RPC envelope without `params` (see [`Event::Request`]), if recorded.
    pub envelope: Option<Value>,
}

impl Entry {
    /// This entry as a JSON-RPC request, if it records one (see [`Journal::requests`]).
    pub fn rpc_request(&self) -> Option<RpcRequest> {
        match &self.event {
            Event::Request {
                req,
                binding,
                method: Some(method),
                params,
                headers,
                envelope,
                ..
            } => Some(RpcRequest {
                seq: self.seq,
                req: *req,
                agent: self.agent.to_string(),
                method: method.clone(),
                binding: *binding,
                params: Value::clone(params),
                headers: BTreeMap::clone(headers),
                envelope: envelope.as_deref().cloned(),
            }),
            _ => None,
        }
    }
}

impl RpcRequest {
    /// A header's value (`name` in lowercase, such as `authorization` or `a2a-version`); a
    /// header sent on several lines gives its values joined with `"\n"`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }

    /// A header's lines, in the order sent (empty when absent).
    pub fn header_lines(&self, name: &str) -> Vec<&str> {
        self.headers
            .get(name)
            .map(|v| v.split('\n').collect())
            .unwrap_or_default()
    }
}

struct Inner {
    entries: Vec<Entry>,
    /// The names entries share (a network has a handful of agents: a scan is enough).
    agents: Vec<AgentName>,
    dropped: u64,
    next_seq: u64,
}

/// A synchronous hook over recorded entries; see [`Journal::set_tripwire`].
pub type Tripwire = Arc<dyn Fn(&Entry) -> bool + Send + Sync>;

/// The shared, bounded journal of a network. Cheap to clone.
#[derive(Clone)]
pub struct Journal {
    inner: Arc<Mutex<Inner>>,
    notify: Arc<Notify>,
    start: Instant,
    spec: JournalSpec,
    tripwire: Arc<Mutex<Option<Tripwire>>>,
    armed: Arc<AtomicBool>,
    /// Strings searched for before long strings are summarised (see [`Journal::watch`]).
    watched: Arc<Mutex<Vec<String>>>,
}

/// [`Journal::wait_for`] ran out of time.
#[derive(Debug, thiserror::Error)]
#[error("condition not met within {0:?}")]
pub struct WaitTimeout(pub Duration);

impl Journal {
    /// An empty journal with these bounds.
    pub fn new(spec: JournalSpec) -> Self {
        Journal {
            inner: Arc::new(Mutex::new(Inner {
                entries: Vec::new(),
                agents: Vec::new(),
                dropped: 0,
                next_seq: 1,
            })),
            notify: Arc::new(Notify::new()),
            start: Instant::now(),
            spec,
            tripwire: Arc::new(Mutex::new(None)),
            armed: Arc::new(AtomicBool::new(false)),
            watched: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// Install a tripwire (replacing any other): `f` is called with every entry recorded from now
    /// on, synchronously inside [`Journal::record`], right after the entry is stored and before
    /// `record` returns, so the agent handler that recorded the event has not yet answered or
    /// sent anything more. When `f` returns true the tripwire is removed. It also sees entries
    /// past `max_entries` (which are counted, not kept) and the chunk entries a
    /// [`JournalDetail::Truth`] journal folds.
    ///
    /// Calls are serialised (one at a time, and never again once `f` returned true). `f` may
    /// read the journal but must not record into it or set a tripwire (that would deadlock);
    /// it should be quick, like a syscall.
    pub fn set_tripwire(&self, f: Tripwire) {
        let mut w = self.tripwire.lock().unwrap_or_else(|p| p.into_inner());
        *w = Some(f);
        self.armed.store(true, Ordering::SeqCst);
    }

    /// Remove the tripwire, if any.
    pub fn clear_tripwire(&self) {
        let mut w = self.tripwire.lock().unwrap_or_else(|p| p.into_inner());
        *w = None;
        self.armed.store(false, Ordering::SeqCst);
    }

    fn trip(&self, e: &Entry) {
        let mut w = self.tripwire.lock().unwrap_or_else(|p| p.into_inner());
        if w.as_ref().is_some_and(|f| f(e)) {
            *w = None;
            self.armed.store(false, Ordering::SeqCst);
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave the journal inconsistent: every mutation
        // is a single push, so recover the guard.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Record an event; returns its sequence number.
    pub fn record(&self, agent: &str, mut event: Event) -> u64 {
        let at_us = self.start.elapsed().as_micros() as u64;
        let keep = match self.spec.detail {
            JournalDetail::Full => true,
            JournalDetail::Truth => {
                without_payloads(&mut event);
                kept_as_truth(&event)
            }
        };
        let (seq, for_tripwire) = {
            let mut g = self.lock();
            let seq = g.next_seq;
            g.next_seq += 1;
            let armed = self.armed.load(Ordering::SeqCst);
            if !keep && !armed {
                // Folded (`detail = "truth"`) and no tripwire to see it: nothing more to do
                // (a streamed chunk's path).
                return seq;
            }
            let agent = match g.agents.iter().find(|a| **a == agent) {
                Some(a) => a.clone(),
                None => {
                    let a = AgentName::from(agent);
                    g.agents.push(a.clone());
                    a
                }
            };
            let entry = Entry {
                seq,
                at_us,
                agent,
                event,
            };
            if !keep {
                // Folded: not stored, nobody to wake; the tripwire sees it.
                (seq, Some(entry))
            } else {
                let copy = armed.then(|| entry.clone());
                if g.entries.len() < self.spec.max_entries {
                    g.entries.push(entry);
                } else {
                    g.dropped += 1;
                }
                (seq, copy)
            }
        };
        if let Some(e) = for_tripwire {
            self.trip(&e);
        }
        if keep {
            self.notify.notify_waiters();
        }
        seq
    }

    /// Watch for `s` (a secret such as the delegator's own credential): a long string that
    /// contains it keeps it in its summary, so a check over the journal still finds it however
    /// much text it was hidden in. Empty strings are ignored.
    pub fn watch(&self, s: impl Into<String>) {
        let s = s.into();
        if !s.is_empty() {
            self.watched
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(s);
        }
    }

    /// Summarise long strings in a payload so the journal stays bounded (checking them for
    /// watched strings first).
    pub fn summarise(&self, v: &Value) -> Value {
        if !self.is_full() {
            // Not kept (`detail = "truth"`): not walked either.
            return Value::Null;
        }
        // Held, not cloned: this runs for every streamed chunk.
        let watched = self.watched.lock().unwrap_or_else(|p| p.into_inner());
        summarise_watching(v, self.spec.max_string_bytes, &watched)
    }

    /// Time since the journal (the network) started: the clock of `at_us`.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Strings longer than this many bytes are summarised in recorded payloads.
    pub fn max_string_bytes(&self) -> usize {
        self.spec.max_string_bytes
    }

    /// Whether the journal keeps everything ([`JournalDetail::Full`]), or only what a benchmark
    /// verifies.
    pub fn is_full(&self) -> bool {
        self.spec.detail == JournalDetail::Full
    }

    /// A copy of every kept entry.
    pub fn entries(&self) -> Vec<Entry> {
        self.lock().entries.clone()
    }

    /// Entries past the bound that were not kept.
    pub fn dropped(&self) -> u64 {
        self.lock().dropped
    }

    /// Number of kept entries.
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Run `f` over the entries without copying them.
    pub fn with_entries<R>(&self, f: impl FnOnce(&[Entry]) -> R) -> R {
        f(&self.lock().entries)
    }

    /// Every JSON-RPC request recorded so far, in order (HTTP requests without a JSON-RPC
    /// method, such as card fetches, are left out).
    pub fn requests(&self) -> Vec<RpcRequest> {
        self.with_entries(|es| es.iter().filter_map(Entry::rpc_request).collect())
    }

    /// Wait until `cond` holds over the entries, or the timeout passes.
    pub async fn wait_for(
        &self,
        timeout: Duration,
        mut cond: impl FnMut(&[Entry]) -> bool,
    ) -> Result<(), WaitTimeout> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.with_entries(&mut cond) {
                return Ok(());
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return if self.with_entries(&mut cond) {
                    Ok(())
                } else {
                    Err(WaitTimeout(timeout))
                };
            }
        }
    }

    /// Write every entry as one JSON object per line.
    pub fn write_jsonl(&self, mut w: impl Write) -> std::io::Result<()> {
        let g = self.lock();
        for e in &g.entries {
            serde_json::to_writer(&mut w, e)?;
            w.write_all(b"\n")?;
        }
        Ok(())
    }
}

/// Replace strings longer than `max` bytes with a summary naming their length and sha256; a
/// long string that contains any of `watched` keeps each such string in its summary
/// (`<N bytes, sha256 H, contains watched "W">`): the check happens before the text is dropped.
fn summarise_watching(v: &Value, max: usize, watched: &[String]) -> Value {
    match v {
        Value::String(s) if s.len() > max => {
            let mut out = format!(
                "<{} bytes, sha256 {}",
                s.len(),
                crate::content::sha256_hex(s.as_bytes())
            );
            for w in watched.iter().filter(|w| s.contains(w.as_str())) {
                out.push_str(&format!(", contains watched {w:?}"));
            }
            out.push('>');
            Value::String(out)
        }
        Value::Array(a) => Value::Array(
            a.iter()
                .map(|x| summarise_watching(x, max, watched))
                .collect(),
        ),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (k.clone(), summarise_watching(x, max, watched)))
                .collect(),
        ),
        _ => v.clone(),
    }
}

/// Whether [`JournalDetail::Truth`] keeps the entry: all but the `artifact_chunk`s that append
/// to an artifact (its `artifact_sent` counts them; 64 x 64 MiB streams send 65,536).
fn kept_as_truth(event: &Event) -> bool {
    !matches!(event, Event::ArtifactChunk { append: true, .. })
}

/// An entry as [`JournalDetail::Truth`] keeps it: no params, headers or envelope of a request,
/// no body of an answer or stream event.
fn without_payloads(event: &mut Event) {
    match event {
        Event::Request {
            params,
            headers,
            envelope,
            rpc_id,
            ..
        } => {
            **params = Value::Null;
            **headers = BTreeMap::new();
            *envelope = None;
            *rpc_id = None;
        }
        Event::Response { body, .. } => *body = Value::Null,
        Event::SseEvent { data, .. } => *data = Value::Null,
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    fn state(task: &str, st: &str) -> Event {
        Event::TaskState {
            task_id: task.into(),
            state: st.into(),
        }
    }

    /// A truth journal keeps the chunk that starts an artifact, folds the ones that append,
    /// and its tripwire sees both (a crash trigger counting chunks still fires).
    #[test]
    fn a_truth_journal_folds_appended_chunks_and_its_tripwire_still_sees_them() {
        let j = Journal::new(JournalSpec {
            detail: JournalDetail::Truth,
            ..JournalSpec::default()
        });
        let chunk = |append| Event::ArtifactChunk {
            task_id: "t0".into(),
            artifact_id: "a".into(),
            append,
            last_chunk: false,
            bytes: 1,
        };
        let seen = Arc::new(AtomicU64::new(0));
        let s = seen.clone();
        j.set_tripwire(Arc::new(move |e: &Entry| {
            matches!(e.event, Event::ArtifactChunk { .. }) && s.fetch_add(1, Ordering::SeqCst) == 2
        }));
        let seqs: Vec<u64> = [false, true, true]
            .into_iter()
            .map(|append| j.record("a", chunk(append)))
            .collect();
        assert_eq!(seqs, [1, 2, 3], "every chunk is numbered");
        assert_eq!(seen.load(Ordering::SeqCst), 3, "the tripwire saw all three");
        let kept: Vec<u64> = j.entries().iter().map(|e| e.seq).collect();
        assert_eq!(kept, [1], "only the chunk that starts the artifact is kept");
    }

    #[test]
    fn tripwire_runs_inside_record_after_the_entry_is_stored_and_fires_once() {
        let j = Journal::new(JournalSpec::default());
        j.record("a", state("t0", "TASK_STATE_WORKING"));
        let calls = Arc::new(AtomicU64::new(0));
        let fired_at = Arc::new(AtomicU64::new(0));
        let stored_when_called = Arc::new(AtomicBool::new(false));
        let (c, f, s, jj) = (
            calls.clone(),
            fired_at.clone(),
            stored_when_called.clone(),
            j.clone(),
        );
        j.set_tripwire(Arc::new(move |e: &Entry| {
            c.fetch_add(1, Ordering::SeqCst);
            if matches!(&e.event, Event::TaskState { state, .. } if state == "TASK_STATE_COMPLETED")
            {
                // The entry is already in the journal when the tripwire sees it.
                s.store(
                    jj.with_entries(|es| es.last().map(|l| l.seq)) == Some(e.seq),
                    Ordering::SeqCst,
                );
                f.store(e.seq, Ordering::SeqCst);
                return true;
            }
            false
        }));
        // Entries recorded before installation are not replayed.
        assert_eq!(calls.load(Ordering::SeqCst), 0);
        j.record("a", state("t1", "TASK_STATE_WORKING"));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!(fired_at.load(Ordering::SeqCst), 0);
        let seq = j.record("a", state("t1", "TASK_STATE_COMPLETED"));
        // Set before `record` returned: synchronous, not polled.
        assert_eq!(fired_at.load(Ordering::SeqCst), seq);
        assert!(stored_when_called.load(Ordering::SeqCst));
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        // It returned true, so it is gone.
        j.record("a", state("t2", "TASK_STATE_COMPLETED"));
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert_eq!(j.len(), 4);
    }

    #[test]
    fn an_entry_is_not_sized_by_the_request_variant() {
        // A streamed chunk costs two entries (`artifact_chunk`, `sse_event`), each as large as
        // the largest variant: `Request` keeps its bulky fields boxed and the agent's name is
        // shared, so that the per-chunk entries of a multi-GiB stream stay small (152 bytes on
        // 64-bit targets since the boxed JSON-RPC `envelope`, 144 before it, 216 before the
        // boxing).
        let entry = std::mem::size_of::<Entry>();
        let event = std::mem::size_of::<Event>();
        assert!(entry <= 152, "Entry is {entry} bytes");
        assert!(event <= 120, "Event is {event} bytes");
    }

    #[test]
    fn entries_share_one_name_per_agent_and_serialise_it_as_a_string() {
        let j = Journal::new(JournalSpec::default());
        j.record("a", state("t0", "TASK_STATE_WORKING"));
        j.record("b", state("t1", "TASK_STATE_WORKING"));
        j.record("a", state("t2", "TASK_STATE_WORKING"));
        let es = j.entries();
        assert!(Arc::ptr_eq(&es[0].agent.0, &es[2].agent.0));
        assert_eq!(es[1].agent, "b");
        let line = serde_json::to_string(&es[2]).unwrap();
        assert!(line.contains(r#""agent":"a""#), "{line}");
        let back: Entry = serde_json::from_str(&line).unwrap();
        assert_eq!(back, es[2]);
    }

    #[test]
    fn a_watched_secret_survives_summarising() {
        let j = Journal::new(JournalSpec {
            max_entries: 10,
            max_string_bytes: 16,
            ..JournalSpec::default()
        });
        let long = format!("{}secret-token{}", "x".repeat(3000), "y".repeat(2000));
        let plain = j.summarise(&serde_json::json!({"text": long}));
        assert!(!plain.to_string().contains("secret-token"), "{plain}");
        j.watch("secret-token");
        j.watch("");
        let s = j.summarise(&serde_json::json!({"text": long, "short": "ok"}));
        assert!(
            s["text"]
                .as_str()
                .unwrap()
                .contains("contains watched \"secret-token\""),
            "{s}"
        );
        assert!(s["text"].as_str().unwrap().starts_with("<5012 bytes"));
        assert_eq!(s["short"], "ok");
    }

    #[test]
    fn tripwire_sees_entries_past_the_bound_and_can_be_cleared() {
        let j = Journal::new(JournalSpec {
            max_entries: 1,
            max_string_bytes: 16,
            ..JournalSpec::default()
        });
        j.record("a", state("t0", "TASK_STATE_WORKING"));
        let seen = Arc::new(AtomicU64::new(0));
        let s = seen.clone();
        j.set_tripwire(Arc::new(move |e: &Entry| {
            s.store(e.seq, Ordering::SeqCst);
            false
        }));
        j.record("a", state("t1", "TASK_STATE_WORKING"));
        assert_eq!(seen.load(Ordering::SeqCst), 2);
        assert_eq!(j.dropped(), 1);
        j.clear_tripwire();
        j.record("a", state("t2", "TASK_STATE_WORKING"));
        assert_eq!(seen.load(Ordering::SeqCst), 2);
    }
}
