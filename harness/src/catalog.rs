//! The catalog: every scenario file under a directory, checked against the rule registry, and
//! selection of cases by glob (`--case`, known-failing lists).
//!
//! [`crate::scenario`] knows the case format; this module adds what needs the rules as well,
//! so the two never import each other.

use crate::rules::registry;
use crate::scenario::{Scenario, ScenarioError};
use std::path::{Path, PathBuf};

/// Parse one case from TOML text: the format, then the rule IDs it names against the registry.
pub fn parse_case(file: &Path, text: &str) -> Result<Scenario, ScenarioError> {
    let s = Scenario::from_toml(file, text)?;
    check_rule_ids(&s)?;
    Ok(s)
}

/// Load one case file (see [`parse_case`]).
pub fn load_case(path: &Path) -> Result<Scenario, ScenarioError> {
    let s = Scenario::load(path)?;
    check_rule_ids(&s)?;
    Ok(s)
}

fn check_rule_ids(s: &Scenario) -> Result<(), ScenarioError> {
    let known = registry();
    match s
        .rules
        .iter()
        .find(|r| !known.iter().any(|k| k.id == r.as_str()))
    {
        Some(r) => Err(ScenarioError::invalid(
            &s.file,
            "rules",
            format!("names an unknown rule {r:?} (see `a2a-harness rules`)"),
        )),
        None => Ok(()),
    }
}

/// Load every `*.toml` under a directory (recursively), sorted by id; ids must be unique.
pub fn load_catalog(dir: &Path) -> Result<Vec<Scenario>, ScenarioError> {
    let mut files = Vec::new();
    collect(dir, &mut files).map_err(|source| ScenarioError::Io {
        file: dir.to_path_buf(),
        source,
    })?;
    files.sort();
    let mut out: Vec<Scenario> = Vec::new();
    for f in files {
        let s = load_case(&f)?;
        if let Some(prev) = out.iter().find(|p| p.id == s.id) {
            return Err(ScenarioError::invalid(
                &f,
                "id",
                format!("case id {:?} is also used by {}", s.id, prev.file.display()),
            ));
        }
        out.push(s);
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            collect(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(p);
        }
    }
    Ok(())
}

/// A glob over case ids (`*`, `?`, `[abc]`, `{a,b}`; `*` also crosses `.` and `/`), matched
/// against the whole id.
#[derive(Debug, Clone)]
pub struct CaseGlob {
    pattern: String,
    matcher: globset::GlobMatcher,
}

/// A case glob that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("bad case pattern {pattern:?}: {source}")]
pub struct GlobError {
    /// The pattern.
    pub pattern: String,
    /// Why it does not parse.
    pub source: globset::Error,
}

impl CaseGlob {
    /// Compile a pattern.
    pub fn new(pattern: &str) -> Result<CaseGlob, GlobError> {
        let glob = globset::GlobBuilder::new(pattern)
            .literal_separator(false)
            .backslash_escape(true)
            .build()
            .map_err(|source| GlobError {
                pattern: pattern.to_string(),
                source,
            })?;
        Ok(CaseGlob {
            pattern: pattern.to_string(),
            matcher: glob.compile_matcher(),
        })
    }

    /// True when `id` matches the whole pattern.
    pub fn matches(&self, id: &str) -> bool {
        self.matcher.is_match(id)
    }

    /// The pattern as given.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }
}

/// The cases of `catalog` whose id matches `pattern`, in catalog order.
pub fn select(catalog: &[Scenario], pattern: &CaseGlob) -> Vec<Scenario> {
    catalog
        .iter()
        .filter(|s| pattern.matches(&s.id))
        .cloned()
        .collect()
}

/// A known-failing file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum KnownFailingError {
    /// The file could not be read.
    #[error("{}: {source}", file.display())]
    Io {
        /// The file.
        file: PathBuf,
        /// The IO error.
        source: std::io::Error,
    },
    /// A line is not a valid glob.
    #[error("{}:{line}: {source}", file.display())]
    Glob {
        /// The file.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// The glob error.
        source: GlobError,
    },
}

/// Read a known-failing file: one case id (or glob) per line, `#` comments.
pub fn read_known_failing(path: &Path) -> Result<Vec<CaseGlob>, KnownFailingError> {
    let text = std::fs::read_to_string(path).map_err(|source| KnownFailingError::Io {
        file: path.to_path_buf(),
        source,
    })?;
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let l = l.split('#').next().unwrap_or("").trim();
        if !l.is_empty() {
            out.push(CaseGlob::new(l).map_err(|source| KnownFailingError::Glob {
                file: path.to_path_buf(),
                line: i + 1,
                source,
            })?);
        }
    }
    Ok(out)
}
