//! Scenario files: one case per TOML file under `scenarios/`, grouped by topic.
//!
//! A case names the rules it exercises, the network (agents and scripts in the mock-agents
//! format), the drive steps (delegations, answers and credentials to give on escalation,
//! cancels), an optional crash trigger, and the expected outcome of each delegation. Parsing is
//! strict: unknown keys are rejected and errors name the file, line, column and field.

use a2a_mock_agents::NetworkSpec;
use a2a_mock_agents::script::toml_error;
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
    /// Bound on the delegator's peak resident memory (MiB) for DLG-ART-10.
    #[serde(default)]
    pub memory_bound_mib: Option<u64>,
    /// Post a forged push notification (wrong token) for each delegation once it is WORKING.
    #[serde(default)]
    pub forge_push: bool,
    /// Options passed in `init`.
    #[serde(default)]
    pub options: BTreeMap<String, Value>,
    /// Where the file came from (filled by the loader).
    #[serde(skip)]
    pub file: PathBuf,
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
    /// Deadline relative to the start of the case (negative: already past).
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
    /// Acceptable final states reported in `done` (any of them).
    #[serde(default)]
    pub state: Vec<String>,
    /// The delegator must escalate this kind (`input` or `auth`).
    #[serde(default)]
    pub escalates: Option<String>,
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
    pub kind: String,
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

/// Named crash triggers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CrashTrigger {
    /// After the first request of a delegation reaches an agent.
    FirstRequest,
    /// After a send was processed but its response dropped.
    IndefiniteSend,
    /// After K artifact chunks were sent.
    AfterChunks,
    /// While the task waits in an input round.
    InputRound,
    /// During a retry backoff (after an injected HTTP error).
    RetryBackoff,
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
}

/// The JSON Schema of the scenario format, generated from these types (for editors).
pub fn json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Scenario)).unwrap_or_default()
}

/// The outcome states a `done` message may report (the driver contract).
pub const OUTCOME_STATES: &[&str] = &[
    "COMPLETED",
    "FAILED",
    "CANCELED",
    "REJECTED",
    "ANSWERED_DIRECT",
    "SEND_FAILED",
    "REFUSED",
    "LOST",
    "DEAD_LETTERED",
];

/// A scenario file could not be loaded.
pub type ScenarioError = a2a_mock_agents::ScriptError;

impl Scenario {
    /// Parse a scenario from TOML text.
    pub fn from_toml(file: &Path, text: &str) -> Result<Scenario, ScenarioError> {
        let name = file.display().to_string();
        let mut s: Scenario = toml::from_str(text).map_err(|e| toml_error(&name, text, &e))?;
        s.file = file.to_path_buf();
        let invalid = |message: String| ScenarioError::Invalid {
            file: name.clone(),
            message,
        };
        s.network
            .validate()
            .map_err(|m| invalid(format!("network: {m}")))?;
        if s.rules.is_empty() {
            return Err(invalid("`rules` must name at least one rule".into()));
        }
        let known = crate::rules::registry();
        for r in &s.rules {
            if !known.iter().any(|k| k.id == r.as_str()) {
                return Err(invalid(format!("`rules` names an unknown rule {r:?}")));
            }
        }
        let mut ids = std::collections::BTreeSet::new();
        for d in &s.delegations {
            if !ids.insert(d.id.as_str()) {
                return Err(invalid(format!("delegation id {:?} used twice", d.id)));
            }
        }
        for a in &s.answers {
            if !ids.contains(a.id.as_str()) || !matches!(a.kind.as_str(), "input" | "auth") {
                return Err(invalid(format!(
                    "answer for {:?}: unknown delegation or kind {:?} (input|auth)",
                    a.id, a.kind
                )));
            }
        }
        s.check_references(&ids).map_err(invalid)?;
        Ok(s)
    }

    /// Check what TOML cannot: ids, references between delegations, expected states, bounds.
    fn check_references(&self, ids: &std::collections::BTreeSet<&str>) -> Result<(), String> {
        let ok_id = |id: &str| {
            !id.is_empty()
                && id.len() <= 128
                && id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        };
        if !ok_id(&self.id) {
            return Err(format!(
                "id {:?} must be 1-128 characters of [A-Za-z0-9._-]",
                self.id
            ));
        }
        if !(1..=600_000).contains(&self.timeout_ms) {
            return Err(format!(
                "timeout_ms {} must be between 1 and 600000",
                self.timeout_ms
            ));
        }
        if self.memory_bound_mib == Some(0) {
            return Err("memory_bound_mib must be > 0".into());
        }
        for d in &self.delegations {
            let at = format!("delegate {:?}", d.id);
            if !ok_id(&d.id) {
                return Err(format!(
                    "{at}: id must be 1-128 characters of [A-Za-z0-9._-]"
                ));
            }
            if d.text.trim().is_empty() {
                return Err(format!(
                    "{at}: text must not be empty (the harness finds its traffic by it)"
                ));
            }
            for (what, r) in [("after", &d.after), ("refine_of", &d.refine_of)] {
                if let Some(r) = r
                    && (!ids.contains(r.as_str()) || r == &d.id)
                {
                    return Err(format!("{at}: {what} names no other delegation: {r:?}"));
                }
            }
            // Deadlines beyond ten days either way are typos, and would overflow date arithmetic.
            if d.deadline_in_ms
                .is_some_and(|ms| ms.abs() > 10 * 24 * 3_600_000)
            {
                return Err(format!(
                    "{at}: deadline_in_ms must be within ten days of the case start"
                ));
            }
            for st in &d.expect.state {
                if !OUTCOME_STATES.contains(&st.as_str()) {
                    return Err(format!(
                        "{at}: expect.state {st:?} is not one of {OUTCOME_STATES:?}"
                    ));
                }
            }
            if let Some(e) = &d.expect.escalates
                && !matches!(e.as_str(), "input" | "auth")
            {
                return Err(format!(
                    "{at}: expect.escalates must be \"input\" or \"auth\", not {e:?}"
                ));
            }
            if d.mime_types.is_empty() {
                return Err(format!(
                    "{at}: mime_types must list at least one media type"
                ));
            }
            for c in &d.children {
                if !ok_id(&c.id) || c.text.trim().is_empty() {
                    return Err(format!(
                        "{at}: child {:?} needs an id of [A-Za-z0-9._-] and a text",
                        c.id
                    ));
                }
            }
        }
        for c in &self.cancels {
            if !ids.contains(c.id.as_str()) {
                return Err(format!("cancel names no delegation: {:?}", c.id));
            }
        }
        Ok(())
    }

    /// Load one file.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Io {
            file: path.display().to_string(),
            source,
        })?;
        Self::from_toml(path, &text)
    }
}

/// Load every `*.toml` under a directory (recursively), sorted by id; ids must be unique.
pub fn load_catalog(dir: &Path) -> Result<Vec<Scenario>, ScenarioError> {
    let mut files = Vec::new();
    collect(dir, &mut files).map_err(|source| ScenarioError::Io {
        file: dir.display().to_string(),
        source,
    })?;
    files.sort();
    let mut out: Vec<Scenario> = Vec::new();
    for f in files {
        let s = Scenario::load(&f)?;
        if let Some(prev) = out.iter().find(|p| p.id == s.id) {
            return Err(ScenarioError::Invalid {
                file: f.display().to_string(),
                message: format!("case id {:?} is also used by {}", s.id, prev.file.display()),
            });
        }
        out.push(s);
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            collect(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(p);
        }
    }
    Ok(())
}

/// Match a case id against a glob with `*` and `?`.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    fn go(p: &[u8], t: &[u8]) -> bool {
        match (p.first(), t.first()) {
            (None, None) => true,
            (Some(b'*'), _) => go(&p[1..], t) || (!t.is_empty() && go(p, &t[1..])),
            (Some(b'?'), Some(_)) => go(&p[1..], &t[1..]),
            (Some(a), Some(b)) if a == b => go(&p[1..], &t[1..]),
            _ => false,
        }
    }
    go(pattern.as_bytes(), text.as_bytes())
}
