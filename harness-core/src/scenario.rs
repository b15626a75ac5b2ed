//! Scenario files: one case per TOML file under `scenarios/`, grouped by topic.
//!
//! A case names the rules it exercises, the network (agents and scripts in the mock-agents
//! format), the drive steps (delegations, answers and credentials to give on escalation,
//! cancels), an optional crash trigger, and the expected outcome of each delegation. Parsing is
//! strict: unknown keys are rejected and errors name the file, line, column and field.
//!
//! This module knows the format only; [`crate::catalog`] loads whole catalogs and checks the
//! rule IDs a case names against the registry.

use a2a_driver_contract::{EscalationKind, Outcome};
use a2a_mock_agents::NetworkSpec;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One conformance case.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Stable id such as `state.completed`.
    pub id: String,
    /// One line saying what the case shows.
    pub title: String,
    /// Rule ids this case exercises (checked in addition to the always-on rules).
    pub rules: Vec<String>,
    /// Time bound for the whole case.
    #[serde(default = "default_timeout")]
    pub timeout_ms: u64,
    /// The mock network.
    pub network: NetworkSpec,
    /// Delegations to start, in order.
    #[serde(default, rename = "delegate")]
    pub delegations: Vec<Delegation>,
    /// Answers and credentials to give when the delegator escalates.
    #[serde(default, rename = "answer")]
    pub answers: Vec<Answer>,
    /// Cancels to send.
    #[serde(default, rename = "cancel")]
    pub cancels: Vec<Cancel>,
    /// A process fault: SIGKILL the delegator at a trigger and restart it on the same store.
    #[serde(default)]
    pub crash: Option<Crash>,
    /// DLG-ART-10: how far (MiB) the peak memory of the delegator's whole process group may rise
    /// above its baseline at `init_ok` while the case's large payload streams (which must be
    /// larger, so that buffering it would cross the bound).
    #[serde(default)]
    pub memory_bound_mib: Option<u64>,
    /// Post a forged push notification (wrong token) for each delegation once it is WORKING.
    #[serde(default)]
    pub forge_push: bool,
    /// Artifacts of a recording that this case does not reproduce byte for byte (the journal
    /// summarised their bytes; the agents send generated content of the same length), one
    /// line each as `scenario from-journal` writes it: `run` prints a note for each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bytes_differ: Vec<String>,
    /// Options passed in `init`.
    #[serde(default)]
    pub options: BTreeMap<String, Value>,
    /// The A2A extension URIs the delegator is told it supports (`init.extensions`): an agent
    /// whose card requires one of them is usable, one that requires another is not (DLG-EXT-01).
    #[serde(default)]
    pub extensions: Vec<String>,
    /// `init.card_signatures.required` (A2A §8.4): the delegator is told that an agent whose
    /// card carries no verified signature is not to be used. The policy (with the trusted keys:
    /// every `card_signing` agent's key but the `untrusted` ones) is sent when this is set or an
    /// agent signs its card; absent, `required` is false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card_signatures_required: Option<bool>,
    /// The protocol bindings over which this case has a meaning (default: all three). A run
    /// with `--binding` runs the case once per listed binding it asks for: its agents that do
    /// not pin their own `bindings` serve that one. A case about JSON-only payloads (say,
    /// lowercase enum names) lists `["jsonrpc", "rest"]`.
    #[serde(default = "all_bindings")]
    pub bindings: Vec<a2a_protocol::Binding>,
    /// Variants of this case (`[[variant]]`): each is a further case of the catalog, this one
    /// with one situation changed (see [`Variant`] and [`Scenario::expand`]).
    #[serde(default, rename = "variant", skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<Variant>,
    /// For a variant (see [`Scenario::expand`]): the id of the case it varies.
    #[serde(skip)]
    pub variant_of: Option<String>,
    /// Where the file came from (filled by the loader).
    #[serde(skip)]
    pub file: PathBuf,
    /// The local catalog directory (absolute) the case was loaded from, `None` for a case of
    /// the embedded catalog: repro lines name it with `--scenarios`.
    #[serde(skip)]
    pub local_dir: Option<PathBuf>,
}

fn all_bindings() -> Vec<a2a_protocol::Binding> {
    a2a_protocol::Binding::ALL.to_vec()
}

fn default_timeout() -> u64 {
    30_000
}

/// A delegation the harness asks for (`delegate` in the driver protocol).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Delegation {
    /// Delegation id, unique in the case.
    pub id: String,
    /// Skill required.
    pub capability: String,
    /// Instructions; the harness finds this delegation's traffic by this text.
    pub text: String,
    /// Data the delegation holds (answers questions about it).
    #[serde(default)]
    pub inputs: serde_json::Map<String, Value>,
    /// Accepted media types.
    #[serde(default = "default_mimes")]
    pub mime_types: Vec<String>,
    /// Artifact size bound.
    #[serde(default = "default_max_size")]
    pub max_size_bytes: u64,
    /// Prefer streaming.
    #[serde(default = "yes")]
    pub streaming_preferred: bool,
    /// JSON Schema for `data` parts.
    #[serde(default)]
    pub schema: Option<Value>,
    /// Timeout in seconds (10 to 3600).
    #[serde(default = "default_timeout_s")]
    pub timeout_seconds: u64,
    /// Deadline relative to the delegator's `init_ok`, when delegations start (negative:
    /// already past).
    #[serde(default)]
    pub deadline_in_ms: Option<i64>,
    /// Budget in USD.
    #[serde(default = "default_budget")]
    pub budget_usd: f64,
    /// Retries for transient failures.
    #[serde(default = "default_retries")]
    pub max_retries: u32,
    /// Incoming depth of this work.
    #[serde(default)]
    pub depth: u32,
    /// Incoming chain; the token `$self` stands for the delegator's own URL.
    #[serde(default)]
    pub chain: Vec<String>,
    /// Fan-out: children sharing the budget.
    #[serde(default)]
    pub children: Vec<Child>,
    /// Refine this earlier delegation (new task, same context).
    #[serde(default)]
    pub refine_of: Option<String>,
    /// Start after this delegation is done.
    #[serde(default)]
    pub after: Option<String>,
    /// The expected outcome.
    #[serde(default)]
    pub expect: Expect,
}

fn default_mimes() -> Vec<String> {
    vec![
        "text/plain".into(),
        "application/json".into(),
        "application/octet-stream".into(),
    ]
}
fn default_max_size() -> u64 {
    10 * 1024 * 1024
}
fn yes() -> bool {
    true
}
fn default_timeout_s() -> u64 {
    60
}
fn default_budget() -> f64 {
    2.0
}
fn default_retries() -> u32 {
    3
}

/// A child of a fan-out delegation.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Child {
    /// Child id.
    pub id: String,
    /// Skill.
    pub capability: String,
    /// Instructions.
    pub text: String,
}

/// What the delegation must end in. Every field given must hold.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Acceptable final states reported in `done` (any of them; the contract's outcomes).
    #[serde(default)]
    pub state: Vec<Outcome>,
    /// The delegator must escalate this kind (`input` or `auth`).
    #[serde(default)]
    pub escalates: Option<EscalationKind>,
    /// No request at all may reach an agent for this delegation.
    #[serde(default)]
    pub nothing_sent: bool,
}

/// An answer the harness gives when a delegation escalates.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    /// The delegation.
    pub id: String,
    /// `input` (answer text) or `auth` (credential).
    pub kind: EscalationKind,
    /// The answer text, or the credential such as `Bearer scoped-123`.
    pub value: String,
}

/// A cancel the harness sends.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Cancel {
    /// The delegation.
    pub id: String,
    /// Send it once the delegator reports this state.
    #[serde(default)]
    pub when_state: Option<String>,
}

/// A variant of a case: the same agents, delegations and expectations in another situation,
/// run as a case of its own with the id `<case id>-<suffix>`. The catalog README's situation
/// matrix shows what each variant adds.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    /// Appended to the case id after a hyphen (`[a-z0-9-]`, unique within the file).
    pub suffix: String,
    /// What the variant changes, in a few words (the title gets it in parentheses; default:
    /// the suffix).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// How results reach the delegator: `poll` takes streaming and push notifications off every
    /// agent's card and asks for no streaming, so the delegator can only read its tasks with
    /// GetTask; `stream` puts streaming on every card and asks for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery: Option<Delivery>,
    /// A crash for the variant (`[variant.crash]`, as `[crash]`), replacing the case's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crash: Option<Crash>,
    /// Post a forged push notification, as the case's `forge_push`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forge_push: Option<bool>,
    /// `card_signatures_required` for the variant, replacing the case's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card_signatures_required: Option<bool>,
    /// The rules the variant judges (default: the case's own list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<Vec<String>>,
}

/// How a variant's agents deliver results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// Streaming on every card and asked for.
    Stream,
    /// No streaming and no push on any card: tasks are read with GetTask.
    Poll,
}

/// Named crash triggers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CrashTrigger {
    /// The delegation is acknowledged and recorded and no agent has processed any request of
    /// it: its first send reached an agent that drops it unprocessed (a `drop_before` fault);
    /// the kill lands at that `connection_dropped` entry, before the delegator sees the drop.
    BeforeFirstSend,
    /// After the first request of a delegation reaches an agent.
    FirstRequest,
    /// After a send was processed but its response dropped.
    IndefiniteSend,
    /// After K artifact chunks were sent.
    AfterChunks,
    /// While the task waits in an input round.
    InputRound,
    /// While the task waits in an auth round: the agent sent AUTH_REQUIRED and the kill lands
    /// when the delegator escalates it (kind auth), before the harness gives a credential.
    AuthRound,
    /// During a retry backoff (after an injected HTTP error).
    RetryBackoff,
    /// During a cancel: the delegator's `CancelTask` reached the agent, which has not
    /// processed it (the kill lands at its `request` entry).
    CancelRequest,
    /// After the final state, before `done`: the agent recorded the task's terminal state (its
    /// `task_state` entry); the delegator has not been told of it.
    FinalState,
    /// When the `event`-th journal entry of the network is recorded (its seq), whatever it is:
    /// the crash sweep's point.
    AtEvent,
}

/// A crash to inject.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Crash {
    /// When.
    pub trigger: CrashTrigger,
    /// K for `after_chunks`.
    #[serde(default)]
    pub chunks: u64,
    /// K for `at_event` (required there, and only there): the journal sequence (from 1) of the
    /// entry at which the kill lands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<std::num::NonZeroU64>,
    /// Set by the crash sweep, never by a file: the crash replaced the case's own, so a rule
    /// the case lists whose situation did not arise at this position is NOT EXERCISED there,
    /// not UNKNOWN (the case was written for another crash point).
    #[serde(skip)]
    pub swept: bool,
}

impl Crash {
    /// A crash at journal entry `event`, as `[crash] trigger = "at_event"` writes it.
    pub fn at_event(event: std::num::NonZeroU64) -> Crash {
        Crash {
            trigger: CrashTrigger::AtEvent,
            chunks: 0,
            event: Some(event),
            swept: false,
        }
    }

    /// A crash sweep's crash at journal entry `event`, replacing the case's own (`swept`).
    pub fn swept_at_event(event: std::num::NonZeroU64) -> Crash {
        Crash {
            swept: true,
            ..Crash::at_event(event)
        }
    }
}

/// The JSON Schema of the scenario format, generated from these types (for editors).
pub fn json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Scenario)).unwrap_or_default()
}

/// A scenario file could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file or directory could not be read.
    #[error("{}: {source}", file.display())]
    Io {
        /// The file or directory.
        file: PathBuf,
        /// The IO error.
        source: std::io::Error,
    },
    /// The TOML is malformed or does not fit the format.
    #[error("{}:{line}:{column}: {}{message}", file.display(), field_prefix(field))]
    Parse {
        /// The file.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The path of the field at fault (`network.agent[0]`), empty for the whole file.
        field: String,
        /// What is wrong (from the TOML parser).
        message: String,
    },
    /// The case is well-formed TOML but inconsistent (unknown rule, dangling reference, ...).
    #[error("{}: {}{message}", file.display(), field_prefix(field))]
    Invalid {
        /// The file.
        file: PathBuf,
        /// The field at fault (`rules`, `delegate "d1"`, `network`), empty for the whole case.
        field: String,
        /// What is wrong.
        message: String,
    },
}

fn field_prefix(field: &str) -> String {
    if field.is_empty() || field == "." {
        String::new()
    } else {
        format!("{field}: ")
    }
}

/// What TOML cannot check in a `[crash]`: `event` goes with `at_event` (and only with it). An
/// error is (field, message).
fn check_crash(c: &Crash) -> Result<(), (&'static str, &'static str)> {
    match (c.trigger, c.event) {
        (CrashTrigger::AtEvent, None) => Err((
            "crash.event",
            "trigger \"at_event\" needs event = K (the journal seq of the kill, >= 1)",
        )),
        (CrashTrigger::AtEvent, Some(_)) | (_, None) => Ok(()),
        (_, Some(_)) => Err(("crash.event", "event is only for trigger \"at_event\"")),
    }
}

/// Line and column (1-based) of the `[crash]` table (or of a `crash =` key) in `text`, for an
/// error about it; the first line when it is not found.
fn crash_table_position(text: &str) -> (usize, usize) {
    text.lines()
        .position(|l| {
            let l = l.trim_start();
            l.starts_with("[crash]") || l.starts_with("crash ") || l.starts_with("crash=")
        })
        .map_or((1, 1), |i| (i + 1, 1))
}

impl ScenarioError {
    /// The file the error is about.
    pub fn file(&self) -> &Path {
        match self {
            ScenarioError::Io { file, .. }
            | ScenarioError::Parse { file, .. }
            | ScenarioError::Invalid { file, .. } => file,
        }
    }

    pub(crate) fn invalid(
        file: &Path,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        ScenarioError::Invalid {
            file: file.to_path_buf(),
            field: field.into(),
            message: message.into(),
        }
    }
}

impl Scenario {
    /// `init.card_signatures` for a network whose (run) seed is `seed`: sent when the case sets
    /// `card_signatures_required` or an agent signs its card.
    pub fn card_signature_policy(
        &self,
        seed: u64,
    ) -> Option<a2a_driver_contract::CardSignaturePolicy> {
        let signing = self.network.agents.iter().any(|a| a.card_signing.is_some());
        if !signing && self.card_signatures_required.is_none() {
            return None;
        }
        let mut spec = self.network.clone();
        spec.seed = seed;
        let keys = match a2a_mock_agents::trusted_keys(&spec) {
            Ok(k) => k,
            Err(e) => {
                tracing::error!("trusted keys: {e}");
                serde_json::json!({"keys": []})
            }
        };
        Some(a2a_driver_contract::CardSignaturePolicy {
            trusted_keys: keys,
            required: self.card_signatures_required.unwrap_or(false),
        })
    }

    /// The credentials the harness gives the delegator for agents' security schemes
    /// (`init.agent_credentials`, keyed there by card URL): one for every agent whose card
    /// declares `security`, as (agent name, `Authorization` value). The one definition the
    /// runner (which sends them) and the rules (which judge their use) share.
    pub fn agent_credentials(&self) -> impl Iterator<Item = (&str, &str)> {
        self.network.agents.iter().filter_map(|a| {
            a.security
                .as_ref()
                .map(|s| (a.name.as_str(), s.credential.as_str()))
        })
    }

    /// Parse a scenario from TOML text and check everything the format alone decides (ids,
    /// references between delegations, expected states, bounds, the network). The rule IDs it
    /// names are checked against the registry by [`crate::catalog::parse_case`].
    ///
    /// Part files (`text_file`, `raw_file`, `data_file` of the agents' parts) are read from
    /// beside `file` on disk; see [`Scenario::from_toml_in`].
    pub fn from_toml(file: &Path, text: &str) -> Result<Scenario, ScenarioError> {
        let dir = file.parent().unwrap_or(Path::new("."));
        Self::from_toml_in(file, text, &mut a2a_mock_agents::script::read_beside(dir))
    }

    /// [`Scenario::from_toml`] with part files read through `read` (given the path as written,
    /// relative to the scenario's directory): the embedded catalog reads them from the binary.
    /// A part file that cannot be read, or whose content does not fit its kind, is an error
    /// naming the scenario, the line, the field and the part file.
    pub fn from_toml_in(
        file: &Path,
        text: &str,
        read: &mut dyn FnMut(&str) -> Result<Vec<u8>, String>,
    ) -> Result<Scenario, ScenarioError> {
        let parse_error = |field: String, e: &toml::de::Error| {
            let (line, column) = e
                .span()
                .map_or((1, 1), |s| a2a_mock_agents::script::line_col(text, s.start));
            ScenarioError::Parse {
                file: file.to_path_buf(),
                line,
                column,
                field,
                message: e.message().to_string(),
            }
        };
        let de = toml::de::Deserializer::parse(text).map_err(|e| parse_error(String::new(), &e))?;
        let mut s: Scenario = serde_path_to_error::deserialize(de)
            .map_err(|e| parse_error(e.path().to_string(), e.inner()))?;
        s.file = file.to_path_buf();
        s.network
            .validate()
            .map_err(|m| ScenarioError::invalid(file, "network", m.to_string()))?;
        if s.network.has_part_files() {
            s.network
                .resolve_part_files(&file.display().to_string(), text, &["network"], read)
                .map_err(|e| match e {
                    a2a_mock_agents::ScriptError::Parse {
                        line,
                        column,
                        message,
                        ..
                    } => {
                        let (field, message) = message
                            .split_once(": ")
                            .map_or((String::new(), message.clone()), |(f, m)| {
                                (f.to_string(), m.to_string())
                            });
                        ScenarioError::Parse {
                            file: file.to_path_buf(),
                            line,
                            column,
                            field,
                            message,
                        }
                    }
                    other => ScenarioError::invalid(file, "network", other.to_string()),
                })?;
        }
        if s.rules.is_empty() {
            return Err(ScenarioError::invalid(
                file,
                "rules",
                "must name at least one rule",
            ));
        }
        let mut ids = std::collections::BTreeSet::new();
        for d in &s.delegations {
            if !ids.insert(d.id.as_str()) {
                return Err(ScenarioError::invalid(
                    file,
                    format!("delegate {:?}", d.id),
                    "delegation id used twice",
                ));
            }
        }
        for a in &s.answers {
            if !ids.contains(a.id.as_str()) {
                return Err(ScenarioError::invalid(
                    file,
                    format!("answer for {:?}", a.id),
                    "unknown delegation",
                ));
            }
        }
        s.check_references(&ids)
            .map_err(|(field, message)| ScenarioError::invalid(file, field, message))?;
        if let Some(c) = &s.crash {
            check_crash(c).map_err(|(field, message)| {
                let (line, column) = crash_table_position(text);
                ScenarioError::Parse {
                    file: file.to_path_buf(),
                    line,
                    column,
                    field: field.to_string(),
                    message: message.to_string(),
                }
            })?;
        }
        Ok(s)
    }

    /// The case followed by its variants (`[[variant]]`), each a case of its own: the id gets
    /// `-<suffix>`, the title the variant's title in parentheses, and the variant's delivery,
    /// crash, forged push and rules replace the case's. The variants themselves have none.
    pub fn expand(mut self) -> Vec<Scenario> {
        let variants = std::mem::take(&mut self.variants);
        let mut out = Vec::with_capacity(variants.len() + 1);
        for v in variants {
            let mut c = self.clone();
            c.id = format!("{}-{}", self.id, v.suffix);
            c.variant_of = Some(self.id.clone());
            c.title = format!(
                "{} ({})",
                self.title,
                v.title.as_deref().unwrap_or(v.suffix.as_str())
            );
            if let Some(d) = v.delivery {
                let on = d == Delivery::Stream;
                for a in &mut c.network.agents {
                    a.streaming = on;
                    if !on {
                        a.push_notifications = false;
                    }
                }
                for d in &mut c.delegations {
                    d.streaming_preferred = on;
                }
            }
            if let Some(crash) = v.crash {
                c.crash = Some(crash);
            }
            if let Some(f) = v.forge_push {
                c.forge_push = f;
            }
            if let Some(r) = v.card_signatures_required {
                c.card_signatures_required = Some(r);
            }
            if let Some(r) = v.rules {
                c.rules = r;
            }
            out.push(c);
        }
        out.insert(0, self);
        out
    }

    /// Check what TOML cannot: ids, references between delegations, expected states, bounds.
    /// An error is (field, message).
    fn check_references(
        &self,
        ids: &std::collections::BTreeSet<&str>,
    ) -> Result<(), (String, String)> {
        let ok_id = |id: &str| {
            !id.is_empty()
                && id.len() <= 128
                && id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        };
        let err = |field: &str, message: String| Err((field.to_string(), message));
        if !ok_id(&self.id) {
            return err(
                "id",
                format!("{:?} must be 1-128 characters of [A-Za-z0-9._-]", self.id),
            );
        }
        for (i, v) in self.variants.iter().enumerate() {
            let at = format!("variant {:?}", v.suffix);
            let ok_suffix = !v.suffix.is_empty()
                && v.suffix.len() <= 40
                && v.suffix
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
            if !ok_suffix {
                return err(&at, "suffix must be 1-40 characters of [a-z0-9-]".into());
            }
            if self.variants[..i].iter().any(|p| p.suffix == v.suffix) {
                return err(&at, "suffix used twice".into());
            }
            if v.rules.as_ref().is_some_and(Vec::is_empty) {
                return err(&at, "rules must name at least one rule".into());
            }
            if v.delivery.is_none()
                && v.crash.is_none()
                && v.forge_push.is_none()
                && v.card_signatures_required.is_none()
            {
                return err(
                    &at,
                    "changes nothing: give delivery, crash, forge_push or card_signatures_required"
                        .into(),
                );
            }
            if let Some(c) = &v.crash {
                check_crash(c).map_err(|(f, m)| (format!("{at}: {f}"), m.to_string()))?;
            }
        }
        if !(1..=600_000).contains(&self.timeout_ms) {
            return err(
                "timeout_ms",
                format!("{} must be between 1 and 600000", self.timeout_ms),
            );
        }
        if self.memory_bound_mib == Some(0) {
            return err("memory_bound_mib", "must be > 0".into());
        }
        if self.bindings.is_empty() {
            return err("bindings", "must name at least one binding".into());
        }
        for (i, b) in self.bindings.iter().enumerate() {
            if self.bindings[..i].contains(b) {
                return err("bindings", format!("{b} is listed twice"));
            }
        }
        for d in &self.delegations {
            let at = format!("delegate {:?}", d.id);
            if !ok_id(&d.id) {
                return err(&at, "id must be 1-128 characters of [A-Za-z0-9._-]".into());
            }
            if d.text.trim().is_empty() {
                return err(
                    &at,
                    "text must not be empty (the harness finds its traffic by it)".into(),
                );
            }
            for (what, r) in [("after", &d.after), ("refine_of", &d.refine_of)] {
                if let Some(r) = r
                    && (!ids.contains(r.as_str()) || r == &d.id)
                {
                    return err(&at, format!("{what} names no other delegation: {r:?}"));
                }
            }
            // Deadlines beyond ten days either way are typos, and would overflow date arithmetic.
            if d.deadline_in_ms
                .is_some_and(|ms| ms.abs() > 10 * 24 * 3_600_000)
            {
                return err(
                    &at,
                    "deadline_in_ms must be within ten days of the case start".into(),
                );
            }
            if d.mime_types.is_empty() {
                return err(&at, "mime_types must list at least one media type".into());
            }
            for c in &d.children {
                if !ok_id(&c.id) || c.text.trim().is_empty() {
                    return err(
                        &at,
                        format!("child {:?} needs an id of [A-Za-z0-9._-] and a text", c.id),
                    );
                }
            }
        }
        for c in &self.cancels {
            if !ids.contains(c.id.as_str()) {
                return err("cancel", format!("names no delegation: {:?}", c.id));
            }
        }
        Ok(())
    }

    /// Load one file (the format only; see [`crate::catalog::load_case`]).
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Io {
            file: path.to_path_buf(),
            source,
        })?;
        Self::from_toml(path, &text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "id = \"x\"\ntitle = \"t\"\nrules = [\"DLG-SEND-02\"]\n[network]\n[[network.agent]]\nname = \"a\"\n";

    #[test]
    fn variants_expand_into_cases_with_one_situation_changed() {
        let text = format!(
            "{BASE}[[delegate]]\nid = \"d1\"\ncapability = \"c\"\ntext = \"t\"\n\
             [[variant]]\nsuffix = \"polled\"\ndelivery = \"poll\"\n\
             [[variant]]\nsuffix = \"after-restart\"\ntitle = \"killed\"\n\
             crash = {{ trigger = \"first_request\" }}\nrules = [\"DLG-SEND-01\"]\n"
        );
        let s = Scenario::from_toml(Path::new("x.toml"), &text).unwrap();
        let cases = s.expand();
        let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["x", "x-polled", "x-after-restart"]);
        assert!(cases.iter().all(|c| c.variants.is_empty()));
        assert_eq!(cases[0].variant_of, None);
        assert_eq!(cases[1].variant_of.as_deref(), Some("x"));
        let (base, polled, restart) = (&cases[0], &cases[1], &cases[2]);
        assert!(base.network.agents[0].streaming && base.delegations[0].streaming_preferred);
        assert!(!polled.network.agents[0].streaming);
        assert!(!polled.network.agents[0].push_notifications);
        assert!(!polled.delegations[0].streaming_preferred);
        assert_eq!(polled.rules, base.rules);
        assert_eq!(polled.title, "t (polled)");
        assert!(base.crash.is_none());
        assert_eq!(
            restart.crash.as_ref().map(|c| c.trigger),
            Some(CrashTrigger::FirstRequest)
        );
        assert_eq!(restart.rules, ["DLG-SEND-01"]);
        assert_eq!(restart.title, "t (killed)");
    }

    #[test]
    fn part_files_are_read_beside_the_case_and_a_missing_one_is_named() {
        let dir = tempfile::tempdir().expect("temp dir");
        let text = format!(
            "{BASE}[[network.agent.rule]]\nsteps = [\n  {{ do = \"artifact\", chunks = [[{{ raw_file = \"case.d/a.bin\" }}], [{{ text_file = \"case.d/b.txt\" }}]] }},\n]\n"
        );
        let file = dir.path().join("case.toml");
        std::fs::create_dir_all(dir.path().join("case.d")).expect("mkdir");
        std::fs::write(dir.path().join("case.d/a.bin"), [0xe2, 0x82]).expect("write");
        let err = Scenario::from_toml(&file, &text).unwrap_err();
        match &err {
            ScenarioError::Parse {
                line,
                field,
                message,
                ..
            } => {
                assert_eq!(*line, 9, "{err}");
                assert_eq!(
                    field, "network.agent[0].rule[0].steps[0].chunks[1][0].text_file",
                    "{err}"
                );
                assert!(message.starts_with("case.d/b.txt: "), "{err}");
            }
            other => panic!("{other}"),
        }
        assert!(
            err.to_string()
                .starts_with(&format!("{}:9:", file.display())),
            "{err}"
        );
        std::fs::write(dir.path().join("case.d/b.txt"), "\u{20ac}").expect("write");
        let s = Scenario::from_toml(&file, &text).unwrap_or_else(|e| panic!("{e}"));
        match &s.network.agents[0].rules[0].steps[0] {
            a2a_mock_agents::ScriptStep::Artifact { chunks, .. } => {
                assert_eq!(
                    chunks[0][0].raw_base64.as_ref().map(|b| b.0.clone()),
                    Some(vec![0xe2, 0x82])
                );
                assert_eq!(chunks[1][0].text.as_deref(), Some("\u{20ac}"));
                assert!(chunks.iter().flatten().all(|p| p.file_ref().is_none()));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_bad_variant_is_named() {
        for (variant, says) in [
            ("suffix = \"Polled\"\ndelivery = \"poll\"\n", "[a-z0-9-]"),
            ("suffix = \"same\"\n", "changes nothing"),
            (
                "suffix = \"p\"\ndelivery = \"poll\"\nrules = []\n",
                "at least one rule",
            ),
        ] {
            let text = format!("{BASE}[[variant]]\n{variant}");
            let err = Scenario::from_toml(Path::new("x.toml"), &text)
                .unwrap_err()
                .to_string();
            assert!(err.contains("variant") && err.contains(says), "{err}");
        }
        let twice = format!(
            "{BASE}[[variant]]\nsuffix = \"p\"\ndelivery = \"poll\"\n[[variant]]\nsuffix = \"p\"\nforge_push = true\n"
        );
        let err = Scenario::from_toml(Path::new("x.toml"), &twice)
            .unwrap_err()
            .to_string();
        assert!(err.contains("used twice"), "{err}");
        let typo = format!("{BASE}[[variant]]\nsuffix = \"p\"\ndelivery = \"pull\"\n");
        let err = Scenario::from_toml(Path::new("x.toml"), &typo)
            .unwrap_err()
            .to_string();
        assert!(err.contains("variant[0].delivery"), "{err}");
    }

    #[test]
    fn a_type_error_names_file_line_column_and_field() {
        let text = format!("{BASE}[[delegate]]\nid = \"d1\"\ncapability = 3\ntext = \"t\"\n");
        let err = Scenario::from_toml(Path::new("cases/x.toml"), &text).unwrap_err();
        let ScenarioError::Parse {
            file,
            line,
            column,
            field,
            ..
        } = &err
        else {
            panic!("{err:?}");
        };
        assert_eq!(file, Path::new("cases/x.toml"));
        assert_eq!((*line, *column), (9, 14), "{err}");
        assert_eq!(field, "delegate[0].capability");
        assert!(
            err.to_string()
                .starts_with("cases/x.toml:9:14: delegate[0].capability: "),
            "{err}"
        );
    }

    #[test]
    fn an_unknown_key_is_named_with_its_table() {
        let text = format!("{BASE}bogus_key = 3\n");
        let err = Scenario::from_toml(Path::new("x.toml"), &text)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("x.toml:7:"), "{err}");
        assert!(
            err.contains("network.agent[0]") && err.contains("bogus_key"),
            "{err}"
        );
    }

    #[test]
    fn an_inconsistent_case_names_the_field() {
        let text = format!(
            "{BASE}[[delegate]]\nid = \"d1\"\ncapability = \"s\"\ntext = \"t\"\nafter = \"d9\"\n"
        );
        let err = Scenario::from_toml(Path::new("x.toml"), &text).unwrap_err();
        assert!(
            matches!(&err, ScenarioError::Invalid { field, .. } if field == "delegate \"d1\""),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "x.toml: delegate \"d1\": after names no other delegation: \"d9\""
        );
        assert_eq!(err.file(), Path::new("x.toml"));
    }

    #[test]
    fn every_phase_trigger_parses_and_an_unknown_one_is_named_with_line_and_field() {
        for (name, t) in [
            ("before_first_send", CrashTrigger::BeforeFirstSend),
            ("auth_round", CrashTrigger::AuthRound),
            ("cancel_request", CrashTrigger::CancelRequest),
            ("final_state", CrashTrigger::FinalState),
        ] {
            let s = Scenario::from_toml(
                Path::new("x.toml"),
                &format!("{BASE}[crash]\ntrigger = \"{name}\"\n"),
            )
            .unwrap();
            assert_eq!(s.crash.map(|c| c.trigger), Some(t), "{name}");
        }
        let err = Scenario::from_toml(
            Path::new("x.toml"),
            &format!("{BASE}[crash]\ntrigger = \"auth_wait\"\n"),
        )
        .unwrap_err();
        assert!(
            matches!(&err, ScenarioError::Parse { line: 8, field, .. } if field == "crash.trigger"),
            "{err:?}"
        );
        let text = err.to_string();
        assert!(
            text.starts_with("x.toml:8:") && text.contains("auth_round"),
            "{text}"
        );
    }

    #[test]
    fn an_at_event_crash_parses_and_its_event_is_checked_with_line_and_field() {
        let s = Scenario::from_toml(
            Path::new("x.toml"),
            &format!("{BASE}[crash]\ntrigger = \"at_event\"\nevent = 7\n"),
        )
        .unwrap();
        let c = s.crash.unwrap();
        assert_eq!(c.trigger, CrashTrigger::AtEvent);
        assert_eq!(c.event.map(std::num::NonZeroU64::get), Some(7));
        // event = 0: no entry has seq 0.
        let err = Scenario::from_toml(
            Path::new("x.toml"),
            &format!("{BASE}[crash]\ntrigger = \"at_event\"\nevent = 0\n"),
        )
        .unwrap_err();
        assert!(
            matches!(&err, ScenarioError::Parse { line: 9, field, .. } if field == "crash.event"),
            "{err:?}"
        );
        assert!(err.to_string().starts_with("x.toml:9:"), "{err}");
        // Missing with at_event, and given with another trigger: named at the [crash] table.
        for (body, says) in [
            ("trigger = \"at_event\"\n", "needs event"),
            (
                "trigger = \"first_request\"\nevent = 3\n",
                "only for trigger",
            ),
        ] {
            let err = Scenario::from_toml(Path::new("x.toml"), &format!("{BASE}[crash]\n{body}"))
                .unwrap_err();
            let text = err.to_string();
            assert!(
                text.starts_with("x.toml:7:1: crash.event: ") && text.contains(says),
                "{text}"
            );
        }
    }
}
