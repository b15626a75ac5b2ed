//! The request model: [`DelegationRequest`] and [`ArtifactSpec`] (seed 001; the driver contract's
//! types, one definition in `a2a-driver-contract`), with the constraints
//! the seed puts on them, checked by [`RequestExt::validate`] with errors that name the
//! offending field.
//!
//! Constraints: `id` 1..=128 characters without control characters; `capability` and `text`
//! non-empty; `timeout_seconds` 10..=3600; `max_retries` 0..=10; `budget_usd` finite and ≥ 0;
//! `artifact_spec.mime_types` non-empty, each `type/subtype` (wildcards `*/*` and `type/*`
//! allowed); `max_size_bytes` 1..=4 GiB; `schema` a valid JSON Schema; `inputs` a JSON object;
//! every `chain` entry non-empty; children valid by the same rules and with distinct ids.

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

/// One child of a fan-out: what differs from the parent; absent fields inherit the parent's.
pub use a2a_driver_contract::ChildDelegate as ChildRequest;
/// One delegation as the caller asks for it: the driver contract's `delegate` message (seed 001
/// `DelegationRequest`, extended with the fields seed 000 needs: inputs, deadline, budget, depth,
/// chain, fan-out and refinement).
pub use a2a_driver_contract::Delegate as DelegationRequest;
pub use a2a_driver_contract::{ArtifactSpec, Priority};

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

/// The delegator's rules for an [`ArtifactSpec`]: matching media types and checking the spec.
pub trait ArtifactSpecExt {
    /// True when `media_type` (parameters ignored, case-insensitive) matches an accepted type.
    fn accepts(&self, media_type: &str) -> bool;
    /// Check the spec; `field` prefixes error field names.
    fn validate(&self, field: &str) -> Result<(), RequestError>;
}

/// The delegator's rules for a [`DelegationRequest`]: its constraints, its deadline and the
/// requests of its fan-out children.
pub trait RequestExt {
    /// Check every constraint; the error names the first offending field.
    fn validate(&self) -> Result<(), RequestError>;
    /// The absolute local deadline: the earlier of `now + timeout_seconds` and `deadline`.
    fn effective_deadline(&self, now: OffsetDateTime) -> OffsetDateTime;
    /// The request of one child of a fan-out: the child's fields over the parent's, with the
    /// parent's limits, depth and chain and the given budget share.
    fn child_request(&self, child: &ChildRequest, budget: f64, deadline: &str) -> Self;
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

fn check_id(field: &str, id: &str) -> Result<(), RequestError> {
    if id.is_empty() || id.chars().count() > 128 {
        return Err(bad(field, "must be 1 to 128 characters"));
    }
    if id.chars().any(char::is_control) {
        return Err(bad(field, "must not contain control characters"));
    }
    Ok(())
}

impl ArtifactSpecExt for ArtifactSpec {
    fn accepts(&self, media_type: &str) -> bool {
        media_type_accepted(&self.mime_types, media_type)
    }

    fn validate(&self, field: &str) -> Result<(), RequestError> {
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

impl RequestExt for DelegationRequest {
    fn validate(&self) -> Result<(), RequestError> {
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

    fn effective_deadline(&self, now: OffsetDateTime) -> OffsetDateTime {
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

    fn child_request(&self, child: &ChildRequest, budget: f64, deadline: &str) -> Self {
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
