//! `a2a-harness scenario from-journal`: a recorded journal becomes a catalog scenario.
//!
//! The journal is the mock network's format (JSON lines of [`Entry`], as `a2a-harness serve
//! --journal` and `a2a-harness record` write them) or a report's `cases/<id>.json` (its
//! `journal` array). Each agent of the journal becomes a mock agent whose card matches what was
//! served and whose rules reproduce what it did, matched to the requests that triggered them;
//! the delegator's first request of each delegation becomes a `[[delegate]]` entry.
//!
//! - [`read_journal`]: the journal file, strictly (a malformed line is an error naming it);
//! - [`convert`]: the scenario text, with the constructs it could not express
//!   ([`Unsupported`]) listed and marked `# TODO (seq N)` at their place;
//! - the analysis (`analyse`) and the TOML writer (`render`) behind them.
//!
//! A recording shows one run: the scenario reproduces what the agents did, not what every
//! correct delegator must do. What the journal does not hold (response headers such as
//! `Retry-After`, bytes of long strings, which the journal summarises) is said in comments.

mod analyse;
pub use analyse::LITERAL_MAX_BYTES;
mod render;
mod toml_text;

use a2a_mock_agents::Entry;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// One line (or array element) of a journal: an entry this version understands, or an event
/// it does not know (kept so that it can be named in the output).
#[derive(Debug, Clone)]
pub enum Record {
    /// A journal entry.
    Entry(Entry),
    /// An entry whose `event` this version does not know (a later journal's).
    Other {
        /// Its sequence number.
        seq: u64,
        /// Its agent.
        agent: String,
        /// Its `event` name.
        event: String,
        /// Its `text`, if it has one.
        text: Option<String>,
    },
}

impl Record {
    /// The sequence number.
    pub fn seq(&self) -> u64 {
        match self {
            Record::Entry(e) => e.seq,
            Record::Other { seq, .. } => *seq,
        }
    }
}

/// A journal could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FromJournalError {
    /// The file could not be read.
    #[error("{}: {source}", file.display())]
    Io {
        /// The file.
        file: PathBuf,
        /// The IO error.
        source: std::io::Error,
    },
    /// A line (or, in a report case file, an element of `journal`) is not a journal entry.
    #[error("{}:{line}: {message}", file.display())]
    Line {
        /// The file.
        file: PathBuf,
        /// 1-based line (in a report case file: the 1-based index in `journal`).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The journal holds no entries.
    #[error("{}: the journal holds no entries", file.display())]
    Empty {
        /// The file.
        file: PathBuf,
    },
}

/// A construct of the journal the scenario format cannot express: named on stderr, marked
/// `# TODO (seq N): ...` where it belongs in the written file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    /// The journal entry.
    pub seq: u64,
    /// The agent it concerns.
    pub agent: String,
    /// What could not be expressed.
    pub what: String,
}

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "seq {} (agent {}): {}", self.seq, self.agent, self.what)
    }
}

/// What to call the scenario.
#[derive(Debug, Clone, Default)]
pub struct ConvertOptions {
    /// The case id (default: `recorded.<file stem>`, or `<case id>.replay` for a report case).
    pub id: Option<String>,
    /// The directory of part files, relative to the scenario (default `<case id>.d`; the CLI
    /// gives `<stem of --out>.d`).
    pub files_dir: Option<String>,
}

/// A journal as read: its records and where it came from.
#[derive(Debug, Clone)]
pub struct RecordedJournal {
    /// The file name (no directory: the header comment names it without machine paths).
    pub source: String,
    /// The case id, when the file is a report's `cases/<id>.json`.
    pub case_id: Option<String>,
    /// The records, in sequence order.
    pub records: Vec<Record>,
}

impl RecordedJournal {
    /// The mock-format entries among the records, in order (lines of another shape left out).
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        entries_of(&self.records)
    }
}

/// The mock-format entries among `records`, in order.
pub(crate) fn entries_of(records: &[Record]) -> impl Iterator<Item = &Entry> {
    records.iter().filter_map(|r| match r {
        Record::Entry(e) => Some(e),
        Record::Other { .. } => None,
    })
}

/// The scenario written from a journal.
#[derive(Debug, Clone)]
pub struct Conversion {
    /// The TOML text.
    pub toml: String,
    /// The constructs it could not express (each also a `# TODO` in the text).
    pub unsupported: Vec<Unsupported>,
    /// Agents in the scenario.
    pub agents: usize,
    /// `[[delegate]]` entries.
    pub delegations: usize,
    /// Rules across all agents.
    pub rules: usize,
    /// Part files to write beside the scenario: (path relative to the scenario's directory,
    /// bytes). Recorded artifact bytes too long for the TOML.
    pub files: Vec<(String, Vec<u8>)>,
}

impl Conversion {
    /// Write the scenario to `file` and its part files beside it ([`Conversion::files`],
    /// directories made as needed); the error names the file that could not be written.
    pub fn write(&self, file: &Path) -> Result<(), FromJournalError> {
        let dir = file.parent().unwrap_or(Path::new("."));
        let io = |file: PathBuf| move |source| FromJournalError::Io { file, source };
        for (rel, bytes) in &self.files {
            let path = dir.join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(io(parent.to_path_buf()))?;
            }
            std::fs::write(&path, bytes).map_err(io(path.clone()))?;
        }
        std::fs::write(file, &self.toml).map_err(io(file.to_path_buf()))
    }
}

/// Read a journal: JSON lines of entries, or a report case file (`{"journal": [...], ...}`).
/// Unknown `event` names are kept as [`Record::Other`]; anything else malformed is an error
/// naming the line.
pub fn read_journal(path: &Path) -> Result<RecordedJournal, FromJournalError> {
    let text = std::fs::read_to_string(path).map_err(|source| FromJournalError::Io {
        file: path.to_path_buf(),
        source,
    })?;
    parse_journal(path, &text)
}

/// [`read_journal`] over text already read (`path` only names it in errors and the header).
pub fn parse_journal(path: &Path, text: &str) -> Result<RecordedJournal, FromJournalError> {
    let source = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into(),
    );
    let line_error = |line: usize, message: String| FromJournalError::Line {
        file: path.to_path_buf(),
        line,
        message,
    };
    let mut case_id = None;
    let mut records = Vec::new();
    // A report case file is one JSON object with a `journal` array (pretty-printed or not).
    let whole = if text.trim_start().starts_with('{') {
        serde_json::from_str::<Value>(text)
            .ok()
            .filter(|v| v.get("journal").is_some())
    } else {
        None
    };
    if let Some(mut doc) = whole {
        case_id = doc.get("id").and_then(Value::as_str).map(str::to_string);
        let Some(list) = doc.get_mut("journal").and_then(Value::as_array_mut) else {
            return Err(line_error(1, "`journal` is not an array".into()));
        };
        for (i, v) in std::mem::take(list).into_iter().enumerate() {
            records
                .push(record_of(v).map_err(|m| line_error(i + 1, format!("journal[{i}]: {m}")))?);
        }
    } else {
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let v: Value = serde_json::from_str(line)
                .map_err(|e| line_error(i + 1, format!("not JSON: {e}")))?;
            records.push(record_of(v).map_err(|m| line_error(i + 1, m))?);
        }
    }
    if records.is_empty() {
        return Err(FromJournalError::Empty {
            file: path.to_path_buf(),
        });
    }
    records.sort_by_key(Record::seq);
    Ok(RecordedJournal {
        source,
        case_id,
        records,
    })
}

/// The event names of [`a2a_mock_agents::Event`].
const KNOWN_EVENTS: [&str; 17] = [
    "request",
    "response",
    "sse_event",
    "stream_closed",
    "connection_dropped",
    "fault",
    "task_created",
    "task_state",
    "continued",
    "artifact_chunk",
    "artifact_sent",
    "blob_served",
    "push",
    "delegated",
    "task_purged",
    "limit_rejected",
    "note",
];

fn record_of(v: Value) -> Result<Record, String> {
    let Value::Object(o) = &v else {
        return Err("a journal entry must be a JSON object".into());
    };
    let seq = o
        .get("seq")
        .and_then(Value::as_u64)
        .ok_or("field `seq`: missing or not a non-negative integer")?;
    let agent = o
        .get("agent")
        .and_then(Value::as_str)
        .ok_or("field `agent`: missing or not a string")?
        .to_string();
    let event = o
        .get("event")
        .and_then(Value::as_str)
        .ok_or("field `event`: missing or not a string")?
        .to_string();
    if !KNOWN_EVENTS.contains(&event.as_str()) {
        let text = o.get("text").and_then(Value::as_str).map(str::to_string);
        return Ok(Record::Other {
            seq,
            agent,
            event,
            text,
        });
    }
    serde_path_to_error::deserialize::<_, Entry>(v)
        .map(Record::Entry)
        .map_err(|e| {
            let path = e.path().to_string();
            if path.is_empty() || path == "." {
                format!("event {event:?} (seq {seq}): {}", e.inner())
            } else {
                format!("event {event:?} (seq {seq}): field `{path}`: {}", e.inner())
            }
        })
}

/// Write the scenario for a journal.
pub fn convert(journal: &RecordedJournal, options: &ConvertOptions) -> Conversion {
    let id = options.id.clone().unwrap_or_else(|| default_id(journal));
    let files_dir = options
        .files_dir
        .clone()
        .unwrap_or_else(|| format!("{id}.d"));
    let model = analyse::analyse(&journal.records, &files_dir);
    let toml = render::render(&model, journal, &id);
    Conversion {
        files: model.files.clone(),
        toml,
        unsupported: model.unsupported.clone(),
        agents: model.agents.len(),
        delegations: model.delegations.len(),
        rules: model.agents.iter().map(|a| a.rules.len()).sum(),
    }
}

/// `<case id>.replay` for a report case, else `recorded.<file stem>` (characters outside
/// `[A-Za-z0-9._-]` become `-`).
fn default_id(journal: &RecordedJournal) -> String {
    let raw = match &journal.case_id {
        Some(id) => format!("{id}.replay"),
        None => {
            let stem = Path::new(&journal.source)
                .file_stem()
                .map_or_else(|| "journal".to_string(), |s| s.to_string_lossy().into());
            format!("recorded.{stem}")
        }
    };
    let id: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .take(128)
        .collect();
    if id.is_empty() { "recorded".into() } else { id }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_malformed_line_is_named_by_number() {
        let text = "{\"seq\":1,\"at_us\":0,\"agent\":\"a\",\"event\":\"task_state\",\"task_id\":\"t\",\"state\":\"TASK_STATE_WORKING\"}\n\nnot json\n";
        let err = parse_journal(Path::new("j.jsonl"), text).unwrap_err();
        assert!(
            matches!(&err, FromJournalError::Line { line: 3, .. }),
            "{err}"
        );
        assert!(err.to_string().starts_with("j.jsonl:3: not JSON"), "{err}");
        let text =
            "{\"seq\":1,\"at_us\":0,\"agent\":\"a\",\"event\":\"task_state\",\"task_id\":\"t\"}\n";
        let err = parse_journal(Path::new("j.jsonl"), text)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("j.jsonl:1: event \"task_state\" (seq 1)"),
            "{err}"
        );
        assert!(err.contains("state"), "{err}");
    }

    #[test]
    fn unknown_events_are_kept_and_an_empty_journal_is_an_error() {
        let text = "{\"seq\":2,\"at_us\":0,\"agent\":\"a\",\"event\":\"gossip\",\"text\":\"hi\"}\n";
        let j = parse_journal(Path::new("x/j.jsonl"), text).unwrap();
        assert_eq!(j.source, "j.jsonl");
        assert!(
            matches!(&j.records[0], Record::Other { event, text: Some(t), .. } if event == "gossip" && t == "hi")
        );
        let err = parse_journal(Path::new("j.jsonl"), "\n\n").unwrap_err();
        assert!(matches!(err, FromJournalError::Empty { .. }));
    }

    #[test]
    fn default_ids_are_valid_case_ids() {
        let j = RecordedJournal {
            source: "my trace (1).jsonl".into(),
            case_id: None,
            records: Vec::new(),
        };
        assert_eq!(default_id(&j), "recorded.my-trace--1-");
        let j = RecordedJournal {
            case_id: Some("states.completed".into()),
            ..j
        };
        assert_eq!(default_id(&j), "states.completed.replay");
    }
}
