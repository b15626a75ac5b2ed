//! The commands of the `a2a-harness` binary: what each command checks before anything runs, how
//! it runs, what it writes and prints, and the exit code it ends with, over the library crates'
//! tools (a library caller uses those: `a2a_harness_core::{run, sweep, report}`,
//! `a2a_harness_explore::explore`, `a2a_harness_record::record`, `a2a_journal_diff`...).
//! `main.rs` only parses the arguments with clap, turns them into the settings of these
//! functions and maps their [`Ended`] to the process exit code.
//!
//! This is the binary's edge: errors are [`anyhow::Error`]s whose text is what the binary
//! prints after `a2a-harness: ` (exit 2, [`HarnessExitCode::Usage`]).
//!
//! - [`run`](mod@run): `run` (cases in parallel, the live console, reports);
//! - [`sweep`](mod@sweep): `run --crash-sweep` and `run --crash-at-event K`;
//! - [`explore`](mod@explore): `explore`;
//! - [`bench`](mod@bench): `bench`;
//! - [`network`]: `serve` and `record` (a network or proxies until Ctrl-C or SIGTERM);
//! - [`describe`]: `list`, `rules`, `explain`, `schema`;
//! - [`journals`]: `journal diff`, `scenario from-journal`;
//! - [`reports`]: report directories (`--out`, `--report`) and `report merge`.

pub mod bench;
pub mod describe;
pub mod explore;
pub mod journals;
pub mod network;
pub mod reports;
pub mod run;
pub mod sweep;

use a2a_driver_contract::HarnessExitCode;
use a2a_harness_core::catalog::{Catalog, CatalogSources, load_sources};
use a2a_harness_core::delegator_process::{resolve_program, shell_quote, split_command};
use anyhow::Context;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The exit code of a run interrupted by Ctrl-C (128 + SIGINT, as shells report it).
pub const INTERRUPTED: u8 = 130;

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// With this exit code.
    Code(HarnessExitCode),
    /// Interrupted by Ctrl-C (exit [`INTERRUPTED`]).
    Interrupted,
}

impl From<HarnessExitCode> for Ended {
    fn from(c: HarnessExitCode) -> Self {
        Ended::Code(c)
    }
}

impl From<Ended> for std::process::ExitCode {
    fn from(e: Ended) -> Self {
        match e {
            Ended::Code(c) => c.into(),
            Ended::Interrupted => std::process::ExitCode::from(INTERRUPTED),
        }
    }
}

/// True when the error is a write to a closed pipe (`a2a-harness rules | head`: no error of
/// ours).
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The reference delegator command: `a2a-delegator drive` next to the running binary, else
/// from `PATH` (said on stderr, since it may not be the build the user expects), by its
/// absolute path so that repro lines run from anywhere. Neither: an error naming both ways and
/// `--delegator`.
pub fn default_delegator() -> anyhow::Result<String> {
    let exe = std::env::current_exe().ok();
    let sibling = exe
        .as_deref()
        .and_then(Path::parent)
        .map(|d| d.join("a2a-delegator"));
    if let Some(p) = sibling.as_ref().filter(|p| p.is_file()) {
        // Quoted the way `--delegator` is split.
        return Ok(format!("{} drive", shell_quote(&p.display().to_string())));
    }
    let next_to = sibling
        .map(|p| format!(" ({})", p.display()))
        .unwrap_or_default();
    match resolve_program("a2a-delegator") {
        Ok(found) => {
            let _ = writeln!(
                std::io::stderr(),
                "a2a-harness: note: no a2a-delegator next to this binary{next_to}; using `a2a-delegator drive` from PATH ({})",
                found.display()
            );
            Ok(format!(
                "{} drive",
                shell_quote(&found.display().to_string())
            ))
        }
        Err(_) => anyhow::bail!(
            "no reference delegator: no a2a-delegator next to this binary{next_to}, and none on PATH; install it next to a2a-harness (`cargo install --locked --path delegator`) or put it on PATH, or name your own with --delegator CMD"
        ),
    }
}

/// Check the delegator command before running anything: it parses, and its program exists
/// and is executable (bad usage otherwise, exit 2).
pub fn check_delegator(cmd: &str) -> anyhow::Result<()> {
    let line = split_command(cmd)?;
    resolve_program(&line.program).with_context(|| format!("delegator command {cmd:?}"))?;
    Ok(())
}

/// The catalog: built-in unless `no_builtin`, plus each of `scenarios` (directories or case
/// files); a note on stderr for each built-in case a local one replaced.
pub fn load_catalog(scenarios: &[PathBuf], no_builtin: bool) -> anyhow::Result<Catalog> {
    if no_builtin && scenarios.is_empty() {
        anyhow::bail!("--no-builtin leaves no cases: add --scenarios DIR");
    }
    let cat = load_sources(&CatalogSources {
        builtin: !no_builtin,
        dirs: scenarios.to_vec(),
    })
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    for (id, file) in &cat.replaced {
        let _ = writeln!(
            std::io::stderr(),
            "a2a-harness: note: case {id} from {} replaces the built-in one",
            file.display()
        );
    }
    Ok(cat)
}
