//! The request model: [`DelegationRequest`] and [`ArtifactSpec`] (seed 001), with the constraints
//! the seed puts on them, checked by [`DelegationRequest::validate`] with errors that name the
//! offending field.
//!
//! Constraints: `id` 1..=128 characters without control characters; `capability` and `text`
//! non-empty; `timeout_seconds` 10..=3600; `max_retries` 0..=10; `budget_usd` finite and ≥ 0;
//! `artifact_spec.mime_types` non-empty, each `type/subtype` (wildcards `*/*` and `type/*`
//! allowed); `max_size_bytes` 1..=4 GiB; `schema` a valid JSON Schema; `inputs` a JSON object;
//! every `chain` entry non-empty; children valid by the same rules and with distinct ids.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Smallest accepted `timeout_seconds`.
pub const MIN_TIMEOUT_SECONDS: u64 = 10;
/// Largest accepted `timeout_seconds`.
pub const MAX_TIMEOUT_SECONDS: u64 = 3600;
/// Largest accepted `max_retries`.
pub const MAX_RETRIES: u32 = 10;
/// Largest accepted `artifact_spec.max_size_bytes` (4 GiB).
pub const MAX_ARTIFACT_BYTES: u64 = 4 * 1024 * 1024 * 1024;
/// Default `artifact_spec.max_size_bytes` (10 MiB, as in seed 001).
pub const DEFAULT_MAX_SIZE_BYTES: u64 = 10 * 1024 * 1024;

/// A request is invalid; the message names the field and the constraint.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct RequestError {
    /// The offending field, such as `timeout_seconds` or `children[1].id`.
    pub field: String,
    /// What is wrong with it.
    pub reason: String,
}

fn bad(field: impl Into<String>, reason: impl Into<String>) -> RequestError {
    RequestError {
        field: field.into(),
        reason: reason.into(),
    }
}

/// How urgent a delegation is (seed 001 `TaskPriority`). Stored and reported; it does not change
/// what is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// Low.
    Low,
    /// Normal (the default).
    #[default]
    Normal,
    /// High.
    High,
    /// Critical.
    Critical,
}

impl Priority {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Priority::Low => "low",
            Priority::Normal => "normal",
            Priority::High => "high",
            Priority::Critical => "critical",
        }
    }
}

/// What output the delegator can consume (seed 001 `ArtifactSpec`), plus an optional JSON Schema
/// for structured `data` parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ArtifactSpec {
    /// Accepted media types; `*/*` and `type/*` wildcards allowed.
    pub mime_types: Vec<String>,
    /// Largest accepted artifact, in bytes; an artifact is rejected once it crosses this.
    pub max_size_bytes: u64,
    /// Prefer streaming delivery (used only when the agent's card declares streaming).
    pub streaming_preferred: bool,
    /// JSON Schema every `data` part must satisfy, if any.
    pub schema: Option<Value>,
}

impl Default for ArtifactSpec {
    fn default() -> Self {
        ArtifactSpec {
            mime_types: vec!["application/json".to_string()],
            max_size_bytes: DEFAULT_MAX_SIZE_BYTES,
            streaming_preferred: true,
            schema: None,
        }
    }
}

impl ArtifactSpec {
    /// True when `media_type` (parameters ignored, case-insensitive) matches an accepted type.
    pub fn accepts(&self, media_type: &str) -> bool {
        media_type_accepted(&self.mime_types, media_type)
    }
}

/// True when `media_type` matches one of `accepted` (wildcards `*/*`, `type/*`; parameters after
/// `;` ignored; case-insensitive). An empty list accepts nothing.
pub fn media_type_accepted(accepted: &[String], media_type: &str) -> bool {
    let essence = |s: &str| {
        s.split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase()
    };
    let mt = essence(media_type);
    let (ty, _) = mt.split_once('/').unwrap_or((mt.as_str(), ""));
    accepted.iter().any(|a| {
        let a = essence(a);
        a == "*/*" || a == mt || a.strip_suffix("/*").is_some_and(|t| t == ty)
    })
}

/// One delegation as the caller asks for it (seed 001 `DelegationRequest`, extended with the
/// fields seed 000 needs: inputs, deadline, budget, depth, chain, fan-out and refinement).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DelegationRequest {
    /// The delegation id, chosen by the caller (seed 001 `task_id`); unique in the store.
    pub id: String,
    /// The skill id the target agent must advertise (seed 001 `capability_required`).
    pub capability: String,
    /// The instructions sent as the text part (seed 001 `input_message`).
    pub text: String,
    /// Data the delegation holds: sent as a data part and used to answer input questions.
    #[serde(default)]
    pub inputs: Map<String, Value>,
    /// What output is acceptable.
    #[serde(default)]
    pub artifact_spec: ArtifactSpec,
    /// Seconds from acceptance until the local deadline (10..=3600).
    #[serde(default = "default_timeout")]
    pub timeout_seconds: u64,
    /// An absolute deadline (RFC 3339); the earlier of this and `timeout_seconds` applies.
    #[serde(default)]
    pub deadline: Option<String>,
    /// Budget in USD for this delegation (and its children).
    #[serde(default = "default_budget")]
    pub budget_usd: f64,
    /// Transient failures retried at most this many times (0..=10).
    #[serde(default = "default_retries")]
    pub max_retries: u32,
    /// Priority.
    #[serde(default)]
    pub priority: Priority,
    /// Depth at which this work reached the delegator (0 for a root request).
    #[serde(default)]
    pub depth: u32,
    /// URLs of the delegators the work passed through, oldest first (seed 001
    /// `delegation_chain`).
    #[serde(default)]
    pub chain: Vec<String>,
    /// Fan-out: sub-delegations sharing this request's budget (with a reserve) and limits.
    #[serde(default)]
    pub children: Option<Vec<ChildRequest>>,
    /// Refinement of an earlier delegation: a new task in its context, referencing its task.
    #[serde(default)]
    pub refine_of: Option<String>,
    /// Direct agent choice: a card URL (the `delegate` CLI uses it); routing still checks it.
    #[serde(default)]
    pub agent: Option<String>,
}

/// One child of a fan-out: what differs from the parent. Absent fields inherit the parent's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChildRequest {
    /// The child's delegation id.
    pub id: String,
    /// Skill id.
    pub capability: String,
    /// Instructions.
    pub text: String,
    /// Inputs (default: the parent's).
    #[serde(default)]
    pub inputs: Option<Map<String, Value>>,
    /// Artifact spec (default: the parent's).
    #[serde(default)]
    pub artifact_spec: Option<ArtifactSpec>,
    /// Retries (default: the parent's).
    #[serde(default)]
    pub max_retries: Option<u32>,
    /// Priority (default: the parent's).
    #[serde(default)]
    pub priority: Option<Priority>,
}

fn default_timeout() -> u64 {
    300
}
fn default_budget() -> f64 {
    1.0
}
fn default_retries() -> u32 {
    3
}

fn check_id(field: &str, id: &str) -> Result<(), RequestError> {
    if id.is_empty() || id.chars().count() > 128 {
        return Err(bad(field, "must be 1 to 128 characters"));
    }
    if id.chars().any(char::is_control) {
        return Err(bad(field, "must not contain control characters"));
    }
    Ok(())
}

impl ArtifactSpec {
    /// Check the spec; `field` prefixes error field names.
    pub fn validate(&self, field: &str) -> Result<(), RequestError> {
        if self.mime_types.is_empty() {
            return Err(bad(
                format!("{field}.mime_types"),
                "must list at least one media type",
            ));
        }
        for (i, m) in self.mime_types.iter().enumerate() {
            let essence = m.split(';').next().unwrap_or_default().trim();
            let ok = essence
                .split_once('/')
                .is_some_and(|(t, s)| !t.is_empty() && !s.is_empty() && !s.contains('/'));
            if !ok {
                return Err(bad(
                    format!("{field}.mime_types[{i}]"),
                    format!("{m:?} is not a media type of the form type/subtype"),
                ));
            }
        }
        if self.max_size_bytes == 0 || self.max_size_bytes > MAX_ARTIFACT_BYTES {
            return Err(bad(
                format!("{field}.max_size_bytes"),
                format!(
                    "must be between 1 and {MAX_ARTIFACT_BYTES}, got {}",
                    self.max_size_bytes
                ),
            ));
        }
        if let Some(schema) = &self.schema
            && let Err(e) = jsonschema::validator_for(schema)
        {
            return Err(bad(
                format!("{field}.schema"),
                format!("not a valid JSON Schema: {e}"),
            ));
        }
        Ok(())
    }
}

impl DelegationRequest {
    /// A request with the seed's defaults for everything but the three required fields.
    pub fn new(
        id: impl Into<String>,
        capability: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        DelegationRequest {
            id: id.into(),
            capability: capability.into(),
            text: text.into(),
            inputs: Map::new(),
            artifact_spec: ArtifactSpec::default(),
            timeout_seconds: default_timeout(),
            deadline: None,
            budget_usd: default_budget(),
            max_retries: default_retries(),
            priority: Priority::Normal,
            depth: 0,
            chain: Vec::new(),
            children: None,
            refine_of: None,
            agent: None,
        }
    }

    /// Check every constraint; the error names the first offending field.
    pub fn validate(&self) -> Result<(), RequestError> {
        check_id("id", &self.id)?;
        if self.capability.trim().is_empty() {
            return Err(bad("capability", "must not be empty"));
        }
        if self.text.trim().is_empty() {
            return Err(bad("text", "must not be empty"));
        }
        if !(MIN_TIMEOUT_SECONDS..=MAX_TIMEOUT_SECONDS).contains(&self.timeout_seconds) {
            return Err(bad(
                "timeout_seconds",
                format!(
                    "must be between {MIN_TIMEOUT_SECONDS} and {MAX_TIMEOUT_SECONDS}, got {}",
                    self.timeout_seconds
                ),
            ));
        }
        if self.max_retries > MAX_RETRIES {
            return Err(bad(
                "max_retries",
                format!(
                    "must be between 0 and {MAX_RETRIES}, got {}",
                    self.max_retries
                ),
            ));
        }
        if !self.budget_usd.is_finite() || self.budget_usd < 0.0 {
            return Err(bad(
                "budget_usd",
                format!("must be a finite amount >= 0, got {}", self.budget_usd),
            ));
        }
        if let Some(d) = &self.deadline {
            OffsetDateTime::parse(d, &Rfc3339).map_err(|e| {
                bad(
                    "deadline",
                    format!("not an RFC 3339 timestamp ({e}): {d:?}"),
                )
            })?;
        }
        for (i, c) in self.chain.iter().enumerate() {
            if c.trim().is_empty() {
                return Err(bad(format!("chain[{i}]"), "must not be empty"));
            }
        }
        self.artifact_spec.validate("artifact_spec")?;
        if let Some(r) = &self.refine_of {
            check_id("refine_of", r)?;
            if r == &self.id {
                return Err(bad("refine_of", "a delegation cannot refine itself"));
            }
        }
        if let Some(children) = &self.children {
            if children.is_empty() {
                return Err(bad("children", "must hold at least one child when present"));
            }
            if self.refine_of.is_some() {
                return Err(bad("children", "a refinement cannot fan out"));
            }
            let mut seen = std::collections::BTreeSet::new();
            for (i, c) in children.iter().enumerate() {
                let f = format!("children[{i}]");
                check_id(&format!("{f}.id"), &c.id)?;
                if c.id == self.id || !seen.insert(c.id.as_str()) {
                    return Err(bad(format!("{f}.id"), format!("duplicate id {:?}", c.id)));
                }
                if c.capability.trim().is_empty() {
                    return Err(bad(format!("{f}.capability"), "must not be empty"));
                }
                if c.text.trim().is_empty() {
                    return Err(bad(format!("{f}.text"), "must not be empty"));
                }
                if let Some(r) = c.max_retries
                    && r > MAX_RETRIES
                {
                    return Err(bad(
                        format!("{f}.max_retries"),
                        format!("must be between 0 and {MAX_RETRIES}, got {r}"),
                    ));
                }
                if let Some(spec) = &c.artifact_spec {
                    spec.validate(&format!("{f}.artifact_spec"))?;
                }
            }
        }
        Ok(())
    }

    /// The absolute local deadline: the earlier of `now + timeout_seconds` and `deadline`.
    pub fn effective_deadline(&self, now: OffsetDateTime) -> OffsetDateTime {
        let by_timeout =
            now + time::Duration::seconds(i64::try_from(self.timeout_seconds).unwrap_or(3600));
        match self
            .deadline
            .as_deref()
            .and_then(|d| OffsetDateTime::parse(d, &Rfc3339).ok())
        {
            Some(d) if d < by_timeout => d,
            _ => by_timeout,
        }
    }

    /// The request of child `i` of a fan-out: the child's fields over the parent's, with the
    /// parent's limits, depth and chain and the given budget share.
    pub fn child_request(&self, child: &ChildRequest, budget: f64, deadline: &str) -> Self {
        DelegationRequest {
            id: child.id.clone(),
            capability: child.capability.clone(),
            text: child.text.clone(),
            inputs: child.inputs.clone().unwrap_or_else(|| self.inputs.clone()),
            artifact_spec: child
                .artifact_spec
                .clone()
                .unwrap_or_else(|| self.artifact_spec.clone()),
            timeout_seconds: self.timeout_seconds,
            deadline: Some(deadline.to_string()),
            budget_usd: budget,
            max_retries: child.max_retries.unwrap_or(self.max_retries),
            priority: child.priority.unwrap_or(self.priority),
            depth: self.depth,
            chain: self.chain.clone(),
            children: None,
            refine_of: None,
            agent: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ok() -> DelegationRequest {
        let mut r = DelegationRequest::new("d1", "extract", "do it");
        r.artifact_spec.mime_types = vec!["text/plain".into()];
        r
    }

    #[test]
    fn defaults_validate() {
        ok().validate().unwrap();
        let r: DelegationRequest =
            serde_json::from_value(json!({"id":"d","capability":"c","text":"t"})).unwrap();
        assert_eq!(r.timeout_seconds, 300);
        assert_eq!(r.max_retries, 3);
        assert_eq!(r.artifact_spec.mime_types, vec!["application/json"]);
        r.validate().unwrap();
    }

    #[test]
    fn timeout_bounds() {
        for (t, good) in [(9, false), (10, true), (3600, true), (3601, false)] {
            let mut r = ok();
            r.timeout_seconds = t;
            let res = r.validate();
            assert_eq!(res.is_ok(), good, "{t}: {res:?}");
            if let Err(e) = res {
                assert_eq!(e.field, "timeout_seconds");
            }
        }
    }

    #[test]
    fn retries_budget_and_spec_bounds() {
        let mut r = ok();
        r.max_retries = 11;
        assert_eq!(r.validate().unwrap_err().field, "max_retries");
        let mut r = ok();
        r.budget_usd = -1.0;
        assert_eq!(r.validate().unwrap_err().field, "budget_usd");
        let mut r = ok();
        r.artifact_spec.mime_types = vec![];
        assert_eq!(r.validate().unwrap_err().field, "artifact_spec.mime_types");
        let mut r = ok();
        r.artifact_spec.mime_types = vec!["textplain".into()];
        assert_eq!(
            r.validate().unwrap_err().field,
            "artifact_spec.mime_types[0]"
        );
        let mut r = ok();
        r.artifact_spec.max_size_bytes = 0;
        assert_eq!(
            r.validate().unwrap_err().field,
            "artifact_spec.max_size_bytes"
        );
        let mut r = ok();
        r.artifact_spec.schema = Some(json!({"type": 12}));
        assert_eq!(r.validate().unwrap_err().field, "artifact_spec.schema");
        let mut r = ok();
        r.deadline = Some("tomorrow".into());
        assert_eq!(r.validate().unwrap_err().field, "deadline");
        let mut r = ok();
        r.id = String::new();
        assert_eq!(r.validate().unwrap_err().field, "id");
    }

    #[test]
    fn children_checked() {
        let mut r = ok();
        let c = ChildRequest {
            id: "c1".into(),
            capability: "x".into(),
            text: "t".into(),
            inputs: None,
            artifact_spec: None,
            max_retries: None,
            priority: None,
        };
        r.children = Some(vec![c.clone(), c.clone()]);
        assert_eq!(r.validate().unwrap_err().field, "children[1].id");
        r.children = Some(vec![]);
        assert_eq!(r.validate().unwrap_err().field, "children");
        r.children = Some(vec![c]);
        r.validate().unwrap();
    }

    #[test]
    fn media_type_matching() {
        let acc = vec!["text/*".to_string(), "application/json".to_string()];
        assert!(media_type_accepted(&acc, "text/plain; charset=utf-8"));
        assert!(media_type_accepted(&acc, "Application/JSON"));
        assert!(!media_type_accepted(&acc, "image/png"));
        assert!(media_type_accepted(&["*/*".to_string()], "image/png"));
        assert!(!media_type_accepted(&[], "text/plain"));
    }

    #[test]
    fn deadline_is_the_earlier() {
        let now = OffsetDateTime::from_unix_timestamp(1_000_000).unwrap();
        let mut r = ok();
        r.timeout_seconds = 60;
        assert_eq!(r.effective_deadline(now), now + time::Duration::seconds(60));
        r.deadline = Some("1970-01-12T13:46:50Z".into()); // 1_000_010
        assert_eq!(r.effective_deadline(now).unix_timestamp(), 1_000_010);
    }
}
