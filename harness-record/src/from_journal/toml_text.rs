//! Small TOML writing helpers: strings, keys and inline values from JSON, so that the scenario
//! can be laid out by hand (comments next to the values they explain).

use serde_json::Value;
use std::fmt::Write as _;

/// A TOML basic string, quoted and escaped.
pub(crate) fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A key: bare when it can be, quoted otherwise.
pub(crate) fn key(k: &str) -> String {
    if !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        k.to_string()
    } else {
        string(k)
    }
}

/// A JSON value as an inline TOML value. Nulls inside objects are left out (TOML has none; a
/// missing key is the format's default); a null alone becomes an empty string.
pub(crate) fn inline(v: &Value) -> String {
    match v {
        Value::Null => "\"\"".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => string(s),
        Value::Array(a) => {
            let items: Vec<String> = a.iter().filter(|x| !x.is_null()).map(inline).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(o) => {
            // A step's `do` and a fault's `kind` first: they say what the rest means.
            let tags = ["do", "kind"];
            let items: Vec<String> = tags
                .iter()
                .filter_map(|t| o.get_key_value(*t))
                .chain(o.iter().filter(|(k, _)| !tags.contains(&k.as_str())))
                .filter(|(_, x)| !x.is_null())
                .map(|(k, x)| format!("{} = {}", key(k), inline(x)))
                .collect();
            if items.is_empty() {
                "{}".into()
            } else {
                format!("{{ {} }}", items.join(", "))
            }
        }
    }
}

/// A one-line comment text: newlines folded.
pub(crate) fn comment(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

/// A serialisable script value (step, fault, matcher) as JSON without the noise of defaults:
/// nulls, empty lists and maps, and zero delays are dropped.
pub(crate) fn script_value<T: serde::Serialize>(v: &T) -> Value {
    let v = serde_json::to_value(v).unwrap_or(Value::Null);
    let Value::Object(o) = v else {
        return v;
    };
    let mut out = serde_json::Map::new();
    for (k, x) in o {
        let noise = match &x {
            Value::Null => true,
            Value::Array(a) => a.is_empty(),
            Value::Object(m) => m.is_empty(),
            Value::Number(n) => (k == "delay_ms" || k == "ms") && n.as_u64() == Some(0),
            Value::Bool(b) => !b && (k == "interleave" || k == "omit_last_chunk"),
            _ => false,
        };
        if !noise {
            out.insert(k, x);
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_inline_values_parse_back() {
        let v = serde_json::json!({
            "text": "a \"quoted\"\nline\\ with \u{1} control",
            "odd key": [1, 2.5, true, null, {"x": null, "y": "z"}],
        });
        let doc = format!("v = {}\n", inline(&v));
        let back: toml::Value = toml::from_str(&doc).unwrap();
        assert_eq!(
            back["v"]["text"].as_str(),
            Some("a \"quoted\"\nline\\ with \u{1} control")
        );
        assert_eq!(back["v"]["odd key"].as_array().map(Vec::len), Some(4));
        assert_eq!(key("a-b_1"), "a-b_1");
        assert_eq!(key("a.b"), "\"a.b\"");
    }
}
