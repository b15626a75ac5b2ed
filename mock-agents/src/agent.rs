//! One mock agent: a real A2A 1.0 JSON-RPC server whose behaviour comes from its script.
//!
//! Well behaved, it is spec-conformant (card, every method, terminal-state rules, version
//! negotiation, push delivery); scripted, it injects the faults and violations of its rules.
//! Everything it receives and sends goes into the network's [`Journal`].

use crate::journal::{Event, Journal};
use crate::script::{
    AgentSpec, Binding, CancelBehaviour, IdStyle, Mutation, ProtocolVersion, QueuedFault,
};
use a2a_protocol::{
    AgentCapabilities, AgentCard, AgentInterface, AgentProvider, AgentSkill, Message, Part,
    StreamResponse, Task, TaskPushNotificationConfig, TaskState, TaskStatus, Timestamp,
};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::{Notify, mpsc, oneshot};

/// Shared by every agent of a network.
pub struct NetShared {
    /// Unique among the networks of every process on this machine (process id and a counter):
    /// sent on push notifications ([`crate::rpc::MOCK_PUSH_HEADER`]).
    pub id: String,
    /// The journal.
    pub journal: Journal,
    /// Base URL of every agent by name (known before the first request).
    pub urls: BTreeMap<String, String>,
    /// The network seed.
    pub seed: u64,
    /// Request numbers across the network.
    pub next_req: AtomicU64,
    /// HTTP client for sub-delegation and push.
    pub http: reqwest::Client,
    /// Gates the test opened ([`crate::Network::open_gate`]); `gate` steps wait on them.
    pub gates: Mutex<std::collections::BTreeSet<String>>,
    /// Notified whenever a gate opens.
    pub gate_opened: Notify,
    /// The trap server's address, when the network started one ([`crate::trap`]).
    pub trap: Option<std::net::SocketAddr>,
}

impl NetShared {
    /// Wait until `gate` is open; `false` when `timeout` passed first.
    pub(crate) async fn wait_gate(&self, gate: &str, timeout: std::time::Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.gate_opened.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if lock_map(&self.gates).contains(gate) {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return false;
            }
        }
    }
}

/// What a stream sends next.
pub(crate) enum Outgoing {
    /// A typed event.
    Event(Arc<StreamResponse>),
    /// A raw `result` value.
    Raw(Value),
    /// Raw `data:` text.
    RawText(String),
    /// One huge event of this many bytes.
    Huge(usize),
    /// Close the stream.
    Close(&'static str),
    /// A chunk of generated artifact content: framed straight from its bytes
    /// ([`crate::frames`]) unless a mutation or the 0.3 translation needs the general path.
    Chunk(Arc<GenChunk>),
    /// A copy of a well-formed event (`result`) with REQUIRED fields removed: journaled as a
    /// `fault` naming `removed` (pointers into the JSON-RPC envelope), then sent.
    Omitted {
        /// The event, already without the fields.
        result: Value,
        /// What was removed.
        removed: Vec<String>,
    },
}

/// What a task's push worker delivers.
pub(crate) enum PushItem {
    /// An event of the task.
    Event(Arc<StreamResponse>),
    /// An event about a task the client never created (`push_foreign`): journaled under that
    /// task's id.
    Foreign(Arc<StreamResponse>),
}

/// One artifact-update event whose single part is generated content.
pub(crate) struct GenChunk {
    pub task_id: String,
    pub context_id: String,
    pub artifact_id: String,
    /// The artifact's name (first chunk only).
    pub name: Option<String>,
    /// The part's `mediaType`.
    pub media_type: Option<String>,
    /// `raw` content (base64 in JSON) rather than `text`.
    pub raw: bool,
    /// The content (text: JSON-safe ASCII, see [`crate::content::ContentStream`]).
    pub payload: bytes::Bytes,
    pub append: bool,
    pub last_chunk: bool,
    /// Held while any subscriber still has the chunk to encode: bounds the chunk bytes in
    /// flight per artifact step ([`crate::task_events::IN_FLIGHT_KIB`]), whatever the
    /// subscriber queue depth.
    pub _permit: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl GenChunk {
    /// The event with this part content (the payload, or a stand-in such as a summary).
    pub(crate) fn event_with(&self, part: Part) -> StreamResponse {
        let part = match &self.media_type {
            Some(m) => part.with_media_type(m.clone()),
            None => part,
        };
        StreamResponse::ArtifactUpdate(a2a_protocol::TaskArtifactUpdateEvent {
            task_id: self.task_id.clone(),
            context_id: self.context_id.clone(),
            artifact: a2a_protocol::Artifact {
                artifact_id: self.artifact_id.clone(),
                name: self.name.clone(),
                parts: vec![part],
                ..Default::default()
            },
            append: self.append,
            last_chunk: self.last_chunk,
            metadata: None,
        })
    }

    /// The typed event, payload included (the general path: mutations, 0.3, push).
    pub(crate) fn event(&self) -> StreamResponse {
        self.event_with(self.content())
    }

    /// The part without its media type.
    fn content(&self) -> Part {
        if self.raw {
            Part::raw(self.payload.to_vec())
        } else {
            Part::text(String::from_utf8_lossy(&self.payload).into_owned())
        }
    }

    /// The part, as the event carries it.
    pub(crate) fn part(&self) -> Part {
        let p = self.content();
        match &self.media_type {
            Some(m) => p.with_media_type(m.clone()),
            None => p,
        }
    }
}

/// What a task keeps of an artifact whose content was generated: enough to regenerate the
/// chunks sent (for `GetTask`), never the bytes themselves.
#[derive(Clone)]
pub(crate) struct GenRecord {
    pub seed: u64,
    pub raw: bool,
    pub chunk_bytes: usize,
    /// Chunks sent so far.
    pub chunks: u64,
    pub media_type: Option<String>,
}

impl GenRecord {
    /// The parts sent, regenerated.
    pub(crate) fn parts(&self) -> Vec<Part> {
        let mut out = Vec::with_capacity(self.chunks as usize);
        let mut s = crate::content::ContentStream::new(self.seed, !self.raw);
        for _ in 0..self.chunks {
            let mut buf = vec![0u8; self.chunk_bytes];
            s.fill(&mut buf);
            let p = if self.raw {
                Part::raw(buf)
            } else {
                Part::text(String::from_utf8(buf).unwrap_or_default())
            };
            out.push(match &self.media_type {
                Some(m) => p.with_media_type(m.clone()),
                None => p,
            });
        }
        out
    }
}

/// A message that continues an interrupted task.
pub(crate) struct Continuation {
    pub message: Message,
    pub authorization: Option<String>,
    /// Answered with the task as the message left it (see [`Continuation::acknowledge`]).
    pub ack: oneshot::Sender<Task>,
}

impl Continuation {
    /// Tell the sender the message was taken, with the task as it left it: a `returnImmediately`
    /// answer shows that state, not whatever later steps reached by the time it is written.
    pub(crate) fn acknowledge(ack: oneshot::Sender<Task>, entry: &TaskEntry) {
        let _ = ack.send(entry.lock().snapshot());
    }
}

pub(crate) struct TaskInner {
    pub task: Task,
    pub subscribers: Vec<mpsc::Sender<Arc<Outgoing>>>,
    pub cont_tx: Option<mpsc::Sender<Continuation>>,
    pub waiting: bool,
    pub push: Vec<TaskPushNotificationConfig>,
    pub push_tx: Option<mpsc::Sender<PushItem>>,
    pub mutations: Vec<Mutation>,
    pub on_cancel: CancelBehaviour,
    pub driver: Option<tokio::task::AbortHandle>,
    pub purged: bool,
    /// Set by a cancel: whatever the (aborted) driver still does is ignored.
    pub frozen: bool,
    /// The driver has run every step: no more events will come from it.
    pub driver_done: bool,
    pub x_deleg: Option<a2a_protocol::xdeleg::XDeleg>,
    pub ordinal: u64,
    /// What generated artifact content derives from: the parts of the message that created the
    /// task and how many earlier tasks of this agent had the same parts, not the creation
    /// order (which timing decides when several requests arrive at once), so that one seed
    /// gives each delegation the same bytes in every run.
    pub content_key: u64,
    /// Artifacts of generated content by id: their parts in `task.artifacts` are left empty and
    /// regenerated by [`TaskInner::snapshot`].
    pub generated: HashMap<String, GenRecord>,
}

impl TaskInner {
    /// The task as `GetTask` and the other answers show it: generated artifact content is
    /// regenerated in front of any parts kept for the same artifact.
    pub(crate) fn snapshot(&self) -> Task {
        let mut t = self.task.clone();
        if !self.generated.is_empty() {
            for a in &mut t.artifacts {
                if let Some(g) = self.generated.get(&a.artifact_id) {
                    let mut parts = g.parts();
                    parts.append(&mut a.parts);
                    a.parts = parts;
                }
            }
        }
        t
    }
}

pub(crate) struct TaskEntry {
    pub inner: Mutex<TaskInner>,
    pub changed: Notify,
    /// Held while one event is journaled and handed to the subscribers, so a cancel's final
    /// state waits for a chunk the driver was sending when it was aborted: nothing of the
    /// task is journaled or streamed after its terminal state.
    pub emit: tokio::sync::Mutex<()>,
}

impl TaskEntry {
    pub fn lock(&self) -> MutexGuard<'_, TaskInner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The state of one agent.
pub struct AgentState {
    /// The agent's script.
    pub spec: AgentSpec,
    /// `http://127.0.0.1:PORT` (`https://` over TLS): the card's URL and the agent's identity.
    pub base_url: String,
    /// The base of the card's interface URLs: `base_url`, or `http://` for an agent serving
    /// its card over TLS with plain HTTP interfaces ([`crate::tls::InterfaceScheme::Http`]).
    pub interface_base: String,
    /// The bindings served (the script's, resolved against the network default).
    pub bindings: Vec<Binding>,
    /// The bindings the card lists, in order.
    pub advertised: Vec<Binding>,
    pub(crate) net: Arc<NetShared>,
    pub(crate) tasks: Mutex<HashMap<String, Arc<TaskEntry>>>,
    pub(crate) order: Mutex<Vec<String>>,
    pub(crate) dedup: Mutex<HashMap<String, String>>,
    pub(crate) rule_hits: Mutex<Vec<u32>>,
    /// The order rules are tried in ([`crate::matching::rule_order`]).
    pub(crate) rule_order: Vec<usize>,
    /// When the agent started: the first card's `Last-Modified` (to the second), from which
    /// every changed card's is derived ([`AgentState::card_last_modified`]).
    pub(crate) card_modified: std::time::SystemTime,
    /// Faults queued per method (from the script and [`crate::Network::queue_fault`]).
    pub(crate) queued: Mutex<Vec<QueuedFault>>,
    pub(crate) sends: AtomicU32,
    pub(crate) ordinals: AtomicU64,
    pub(crate) blobs: Mutex<HashMap<String, (u64, u64, bool)>>,
    /// Blob keys answered with a `302 Found` to this location (an `artifact_url` step with
    /// target `redirect_to_trap`).
    pub(crate) redirects: Mutex<HashMap<String, String>>,
    /// Tasks created so far per request content (the message parts), for
    /// [`TaskInner::content_key`].
    pub(crate) content_keys: Mutex<HashMap<Vec<u8>, u64>>,
    /// Stamps statuses and writes their timestamps in the scripted form.
    pub(crate) clock: crate::timestamps::Clock,
    /// When (journal clock, µs) this agent created its first task: `card_change`s count from it.
    pub(crate) first_task_us: std::sync::OnceLock<u64>,
}

/// Lock a mutex, recovering from poisoning (every critical section leaves the data consistent).
pub(crate) fn lock_map<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
use lock_map as lock;

impl AgentState {
    pub(crate) fn new(
        spec: AgentSpec,
        base_url: String,
        interface_base: String,
        net: Arc<NetShared>,
        default_bindings: Option<&[Binding]>,
    ) -> Self {
        let rules = spec.rules.len();
        let bindings = spec.served_bindings(default_bindings);
        let advertised = spec.advertised(default_bindings);
        let queued = spec.queued_faults.clone();
        let rule_order = crate::matching::rule_order(&spec.rules);
        let clock = crate::timestamps::Clock::new(spec.timestamp_style);
        AgentState {
            spec,
            base_url,
            interface_base,
            bindings,
            advertised,
            net,
            tasks: Mutex::new(HashMap::new()),
            order: Mutex::new(Vec::new()),
            dedup: Mutex::new(HashMap::new()),
            rule_hits: Mutex::new(vec![0; rules]),
            rule_order,
            card_modified: std::time::SystemTime::now(),
            queued: Mutex::new(queued),
            sends: AtomicU32::new(0),
            ordinals: AtomicU64::new(0),
            blobs: Mutex::new(HashMap::new()),
            redirects: Mutex::new(HashMap::new()),
            content_keys: Mutex::new(HashMap::new()),
            clock,
            first_task_us: std::sync::OnceLock::new(),
        }
    }

    /// A task as this agent returns it: without history when it keeps none
    /// (`keep_history = false`), else with at most `history_length` newest messages (all when
    /// unset, none for 0).
    pub(crate) fn present(&self, t: &Task, history_length: Option<i32>) -> Task {
        let mut t = crate::methods::with_history(t, history_length);
        if !self.spec.keep_history {
            t.history.clear();
        }
        t
    }

    /// The JSON-RPC URL.
    pub fn rpc_url(&self) -> String {
        format!("{}{}", self.interface_base, crate::rpc::RPC_PATH)
    }

    /// The HTTP+JSON base URL (`http://127.0.0.1:PORT/rest`).
    pub fn rest_url(&self) -> String {
        format!("{}{}", self.interface_base, crate::rest::REST_PATH)
    }

    /// The gRPC URL: `127.0.0.1:PORT`, as the proto's `AgentInterface.url` comment asks;
    /// `https://127.0.0.1:PORT` over TLS (the scheme says the channel is TLS).
    pub fn grpc_url(&self) -> String {
        self.interface_base
            .strip_prefix("http://")
            .unwrap_or(&self.interface_base)
            .to_string()
    }

    /// The URL of one binding's interface.
    pub fn url_of(&self, binding: Binding) -> String {
        match binding {
            Binding::JsonRpc => self.rpc_url(),
            Binding::Rest => self.rest_url(),
            Binding::Grpc => self.grpc_url(),
        }
    }

    /// Does this agent serve `binding`?
    pub fn serves(&self, binding: Binding) -> bool {
        self.bindings.contains(&binding)
    }

    /// The identity used in `x-deleg` chains: the base URL with a trailing slash.
    pub fn identity(&self) -> String {
        format!("{}/", self.base_url)
    }

    pub(crate) fn journal(&self, event: Event) -> u64 {
        if matches!(event, Event::TaskCreated { .. }) && self.first_task_us.get().is_none() {
            let us = u64::try_from(self.net.journal.elapsed().as_micros()).unwrap_or(u64::MAX);
            let _ = self.first_task_us.set(us);
        }
        self.net.journal.record(&self.spec.name, event)
    }

    /// The version of the card served now: how many `card_change`s have taken effect (their
    /// `after_ms` counts from the agent's first task; before it the first card is served).
    pub fn card_version(&self) -> usize {
        let Some(first) = self.first_task_us.get() else {
            return 0;
        };
        let now = u64::try_from(self.net.journal.elapsed().as_micros()).unwrap_or(u64::MAX);
        let ms = now.saturating_sub(*first) / 1000;
        self.spec
            .card_changes
            .iter()
            .take_while(|c| c.after_ms <= ms)
            .count()
    }

    /// The tenant the interfaces of card version `v` carry.
    fn tenant_at(&self, v: usize) -> Option<&str> {
        match v {
            0 => self.spec.tenant.as_deref(),
            k => self.spec.card_changes.get(k - 1).map(|c| c.tenant.as_str()),
        }
    }

    /// The tenants requests may carry now (`None` in the list: no tenant), or `None` when
    /// the agent checks no tenant (none is configured anywhere): every card version's so far
    /// (an old one keeps working) and the extended card's.
    pub(crate) fn accepted_tenants(&self) -> Option<Vec<Option<&str>>> {
        let s = &self.spec;
        if s.tenant.is_none() && s.extended_tenant.is_none() && s.card_changes.is_empty() {
            return None;
        }
        let mut out: Vec<Option<&str>> = Vec::new();
        let extended = s.extended_tenant.as_deref().map(Some);
        for t in (0..=self.card_version())
            .map(|v| self.tenant_at(v))
            .chain(extended)
        {
            if !out.contains(&t) {
                out.push(t);
            }
        }
        Some(out)
    }

    /// The `Last-Modified` of card version `v`, to the second (what HTTP dates carry): the
    /// agent's start for the first, the change's time (after the first task) for a changed one,
    /// and always at least a second after the version before, so `If-Modified-Since` tells every
    /// version apart.
    pub(crate) fn card_last_modified(&self, v: usize) -> std::time::SystemTime {
        let secs = |t: std::time::SystemTime| {
            t.duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or_default()
        };
        let mut at = secs(self.card_modified);
        let first =
            std::time::Duration::from_micros(self.first_task_us.get().copied().unwrap_or(0));
        for c in self.spec.card_changes.iter().take(v) {
            let changed =
                secs(self.card_modified + first + std::time::Duration::from_millis(c.after_ms));
            at = changed.max(at + 1);
        }
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(at)
    }

    /// The interfaces of the card, one per advertised binding, carrying `tenant`.
    fn interfaces(&self, tenant: Option<&str>) -> Vec<AgentInterface> {
        let version = self
            .spec
            .card_protocol_version
            .clone()
            .unwrap_or_else(|| self.spec.protocol.header_value().into());
        self.advertised
            .iter()
            .map(|b| AgentInterface {
                url: self.url_of(*b),
                protocol_binding: b.protocol_binding().into(),
                tenant: tenant.map(str::to_string),
                protocol_version: version.clone(),
            })
            .collect()
    }

    /// Does the agent have an extended card (an `extended_skill` or an `extended_tenant`)?
    pub fn has_extended_card(&self) -> bool {
        !self.spec.extended_skills.is_empty() || self.spec.extended_tenant.is_some()
    }

    /// The agent card this agent serves now (1.0 shape; a 0.3 agent translates it).
    pub fn card(&self) -> AgentCard {
        self.card_at(self.card_version())
    }

    /// Card version `v` (see [`AgentState::card_version`]).
    pub fn card_at(&self, v: usize) -> AgentCard {
        let modes = if self.spec.output_modes.is_empty() {
            vec![
                "text/plain".into(),
                "application/json".into(),
                "application/octet-stream".into(),
            ]
        } else {
            self.spec.output_modes.clone()
        };
        let skills = self.skills(&self.spec.skills);
        let input_modes = self.input_modes();
        AgentCard {
            name: self.spec.name.clone(),
            description: format!(
                "Deterministic mock A2A agent {:?} for conformance tests",
                self.spec.name
            ),
            supported_interfaces: self.interfaces(self.tenant_at(v)),
            provider: Some(AgentProvider {
                url: "https://example.invalid".into(),
                organization: "a2a-delegation-harness".into(),
            }),
            version: env!("CARGO_PKG_VERSION").into(),
            capabilities: AgentCapabilities {
                streaming: Some(self.spec.streaming),
                push_notifications: Some(self.spec.push_notifications),
                extended_agent_card: Some(self.has_extended_card()),
                extensions: self
                    .spec
                    .extensions
                    .iter()
                    .map(|e| a2a_protocol::AgentExtension {
                        uri: e.uri.clone(),
                        description: e.description.clone(),
                        required: e.required,
                        params: None,
                    })
                    .collect(),
            },
            security_schemes: self.security_schemes(),
            // Card-level requirements apply to every request (§7.3): declared only when the
            // scheme guards everything; a scheme that guards only the extended card is listed
            // in `securitySchemes` alone (§3.1.11: the client picks one of them).
            security_requirements: self
                .security_schemes()
                .into_keys()
                .filter(|_| {
                    self.spec
                        .security
                        .as_ref()
                        .is_some_and(|s| s.scope == crate::script::SecurityScope::All)
                })
                .map(|name| a2a_protocol::SecurityRequirement {
                    schemes: [(name, a2a_protocol::StringList::default())]
                        .into_iter()
                        .collect(),
                })
                .collect(),
            default_input_modes: input_modes,
            default_output_modes: modes,
            skills,
            ..Default::default()
        }
    }

    /// The card's `securitySchemes`: one HTTP scheme named after the credential's scheme in
    /// lower case (`bearer`), when the agent has `security`.
    fn security_schemes(&self) -> BTreeMap<String, a2a_protocol::SecurityScheme> {
        self.spec
            .security
            .iter()
            .map(|sec| {
                (
                    sec.scheme().to_ascii_lowercase(),
                    a2a_protocol::SecurityScheme::HttpAuthSecurityScheme(
                        a2a_protocol::HttpAuthSecurityScheme {
                            description: Some(format!(
                                "HTTP {} authentication; {}",
                                sec.scheme(),
                                match sec.scope {
                                    crate::script::SecurityScope::ExtendedCard =>
                                        "GetExtendedAgentCard requires it",
                                    crate::script::SecurityScope::All =>
                                        "every request requires it",
                                }
                            )),
                            scheme: sec.scheme().to_string(),
                            bearer_format: None,
                        },
                    ),
                )
            })
            .collect()
    }

    /// The extended card (`None` without one): the card plus the extended skills, and the
    /// `extended_tenant`'s interfaces listed before the public ones.
    pub fn extended_card(&self) -> Option<AgentCard> {
        if !self.has_extended_card() {
            return None;
        }
        let mut card = self.card();
        card.skills.extend(self.skills(&self.spec.extended_skills));
        if let Some(t) = &self.spec.extended_tenant {
            let mut interfaces = self.interfaces(Some(t));
            interfaces.append(&mut card.supported_interfaces);
            card.supported_interfaces = interfaces;
        }
        Some(card)
    }

    /// The card's `defaultInputModes`.
    pub(crate) fn input_modes(&self) -> Vec<String> {
        if self.spec.input_modes.is_empty() {
            vec!["text/plain".into(), "application/json".into()]
        } else {
            self.spec.input_modes.clone()
        }
    }

    fn skills(&self, specs: &[crate::script::SkillSpec]) -> Vec<AgentSkill> {
        if specs.is_empty() {
            vec![AgentSkill {
                id: "default".into(),
                name: "default".into(),
                description: "Scripted mock behaviour".into(),
                tags: vec!["mock".into()],
                ..Default::default()
            }]
        } else {
            specs
                .iter()
                .map(|s| AgentSkill {
                    id: s.id.clone(),
                    name: s.id.clone(),
                    description: format!("Scripted mock skill {}", s.id),
                    tags: if s.tags.is_empty() {
                        vec!["mock".into()]
                    } else {
                        s.tags.clone()
                    },
                    output_modes: s.output_modes.clone(),
                    ..Default::default()
                })
                .collect()
        }
    }

    pub(crate) fn is_v03(&self) -> bool {
        self.spec.protocol == ProtocolVersion::V0_3
    }

    pub(crate) fn task(&self, id: &str) -> Option<Arc<TaskEntry>> {
        lock(&self.tasks)
            .get(id)
            .cloned()
            .filter(|e| !e.lock().purged)
    }

    /// The content key of a new task created by a message with these parts (see
    /// [`TaskInner::content_key`]).
    pub(crate) fn content_key(&self, parts: &[a2a_protocol::Part]) -> u64 {
        let bytes = serde_json::to_vec(parts).unwrap_or_default();
        let mut seen = lock(&self.content_keys);
        let same = seen.entry(bytes.clone()).or_insert(0);
        let k = crate::content::derive_seed(&[&bytes, &same.to_le_bytes()]);
        *same += 1;
        k
    }

    /// A task or context id (`what` is `task` or `ctx`) in the agent's `id_style`, from the
    /// seed like [`AgentState::make_id`].
    pub(crate) fn mint_id(&self, what: &str, n: u64) -> String {
        let uuid = self.make_id(what, n);
        match self.spec.id_style {
            IdStyle::Uuid => uuid,
            IdStyle::Opaque => {
                let hex = uuid.replace('-', "");
                // `/`, a space, an encoded slash, `?`, `#`, `+`, `:`, `&`, `=`, a non-ASCII
                // letter; it never ends in `:cancel` or `:subscribe`.
                format!(
                    "{what}/{} é%2F?{}#+:&={}",
                    &hex[..8],
                    &hex[8..16],
                    &hex[16..]
                )
            }
        }
    }

    /// A deterministic id from the network seed, this agent and a counter.
    pub(crate) fn make_id(&self, what: &str, n: u64) -> String {
        let s = crate::content::derive_seed(&[
            &self.net.seed.to_le_bytes(),
            self.spec.name.as_bytes(),
            what.as_bytes(),
            &n.to_le_bytes(),
        ]);
        let s2 = crate::content::derive_seed(&[&s.to_le_bytes(), b"hi"]);
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&s.to_le_bytes());
        b[8..].copy_from_slice(&s2.to_le_bytes());
        uuid::Builder::from_random_bytes(b).into_uuid().to_string()
    }
}

/// A task's status, stamped `at`.
pub(crate) fn status(
    state: TaskState,
    parts: Vec<Part>,
    task: &Task,
    msg_id: String,
    at: Timestamp,
) -> TaskStatus {
    TaskStatus {
        state,
        message: (!parts.is_empty()).then(|| Message {
            context_id: Some(task.context_id.clone()),
            task_id: Some(task.id.clone()),
            parts,
            ..Message::agent_text(msg_id, "")
        }),
        timestamp: Some(at),
    }
}
