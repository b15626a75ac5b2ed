//! Reading a report directory back, and `a2a-harness report merge`: shard reports combined into
//! one, rendered by the same writers as a run's (from the files alone).

use super::index::index_of;
use super::write_report;
use crate::runner::CaseResult;
use a2a_driver_contract::report::{INDEX_SCHEMA_VERSION, RunIndex, RunInfo};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why a report could not be read or merged.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// A file is not what a report holds there.
    #[error("{}: {source}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// Where (`line`, `column`) and what.
        source: serde_json::Error,
    },
    /// A report of another `index.json` schema.
    #[error(
        "{}: schema_version {found}, but this a2a-harness reads {INDEX_SCHEMA_VERSION}: merge reports written by the same harness version",
        path.display()
    )]
    Schema {
        /// The `index.json`.
        path: PathBuf,
        /// Its `schema_version`.
        found: u32,
    },
    /// Two shards are not parts of one run.
    #[error(
        "the shards are not parts of one run: {what} is {first:?} in {} but {other:?} in {}",
        first_dir.display(),
        other_dir.display()
    )]
    Mismatch {
        /// What differs (`delegator`, `seed`, `rules`).
        what: &'static str,
        /// The first shard.
        first_dir: PathBuf,
        /// Its value.
        first: String,
        /// The shard that differs.
        other_dir: PathBuf,
        /// Its value.
        other: String,
    },
    /// A case is in two shards.
    #[error(
        "case {id} is in both {} and {}: shards must not overlap (run them with distinct --partition K/N)",
        first_dir.display(),
        other_dir.display()
    )]
    Overlap {
        /// The case id.
        id: String,
        /// The first shard holding it.
        first_dir: PathBuf,
        /// The other.
        other_dir: PathBuf,
    },
    /// The output directory is one of the inputs or already holds a report.
    #[error("{}: {why}", path.display())]
    Output {
        /// The `--out` directory.
        path: PathBuf,
        /// What is wrong with it.
        why: &'static str,
    },
    /// Nothing to merge.
    #[error("no report directory given")]
    NoShards,
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, ReportError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| ReportError::Json {
        path: path.to_path_buf(),
        source,
    })
}

/// A report directory read back: its `index.json` and every case file it names.
pub fn load(dir: &Path) -> Result<(RunIndex, Vec<CaseResult>), ReportError> {
    let path = dir.join("index.json");
    let index: RunIndex = read_json(&path)?;
    if index.schema_version != INDEX_SCHEMA_VERSION {
        return Err(ReportError::Schema {
            path,
            found: index.schema_version,
        });
    }
    let cases = index
        .cases
        .iter()
        .map(|c| read_json::<CaseResult>(&dir.join(&c.file)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((index, cases))
}

/// Merge the shard reports in `dirs` into one report in `out` (`index.json`, `cases/`,
/// `journals/`, `junit.xml`, `summary.md`, `index.html`): the cases of every shard in shard
/// order, totals and rule counts recomputed, wall time the longest shard's, incomplete if any
/// shard was. The shards must share delegator, seed, schema and rule registry, and no case may
/// be in two of them; `out` must not be one of them nor hold a report already.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<RunIndex, ReportError> {
    let Some(first_dir) = dirs.first() else {
        return Err(ReportError::NoShards);
    };
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    if dirs.iter().any(|d| canon(d) == canon(out)) {
        return Err(ReportError::Output {
            path: out.to_path_buf(),
            why: "is one of the shards: write the merged report elsewhere",
        });
    }
    if out.join("index.json").exists() {
        return Err(ReportError::Output {
            path: out.to_path_buf(),
            why: "already holds a report (index.json): give an empty or new directory",
        });
    }
    let mut shards = Vec::new();
    for d in dirs {
        shards.push((d, load(d)?));
    }
    let (_, (first, _)) = &shards[0];
    let rule_ids = |i: &RunIndex| {
        i.rules
            .iter()
            .map(|r| r.id.as_str())
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut seen: BTreeMap<String, &PathBuf> = BTreeMap::new();
    for (d, (index, cases)) in &shards {
        let checks = [
            ("delegator", &first.run.delegator, &index.run.delegator),
            (
                "seed",
                &first.run.seed.to_string(),
                &index.run.seed.to_string(),
            ),
            ("rules", &rule_ids(first), &rule_ids(index)),
        ];
        for (what, a, b) in checks {
            if a != b {
                return Err(ReportError::Mismatch {
                    what,
                    first_dir: first_dir.clone(),
                    first: a.clone(),
                    other_dir: (*d).clone(),
                    other: b.clone(),
                });
            }
        }
        for c in cases {
            if let Some(prev) = seen.insert(c.id.clone(), d) {
                return Err(ReportError::Overlap {
                    id: c.id.clone(),
                    first_dir: prev.clone(),
                    other_dir: (*d).clone(),
                });
            }
        }
    }
    let mut hosts: Vec<&str> = Vec::new();
    for (_, (i, _)) in &shards {
        if !i.run.hostname.is_empty() && !hosts.contains(&i.run.hostname.as_str()) {
            hosts.push(&i.run.hostname);
        }
    }
    let run = RunInfo {
        delegator: first.run.delegator.clone(),
        seed: first.run.seed,
        wall_ms: shards
            .iter()
            .map(|(_, (i, _))| i.run.wall_ms)
            .max()
            .unwrap_or(0),
        finished_at: shards
            .iter()
            .map(|(_, (i, _))| i.run.finished_at.clone())
            .max()
            .unwrap_or_default(),
        incomplete: shards.iter().any(|(_, (i, _))| i.run.incomplete),
        tls: shards.iter().any(|(_, (i, _))| i.run.tls),
        hostname: hosts.join(", "),
    };
    let rules = first.rules.clone();
    let results: Vec<CaseResult> = shards.into_iter().flat_map(|(_, (_, c))| c).collect();
    let index = index_of(run, rules, &results);
    write_report(out, &index, &results).map_err(|source| ReportError::Io {
        path: out.to_path_buf(),
        source,
    })?;
    Ok(index)
}
