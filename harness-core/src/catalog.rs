//! The catalog: the scenario files embedded in the binary and those under local directories,
//! checked against the rule registry and for being runnable; selection of cases (`--case` globs,
//! `--rule`, `--partition`, known-failing lists).
//!
//! [`crate::scenario`] knows the case format; this module adds what needs the rules as well,
//! so the two never import each other.

use crate::rules::registry;
use crate::scenario::{Scenario, ScenarioError};
use sha2::Digest as _;
use std::path::{Path, PathBuf};

mod builtin {
    include!(concat!(env!("OUT_DIR"), "/builtin_catalog.rs"));
}

/// Parse one case from TOML text: the format, the rule IDs it names against the registry, and
/// that it can run (see [`check_runnable`]). Its variants stay on it (see [`parse_cases`]).
/// Part files are read from beside `file` on disk.
pub fn parse_case(file: &Path, text: &str) -> Result<Scenario, ScenarioError> {
    check_case(Scenario::from_toml(file, text)?)
}

/// A part file of the embedded catalog: `rel` (as a scenario writes it) beside the embedded
/// scenario `file`.
fn builtin_part_file(file: &Path, rel: &str) -> Result<Vec<u8>, String> {
    let dir = file.parent().unwrap_or(Path::new(""));
    let want = dir.join(rel);
    let want = want.to_string_lossy().replace('\\', "/");
    let want = want.trim_start_matches("./");
    builtin::BUILTIN_FILES
        .iter()
        .find(|(p, _)| *p == want)
        .map(|(_, b)| b.to_vec())
        .ok_or_else(|| format!("not in the embedded catalog (looked for {want})"))
}

fn check_case(s: Scenario) -> Result<Scenario, ScenarioError> {
    check_rule_ids(&s.file, "rules", &s.rules)?;
    for v in &s.variants {
        if let Some(rules) = &v.rules {
            check_rule_ids(&s.file, &format!("variant {:?}: rules", v.suffix), rules)?;
        }
    }
    check_runnable(&s)?;
    Ok(s)
}

/// The cases of one file: the case and each of its variants ([`Scenario::expand`]).
pub fn parse_cases(file: &Path, text: &str) -> Result<Vec<Scenario>, ScenarioError> {
    Ok(parse_case(file, text)?.expand())
}

/// Load one case file (see [`parse_case`]).
pub fn load_case(path: &Path) -> Result<Scenario, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Io {
        file: path.to_path_buf(),
        source,
    })?;
    parse_case(path, &text)
}

/// A case that cannot be run meaningfully is an error in the case, not in the delegator: it has
/// no agents, or a delegation (or fan-out child) needs a capability that no agent offers as a
/// skill (on its card or its extended card).
pub fn check_runnable(s: &Scenario) -> Result<(), ScenarioError> {
    if s.network.agents.is_empty() {
        return Err(ScenarioError::invalid(
            &s.file,
            "network.agent",
            "the case has no agents: add at least one [[network.agent]]",
        ));
    }
    let offered = |cap: &str| {
        s.network.agents.iter().any(|a| {
            a.skills
                .iter()
                .chain(a.extended_skills.iter())
                .any(|k| k.id == cap)
        })
    };
    for d in &s.delegations {
        let caps = std::iter::once((None, &d.capability))
            .chain(d.children.iter().map(|c| (Some(&c.id), &c.capability)));
        for (child, cap) in caps {
            if !offered(cap) {
                let field = match child {
                    Some(c) => format!("delegate {:?}: child {c:?}: capability", d.id),
                    None => format!("delegate {:?}: capability", d.id),
                };
                return Err(ScenarioError::invalid(
                    &s.file,
                    field,
                    format!("{cap:?} is offered by no agent (skills: {})", skill_list(s)),
                ));
            }
        }
    }
    Ok(())
}

fn skill_list(s: &Scenario) -> String {
    let mut ids: Vec<&str> = s
        .network
        .agents
        .iter()
        .flat_map(|a| a.skills.iter().chain(a.extended_skills.iter()))
        .map(|k| k.id.as_str())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() {
        "none".to_string()
    } else {
        ids.join(", ")
    }
}

fn check_rule_ids(file: &Path, field: &str, rules: &[String]) -> Result<(), ScenarioError> {
    let known = registry();
    match rules
        .iter()
        .find(|r| !known.iter().any(|k| k.id == r.as_str()))
    {
        Some(r) => Err(ScenarioError::invalid(
            file,
            field,
            format!("names an unknown rule {r:?} (see `a2a-harness rules`)"),
        )),
        None => Ok(()),
    }
}

/// The catalog embedded in this binary (`scenarios/**/*.toml` at build time), sorted by id.
/// Each case's `file` is its path relative to the workspace root it was built from.
pub fn builtin_catalog() -> Result<Vec<Scenario>, ScenarioError> {
    let mut out: Vec<Scenario> = Vec::new();
    for (path, text) in builtin::BUILTIN {
        let file = Path::new(path);
        let case = Scenario::from_toml_in(file, text, &mut |rel| builtin_part_file(file, rel))?;
        for s in check_case(case)?.expand() {
            if let Some(prev) = out.iter().find(|p| p.id == s.id) {
                return Err(ScenarioError::invalid(
                    Path::new(path),
                    "id",
                    format!("case id {:?} is also used by {}", s.id, prev.file.display()),
                ));
            }
            out.push(s);
        }
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

/// How many scenario files are embedded in this binary.
pub fn builtin_files() -> usize {
    builtin::BUILTIN.len()
}

/// A catalog put together from the embedded one and local directories.
#[derive(Debug, Clone)]
pub struct Catalog {
    /// Every case, sorted by id.
    pub cases: Vec<Scenario>,
    /// Local cases that replaced an embedded one of the same id: (id, local file).
    pub replaced: Vec<(String, PathBuf)>,
    /// The local directories given, made absolute (for repro lines that run anywhere).
    pub local_dirs: Vec<PathBuf>,
}

/// Where the catalog of a command comes from.
#[derive(Debug, Clone, Default)]
pub struct CatalogSources {
    /// Include the embedded catalog.
    pub builtin: bool,
    /// Local directories whose cases are added (each scanned recursively for `*.toml`).
    pub dirs: Vec<PathBuf>,
}

/// Put the catalog together: the embedded cases (when asked), then every local directory's; a
/// local case with the id of an embedded one replaces it (listed in [`Catalog::replaced`]); two
/// local cases with one id are an error naming both files.
pub fn load_sources(sources: &CatalogSources) -> Result<Catalog, ScenarioError> {
    let mut cases = if sources.builtin {
        builtin_catalog()?
    } else {
        Vec::new()
    };
    let builtin_ids: std::collections::BTreeSet<String> =
        cases.iter().map(|s| s.id.clone()).collect();
    let mut local: Vec<Scenario> = Vec::new();
    let mut local_dirs = Vec::new();
    for dir in &sources.dirs {
        let abs = absolute_dir(dir);
        for s in load_catalog(dir)? {
            if let Some(prev) = local.iter().find(|p| p.id == s.id) {
                return Err(ScenarioError::invalid(
                    &s.file,
                    "id",
                    format!("case id {:?} is also used by {}", s.id, prev.file.display()),
                ));
            }
            local.push(s);
        }
        local_dirs.push(abs);
    }
    let mut replaced = Vec::new();
    for s in local {
        if builtin_ids.contains(&s.id) {
            cases.retain(|c| c.id != s.id);
            replaced.push((s.id.clone(), s.file.clone()));
        }
        cases.push(s);
    }
    cases.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(Catalog {
        cases,
        replaced,
        local_dirs,
    })
}

/// Load every `*.toml` under a directory (recursively), or the one file given, sorted by id; ids
/// must be unique.
pub fn load_catalog(dir: &Path) -> Result<Vec<Scenario>, ScenarioError> {
    let mut files = Vec::new();
    collect(dir, &mut files).map_err(|source| ScenarioError::Io {
        file: dir.to_path_buf(),
        source,
    })?;
    files.sort();
    let abs = absolute_dir(dir);
    let mut out: Vec<Scenario> = Vec::new();
    for f in files {
        for mut s in load_case(&f)?.expand() {
            s.local_dir = Some(abs.clone());
            if let Some(prev) = out.iter().find(|p| p.id == s.id) {
                return Err(ScenarioError::invalid(
                    &f,
                    "id",
                    format!("case id {:?} is also used by {}", s.id, prev.file.display()),
                ));
            }
            out.push(s);
        }
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

/// `dir` as an absolute path without `.` or `..` (as given when it cannot be resolved).
fn absolute_dir(dir: &Path) -> PathBuf {
    dir.canonicalize()
        .or_else(|_| std::path::absolute(dir))
        .unwrap_or_else(|_| dir.to_path_buf())
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    // A single file stands for itself (`--scenarios found/DLG-ART-04-7.toml`).
    if dir.is_file() {
        out.push(dir.to_path_buf());
        return Ok(());
    }
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

/// The catalog cases that list `rule` (not counting always-on rules judged elsewhere): what
/// `rules` counts, `explain` lists and `--rule` selects.
pub fn listing(catalog: &[Scenario], rule: &str) -> Vec<Scenario> {
    catalog
        .iter()
        .filter(|s| s.rules.iter().any(|r| r == rule))
        .cloned()
        .collect()
}

/// One shard of a selection (`--partition`), as in cargo-nextest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partition {
    /// How cases are dealt to shards.
    pub mode: PartitionMode,
    /// This shard, 1-based.
    pub shard: u64,
    /// Shards in all.
    pub total: u64,
}

/// How `--partition` deals cases to shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionMode {
    /// Round robin over the selection sorted by id: the i-th case (0-based) goes to shard
    /// `i mod N + 1`. Balanced, but a case may move when the selection changes.
    Count,
    /// A stable hash of the case id: a case stays in its shard whatever else is selected.
    Hash,
}

/// A `--partition` value that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("bad partition {0:?}: expected hash:K/N or count:K/N with 1 <= K <= N (such as count:1/4)")]
pub struct PartitionError(pub String);

impl std::str::FromStr for Partition {
    type Err = PartitionError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || PartitionError(text.to_string());
        let (mode, rest) = text.split_once(':').ok_or_else(bad)?;
        let mode = match mode {
            "count" => PartitionMode::Count,
            "hash" => PartitionMode::Hash,
            _ => return Err(bad()),
        };
        let (k, n) = rest.split_once('/').ok_or_else(bad)?;
        let shard: u64 = k.trim().parse().map_err(|_| bad())?;
        let total: u64 = n.trim().parse().map_err(|_| bad())?;
        if total == 0 || shard == 0 || shard > total {
            return Err(bad());
        }
        Ok(Partition { mode, shard, total })
    }
}

impl std::fmt::Display for Partition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mode = match self.mode {
            PartitionMode::Count => "count",
            PartitionMode::Hash => "hash",
        };
        write!(f, "{mode}:{}/{}", self.shard, self.total)
    }
}

impl Partition {
    /// The 1-based shard of a case id under hash mode: the first 8 bytes of its SHA-256, mod N.
    pub fn hash_shard(id: &str, total: u64) -> u64 {
        let d = sha2::Sha256::digest(id.as_bytes());
        let mut b = [0u8; 8];
        b.copy_from_slice(&d[..8]);
        u64::from_be_bytes(b) % total.max(1) + 1
    }

    /// The cases of `selection` in this shard, in id order.
    pub fn apply(&self, selection: &[Scenario]) -> Vec<Scenario> {
        let mut sorted: Vec<&Scenario> = selection.iter().collect();
        sorted.sort_by(|a, b| a.id.cmp(&b.id));
        sorted
            .into_iter()
            .enumerate()
            .filter(|(i, s)| match self.mode {
                PartitionMode::Count => (*i as u64) % self.total + 1 == self.shard,
                PartitionMode::Hash => Self::hash_shard(&s.id, self.total) == self.shard,
            })
            .map(|(_, s)| s.clone())
            .collect()
    }
}

/// Which cases a command takes: any of the `--case` globs (all when none), or any case that
/// lists one of the `--rule` ids (both given: a case must satisfy both), then one shard.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Case id globs; a case matching any is selected. Empty: every case.
    pub cases: Vec<CaseGlob>,
    /// Rule ids; a case listing any is selected. Empty: no filter.
    pub rules: Vec<String>,
    /// The shard to keep.
    pub partition: Option<Partition>,
}

/// A `--rule` naming no rule of the registry.
#[derive(Debug, thiserror::Error)]
#[error("--rule {0:?} names no rule (see `a2a-harness rules`)")]
pub struct UnknownRule(pub String);

impl Selection {
    /// Check the rule ids against the registry.
    pub fn check(&self) -> Result<(), UnknownRule> {
        let known = registry();
        match self
            .rules
            .iter()
            .find(|r| !known.iter().any(|k| k.id == r.as_str()))
        {
            Some(r) => Err(UnknownRule(r.clone())),
            None => Ok(()),
        }
    }

    /// The selected cases of `catalog`, in id order.
    pub fn apply(&self, catalog: &[Scenario]) -> Vec<Scenario> {
        let picked: Vec<Scenario> = catalog
            .iter()
            .filter(|s| self.cases.is_empty() || self.cases.iter().any(|g| g.matches(&s.id)))
            .filter(|s| self.rules.is_empty() || s.rules.iter().any(|r| self.rules.contains(r)))
            .cloned()
            .collect();
        match &self.partition {
            Some(p) => p.apply(&picked),
            None => {
                let mut picked = picked;
                picked.sort_by(|a, b| a.id.cmp(&b.id));
                picked
            }
        }
    }

    /// The selection as `run`/`list` arguments (`--case`, `--rule`, `--partition`).
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        for g in &self.cases {
            parts.push(format!(
                "--case {}",
                crate::delegator_process::shell_quote(g.as_str())
            ));
        }
        for r in &self.rules {
            parts.push(format!("--rule {r}"));
        }
        if let Some(p) = &self.partition {
            parts.push(format!("--partition {p}"));
        }
        if parts.is_empty() {
            "every case".to_string()
        } else {
            parts.join(" ")
        }
    }
}

/// The case id of a result id (`<case>`, `<case>@<seed>`, `<case>:<binding>`,
/// `<case>:<binding>@<seed>`, `<case>@event<k>`, and any of these followed by `#determinism`;
/// case ids hold none of `@`, `:` and `#`).
pub fn case_of(result_id: &str) -> &str {
    result_id.split(['@', ':', '#']).next().unwrap_or(result_id)
}

/// True when a known-failing entry names this result: its id or its case id. A determinism
/// result (`<id>#determinism`) is never named: a case known to fail should still fail the same
/// way twice, and an entry such as `states.*` would otherwise turn that PASS into an XPASS.
pub fn known_failing_matches(entry: &CaseGlob, result_id: &str) -> bool {
    if result_id.contains('#') {
        return false;
    }
    entry.matches(result_id) || entry.matches(case_of(result_id))
}

/// Known-failing entries that match none of `ids` (case or result ids): stale lines to
/// remove, or entries whose cases the selection left out.
pub fn stale_known_failing<'a>(known: &'a [CaseGlob], ids: &[&str]) -> Vec<&'a CaseGlob> {
    known
        .iter()
        .filter(|k| !ids.iter().any(|id| known_failing_matches(k, id)))
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
    fn the_embedded_catalog_is_the_scenarios_directory() {
        let embedded = builtin_catalog().unwrap();
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
        let on_disk = load_catalog(&dir).unwrap();
        let ids = |c: &[Scenario]| c.iter().map(|s| s.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&embedded), ids(&on_disk));
        let files = on_disk.iter().filter(|s| s.variant_of.is_none()).count();
        assert_eq!(builtin_files(), files);
        assert!(on_disk.len() > files, "the catalog has variants");
        let s = embedded
            .iter()
            .find(|s| s.id == "states.completed")
            .unwrap();
        assert_eq!(s.file, Path::new("scenarios/states/completed.toml"));
        assert!(s.local_dir.is_none());
    }

    #[test]
    fn shards_cover_the_selection_once() {
        let cat = builtin_catalog().unwrap();
        for sel in [
            Selection::default(),
            Selection {
                rules: vec!["DLG-ART-04".into()],
                ..Selection::default()
            },
        ] {
            let all: Vec<String> = sel.apply(&cat).into_iter().map(|s| s.id).collect();
            for mode in [PartitionMode::Count, PartitionMode::Hash] {
                for total in 1..=5 {
                    let mut seen: Vec<String> = Vec::new();
                    for shard in 1..=total {
                        let p = Partition { mode, shard, total };
                        let part = Selection {
                            partition: Some(p),
                            ..sel.clone()
                        }
                        .apply(&cat);
                        if mode == PartitionMode::Count {
                            let want = all.len() / total as usize;
                            assert!(part.len() == want || part.len() == want + 1, "{p}");
                        }
                        seen.extend(part.into_iter().map(|s| s.id));
                    }
                    let n = seen.len();
                    seen.sort();
                    seen.dedup();
                    assert_eq!(n, seen.len(), "{mode:?} {total}: a case in two shards");
                    assert_eq!(seen, all, "{mode:?} {total}: the shards miss cases");
                }
            }
        }
        // A hash shard does not move when the selection changes.
        let p = Partition::hash_shard("states.completed", 4);
        assert_eq!(p, Partition::hash_shard("states.completed", 4));
        assert!((1..=4).contains(&p));
    }

    #[test]
    fn partitions_parse_strictly() {
        let p: Partition = "count:2/3".parse().unwrap();
        assert_eq!(
            (p.mode, p.shard, p.total, p.to_string().as_str()),
            (PartitionMode::Count, 2, 3, "count:2/3")
        );
        assert_eq!(
            "hash:1/1".parse::<Partition>().unwrap().mode,
            PartitionMode::Hash
        );
        for bad in [
            "2/3",
            "count:0/3",
            "count:4/3",
            "hash:1/0",
            "slice:1/2",
            "count:a/b",
        ] {
            let err = bad.parse::<Partition>().unwrap_err().to_string();
            assert!(err.contains("hash:K/N or count:K/N"), "{bad}: {err}");
        }
    }

    #[test]
    fn cases_without_agents_or_with_a_capability_nobody_offers_are_refused() {
        let base = "id = \"x\"\ntitle = \"t\"\nrules = [\"DLG-SEND-02\"]\n";
        let err = parse_case(Path::new("x.toml"), &format!("{base}[network]\n"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("x.toml: network.agent: the case has no agents"),
            "{err}"
        );
        let agent =
            "[network]\n[[network.agent]]\nname = \"a\"\n[[network.agent.skill]]\nid = \"s\"\n";
        let text =
            format!("{base}{agent}[[delegate]]\nid = \"d1\"\ncapability = \"t\"\ntext = \"x\"\n");
        let err = parse_case(Path::new("x.toml"), &text)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "x.toml: delegate \"d1\": capability: \"t\" is offered by no agent (skills: s)"
        );
        let text = format!(
            "{base}{agent}[[delegate]]\nid = \"d1\"\ncapability = \"s\"\ntext = \"x\"\n[[delegate.children]]\nid = \"c1\"\ncapability = \"u\"\ntext = \"y\"\n"
        );
        let err = parse_case(Path::new("x.toml"), &text)
            .unwrap_err()
            .to_string();
        assert!(err.contains("child \"c1\": capability: \"u\""), "{err}");
    }

    #[test]
    fn stale_known_failing_entries_are_those_matching_no_case() {
        let known = vec![
            CaseGlob::new("states.*").unwrap(),
            CaseGlob::new("gone.case").unwrap(),
        ];
        let stale = stale_known_failing(&known, &["states.completed:rest@3", "x"]);
        let pats: Vec<&str> = stale.iter().map(|k| k.as_str()).collect();
        assert_eq!(pats, ["gone.case"]);
        assert_eq!(case_of("a.b:grpc@7"), "a.b");
        assert_eq!(case_of("a.b@event12"), "a.b");
        assert_eq!(case_of("a.b@3#determinism"), "a.b");
        assert_eq!(case_of("a.b#determinism"), "a.b");
        let all = CaseGlob::new("a.*").unwrap();
        assert!(known_failing_matches(&all, "a.b@3"));
        assert!(!known_failing_matches(&all, "a.b#determinism"));
        assert!(!known_failing_matches(
            &CaseGlob::new("a.b").unwrap(),
            "a.b@3#determinism"
        ));
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
        // A variant's own rule list is checked too, and named.
        let text = "id = \"x\"\ntitle = \"t\"\nrules = [\"DLG-SEND-02\"]\n[network]\n[[network.agent]]\nname = \"a\"\n[[variant]]\nsuffix = \"p\"\ndelivery = \"poll\"\nrules = [\"DLG-NOPE-02\"]\n";
        let err = parse_case(Path::new("x.toml"), text).unwrap_err();
        assert!(
            matches!(&err, ScenarioError::Invalid { field, .. } if field == "variant \"p\": rules"),
            "{err:?}"
        );
        let dir = tempfile::tempdir().unwrap();
        let body = "id = \"same\"\ntitle = \"t\"\nrules = [\"DLG-SEND-02\"]\n[network]\n[[network.agent]]\nname = \"a\"\n";
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("one.toml"), body).unwrap();
        std::fs::write(dir.path().join("sub/two.toml"), body).unwrap();
        let err = load_catalog(dir.path()).unwrap_err().to_string();
        assert!(err.contains("case id \"same\" is also used by"), "{err}");
    }
}
