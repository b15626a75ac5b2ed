//! Answers and events lacking REQUIRED fields (spec §5.7, §14.1.1): JSON pointer removal for
//! the `omit_fields` fault and the `malformed_event` step, and the `fault` journal kind that
//! marks them.

use serde_json::Value;

/// The prefix of the `fault` journal kind of an answer or event sent without fields; the
/// pointers removed follow, comma-separated.
pub(crate) const OMIT_KIND: &str = "omit_fields:";

/// The journal `fault` kind for these removed pointers (into the JSON-RPC envelope).
pub(crate) fn kind(removed: &[String]) -> String {
    format!("{OMIT_KIND}{}", removed.join(","))
}

/// Remove the value at a JSON pointer (RFC 6901, `~0`/`~1` escapes); whether it was there.
pub(crate) fn remove(v: &mut Value, pointer: &str) -> bool {
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        return false;
    };
    let key = last.replace("~1", "/").replace("~0", "~");
    let target = if parent.is_empty() {
        Some(v)
    } else {
        v.pointer_mut(parent)
    };
    match target {
        Some(Value::Object(o)) => o.remove(&key).is_some(),
        Some(Value::Array(a)) => match key.parse::<usize>() {
            Ok(i) if i < a.len() => {
                a.remove(i);
                true
            }
            _ => false,
        },
        _ => false,
    }
}

/// Remove these envelope pointers (each `/result/…`) from a stream event's or answer's
/// `result`; the ones that were there.
pub(crate) fn from_result(result: &mut Value, pointers: &[String]) -> Vec<String> {
    pointers
        .iter()
        .filter(|p| {
            p.strip_prefix("/result")
                .is_some_and(|inner| remove(result, inner))
        })
        .cloned()
        .collect()
}

/// The envelope pointer of a dotted field path in a stream event (`artifact.artifactId` in an
/// `artifactUpdate`: `/result/artifactUpdate/artifact/artifactId`).
pub(crate) fn event_pointer(member: &str, dotted: &str) -> String {
    format!("/result/{member}/{}", dotted.replace('.', "/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pointers_are_removed_where_they_exist() {
        let mut v =
            json!({"task": {"id": "t", "status": {"state": "S"}, "a/b": 1, "list": [1, 2]}});
        let removed = from_result(
            &mut v,
            &[
                "/result/task/status/state".into(),
                "/result/task/missing".into(),
                "/result/task/a~1b".into(),
                "/result/task/list/0".into(),
                "/result/task/list/9".into(),
            ],
        );
        assert_eq!(
            removed,
            [
                "/result/task/status/state",
                "/result/task/a~1b",
                "/result/task/list/0"
            ]
        );
        assert_eq!(v, json!({"task": {"id": "t", "status": {}, "list": [2]}}));
        assert_eq!(kind(&removed[..1]), "omit_fields:/result/task/status/state");
        assert_eq!(
            event_pointer("artifactUpdate", "artifact.artifactId"),
            "/result/artifactUpdate/artifact/artifactId"
        );
    }
}
