//! Text shared by every report writer: escaping, bounded excerpts, the evidence of a failure in
//! words, and a one-line description of a journal entry.

use crate::runner::{CaseResult, RuleVerdict, Verdict};
use a2a_mock_agents::{Entry, Event};
use serde_json::Value;
use std::fmt::Write as _;

/// How many lines of the delegator's stderr a report shows inline.
pub const STDERR_TAIL_LINES: usize = 40;
/// How many bytes of the delegator's stderr a report shows inline, at most.
pub const STDERR_TAIL_BYTES: usize = 4096;

/// Escape text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A relative link to a report file named after a case id: the id is percent-encoded where a
/// URL would read it otherwise (`%`, `#`, `?`, spaces, quotes).
pub fn href(dir: &str, id: &str, ext: &str) -> String {
    let mut out = format!("{dir}/");
    for c in id.chars() {
        match c {
            '%' | '#' | '?' | ' ' | '"' | '\'' | '<' | '>' | '\\' => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    let _ = write!(out, "%{b:02X}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('.');
    out.push_str(ext);
    out
}

/// At most `max` characters of `s`, and whether it was cut.
pub fn cap(s: &str, max: usize) -> (String, bool) {
    match s.char_indices().nth(max) {
        Some((i, _)) => (s[..i].to_string(), true),
        None => (s.to_string(), false),
    }
}

/// At most `max` characters of `s`, ending in `…` when cut.
pub fn clip(s: &str, max: usize) -> String {
    match cap(s, max) {
        (c, true) => format!("{c}…"),
        (c, false) => c,
    }
}

/// The tail of the delegator's stderr: its last [`STDERR_TAIL_LINES`] lines, at most
/// [`STDERR_TAIL_BYTES`] bytes, and how many lines were left out before it.
pub fn stderr_tail(stderr: &str) -> (String, usize) {
    let lines: Vec<&str> = stderr.trim_end().lines().collect();
    let from = lines.len().saturating_sub(STDERR_TAIL_LINES);
    let mut tail = lines[from..].join("\n");
    if tail.len() > STDERR_TAIL_BYTES {
        let mut cut = tail.len() - STDERR_TAIL_BYTES;
        while !tail.is_char_boundary(cut) {
            cut += 1;
        }
        tail = format!("…{}", &tail[cut..]);
    }
    (tail, from)
}

/// The rule verdicts of a case that say something went wrong (not PASS).
pub fn non_passing(r: &CaseResult) -> impl Iterator<Item = &RuleVerdict> {
    r.rules.iter().filter(|v| v.verdict != Verdict::Pass)
}

/// What the known-failing file says about a case, when it changed the verdict.
pub fn known_failing_note(v: Verdict) -> Option<&'static str> {
    match v {
        Verdict::XFail => Some("failed as expected: listed in the known-failing file"),
        Verdict::XPass => Some(
            "passed, but listed in the known-failing file: remove it from the known-failing file",
        ),
        _ => None,
    }
}

/// One rule verdict in words: `FAIL DLG-X: expected …; observed …`.
pub fn rule_line(v: &RuleVerdict) -> String {
    format!(
        "{} {}: expected {}; observed {}",
        v.verdict.label(),
        v.id,
        v.expected.as_deref().unwrap_or("-"),
        v.observed.as_deref().unwrap_or("-")
    )
}

/// A witness entry in one line: `#seq agent: what`.
pub fn witness_line(w: &Entry) -> String {
    format!("#{} {}: {}", w.seq, w.agent, entry_what(w))
}

/// The evidence of a case's failure in words: every rule that did not pass with its witnesses,
/// the harness notes, what the known-failing file says, and the repro line.
pub fn failure_text(r: &CaseResult) -> String {
    let mut s = String::new();
    if let Some(n) = known_failing_note(r.verdict) {
        let _ = writeln!(s, "{}: {n}", r.verdict.label());
    }
    for v in non_passing(r) {
        let _ = writeln!(s, "{}", rule_line(v));
        for w in &v.witnesses {
            let _ = writeln!(s, "  witness {}", witness_line(w));
        }
    }
    for n in &r.notes {
        let _ = writeln!(s, "note: {n}");
    }
    let _ = writeln!(s, "repro: {}", r.repro);
    s
}

/// A journal entry in a few words: the A2A method of a request, the status of a response, the
/// kind of an SSE event, or the event's name.
pub fn entry_what(e: &Entry) -> String {
    match &e.event {
        Event::Request {
            method,
            http_method,
            path,
            ..
        } => method
            .clone()
            .unwrap_or_else(|| format!("{http_method} {path}")),
        Event::Response {
            status, rpc_error, ..
        } => format!(
            "HTTP {status}{}",
            rpc_error.map(|c| format!(" error {c}")).unwrap_or_default()
        ),
        Event::SseEvent { index, data, .. } => format!(
            "event #{index} {}",
            data.get("result")
                .and_then(Value::as_object)
                .and_then(|o| o.keys().next().cloned())
                .unwrap_or_else(|| "raw".into())
        ),
        Event::StreamClosed { events, reason, .. } => {
            format!("stream closed ({reason}, {events} events)")
        }
        Event::ConnectionDropped { phase, .. } => format!("connection dropped ({phase})"),
        Event::Fault { kind, .. } => format!("fault {kind}"),
        other => serde_json::to_value(other)
            .ok()
            .and_then(|v| v.get("event").and_then(Value::as_str).map(str::to_string))
            .unwrap_or_default(),
    }
}

/// A journal entry as one line of JSON, at most `max` characters.
pub fn entry_json(e: &Entry, max: usize) -> String {
    clip(&serde_json::to_string(&e.event).unwrap_or_default(), max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_tails_are_bounded_by_lines_and_bytes() {
        let many: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let (tail, skipped) = stderr_tail(&many);
        assert_eq!(skipped, 60);
        assert!(tail.starts_with("line 60") && tail.ends_with("line 99"));
        let long = "é".repeat(10_000);
        let (tail, _) = stderr_tail(&long);
        assert!(tail.len() <= STDERR_TAIL_BYTES + "…".len() + 1);
        assert_eq!(stderr_tail(""), (String::new(), 0));
    }

    #[test]
    fn links_to_case_files_survive_odd_ids() {
        assert_eq!(href("cases", "a.b:grpc@2", "json"), "cases/a.b:grpc@2.json");
        assert_eq!(href("journals", "a#b?c", "html"), "journals/a%23b%3Fc.html");
        assert_eq!(
            esc("<a href=\"x\">'&"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;"
        );
        assert_eq!(clip("abcdef", 3), "abc…");
        assert_eq!(clip("abc", 3), "abc");
    }
}
