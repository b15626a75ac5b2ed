//! Report directories on the command line: making `--out` ready before anything runs,
//! reading the `index.json` that `--report` names, and `a2a-harness report merge`.

use a2a_driver_contract::HarnessExitCode;
use a2a_harness_core::report;
use anyhow::Context;
use std::path::{Path, PathBuf};

/// Make `--out` ready before anything runs: refuse a directory holding someone else's
/// `index.json`, remove the files of an earlier a2a-harness report (so no stale case file
/// survives), and prove it writable. Returns whether an old report was removed.
pub fn prepare_out(dir: &Path) -> anyhow::Result<bool> {
    let index = dir.join("index.json");
    let mut emptied = false;
    if index.exists() {
        let ours = std::fs::read(&index)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .is_some_and(|v| v["tool"]["name"] == "a2a-harness");
        if !ours {
            anyhow::bail!(
                "--out {} holds an index.json that is no a2a-harness report: choose another directory",
                dir.display()
            );
        }
        for e in std::fs::read_dir(dir).with_context(|| format!("--out {}", dir.display()))? {
            let p = e?.path();
            let r = if p.is_dir() {
                std::fs::remove_dir_all(&p)
            } else {
                std::fs::remove_file(&p)
            };
            r.with_context(|| format!("--out: removing the old report's {}", p.display()))?;
        }
        emptied = true;
    }
    let not_writable = || {
        format!(
            "--out {} is not writable (the report could not be written there)",
            dir.display()
        )
    };
    std::fs::create_dir_all(dir).with_context(not_writable)?;
    let probe = dir.join(".a2a-harness-write-check");
    std::fs::write(&probe, b"").with_context(not_writable)?;
    std::fs::remove_file(&probe).with_context(not_writable)?;
    Ok(emptied)
}

/// A report directory (`out`, default `reports/<prefix><timestamp>`), ready to be written
/// ([`prepare_out`]): an earlier report in it is removed (and said so on `w`).
pub fn report_dir(
    out: Option<PathBuf>,
    prefix: &str,
    w: &mut impl std::io::Write,
) -> anyhow::Result<PathBuf> {
    let dir = out.unwrap_or_else(|| PathBuf::from(format!("reports/{prefix}{}", report::stamp())));
    if prepare_out(&dir)? {
        writeln!(w, "note: removed the earlier report in {}", dir.display())?;
    }
    Ok(dir)
}

/// A run's `index.json` (a report directory or the file).
pub fn read_index(from: &Path) -> anyhow::Result<a2a_driver_contract::report::RunIndex> {
    let file = if from.is_dir() {
        from.join("index.json")
    } else {
        from.to_path_buf()
    };
    let text =
        std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not a run index", file.display()))
}

/// `report merge`: the shard reports `dirs` combined into `dir` ([`report::merge()`]), what
/// broke and the counts on `out`; exit 1 when some case failed.
pub fn merge(
    dirs: &[PathBuf],
    dir: &Path,
    out: &mut impl std::io::Write,
) -> anyhow::Result<HarnessExitCode> {
    let index = report::merge(dirs, dir)?;
    write!(out, "{}", report::rules_broken_text(&index.rules_broken))?;
    let t = index.totals;
    writeln!(out, "reports: {}", dir.display())?;
    writeln!(
        out,
        "{} passed, {} failed, {} skipped",
        t.passed, t.failed, t.skipped
    )?;
    if let Some(c) = &index.compatibility {
        writeln!(out, "{}", report::compatibility_line(c))?;
        writeln!(out, "{}", report::compatibility_note(c))?;
    }
    Ok(HarnessExitCode::for_run(t.failed))
}
