//! Wording of verdict messages: values as a reader writes them, never as Rust's `Debug` does
//! (no `Some(..)`, no `["a", "b"]`).

use std::fmt::Display;

/// A value that may be absent: the value, or `none` words such as `no reason` when absent.
pub(super) fn or_none<T: Display>(v: Option<T>, none: &str) -> String {
    v.map_or_else(|| none.to_string(), |v| v.to_string())
}

/// A text that may be absent, quoted: `"text"`, or the `none` words when absent.
pub(super) fn quoted_or<T: AsRef<str>>(v: Option<T>, none: &str) -> String {
    v.map_or_else(|| none.to_string(), |v| format!("\"{}\"", v.as_ref()))
}

/// Items separated by commas, or `none` when there are none.
pub(super) fn list<T: Display>(items: impl IntoIterator<Item = T>) -> String {
    let v: Vec<String> = items.into_iter().map(|i| i.to_string()).collect();
    if v.is_empty() {
        "none".to_string()
    } else {
        v.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_as_text() {
        assert_eq!(or_none(Some(700), "no length"), "700");
        assert_eq!(or_none(None::<u64>, "no length"), "no length");
        assert_eq!(quoted_or(Some("x"), "no reason"), "\"x\"");
        assert_eq!(quoted_or(None::<&str>, "no reason"), "no reason");
        assert_eq!(list(["a", "b"]), "a, b");
        assert_eq!(list(Vec::<&str>::new()), "none");
    }
}
