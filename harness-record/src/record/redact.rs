//! What never reaches the journal: credentials in headers and query strings, push-notification
//! tokens, the payload paths the user names, and the bulk of long strings (artifact parts over
//! the inline limit are kept as length + sha256 + their first bytes).

use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// The text a redacted value is replaced with.
pub const REDACTED: &str = "<redacted>";

/// How many leading bytes of a summarised string are kept.
pub const SUMMARY_PREFIX_BYTES: usize = 32;

/// A payload path to redact: a JSON pointer (RFC 6901) whose segments may be `*` (any key or
/// index), such as `/metadata/ssn`, matched from the root of every recorded payload and from
/// every value nested in it (so `/metadata/ssn` is redacted in a request's message and in a
/// task's history alike).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedactPath(Vec<String>);

/// A `--redact` value that is no JSON pointer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--redact {0:?}: expected a JSON pointer such as /message/metadata/apiKey (segments may be *)"
)]
pub struct BadRedactPath(pub String);

impl std::str::FromStr for RedactPath {
    type Err = BadRedactPath;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let Some(rest) = s.strip_prefix('/') else {
            return Err(BadRedactPath(s.to_string()));
        };
        Ok(RedactPath(
            rest.split('/')
                .map(|seg| seg.replace("~1", "/").replace("~0", "~"))
                .collect(),
        ))
    }
}

/// Redaction and size rules of one recording.
#[derive(Debug, Clone)]
pub struct Redactor {
    /// Payload paths to redact.
    pub paths: Vec<RedactPath>,
    /// Strings longer than this are summarised (`None`: kept whole, `--keep-bytes`).
    pub max_inline_bytes: Option<usize>,
    /// Artifact content kept whole despite `max_inline_bytes`, within these bounds (`None`:
    /// artifact content is summarised like any other string).
    pub artifacts: Option<ArtifactBudget>,
}

/// How much artifact content a recording keeps whole (the bytes a repro needs): the `text`,
/// `raw` and `data` of the parts of every `artifact` and `artifacts` member of a payload, up
/// to `per_artifact` bytes per artifact id (counted over all its chunks and every payload
/// that repeats it) and `total` bytes over the whole recording. Beyond them an artifact's
/// strings are summarised as before. Shared by the clones of one recording's [`Redactor`].
#[derive(Debug, Clone)]
pub struct ArtifactBudget {
    /// Bytes kept per artifact id.
    pub per_artifact: u64,
    /// Bytes kept over the recording.
    pub total: u64,
    used: std::sync::Arc<std::sync::Mutex<(u64, BTreeMap<String, u64>)>>,
}

impl ArtifactBudget {
    /// A budget of `per_artifact` bytes per artifact id and `total` bytes in all.
    pub fn new(per_artifact: u64, total: u64) -> Self {
        ArtifactBudget {
            per_artifact,
            total,
            used: Default::default(),
        }
    }

    /// Take `n` bytes for artifact `id`, if both bounds allow.
    fn admit(&self, id: &str, n: u64) -> bool {
        let mut g = self.used.lock().unwrap_or_else(|e| e.into_inner());
        let (total, per) = &mut *g;
        let mine = per.get(id).copied().unwrap_or(0);
        if mine + n > self.per_artifact || *total + n > self.total {
            return false;
        }
        *total += n;
        per.insert(id.to_string(), mine + n);
        true
    }
}

/// The content bytes of an artifact's parts (text and base64 raw as written, data as JSON).
fn artifact_content_bytes(a: &Value) -> u64 {
    a.get("parts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| {
            ["text", "raw", "data"]
                .iter()
                .filter_map(|k| p.get(*k))
                .map(|v| match v {
                    Value::String(s) => s.len() as u64,
                    other => serde_json::to_vec(other).map_or(0, |b| b.len() as u64),
                })
                .sum::<u64>()
        })
        .sum()
}

/// An artifact object: its part contents kept whole when the budget admits them, every other
/// string summarised.
fn keep_artifact(a: &Value, max: usize, b: &ArtifactBudget) -> Value {
    let id = a.get("artifactId").and_then(Value::as_str).unwrap_or("");
    if !b.admit(id, artifact_content_bytes(a)) {
        return summarise(a, max);
    }
    let Value::Object(o) = a else {
        return summarise(a, max);
    };
    let mut out = serde_json::Map::new();
    for (k, x) in o {
        let v = match (k.as_str(), x) {
            ("parts", Value::Array(parts)) => Value::Array(
                parts
                    .iter()
                    .map(|p| match p {
                        Value::Object(po) => Value::Object(
                            po.iter()
                                .map(|(pk, px)| {
                                    let kept = matches!(pk.as_str(), "text" | "raw" | "data");
                                    (
                                        pk.clone(),
                                        if kept { px.clone() } else { summarise(px, max) },
                                    )
                                })
                                .collect(),
                        ),
                        other => summarise(other, max),
                    })
                    .collect(),
            ),
            _ => summarise(x, max),
        };
        out.insert(k.clone(), v);
    }
    Value::Object(out)
}

/// [`summarise`], except the artifacts a budget admits.
fn summarise_keeping(v: &Value, max: usize, b: &ArtifactBudget) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| {
                    let out = match (k.as_str(), x) {
                        ("artifact", Value::Object(_)) => keep_artifact(x, max, b),
                        ("artifacts", Value::Array(list)) => {
                            Value::Array(list.iter().map(|a| keep_artifact(a, max, b)).collect())
                        }
                        _ => summarise_keeping(x, max, b),
                    };
                    (k.clone(), out)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|x| summarise_keeping(x, max, b)).collect()),
        _ => summarise(v, max),
    }
}

/// Is this header a credential (its value never written)?
pub fn is_secret_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    matches!(
        n.as_str(),
        "authorization" | "proxy-authorization" | "cookie" | "set-cookie"
    ) || [
        "token",
        "api-key",
        "api_key",
        "apikey",
        "secret",
        "password",
        "credential",
        "session",
        "signature",
        "auth",
    ]
    .iter()
    .any(|w| n.contains(w))
}

/// A redacted header value: the scheme word of `Bearer xyz` is kept (it says which kind of
/// credential went out), the rest is not.
fn redact_header_value(v: &str) -> String {
    match v.split_once(' ') {
        Some((scheme, _))
            if !scheme.is_empty()
                && scheme.len() <= 24
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-') =>
        {
            format!("{scheme} {REDACTED}")
        }
        _ => REDACTED.to_string(),
    }
}

/// Headers as the mock journals them (lowercase names, the values of a header sent on several
/// lines joined with `"\n"`), credentials redacted.
pub fn header_map(h: &hyper::HeaderMap) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for (k, v) in h {
        let name = k.as_str().to_ascii_lowercase();
        let raw = String::from_utf8_lossy(v.as_bytes()).into_owned();
        let v = if is_secret_header(&name) {
            redact_header_value(&raw)
        } else {
            raw
        };
        m.entry(name)
            .and_modify(|e: &mut String| {
                e.push('\n');
                e.push_str(&v);
            })
            .or_insert(v);
    }
    m
}

/// A path with the values of credential-like query parameters (`token`, `key`, `api_key`, …)
/// redacted.
pub fn redact_path(path_and_query: &str) -> String {
    let Some((path, query)) = path_and_query.split_once('?') else {
        return path_and_query.to_string();
    };
    let q: Vec<String> = query
        .split('&')
        .map(|kv| match kv.split_once('=') {
            Some((k, _)) if is_secret_header(k) || k.eq_ignore_ascii_case("key") => {
                format!("{k}={REDACTED}")
            }
            _ => kv.to_string(),
        })
        .collect();
    format!("{path}?{}", q.join("&"))
}

impl Redactor {
    /// Everything a payload must lose before it is written: push tokens and credentials of
    /// push configs anywhere in it, the configured paths, then long strings summarised.
    pub fn payload(&self, v: &Value) -> Value {
        let mut v = v.clone();
        redact_push_secrets(&mut v);
        for p in &self.paths {
            redact_everywhere(&mut v, &p.0);
        }
        match (self.max_inline_bytes, &self.artifacts) {
            (Some(max), Some(b)) => summarise_keeping(&v, max, b),
            (Some(max), None) => summarise(&v, max),
            (None, _) => v,
        }
    }
}

/// `token` of every object that has a `url` (a push config) and `credentials` of every
/// `authentication` object.
fn redact_push_secrets(v: &mut Value) {
    match v {
        Value::Object(o) => {
            if o.contains_key("url")
                && let Some(t) = o.get_mut("token")
                && !t.is_null()
            {
                *t = Value::String(REDACTED.into());
            }
            if let Some(Value::Object(auth)) = o.get_mut("authentication")
                && let Some(c) = auth.get_mut("credentials")
                && !c.is_null()
            {
                *c = Value::String(REDACTED.into());
            }
            for x in o.values_mut() {
                redact_push_secrets(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(redact_push_secrets),
        _ => {}
    }
}

/// Redact `path` relative to `v` and to every value nested in it: the same data shows up at
/// different depths (a message in the request's params and in a task's history).
fn redact_everywhere(v: &mut Value, path: &[String]) {
    redact_at(v, path);
    match v {
        Value::Object(o) => o.values_mut().for_each(|x| redact_everywhere(x, path)),
        Value::Array(a) => a.iter_mut().for_each(|x| redact_everywhere(x, path)),
        _ => {}
    }
}

fn redact_at(v: &mut Value, path: &[String]) {
    let Some((first, rest)) = path.split_first() else {
        *v = Value::String(REDACTED.into());
        return;
    };
    match v {
        Value::Object(o) => {
            if first == "*" {
                o.values_mut().for_each(|x| redact_at(x, rest));
            } else if let Some(x) = o.get_mut(first) {
                redact_at(x, rest);
            }
        }
        Value::Array(a) => {
            if first == "*" {
                a.iter_mut().for_each(|x| redact_at(x, rest));
            } else if let Some(x) = first.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                redact_at(x, rest);
            }
        }
        _ => {}
    }
}

/// Summarise one string: `<N bytes, sha256 H, starts "…">` (the mock's summary, plus the first
/// [`SUMMARY_PREFIX_BYTES`] bytes, never more than `max`).
pub fn summary(s: &str, max: usize) -> String {
    let mut cut = SUMMARY_PREFIX_BYTES.min(max).min(s.len());
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(
        "<{} bytes, sha256 {}, starts {:?}>",
        s.len(),
        hex::encode(Sha256::digest(s.as_bytes())),
        &s[..cut]
    )
}

/// Replace every string longer than `max` bytes with its [`summary`].
pub fn summarise(v: &Value, max: usize) -> Value {
    match v {
        Value::String(s) if s.len() > max => Value::String(summary(s, max)),
        Value::Array(a) => Value::Array(a.iter().map(|x| summarise(x, max)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (k.clone(), summarise(x, max)))
                .collect(),
        ),
        _ => v.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn push_tokens_paths_and_long_strings_are_redacted() {
        let r = Redactor {
            paths: vec!["/parts/*/data/ssn".parse().unwrap()],
            max_inline_bytes: Some(12),
            artifacts: None,
        };
        let v = json!({
            "configuration": {"taskPushNotificationConfig": {"url": "http://h/x", "token": "tok-1",
                "authentication": {"scheme": "Bearer", "credentials": "cred-1"}}},
            "message": {"parts": [{"data": {"ssn": "123", "ok": 1}}, {"text": "0123456789abc"}]},
            "task": {"history": [{"parts": [{"data": {"ssn": "456"}}]}]}
        });
        let out = r.payload(&v).to_string();
        for secret in ["tok-1", "cred-1", "\"123\"", "\"456\"", "0123456789abc"] {
            assert!(!out.contains(secret), "{secret} in {out}");
        }
        assert!(out.contains("<13 bytes, sha256 "), "{out}");
        assert!(out.contains(r#"starts \"0123456789ab\""#), "{out}");
        assert!(out.contains("http://h/x"));
        assert!("no-slash".parse::<RedactPath>().is_err());
    }

    #[test]
    fn artifact_content_is_kept_within_its_budget_and_nothing_else_is() {
        let r = Redactor {
            paths: vec!["/artifact/parts/*/metadata/secret".parse().unwrap()],
            max_inline_bytes: Some(12),
            artifacts: Some(ArtifactBudget::new(40, 60)),
        };
        let long = "0123456789".repeat(3);
        let update = |id: &str| {
            json!({"artifactUpdate": {"artifact": {"artifactId": id, "name": long,
                "parts": [{"text": long, "metadata": {"secret": "s3cr3t", "note": long}}]}},
                "message": {"parts": [{"text": long}]}})
        };
        let out = r.payload(&update("a1"));
        let a = &out["artifactUpdate"]["artifact"];
        assert_eq!(a["parts"][0]["text"], long.as_str(), "{out}");
        assert_eq!(a["parts"][0]["metadata"]["secret"], REDACTED, "{out}");
        for other in [
            &a["name"],
            &a["parts"][0]["metadata"]["note"],
            &out["message"]["parts"][0]["text"],
        ] {
            assert!(
                other
                    .as_str()
                    .is_some_and(|s| s.starts_with("<30 bytes, sha256 ")),
                "{out}"
            );
        }
        // 30 more bytes of a1 pass its 40: summarised; a2 fits its own bound but not the total
        // after one more.
        let again = r.payload(&update("a1"));
        assert!(
            again["artifactUpdate"]["artifact"]["parts"][0]["text"]
                .as_str()
                .is_some_and(|s| s.starts_with('<')),
            "{again}"
        );
        let a2 = r.payload(&update("a2"));
        assert_eq!(
            a2["artifactUpdate"]["artifact"]["parts"][0]["text"],
            long.as_str()
        );
        let a3 = r.payload(&update("a3"));
        assert!(
            a3["artifactUpdate"]["artifact"]["parts"][0]["text"]
                .as_str()
                .is_some_and(|s| s.starts_with('<')),
            "{a3}"
        );
        // A task's artifacts list counts too.
        let r = Redactor {
            paths: Vec::new(),
            max_inline_bytes: Some(8),
            artifacts: Some(ArtifactBudget::new(1000, 1000)),
        };
        let t = r.payload(&json!({"artifacts": [{"artifactId": "x", "parts": [{"raw": long}, {"data": {"k": long}}]}]}));
        assert_eq!(t["artifacts"][0]["parts"][0]["raw"], long.as_str());
        assert_eq!(t["artifacts"][0]["parts"][1]["data"]["k"], long.as_str());
    }

    #[test]
    fn credential_headers_and_query_values_are_redacted() {
        let mut h = hyper::HeaderMap::new();
        h.insert("authorization", "Bearer abc".parse().unwrap());
        h.insert("x-api-key", "k1".parse().unwrap());
        h.insert("x-a2a-notification-token", "t1".parse().unwrap());
        h.insert("content-type", "application/json".parse().unwrap());
        h.append("a2a-extensions", "u1, u2".parse().unwrap());
        h.append("a2a-extensions", "u3".parse().unwrap());
        let m = header_map(&h);
        // Two lines stay apart from one comma-separated line.
        assert_eq!(m["a2a-extensions"], "u1, u2\nu3");
        assert_eq!(m["authorization"], "Bearer <redacted>");
        assert_eq!(m["x-api-key"], REDACTED);
        assert_eq!(m["x-a2a-notification-token"], REDACTED);
        assert_eq!(m["content-type"], "application/json");
        assert_eq!(
            redact_path("/a?token=s&x=1&api_key=k"),
            "/a?token=<redacted>&x=1&api_key=<redacted>"
        );
    }
}
