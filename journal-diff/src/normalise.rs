//! The canonical form of a journal: entries grouped by agent, then by task ("thread"), then by
//! section (the task's own life, the push notifications about it, the requests about it), with
//! every timing value, port and id replaced by a placeholder. See [`super::IGNORED`].

use super::{Line, NormalisedJournal};
use a2a_mock_agents::{Entry, Event};
use regex::Regex;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::LazyLock;

/// The kinds of ids the placeholders distinguish, each numbered by first appearance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Task,
    Context,
    Message,
    /// A JSON-RPC id: numbered within its request (an id is only meaningful as the pairing of a
    /// request with its responses).
    Rpc,
    /// The journal's request number: numbered within its request, like [`Kind::Rpc`].
    Req,
    /// Push-notification tokens and credentials.
    Token,
    Port,
    /// A card's entity tag (`etag` of a card response, `if-none-match`): a hash of card bytes
    /// that hold the agents' ports.
    Etag,
    /// Any other UUID.
    Uuid,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Task => "task",
            Kind::Context => "context",
            Kind::Message => "message",
            Kind::Rpc => "rpc",
            Kind::Req => "req",
            Kind::Token => "token",
            Kind::Port => "port",
            Kind::Etag => "etag",
            Kind::Uuid => "uuid",
        }
    }

    /// Numbered per request rather than per journal.
    fn per_request(self) -> bool {
        matches!(self, Kind::Rpc | Kind::Req)
    }
}

/// The kind of the value under an object key, if it is an id. `id` is a JSON-RPC id in an
/// envelope (an object with `jsonrpc`) and a task id in a task (an object with `status`).
fn key_kind(key: &str, envelope: bool, task: bool) -> Option<Kind> {
    Some(match key {
        "task_id" | "taskId" | "child_task_id" | "referenceTaskIds" => Kind::Task,
        "context_id" | "contextId" => Kind::Context,
        "message_id" | "messageId" => Kind::Message,
        "rpc_id" => Kind::Rpc,
        "req" => Kind::Req,
        "token" | "credentials" | "x-a2a-notification-token" => Kind::Token,
        "etag" | "if-none-match" => Kind::Etag,
        "id" if envelope => Kind::Rpc,
        "id" if task => Kind::Task,
        _ => return None,
    })
}

/// Keys whose string values are points in time.
const TIME_KEYS: &[&str] = &[
    "timestamp",
    "deadline",
    "date",
    "expires_at",
    "expiresAt",
    "last-modified",
    "if-modified-since",
];
/// Request headers left out: transport details that follow from the rest.
const DROPPED_HEADERS: &[&str] = &["content-length"];

static UUID: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}").ok()
});
static PORT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(127\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}|localhost|\[::1\]):([0-9]{1,5})").ok()
});
static TIME: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})")
        .ok()
});

/// The ids a journal holds, by raw value, learnt from the keys they appear under.
#[derive(Default)]
struct Known {
    kinds: HashMap<String, Kind>,
}

impl Known {
    fn collect(entries: &[Entry]) -> Known {
        let mut k = Known::default();
        for e in entries {
            if let Ok(v) = serde_json::to_value(e) {
                k.learn(&v);
            }
        }
        k
    }

    fn learn(&mut self, v: &Value) {
        match v {
            Value::Object(m) => {
                let envelope = m.contains_key("jsonrpc");
                let task = m.contains_key("status");
                for (key, x) in m {
                    match key_kind(key, envelope, task) {
                        Some(kind) if !kind.per_request() => self.learn_id(kind, x),
                        _ => self.learn(x),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| self.learn(x)),
            _ => {}
        }
    }

    fn learn_id(&mut self, kind: Kind, v: &Value) {
        match v {
            Value::String(s) if !s.is_empty() => {
                self.kinds.entry(s.clone()).or_insert(kind);
            }
            Value::Array(a) => a.iter().for_each(|x| self.learn_id(kind, x)),
            _ => {}
        }
    }
}

/// Placeholders handed out so far.
#[derive(Default)]
struct Ids {
    global: HashMap<(Kind, String), usize>,
    counts: HashMap<Kind, usize>,
    /// Per-request ids of the request being normalised.
    local: HashMap<(Kind, String), usize>,
    local_counts: HashMap<Kind, usize>,
}

impl Ids {
    fn placeholder(&mut self, kind: Kind, raw: &str) -> String {
        let (table, counts) = if kind.per_request() {
            (&mut self.local, &mut self.local_counts)
        } else {
            (&mut self.global, &mut self.counts)
        };
        let n = *table.entry((kind, raw.to_string())).or_insert_with(|| {
            let c = counts.entry(kind).or_insert(0);
            *c += 1;
            *c
        });
        format!("<{}#{n}>", kind.name())
    }

    fn start_request(&mut self) {
        self.local.clear();
        self.local_counts.clear();
    }
}

/// Normalises values with the journal's known ids and the placeholders so far.
struct Normaliser<'a> {
    known: &'a Known,
    ids: Ids,
}

impl Normaliser<'_> {
    fn entry(&mut self, e: &Entry) -> Value {
        let mut v = serde_json::to_value(e).unwrap_or(Value::Null);
        if let Value::Object(m) = &mut v {
            m.remove("seq");
            m.remove("at_us");
            m.remove("agent");
            if matches!(e.event, Event::ArtifactSent { .. }) {
                // The count follows from the `artifact_chunk` entries, compared on their own;
                // a recording cannot know it for an artifact a task snapshot delivered.
                m.remove("chunks");
            }
            if let Some(Value::Object(h)) = m.get_mut("headers") {
                for d in DROPPED_HEADERS {
                    h.remove(*d);
                }
            }
        }
        self.value(&mut v);
        v
    }

    fn value(&mut self, v: &mut Value) {
        match v {
            Value::Object(m) => {
                let envelope = m.contains_key("jsonrpc");
                let task = m.contains_key("status");
                for (key, x) in m.iter_mut() {
                    if TIME_KEYS.contains(&key.as_str()) && x.is_string() {
                        *x = Value::String("<time>".into());
                    } else if let Some(kind) = key_kind(key, envelope, task) {
                        self.id(kind, x);
                    } else {
                        self.value(x);
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| self.value(x)),
            Value::String(s) => *s = self.text(s),
            _ => {}
        }
    }

    fn id(&mut self, kind: Kind, v: &mut Value) {
        match v {
            Value::String(s) => *s = self.ids.placeholder(kind, s),
            Value::Number(n) => *v = Value::String(self.ids.placeholder(kind, &n.to_string())),
            Value::Array(a) => a.iter_mut().for_each(|x| self.id(kind, x)),
            _ => self.value(v),
        }
    }

    /// A string: a known id as a whole, else its ports, times, UUIDs and known-id path segments.
    fn text(&mut self, s: &str) -> String {
        if let Some(kind) = self.known.kinds.get(s) {
            return self.ids.placeholder(*kind, s);
        }
        let mut out = s.to_string();
        if let Some(re) = PORT.as_ref()
            && re.is_match(&out)
        {
            out = re
                .replace_all(&out, |c: &regex::Captures<'_>| {
                    // The agents' own host and its names are one; another loopback address
                    // (the trap on 127.0.0.9) keeps its address.
                    let host = match &c[1] {
                        "localhost" | "[::1]" => "127.0.0.1",
                        h => h,
                    };
                    format!("{host}:{}", self.ids.placeholder(Kind::Port, &c[2]))
                })
                .into_owned();
        }
        if let Some(re) = TIME.as_ref() {
            out = re.replace_all(&out, "<time>").into_owned();
        }
        if let Some(re) = UUID.as_ref()
            && re.is_match(&out)
        {
            let known = self.known;
            out = re
                .replace_all(&out, |c: &regex::Captures<'_>| {
                    let kind = known.kinds.get(&c[0]).copied().unwrap_or(Kind::Uuid);
                    self.ids.placeholder(kind, &c[0])
                })
                .into_owned();
        }
        if out.contains('/') {
            // Paths such as `/tasks/<id>:cancel` or `tasks/<id>/pushNotificationConfigs/<id>`.
            let known = self.known;
            out = out
                .split_inclusive(['/', ':'])
                .map(|seg| {
                    let (body, sep) = match seg.strip_suffix(['/', ':']) {
                        Some(b) => (b, &seg[b.len()..]),
                        None => (seg, ""),
                    };
                    match known.kinds.get(body) {
                        Some(kind) => format!("{}{sep}", self.ids.placeholder(*kind, body)),
                        None => seg.to_string(),
                    }
                })
                .collect();
        }
        out
    }
}

/// Where an entry goes within its thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Section {
    Life,
    /// Resent messages the agent deduplicated to the task (`task_created` with `dedup`): they
    /// come when the delegator resends, not at a point of the task's life.
    Resends,
    Pushes,
    Requests,
}

impl Section {
    fn name(self) -> &'static str {
        match self {
            Section::Life => "task life",
            Section::Resends => "deduplicated resends",
            Section::Pushes => "pushes",
            Section::Requests => "requests",
        }
    }
}

/// The entries about one task of one agent (or, with no task, the agent's other requests).
#[derive(Default)]
struct Thread<'a> {
    task: Option<String>,
    life: Vec<&'a Entry>,
    resends: Vec<&'a Entry>,
    pushes: Vec<&'a Entry>,
    /// One request and what answered it each, in the order the requests arrived.
    exchanges: Vec<Vec<&'a Entry>>,
}

impl<'a> Thread<'a> {
    fn first_seq(&self) -> u64 {
        [
            self.life.first(),
            self.resends.first(),
            self.pushes.first(),
            self.exchanges.first().and_then(|x| x.first()),
        ]
        .into_iter()
        .flatten()
        .map(|e| e.seq)
        .min()
        .unwrap_or(0)
    }

    /// The entry that names the thread whatever the timing: its first request, else its first
    /// event.
    fn head(&self) -> Option<&'a Entry> {
        self.exchanges
            .first()
            .and_then(|x| x.first())
            .or(self.life.first())
            .or(self.resends.first())
            .or(self.pushes.first())
            .copied()
    }
}

/// The task id a task-level event is about, and its section.
fn task_event(e: &Event) -> Option<(&str, Section)> {
    Some(match e {
        Event::TaskCreated {
            task_id,
            dedup: true,
            ..
        } => (task_id.as_str(), Section::Resends),
        Event::TaskCreated { task_id, .. }
        | Event::TaskState { task_id, .. }
        | Event::Continued { task_id, .. }
        | Event::ArtifactChunk { task_id, .. }
        | Event::ArtifactSent { task_id, .. }
        | Event::Delegated { task_id, .. }
        | Event::TaskPurged { task_id }
        | Event::LimitRejected { task_id, .. } => (task_id.as_str(), Section::Life),
        Event::Push { task_id, .. } => (task_id.as_str(), Section::Pushes),
        _ => return None,
    })
}

/// The first string in `v` (keys in order) that is one of `tasks`.
fn find_task<'v>(v: &'v Value, tasks: &HashSet<&str>) -> Option<&'v str> {
    match v {
        Value::String(s) if tasks.contains(s.as_str()) => Some(s),
        Value::String(s) => s.split(['/', ':']).find(|seg| tasks.contains(seg)),
        Value::Array(a) => a.iter().find_map(|x| find_task(x, tasks)),
        Value::Object(m) => m.values().find_map(|x| find_task(x, tasks)),
        _ => None,
    }
}

/// The thread of `agent` for `task`, made on first use.
fn thread_index<'a, 'e>(
    list: &mut Vec<Thread<'e>>,
    thread_of: &mut HashMap<(&'a str, Option<&'a str>), usize>,
    agent: &'a str,
    task: Option<&'a str>,
) -> usize {
    *thread_of.entry((agent, task)).or_insert_with(|| {
        list.push(Thread {
            task: task.map(str::to_string),
            ..Thread::default()
        });
        list.len() - 1
    })
}

/// The task a request is about: the message's `taskId`, else the task its `messageId` created,
/// else the first of the agent's task ids anywhere in its params (`GetTask`'s `id`, a path).
fn request_task<'v>(
    params: &'v Value,
    of_agent: &HashSet<&'v str>,
    created_by: impl Fn(&str) -> Option<&'v str>,
) -> Option<&'v str> {
    let message = params.get("message");
    message
        .and_then(|m| m.get("taskId"))
        .and_then(Value::as_str)
        .filter(|t| of_agent.contains(t))
        .or_else(|| created_by(message?.get("messageId")?.as_str()?))
        .or_else(|| find_task(params, of_agent))
}

/// Split the entries into threads, per agent.
fn threads(entries: &[Entry]) -> BTreeMap<String, Vec<Thread<'_>>> {
    let mut tasks: HashMap<&str, HashSet<&str>> = HashMap::new();
    let mut created_by: HashMap<(&str, &str), &str> = HashMap::new();
    for e in entries {
        if let Some((t, _)) = task_event(&e.event) {
            tasks.entry(e.agent.as_str()).or_default().insert(t);
        }
        if let Event::TaskCreated {
            task_id,
            message_id,
            ..
        } = &e.event
        {
            created_by
                .entry((e.agent.as_str(), message_id.as_str()))
                .or_insert(task_id.as_str());
        }
    }
    let none = HashSet::new();
    let mut by_agent: BTreeMap<String, Vec<Thread<'_>>> = BTreeMap::new();
    // (agent, task) -> thread index; (agent, req) -> (thread index, exchange index).
    let mut thread_of: HashMap<(&str, Option<&str>), usize> = HashMap::new();
    let mut exchange_of: HashMap<(&str, u64), (usize, usize)> = HashMap::new();
    let mut order: Vec<&Entry> = entries.iter().collect();
    order.sort_by_key(|e| e.seq);
    for e in order {
        let agent = e.agent.as_str();
        let list = by_agent.entry(agent.to_string()).or_default();
        if let Some((t, section)) = task_event(&e.event) {
            let i = thread_index(list, &mut thread_of, agent, Some(t));
            match section {
                Section::Pushes => list[i].pushes.push(e),
                Section::Resends => list[i].resends.push(e),
                _ => list[i].life.push(e),
            }
            continue;
        }
        let Some(req) = e.event.req() else {
            // Not about a task nor a request (a blob served by reference): the agent's own.
            let i = thread_index(list, &mut thread_of, agent, None);
            list[i].life.push(e);
            continue;
        };
        let known_exchange = exchange_of.get(&(agent, req)).copied();
        match (&e.event, known_exchange) {
            (Event::Request { .. }, _) | (_, None) => {
                // A request (or an answer with no request recorded: an exchange of its own).
                let task = match &e.event {
                    Event::Request { params, .. } => {
                        let of_agent = tasks.get(agent).unwrap_or(&none);
                        request_task(params, of_agent, |mid| {
                            created_by.get(&(agent, mid)).copied()
                        })
                    }
                    _ => None,
                };
                let i = thread_index(list, &mut thread_of, agent, task);
                list[i].exchanges.push(vec![e]);
                exchange_of.insert((agent, req), (i, list[i].exchanges.len() - 1));
            }
            (_, Some((i, x))) => list[i].exchanges[x].push(e),
        }
    }
    by_agent
}

/// An entry of a stream (an SSE event or its end).
pub(super) fn is_stream_entry(e: &Event) -> bool {
    matches!(e, Event::SseEvent { .. } | Event::StreamClosed { .. })
}

/// The requests (agent, request number) that resent a message the agent had already taken
/// and deduplicated to its task (`task_created` with `dedup`): a stream they open joins the
/// task where timing says, as a `SubscribeToTask` does.
fn resends_joining_a_task(entries: &[Entry]) -> HashSet<(&str, u64)> {
    let dedup: HashSet<(&str, &str)> = entries
        .iter()
        .filter_map(|e| match &e.event {
            Event::TaskCreated {
                message_id,
                dedup: true,
                ..
            } => Some((e.agent.as_str(), message_id.as_str())),
            _ => None,
        })
        .collect();
    let mut order: Vec<&Entry> = entries.iter().collect();
    order.sort_by_key(|e| e.seq);
    let mut sent: HashSet<(&str, &str)> = HashSet::new();
    let mut joining = HashSet::new();
    for e in order {
        if let Event::Request {
            req,
            method: Some(m),
            params,
            ..
        } = &e.event
            && (m.contains("Message") || m.starts_with("message/"))
            && let Some(mid) = params.pointer("/message/messageId").and_then(Value::as_str)
        {
            let key = (e.agent.as_str(), mid);
            if !sent.insert(key) && dedup.contains(&key) {
                joining.insert((e.agent.as_str(), *req));
            }
        }
    }
    joining
}

/// Whether a request's answer is an observation of a task (`GetTask`, `ListTasks`,
/// `CancelTask`, `SubscribeToTask`, or their 0.3 names), and whether it is a subscription.
pub(super) fn observation(method: Option<&str>) -> (bool, bool) {
    match method {
        Some("SubscribeToTask" | "tasks/resubscribe") => (true, true),
        Some(
            "GetTask" | "ListTasks" | "CancelTask" | "tasks/get" | "tasks/list" | "tasks/cancel",
        ) => (true, false),
        _ => (false, false),
    }
}

/// Task objects in answers are snapshots of the agent's task: they keep their ids and status,
/// not their `artifacts` and `history` (how far the agent had got within a state); in the answer
/// to an observation (`observing`) they keep only their ids, since when it was asked is timing.
/// What the agent did is compared in the task's life (its states, chunks, sizes and sha256).
/// A task is an object with an `id` and a `contextId` or a `status.state` (a faulty agent may
/// leave one of them out; a message has a `messageId`, an artifact an `artifactId`).
fn reduce_tasks(v: &mut Value, observing: bool) {
    match v {
        Value::Object(m) => {
            let is_task = m.contains_key("id")
                && (m.contains_key("contextId")
                    || m.get("status").is_some_and(|s| s.get("state").is_some()));
            if is_task {
                m.remove("artifacts");
                m.remove("history");
                if observing {
                    m.remove("status");
                }
            }
            m.values_mut().for_each(|x| reduce_tasks(x, observing));
        }
        Value::Array(a) => a.iter_mut().for_each(|x| reduce_tasks(x, observing)),
        _ => {}
    }
}

/// The thread's entries normalised on their own (ids numbered within the thread), for ordering
/// threads independently of when they ran.
fn local_form(known: &Known, entries: &[&Entry]) -> Vec<Value> {
    let mut n = Normaliser {
        known,
        ids: Ids::default(),
    };
    entries
        .iter()
        .map(|e| {
            if e.event.req().is_some() {
                n.ids.start_request();
            }
            n.entry(e)
        })
        .collect()
}

/// Normalise a journal; see [`super::normalise`].
pub(super) fn normalise(entries: &[Entry]) -> NormalisedJournal {
    let known = Known::collect(entries);
    let mut n = Normaliser {
        known: &known,
        ids: Ids::default(),
    };
    let mut lines: Vec<Line> = Vec::new();
    let mut exchange_no = 0;
    // The last entry of any request: what agents record after it, they did on their own.
    let last_traffic = entries
        .iter()
        .filter(|e| e.event.req().is_some())
        .map(|e| e.seq)
        .max()
        .unwrap_or(0);
    let joining = resends_joining_a_task(entries);
    for (agent, list) in threads(entries) {
        // Threads in an order timing does not decide: the agent's task-less requests first,
        // then by the thread's first request (normalised on its own), then by all its entries,
        // then by when they started.
        let mut keyed: Vec<(bool, String, Thread<'_>)> = list
            .into_iter()
            .map(|t| {
                let head = t
                    .head()
                    .map(|h| local_form(&known, &[h]))
                    .unwrap_or_default();
                (t.task.is_some(), Value::Array(head).to_string(), t)
            })
            .collect();
        let mut tie: HashMap<String, usize> = HashMap::new();
        for (_, h, _) in &keyed {
            *tie.entry(h.clone()).or_insert(0) += 1;
        }
        let full = |t: &Thread<'_>| {
            let all: Vec<&Entry> = t
                .life
                .iter()
                .chain(&t.resends)
                .chain(&t.pushes)
                .chain(t.exchanges.iter().flatten())
                .copied()
                .collect();
            Value::Array(local_form(&known, &all)).to_string()
        };
        let mut sorted: Vec<(bool, String, String, u64, Thread<'_>)> = keyed
            .drain(..)
            .map(|(has_task, head, t)| {
                let whole = if tie.get(&head).copied().unwrap_or(0) > 1 {
                    full(&t)
                } else {
                    String::new()
                };
                (has_task, head, whole, t.first_seq(), t)
            })
            .collect();
        sorted.sort_by(|a, b| (a.0, &a.1, &a.2, a.3).cmp(&(b.0, &b.1, &b.2, b.3)));
        for (_, _, _, _, mut t) in sorted {
            if t.task.is_none() {
                // Requests about no task (card fetches, stray posts) are independent of each
                // other: compared in an order of their content, not of their arrival.
                let mut keyed: Vec<(String, Vec<&Entry>)> = t
                    .exchanges
                    .drain(..)
                    .map(|x| (Value::Array(local_form(&known, &x)).to_string(), x))
                    .collect();
                keyed.sort_by(|a, b| a.0.cmp(&b.0));
                t.exchanges = keyed.into_iter().map(|(_, x)| x).collect();
            }
            let name = match &t.task {
                Some(task) => format!(
                    "task {}",
                    n.ids
                        .placeholder(known.kinds.get(task).copied().unwrap_or(Kind::Task), task)
                ),
                None => "no task".to_string(),
            };
            let place = |s: Section| format!("agent {agent}, {name}, {}", s.name());
            // Runs of identical entries count once: how many chunks a flood got out before
            // the delegator reacted is timing.
            for (section, entries) in [
                (Section::Life, &t.life),
                (Section::Resends, &t.resends),
                (Section::Pushes, &t.pushes),
            ] {
                let start = lines.len();
                for e in entries {
                    let mut value = n.entry(e);
                    if section == Section::Pushes
                        && let Value::Object(m) = &mut value
                    {
                        // The webhook's answer: whether the push came before or after the
                        // delegator finished with the delegation is timing.
                        m.remove("status");
                        m.remove("error");
                    }
                    if let Some(last) = lines[start..].last_mut()
                        && last.value == value
                    {
                        last.repeats += 1;
                        continue;
                    }
                    lines.push(Line {
                        place: place(section),
                        seq: e.seq,
                        repeats: 1,
                        value,
                        exchange: None,
                        abandoned: false,
                        late: e.seq > last_traffic,
                    });
                }
            }
            // Runs of identical requests (with identical answers) count once: how many polls
            // fit in a wait is timing.
            let mut previous: Option<Vec<Value>> = None;
            let mut run_start = lines.len();
            for x in &t.exchanges {
                n.ids.start_request();
                let method = match x.first().map(|e| &e.event) {
                    Some(Event::Request { method, .. }) => method.as_deref(),
                    _ => None,
                };
                let (observing, subscription) = observation(method);
                // A resend the agent deduplicated joins its task mid-way, as a subscription.
                let subscription = subscription
                    || x.first().is_some_and(|e| {
                        e.event
                            .req()
                            .is_some_and(|r| joining.contains(&(e.agent.as_str(), r)))
                    });
                // (entry, value, how many identical events in a row it stands for)
                let mut kept: Vec<(&Entry, Value, usize)> = Vec::new();
                for e in x {
                    // A subscription joins the task when timing says: of its events, only the
                    // first (the task as it joined) is compared.
                    if subscription && matches!(e.event, Event::SseEvent { index, .. } if index > 0)
                    {
                        continue;
                    }
                    let mut v = n.entry(e);
                    if let Some(answer) = v.get_mut("body") {
                        reduce_tasks(answer, observing);
                    }
                    if let Some(event) = v.get_mut("data") {
                        reduce_tasks(event, observing);
                    }
                    if let Value::Object(m) = &mut v {
                        // Positions and counts in a stream follow from the lines' order; a run
                        // of identical events (a flood) counts once.
                        match e.event {
                            Event::SseEvent { .. } => {
                                m.remove("index");
                            }
                            Event::StreamClosed { .. } => {
                                m.remove("events");
                            }
                            _ => {}
                        }
                    }
                    match kept.last_mut() {
                        Some((_, last, n))
                            if *last == v && matches!(e.event, Event::SseEvent { .. }) =>
                        {
                            *n += 1;
                        }
                        _ => kept.push((e, v, 1)),
                    }
                }
                let values: Vec<Value> = kept.iter().map(|(_, v, _)| v.clone()).collect();
                // A stream the client left (or that never closed) ends where timing decided.
                let abandoned = x.iter().any(|e| is_stream_entry(&e.event))
                    && !x.iter().any(|e| {
                        matches!(&e.event, Event::StreamClosed { reason, .. } if reason != "client_gone")
                    });
                exchange_no += 1;
                if previous.as_ref() == Some(&values) {
                    for l in &mut lines[run_start..] {
                        l.repeats += 1;
                    }
                    continue;
                }
                run_start = lines.len();
                for (e, v, repeats) in kept {
                    lines.push(Line {
                        place: place(Section::Requests),
                        seq: e.seq,
                        repeats,
                        value: v,
                        exchange: Some(exchange_no),
                        abandoned,
                        late: false,
                    });
                }
                previous = Some(values);
            }
        }
    }
    NormalisedJournal { lines }
}
