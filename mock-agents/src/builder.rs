//! The builder, in the style of wiremock: `MockAgent::builder("name")`, then rules made of a
//! matcher, typed [`Step`]s, an optional fault and an optional expectation (`expect(n)`), mounted
//! on the agent; [`MockAgentBuilder::build`] gives the [`AgentSpec`] a [`NetworkSpec`] holds.
//! A rule's expectation is verified when the running [`crate::Network`] is dropped (or by
//! [`crate::Network::verify`]).
//!
//! ```
//! use a2a_mock_agents::{Fault, MockAgent, Step};
//! use a2a_protocol::{Method, TaskState};
//! let agent = MockAgent::builder("flights")
//!     .skill("book-flight")
//!     .queue_fault(Method::SendMessage, Fault::HttpStatus { status: 503, retry_after_s: None }, 2)
//!     .mount(
//!         MockAgent::when()
//!             .text_contains("book")
//!             .named("booking")
//!             .step(Step::state(TaskState::Working))
//!             .step(Step::artifacts(1).chunks(4).chunk_bytes(256))
//!             .step(Step::gate("release"))
//!             .step(Step::state(TaskState::Completed).message("booked"))
//!             .expect(1),
//!     )
//!     .build();
//! let net = MockAgent::network(1, vec![agent]);
//! assert!(net.validate().is_ok());
//! ```

use crate::expect::Times;
use crate::script::{
    AgentSpec, Binding, CancelBehaviour, CardChange, ContentKind, EventKind, ExtensionSpec, Fault,
    IdStyle, JournalSpec, Matcher, Mutation, NetworkSpec, OnWrongAnswer, PartSpec, Pattern,
    ProtocolVersion, QueuedFault, Rule, ScriptStep, SecurityScope, SecuritySpec, SkillSpec,
    TimestampStyle,
};
use a2a_protocol::{ErrorCode, Method, TaskState};
use serde_json::Value;
use std::time::Duration;

/// Entry points of the builder API.
pub struct MockAgent;

impl MockAgent {
    /// Start building an agent with this name (a well-behaved 1.0 agent until configured).
    pub fn builder(name: &str) -> MockAgentBuilder {
        MockAgentBuilder {
            spec: AgentSpec {
                name: name.to_string(),
                ..AgentSpec::default()
            },
        }
    }

    /// Start a rule (matches every new send until narrowed).
    pub fn when() -> RuleBuilder {
        RuleBuilder {
            rule: Rule::default(),
        }
    }

    /// A network of these agents with this seed.
    pub fn network(seed: u64, agents: Vec<AgentSpec>) -> NetworkSpec {
        NetworkSpec {
            seed,
            journal: JournalSpec::default(),
            default_bindings: None,
            tls: false,
            agents,
        }
    }
}

/// Builds one agent.
pub struct MockAgentBuilder {
    spec: AgentSpec,
}

impl MockAgentBuilder {
    /// Serve these bindings, in card order (default: the network's default, else JSON-RPC).
    pub fn bindings(mut self, bindings: impl IntoIterator<Item = Binding>) -> Self {
        self.spec.bindings = Some(bindings.into_iter().collect());
        self
    }

    /// List these bindings in the card, in this order, whether served or not (default: the
    /// served ones): a binding advertised but not served fails (HTTP+JSON 404, gRPC
    /// `UNIMPLEMENTED`).
    pub fn advertised_bindings(mut self, bindings: impl IntoIterator<Item = Binding>) -> Self {
        self.spec.advertised_bindings = Some(bindings.into_iter().collect());
        self
    }

    /// Add a skill.
    pub fn skill(mut self, id: &str) -> Self {
        self.spec.skills.push(SkillSpec {
            id: id.into(),
            output_modes: Vec::new(),
            tags: Vec::new(),
        });
        self
    }
    /// Add a skill shown only on the extended card (which this turns on).
    pub fn extended_skill(mut self, id: &str) -> Self {
        self.spec.extended_skills.push(SkillSpec {
            id: id.into(),
            output_modes: Vec::new(),
            tags: Vec::new(),
        });
        self
    }
    /// Set the card's `defaultInputModes`.
    pub fn input_modes(mut self, modes: &[&str]) -> Self {
        self.spec.input_modes = modes.iter().map(|m| m.to_string()).collect();
        self
    }
    /// Answer -32005 to parts whose `mediaType` is not an input mode.
    pub fn reject_unsupported_input_modes(mut self, on: bool) -> Self {
        self.spec.reject_unsupported_input_modes = on;
        self
    }
    /// Close connections that have not sent complete request headers within `d`.
    pub fn header_timeout(mut self, d: Duration) -> Self {
        self.spec.header_timeout_ms = millis(d);
        self
    }
    /// Answer -32600 (HTTP 408) to a request whose body has not arrived within `d`.
    pub fn body_timeout(mut self, d: Duration) -> Self {
        self.spec.body_timeout_ms = millis(d);
        self
    }
    /// Serve at most `n` connections at once (further ones wait in the listen backlog).
    pub fn max_connections(mut self, n: usize) -> Self {
        self.spec.max_connections = n;
        self
    }
    /// Speak A2A 0.3.
    pub fn v03(mut self) -> Self {
        self.spec.protocol = ProtocolVersion::V0_3;
        self
    }
    /// Set `capabilities.streaming`.
    pub fn streaming(mut self, on: bool) -> Self {
        self.spec.streaming = on;
        self
    }
    /// Set `capabilities.pushNotifications`.
    pub fn push_notifications(mut self, on: bool) -> Self {
        self.spec.push_notifications = on;
        self
    }
    /// Deduplicate `messageId` or not.
    pub fn dedup(mut self, on: bool) -> Self {
        self.spec.dedup_message_id = on;
        self
    }
    /// Deliver every push notification this many extra times.
    pub fn push_duplicates(mut self, n: u32) -> Self {
        self.spec.push_duplicates = n;
        self
    }
    /// Depth limit for incoming `x-deleg`.
    pub fn max_depth(mut self, d: u32) -> Self {
        self.spec.max_depth = d;
        self
    }
    /// Keep streams open (or not) on interrupted states.
    pub fn close_stream_on_interrupt(mut self, on: bool) -> Self {
        self.spec.close_stream_on_interrupt = on;
        self
    }
    /// Longest wait of a blocking `SendMessage`.
    pub fn max_block(mut self, d: Duration) -> Self {
        self.spec.max_block_ms = millis(d);
        self
    }
    /// Queue a fault for the next `times` calls of `method`, before any rule (see
    /// [`QueuedFault`]); faults queued for one method apply in the order queued.
    pub fn queue_fault(mut self, method: Method, fault: Fault, times: u32) -> Self {
        self.spec.queued_faults.push(QueuedFault {
            method: method.as_str().to_string(),
            times,
            fault,
        });
        self
    }
    /// Put this `tenant` on every interface of the card; requests must carry it (see
    /// [`AgentSpec::tenant`]).
    pub fn tenant(mut self, tenant: &str) -> Self {
        self.spec.tenant = Some(tenant.to_string());
        self
    }
    /// Serve this agent over TLS with this certificate and interface scheme (see
    /// [`AgentSpec::tls`]).
    pub fn tls(mut self, tls: crate::tls::AgentTls) -> Self {
        self.spec.tls = Some(tls);
        self
    }
    /// Advertise this `protocolVersion` (a 1.0 version such as `1.0.3`) on the card's interfaces.
    pub fn card_protocol_version(mut self, version: &str) -> Self {
        self.spec.card_protocol_version = Some(version.to_string());
        self
    }
    /// List an extension on the card; a `required` one must be in every request's
    /// `A2A-Extensions` (else -32008).
    pub fn extension(mut self, uri: &str, description: &str, required: bool) -> Self {
        self.spec.extensions.push(ExtensionSpec {
            uri: uri.to_string(),
            description: description.to_string(),
            required,
        });
        self
    }
    /// The card's `Cache-Control: max-age` (whole seconds; default 60 s).
    pub fn card_max_age(mut self, d: Duration) -> Self {
        self.spec.card_max_age_s = d.as_secs();
        self
    }
    /// Send the card with `Cache-Control`, `ETag` and `Last-Modified` (default) or with none.
    pub fn card_cache_headers(mut self, on: bool) -> Self {
        self.spec.card_cache_headers = on;
        self
    }
    /// From `after` past the network's start, the card's interfaces carry `tenant` (the earlier
    /// tenants keep working). Changes must come in increasing time.
    pub fn card_change(mut self, after: Duration, tenant: &str) -> Self {
        self.spec.card_changes.push(CardChange {
            after_ms: millis(after),
            tenant: tenant.to_string(),
        });
        self
    }
    /// Declare an HTTP authentication scheme on the card whose credential is this exact
    /// `Authorization` value (`Bearer agent-cred-7`), required for the requests of `scope`.
    pub fn security(mut self, credential: &str, scope: SecurityScope) -> Self {
        self.spec.security = Some(SecuritySpec {
            credential: credential.to_string(),
            scope,
        });
        self
    }
    /// The extended card's interfaces carry this tenant (listed first) and the agent accepts
    /// it; turns the extended card on.
    pub fn extended_tenant(mut self, tenant: &str) -> Self {
        self.spec.extended_tenant = Some(tenant.to_string());
        self
    }
    /// The shape of the task and context ids the agent mints.
    pub fn id_style(mut self, style: IdStyle) -> Self {
        self.spec.id_style = style;
        self
    }
    /// Keep messages in task history (default `true`); `false`: every Task the agent returns
    /// carries no `history`, whatever `historyLength` asks (spec §3.7).
    pub fn keep_history(mut self, on: bool) -> Self {
        self.spec.keep_history = on;
        self
    }
    /// Return at most `n` tasks per `ListTasks` page, whatever `pageSize` asks.
    pub fn list_page_size_max(mut self, n: u32) -> Self {
        self.spec.list_page_size_max = Some(n);
        self
    }
    /// The form of every timestamp written in JSON (default [`TimestampStyle::Millis`]).
    pub fn timestamp_style(mut self, style: TimestampStyle) -> Self {
        self.spec.timestamp_style = style;
        self
    }
    /// Mount a rule (first mounted, first matched).
    pub fn mount(mut self, rule: RuleBuilder) -> Self {
        self.spec.rules.push(rule.rule);
        self
    }
    /// The finished agent spec.
    pub fn build(self) -> AgentSpec {
        self.spec
    }
}

/// Builds one rule.
pub struct RuleBuilder {
    rule: Rule,
}

impl RuleBuilder {
    /// Match this JSON-RPC method.
    pub fn method(mut self, m: Method) -> Self {
        self.rule.when.method = Some(m.as_str().into());
        self
    }
    /// Match this skill (`metadata.skill`).
    pub fn skill(mut self, s: &str) -> Self {
        self.rule.when.skill = Some(s.into());
        self
    }
    /// Match messages whose text contains this.
    pub fn text_contains(mut self, t: &str) -> Self {
        self.rule.when.text_contains = Some(t.into());
        self
    }
    /// Match messages whose text equals this.
    pub fn text_equals(mut self, t: &str) -> Self {
        self.rule.when.text_equals = Some(t.into());
        self
    }
    /// Match messages with a data part holding `value` at JSON `pointer`.
    pub fn data(mut self, pointer: &str, value: Value) -> Self {
        self.rule
            .when
            .data
            .get_or_insert_with(Default::default)
            .insert(pointer.into(), value);
        self
    }
    /// Match the n-th new send.
    pub fn round(mut self, n: u32) -> Self {
        self.rule.when.round = Some(n);
        self
    }
    /// Match this exact `messageId`.
    pub fn message_id(mut self, id: &str) -> Self {
        self.rule.when.message_id = Some(id.into());
        self
    }
    /// Match a `messageId` starting with this (the longest matching prefix wins).
    pub fn message_id_prefix(mut self, prefix: &str) -> Self {
        self.rule.when.message_id_prefix = Some(prefix.into());
        self
    }
    /// Match a `messageId` against a regular expression (`regex` crate syntax, unanchored).
    ///
    /// # Panics
    /// If `re` is not a valid regular expression (a bug in the test that builds the rule).
    pub fn message_id_regex(mut self, re: &str) -> Self {
        match Pattern::new(re) {
            Ok(p) => self.rule.when.message_id_regex = Some(p),
            Err(e) => panic!("message_id_regex({re:?}): {e}"),
        }
        self
    }
    /// Match this `contextId`.
    pub fn context_id(mut self, id: &str) -> Self {
        self.rule.when.context_id = Some(id.into());
        self
    }
    /// Match messages that carry a `taskId` (`true`: continuations) or none (`false`).
    pub fn has_task_id(mut self, present: bool) -> Self {
        self.rule.when.has_task_id = Some(present);
        self
    }
    /// Match requests whose message or request `metadata` has this key (repeatable: all keys).
    pub fn metadata_key(mut self, key: &str) -> Self {
        self.rule
            .when
            .metadata_keys
            .get_or_insert_with(Vec::new)
            .push(key.into());
        self
    }
    /// Match messages that list `referenceTaskIds` (`true`) or none (`false`).
    pub fn has_reference_task_ids(mut self, present: bool) -> Self {
        self.rule.when.has_reference_task_ids = Some(present);
        self
    }
    /// Try this rule before rules of lower priority (default 0).
    pub fn priority(mut self, p: i32) -> Self {
        self.rule.priority = p;
        self
    }
    /// Replace the whole matcher.
    pub fn matcher(mut self, m: Matcher) -> Self {
        self.rule.when = m;
        self
    }
    /// Name the rule in expectation reports (default: a description of its matcher).
    pub fn named(mut self, name: &str) -> Self {
        self.rule.name = Some(name.into());
        self
    }
    /// Apply to at most `n` requests, then fall through to later rules.
    pub fn up_to_n_times(mut self, n: u32) -> Self {
        self.rule.times = Some(n);
        self
    }
    /// Expect this rule to match this many requests (`2`, `1..`, `2..=4`), verified when the
    /// network is dropped or by [`crate::Network::verify`].
    pub fn expect(mut self, times: impl Into<Times>) -> Self {
        self.rule.expect = Some(times.into());
        self
    }
    /// Inject a fault.
    pub fn fault(mut self, f: Fault) -> Self {
        self.rule.fault = Some(f);
        self
    }
    /// Add a wire mutation.
    pub fn mutate(mut self, m: Mutation) -> Self {
        self.rule.mutate.push(m);
        self
    }
    /// What a cancel does.
    pub fn on_cancel(mut self, c: CancelBehaviour) -> Self {
        self.rule.on_cancel = c;
        self
    }
    /// Add a step: a [`Step`] constructor's result, or a raw [`ScriptStep`].
    pub fn step(mut self, s: impl Into<ScriptStep>) -> Self {
        self.rule.steps.push(s.into());
        self
    }
    /// Shorthand: move to a state.
    pub fn state(self, state: TaskState) -> Self {
        self.step(Step::state(state))
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Typed constructors of script steps; each returns a step (or a small builder of one) that
/// [`RuleBuilder::step`] accepts.
pub struct Step;

impl Step {
    /// Answer with a `Message` and create no task (must be the only step).
    pub fn reply(text: &str) -> ScriptStep {
        ScriptStep::Reply {
            text: text.into(),
            parts: Vec::new(),
        }
    }
    /// Answer with a `Message` of these literal parts and create no task (must be the only step).
    pub fn reply_parts(parts: Vec<PartSpec>) -> ScriptStep {
        ScriptStep::Reply {
            text: String::new(),
            parts,
        }
    }
    /// An artifact of literal parts ([`ArtifactStep::part`], or chunked with
    /// [`ArtifactStep::chunk`]).
    pub fn artifact() -> ArtifactStep {
        ArtifactStep::default()
    }
    /// Answer with this JSON-RPC error and do nothing else (must be the only step).
    pub fn error(code: ErrorCode) -> ScriptStep {
        ScriptStep::Error {
            code: code.code(),
            message: None,
        }
    }
    /// Move the task to a state.
    pub fn state(state: TaskState) -> StateStep {
        StateStep {
            state,
            message: None,
            parts: Vec::new(),
            delay: Duration::ZERO,
        }
    }
    /// Stream `count` artifacts generated from the seed (one 1 KiB text chunk each by default).
    pub fn artifacts(count: u32) -> ArtifactsStep {
        ArtifactsStep {
            count,
            chunks: 1,
            chunk_bytes: 1024,
            content: ContentKind::Text,
            text: None,
            interleave: false,
            media_type: None,
            omit_last_chunk: false,
            delay: Duration::ZERO,
        }
    }
    /// One artifact whose part is a `url` to this agent's blob endpoint serving `bytes` bytes.
    pub fn artifact_url(bytes: u64) -> ScriptStep {
        ScriptStep::ArtifactUrl {
            bytes,
            media_type: None,
            target: crate::script::UrlTarget::Blob,
        }
    }
    /// One artifact whose part is a `url` a delegator must not fetch (see
    /// [`crate::script::UrlTarget`]); the trap server starts when the target needs it.
    pub fn artifact_forbidden_url(target: crate::script::UrlTarget) -> ScriptStep {
        ScriptStep::ArtifactUrl {
            bytes: 1000,
            media_type: None,
            target,
        }
    }
    /// One artifact with one `data` part.
    pub fn data_artifact(data: Value) -> ScriptStep {
        ScriptStep::DataArtifact {
            data,
            media_type: None,
        }
    }
    /// Ask for input (any answer continues, one round, 30 s timeout until configured).
    pub fn input_required(question: &str) -> InputStep {
        InputStep {
            question: question.into(),
            expect: None,
            rounds: 1,
            on_wrong: OnWrongAnswer::Reask,
            max_wrong: 3,
        }
    }
    /// Ask for credentials; only a message with `Authorization: <credential>` continues.
    pub fn auth_required(credential: &str) -> ScriptStep {
        ScriptStep::AuthRequired {
            credential: credential.into(),
            message: None,
            max_wrong: 3,
            timeout_ms: 30_000,
            resume_after_ms: None,
        }
    }
    /// [`Step::auth_required`] that resumes by itself `after` AUTH_REQUIRED, without any client
    /// message, as if the credential arrived out of band (`after` must be below 30 s).
    pub fn auth_required_resuming(credential: &str, after: Duration) -> ScriptStep {
        ScriptStep::AuthRequired {
            credential: credential.into(),
            message: None,
            max_wrong: 3,
            timeout_ms: 30_000,
            resume_after_ms: Some(millis(after)),
        }
    }
    /// POST to every webhook of this task a status update in `state` for a task and context the
    /// client never saw.
    pub fn push_foreign(state: TaskState) -> ScriptStep {
        ScriptStep::PushForeign {
            state: state.as_str().into(),
            message: None,
        }
    }
    /// Send the stream subscribers a copy of a well-formed event lacking the REQUIRED field
    /// `omit` (a dotted path such as `artifact.artifactId`, `taskId`, `status.state`, `id`),
    /// the event chosen from the field ([`EventKind::for_omitted`]).
    pub fn malformed_event(omit: &str) -> ScriptStep {
        ScriptStep::MalformedEvent {
            event: None,
            omit: omit.into(),
        }
    }
    /// [`Step::malformed_event`] copying this kind of event (`taskId` of an artifact update).
    pub fn malformed_event_of(event: EventKind, omit: &str) -> ScriptStep {
        ScriptStep::MalformedEvent {
            event: Some(event),
            omit: omit.into(),
        }
    }
    /// Delegate `text` to another agent of the network and wait for it.
    pub fn delegate(to: &str, text: &str) -> ScriptStep {
        ScriptStep::Delegate {
            to: to.into(),
            text: text.into(),
            skill: None,
            margin_ms: 1000,
            budget_share: 0.5,
        }
    }
    /// Wait.
    pub fn wait(d: Duration) -> ScriptStep {
        ScriptStep::Wait { ms: millis(d) }
    }
    /// Hold the task until the test opens this gate ([`crate::Network::open_gate`]); the task
    /// fails after 30 s without it.
    pub fn gate(name: &str) -> ScriptStep {
        Self::gate_within(name, Duration::from_secs(30))
    }
    /// [`Step::gate`] with another bound on the wait.
    pub fn gate_within(name: &str, timeout: Duration) -> ScriptStep {
        ScriptStep::Gate {
            gate: name.into(),
            timeout_ms: millis(timeout),
        }
    }
    /// One hand-made artifact chunk: a text part for artifact `artifact_id`, neither appended
    /// nor last until configured ([`ChunkStep::append`], [`ChunkStep::last`]).
    pub fn chunk(artifact_id: &str, text: &str) -> ChunkStep {
        ChunkStep {
            artifact_id: artifact_id.into(),
            text: text.into(),
            append: false,
            last_chunk: false,
        }
    }
    /// A status update whose state is a name outside the protocol's enum (such as
    /// `TASK_STATE_PAUSED`); the task's own state does not change.
    pub fn unknown_state(name: &str) -> ScriptStep {
        ScriptStep::UnknownState { state: name.into() }
    }
    /// Emit this exact text as an SSE `data:` payload.
    pub fn raw_sse(data: &str) -> ScriptStep {
        ScriptStep::RawSse { data: data.into() }
    }
    /// Emit this value as the `result` of a stream event.
    pub fn raw_event(result: Value) -> ScriptStep {
        ScriptStep::RawEvent { result }
    }
    /// Forget the task.
    pub fn purge() -> ScriptStep {
        ScriptStep::Purge
    }
    /// Close every open stream of the task now.
    pub fn close_streams() -> ScriptStep {
        ScriptStep::CloseStreams
    }
}

/// A `state` step being built ([`Step::state`]).
#[derive(Debug, Clone)]
pub struct StateStep {
    state: TaskState,
    message: Option<String>,
    parts: Vec<PartSpec>,
    delay: Duration,
}

impl StateStep {
    /// Add a literal part to the status message (after the `message` text, if any).
    pub fn part(mut self, p: PartSpec) -> Self {
        self.parts.push(p);
        self
    }
    /// The status message text.
    pub fn message(mut self, text: &str) -> Self {
        self.message = Some(text.into());
        self
    }
    /// Wait this long first.
    pub fn after(mut self, d: Duration) -> Self {
        self.delay = d;
        self
    }
}

impl From<StateStep> for ScriptStep {
    fn from(s: StateStep) -> ScriptStep {
        ScriptStep::State {
            state: s.state.as_str().into(),
            message: s.message,
            parts: s.parts,
            delay_ms: millis(s.delay),
        }
    }
}

/// An `artifact` step being built ([`Step::artifact`]): literal parts, whole or chunked.
#[derive(Debug, Clone, Default)]
pub struct ArtifactStep {
    artifact_id: Option<String>,
    name: Option<String>,
    description: Option<String>,
    parts: Vec<PartSpec>,
    chunks: Vec<Vec<PartSpec>>,
    delay: Duration,
}

impl ArtifactStep {
    /// The artifact id (default `artifact-N`).
    pub fn id(mut self, id: &str) -> Self {
        self.artifact_id = Some(id.into());
        self
    }
    /// The artifact's name (default: its id).
    pub fn name(mut self, name: &str) -> Self {
        self.name = Some(name.into());
        self
    }
    /// The artifact's description.
    pub fn description(mut self, d: &str) -> Self {
        self.description = Some(d.into());
        self
    }
    /// Add a part (the artifact is sent in one event).
    pub fn part(mut self, p: PartSpec) -> Self {
        self.parts.push(p);
        self
    }
    /// Add a chunk of parts (one event each; the first starts the artifact, the last has
    /// `lastChunk`).
    pub fn chunk(mut self, parts: Vec<PartSpec>) -> Self {
        self.chunks.push(parts);
        self
    }
    /// Wait this long between chunks.
    pub fn chunk_delay(mut self, d: Duration) -> Self {
        self.delay = d;
        self
    }
}

impl From<ArtifactStep> for ScriptStep {
    fn from(s: ArtifactStep) -> ScriptStep {
        ScriptStep::Artifact {
            artifact_id: s.artifact_id,
            name: s.name,
            description: s.description,
            metadata: None,
            parts: s.parts,
            chunks: s.chunks,
            delay_ms: millis(s.delay),
        }
    }
}

/// An `artifacts` step being built ([`Step::artifacts`]); the fields of
/// [`ScriptStep::Artifacts`].
#[derive(Debug, Clone)]
pub struct ArtifactsStep {
    count: u32,
    chunks: u32,
    chunk_bytes: usize,
    content: ContentKind,
    text: Option<String>,
    interleave: bool,
    media_type: Option<String>,
    omit_last_chunk: bool,
    delay: Duration,
}

impl ArtifactsStep {
    /// Chunks per artifact.
    pub fn chunks(mut self, n: u32) -> Self {
        self.chunks = n;
        self
    }
    /// Bytes per chunk.
    pub fn chunk_bytes(mut self, n: usize) -> Self {
        self.chunk_bytes = n;
        self
    }
    /// `raw` (base64) parts instead of text.
    pub fn raw(mut self) -> Self {
        self.content = ContentKind::Raw;
        self
    }
    /// Literal content instead of generated bytes (split into the chunks).
    pub fn text(mut self, t: &str) -> Self {
        self.text = Some(t.into());
        self
    }
    /// Send the chunks of all artifacts round robin.
    pub fn interleave(mut self) -> Self {
        self.interleave = true;
        self
    }
    /// `mediaType` of every part.
    pub fn media_type(mut self, m: &str) -> Self {
        self.media_type = Some(m.into());
        self
    }
    /// Never set `lastChunk` (a protocol violation).
    pub fn omit_last_chunk(mut self) -> Self {
        self.omit_last_chunk = true;
        self
    }
    /// Wait this long between chunks.
    pub fn chunk_delay(mut self, d: Duration) -> Self {
        self.delay = d;
        self
    }
}

impl From<ArtifactsStep> for ScriptStep {
    fn from(s: ArtifactsStep) -> ScriptStep {
        ScriptStep::Artifacts {
            count: s.count,
            chunks: s.chunks,
            chunk_bytes: s.chunk_bytes,
            content: s.content,
            text: s.text,
            interleave: s.interleave,
            media_type: s.media_type,
            omit_last_chunk: s.omit_last_chunk,
            delay_ms: millis(s.delay),
        }
    }
}

/// A `chunk` step being built ([`Step::chunk`]).
#[derive(Debug, Clone)]
pub struct ChunkStep {
    artifact_id: String,
    text: String,
    append: bool,
    last_chunk: bool,
}

impl ChunkStep {
    /// Append to the artifact (default: start or replace it).
    pub fn append(mut self) -> Self {
        self.append = true;
        self
    }
    /// Set `lastChunk`: the artifact is complete.
    pub fn last(mut self) -> Self {
        self.last_chunk = true;
        self
    }
}

impl From<ChunkStep> for ScriptStep {
    fn from(s: ChunkStep) -> ScriptStep {
        ScriptStep::Chunk {
            artifact_id: s.artifact_id,
            text: s.text,
            append: s.append,
            last_chunk: s.last_chunk,
        }
    }
}

/// An `input_required` step being built ([`Step::input_required`]).
#[derive(Debug, Clone)]
pub struct InputStep {
    question: String,
    expect: Option<Matcher>,
    rounds: u32,
    on_wrong: OnWrongAnswer,
    max_wrong: u32,
}

impl InputStep {
    /// Only answers containing this text are right.
    pub fn expect_text(mut self, t: &str) -> Self {
        self.expect = Some(Matcher {
            text_contains: Some(t.into()),
            ..Matcher::default()
        });
        self
    }
    /// Only answers this matcher accepts are right (its message-level fields count).
    pub fn expect(mut self, m: Matcher) -> Self {
        self.expect = Some(m);
        self
    }
    /// With the default "ask again", wrong answers tolerated before the task fails (default 3).
    pub fn max_wrong(mut self, n: u32) -> Self {
        self.max_wrong = n;
        self
    }
    /// Ask this many questions in a row.
    pub fn rounds(mut self, n: u32) -> Self {
        self.rounds = n;
        self
    }
    /// Fail the task at the first wrong answer (default: ask again).
    pub fn fail_on_wrong(mut self) -> Self {
        self.on_wrong = OnWrongAnswer::Fail;
        self
    }
}

impl From<InputStep> for ScriptStep {
    fn from(s: InputStep) -> ScriptStep {
        ScriptStep::InputRequired {
            question: s.question,
            expect: s.expect,
            rounds: s.rounds,
            on_wrong: s.on_wrong,
            max_wrong: s.max_wrong,
            timeout_ms: 30_000,
        }
    }
}
