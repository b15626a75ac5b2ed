//! Loading scripts: TOML parsing with every error located at file, line and column and named by
//! its field path (`agent[0].rule[1].steps[2]`).

use super::NetworkSpec;
use super::validate::Problem;
use std::path::Path;

/// A script could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The file could not be read.
    #[error("{file}: {source}")]
    Io {
        /// The file.
        file: String,
        /// The IO error.
        source: std::io::Error,
    },
    /// The TOML is malformed or does not fit the format.
    #[error("{file}:{line}:{column}: {message}")]
    Parse {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong, naming the field.
        message: String,
    },
    /// The script is well-formed but inconsistent (duplicate names, unknown agent, ...).
    #[error("{file}: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
}

/// Turn a `toml` error into file, line, column and message.
pub fn toml_error(file: &str, text: &str, e: &toml::de::Error) -> ScriptError {
    let (line, column) = match e.span() {
        Some(span) => line_col(text, span.start),
        None => (1, 1),
    };
    ScriptError::Parse {
        file: file.to_string(),
        line,
        column,
        message: e.message().to_string(),
    }
}

/// 1-based line and column of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text.as_bytes()[..offset.min(text.len())];
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    let col = before.iter().rev().take_while(|b| **b != b'\n').count() + 1;
    (line, col)
}

/// One step of a path into the script (`agent[0].rule[1].steps[2].state`).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Seg {
    Key(String),
    Index(usize),
}

/// A validation problem and where it is.
pub(super) type Located = (Vec<Seg>, Problem);

pub(super) fn path_text(path: &[Seg]) -> String {
    let mut out = String::new();
    for s in path {
        match s {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// The deepest value of `path` that exists in the parsed TOML, with its span.
fn find<'a, 'i>(
    root: &'a toml::de::DeValue<'i>,
    root_span: std::ops::Range<usize>,
    path: &[Seg],
) -> (&'a toml::de::DeValue<'i>, std::ops::Range<usize>) {
    let mut cur = root;
    let mut span = root_span;
    for seg in path {
        let next = match seg {
            Seg::Key(k) => cur.get(k.as_str()),
            Seg::Index(i) => cur.get(*i),
        };
        match next {
            Some(v) => {
                span = v.span();
                cur = v.get_ref();
            }
            None => break,
        }
    }
    (cur, span)
}

/// The line and column of the deepest value of `path` that exists in the TOML text.
pub(super) fn locate(text: &str, path: &[Seg]) -> (usize, usize) {
    let Ok(root) = toml::de::DeTable::parse(text) else {
        return (1, 1);
    };
    let span = root.span();
    let root = toml::de::DeValue::Table(root.into_inner());
    line_col(text, find(&root, span, path).1.start)
}

/// A deserialisation error: point at the deepest place its path names and, inside a table that
/// `toml` could only blame as a whole (internally tagged steps and faults), at the key the
/// message is about.
fn locate_de_error(
    file: &str,
    text: &str,
    path: &serde_path_to_error::Path,
    e: &toml::de::Error,
) -> ScriptError {
    let segs: Vec<Seg> = path
        .iter()
        .filter_map(|seg| match seg {
            serde_path_to_error::Segment::Seq { index } => Some(Seg::Index(*index)),
            serde_path_to_error::Segment::Map { key } => Some(Seg::Key(key.clone())),
            _ => None,
        })
        .collect();
    let message = e.message().to_string();
    let mut field = path.to_string();
    let mut offset = e.span().map(|s| s.start);
    if let Ok(root) = toml::de::DeTable::parse(text) {
        let root_span = root.span();
        let root = toml::de::DeValue::Table(root.into_inner());
        let (cur, span) = find(&root, root_span, &segs);
        // The error's span covers the whole value the path names: look for the key inside it.
        let whole = e
            .span()
            .is_none_or(|es| es.start <= span.start && span.end <= es.end);
        if whole {
            offset = Some(span.start);
            let culprit = cur.as_table().and_then(|t| {
                t.iter().find_map(|(k, v)| {
                    let key = k.get_ref().as_ref();
                    let raw = text.get(v.span()).unwrap_or_default();
                    if message.contains(&format!("`{key}`")) {
                        Some((k.span().start, None))
                    } else if !raw.is_empty()
                        && (message.contains(&format!(" {raw},"))
                            || message.contains(&format!("`{raw}`")))
                    {
                        Some((v.span().start, Some(key.to_string())))
                    } else {
                        None
                    }
                })
            });
            if let Some((at, key)) = culprit {
                offset = Some(at);
                if let Some(k) = key {
                    field = format!("{field}.{k}");
                }
            }
        }
    }
    let (line, column) = offset.map_or((1, 1), |o| line_col(text, o));
    let message = if field.is_empty() || field == "." {
        message
    } else {
        format!("{field}: {message}")
    };
    ScriptError::Parse {
        file: file.to_string(),
        line,
        column,
        message,
    }
}

impl NetworkSpec {
    /// Parse a network from TOML text; `file` names the source in errors.
    ///
    /// Every error names the file, the line and column, and the field (as a path such as
    /// `agent[0].rule[1].steps[2]`): syntax errors, unknown keys, wrong types and the checks of
    /// [`NetworkSpec::validate`].
    pub fn from_toml(file: &str, text: &str) -> Result<Self, ScriptError> {
        let de = toml::de::Deserializer::parse(text).map_err(|e| toml_error(file, text, &e))?;
        let spec: NetworkSpec = serde_path_to_error::deserialize(de)
            .map_err(|e| locate_de_error(file, text, e.path(), e.inner()))?;
        if let Err((path, problem)) = spec.check() {
            let (line, column) = locate(text, &path);
            return Err(ScriptError::Parse {
                file: file.to_string(),
                line,
                column,
                message: format!("{}: {problem}", path_text(&path)),
            });
        }
        Ok(spec)
    }

    /// Set the bindings served by every agent that does not list its own (see
    /// [`NetworkSpec::default_bindings`]); `a2a-harness run --binding rest` uses this.
    pub fn with_default_bindings(
        mut self,
        bindings: impl IntoIterator<Item = super::Binding>,
    ) -> Self {
        self.default_bindings = Some(bindings.into_iter().collect());
        self
    }

    /// Load a network from a TOML file, with its part files (`text_file`, `raw_file`,
    /// `data_file`) read from beside it ([`NetworkSpec::resolve_part_files`]).
    pub fn load(path: &Path) -> Result<Self, ScriptError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ScriptError::Io {
            file: file.clone(),
            source,
        })?;
        let mut spec = Self::from_toml(&file, &text)?;
        let dir = path.parent().unwrap_or(Path::new("."));
        spec.resolve_part_files(&file, &text, &[], &mut super::read_beside(dir))?;
        Ok(spec)
    }
}
