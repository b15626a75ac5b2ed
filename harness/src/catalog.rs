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

#[cfg(test)]
mod tests {
    use super::*;

    fn case(id: &str) -> Scenario {
        let text = format!(
            "id = \"{id}\"\ntitle = \"t\"\nrules = [\"DLG-SEND-02\"]\n[network]\n[[network.agent]]\nname = \"a\"\n"
        );
        parse_case(Path::new("t.toml"), &text).unwrap()
    }

    #[test]
    fn globs_match_whole_ids() {
        let g = |p: &str| CaseGlob::new(p).unwrap();
        assert!(g("*").matches("states.completed"));
        assert!(g("states.*").matches("states.completed"));
        assert!(!g("states.*").matches("recovery.states.completed"));
        assert!(g("*.completed").matches("states.completed"));
        assert!(g("states.complete?").matches("states.completed"));
        assert!(!g("states.complete").matches("states.completed"));
        assert!(g("states.{completed,rejected}").matches("states.rejected"));
        assert!(g("a/*").matches("a/b/c"), "`*` crosses separators");
        assert!(g("s[0-9]").matches("s7"));
        assert_eq!(g("x*").as_str(), "x*");
        let err = CaseGlob::new("states.[").unwrap_err().to_string();
        assert!(err.starts_with("bad case pattern \"states.[\""), "{err}");
    }

    #[test]
    fn select_keeps_catalog_order() {
        let cat = vec![case("a.one"), case("b.two"), case("a.three")];
        let ids: Vec<String> = select(&cat, &CaseGlob::new("a.*").unwrap())
            .into_iter()
            .map(|s| s.id)
            .collect();
        assert_eq!(ids, vec!["a.one", "a.three"]);
        assert!(select(&cat, &CaseGlob::new("c*").unwrap()).is_empty());
    }

    #[test]
    fn known_failing_files_hold_globs_and_comments() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("known");
        std::fs::write(&p, "# flaky\nstates.*  # all of them\n\nrecovery.one\n").unwrap();
        let k = read_known_failing(&p).unwrap();
        let pats: Vec<&str> = k.iter().map(CaseGlob::as_str).collect();
        assert_eq!(pats, vec!["states.*", "recovery.one"]);
        std::fs::write(&p, "ok\nbad[\n").unwrap();
        let err = read_known_failing(&p).unwrap_err().to_string();
        assert!(err.contains("known:2: bad case pattern"), "{err}");
        assert!(read_known_failing(&dir.path().join("missing")).is_err());
    }

    #[test]
    fn unknown_rules_and_duplicate_ids_are_refused() {
        let text = "id = \"x\"\ntitle = \"t\"\nrules = [\"DLG-NOPE-01\"]\n[network]\n";
        let err = parse_case(Path::new("x.toml"), text).unwrap_err();
        assert!(
            matches!(&err, ScenarioError::Invalid { field, .. } if field == "rules"),
            "{err:?}"
        );
        let dir = tempfile::tempdir().unwrap();
        let body = "id = \"same\"\ntitle = \"t\"\nrules = [\"DLG-SEND-02\"]\n[network]\n";
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("one.toml"), body).unwrap();
        std::fs::write(dir.path().join("sub/two.toml"), body).unwrap();
        let err = load_catalog(dir.path()).unwrap_err().to_string();
        assert!(err.contains("case id \"same\" is also used by"), "{err}");
    }
}
