//! Reading a journal from a file: the JSON lines `a2a-harness serve --journal` writes, a case
//! result (`cases/<id>.json` of a report, its `journal` field), or a report directory and a
//! case id.

use a2a_mock_agents::Entry;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A journal could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file or directory could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line of a JSON-lines journal is no journal entry.
    #[error("{}:{line}: not a journal entry: {source}", path.display())]
    Line {
        /// The file.
        path: PathBuf,
        /// The 1-based line number.
        line: usize,
        /// Why.
        source: serde_json::Error,
    },
    /// A case result whose `journal` field is no list of journal entries.
    #[error("{}: field `journal`: {source}", path.display())]
    CaseJournal {
        /// The file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// A JSON document that is neither a case result nor a journal.
    #[error(
        "{}: neither a journal (JSON lines of entries) nor a case result (an object with a `journal` field)",
        path.display()
    )]
    NotAJournal {
        /// The file.
        path: PathBuf,
    },
    /// A report directory given without `--case`.
    #[error("{} is a directory: name the case with --case ID (its journal is cases/<ID>.json)", path.display())]
    NeedCase {
        /// The directory.
        path: PathBuf,
    },
    /// A `--case` the report directory has no result for.
    #[error("{}: no result for case {case:?} (no {})", path.display(), path.join("cases").join(format!("{case}.json")).display())]
    NoCase {
        /// The directory.
        path: PathBuf,
        /// The case id.
        case: String,
    },
    /// `--case` given with a file.
    #[error("{}: --case applies to a report directory, and this is a file", path.display())]
    CaseWithFile {
        /// The file.
        path: PathBuf,
    },
}

/// Read the journal at `path`: a report directory with `case` (its `cases/<case>.json`), a case
/// result file, or a JSON-lines journal (blank lines are skipped).
pub fn load_journal(path: &Path, case: Option<&str>) -> Result<Vec<Entry>, LoadError> {
    let io = |source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if meta.is_dir() {
        let Some(case) = case else {
            return Err(LoadError::NeedCase {
                path: path.to_path_buf(),
            });
        };
        let file = path.join("cases").join(format!("{case}.json"));
        if !file.is_file() {
            return Err(LoadError::NoCase {
                path: path.to_path_buf(),
                case: case.to_string(),
            });
        }
        return load_journal(&file, None);
    }
    if case.is_some() {
        return Err(LoadError::CaseWithFile {
            path: path.to_path_buf(),
        });
    }
    let text = std::fs::read_to_string(path).map_err(io)?;
    // A case result is one JSON object with a `journal` field (pretty-printed over many lines).
    if let Ok(Value::Object(mut m)) = serde_json::from_str::<Value>(&text) {
        if let Some(j) = m.remove("journal") {
            return serde_json::from_value(j).map_err(|source| LoadError::CaseJournal {
                path: path.to_path_buf(),
                source,
            });
        }
        if !m.contains_key("event") {
            return Err(LoadError::NotAJournal {
                path: path.to_path_buf(),
            });
        }
    }
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let entry = serde_json::from_str(line).map_err(|source| LoadError::Line {
            path: path.to_path_buf(),
            line: i + 1,
            source,
        })?;
        out.push(entry);
    }
    Ok(out)
}
