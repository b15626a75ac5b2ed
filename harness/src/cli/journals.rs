//! The commands on network journals: `journal diff` (two journals compared modulo ids, ports
//! and timing) and `scenario from-journal` (a recorded journal to a catalog scenario).

use a2a_driver_contract::HarnessExitCode;
use std::io::Write as _;
use std::path::Path;

/// `journal diff`: the first difference of two journals, exit 1 when there is one. `case`
/// names the journal inside a report directory; a file is a journal itself. With
/// `agent_behaviour` only what the agents did is compared; without it, a difference is followed
/// by whether the agents' behaviour differs too.
pub fn diff(
    a: &Path,
    b: &Path,
    case: Option<&str>,
    agent_behaviour: bool,
    out: &mut impl std::io::Write,
) -> anyhow::Result<HarnessExitCode> {
    use a2a_journal_diff::{first_difference, load_journal, normalise};
    let load = |p: &Path| load_journal(p, case.filter(|_| p.is_dir()));
    let (ja, jb) = (load(a)?, load(b)?);
    let counts = format!("{} and {} entries", ja.len(), jb.len());
    let (na, nb) = (normalise(&ja), normalise(&jb));
    let behaviour = || {
        first_difference(
            &a2a_journal_diff::agent_behaviour(&na),
            &a2a_journal_diff::agent_behaviour(&nb),
        )
    };
    if agent_behaviour {
        return Ok(match behaviour() {
            None => {
                writeln!(out, "no difference in agent behaviour ({counts})")?;
                HarnessExitCode::Success
            }
            Some(d) => {
                writeln!(
                    out,
                    "A: {}\nB: {}\nthe agents' behaviour differs ({counts}):",
                    a.display(),
                    b.display()
                )?;
                write!(out, "{d}")?;
                HarnessExitCode::Failure
            }
        });
    }
    match first_difference(&na, &nb) {
        None => {
            writeln!(out, "identical modulo ids, ports and timing ({counts})")?;
            Ok(HarnessExitCode::Success)
        }
        Some(d) => {
            writeln!(out, "A: {}\nB: {}", a.display(), b.display())?;
            write!(out, "{d}")?;
            if behaviour().is_none() {
                writeln!(
                    out,
                    "no difference in agent behaviour, though (--agent-behaviour compares only that)"
                )?;
            } else {
                writeln!(
                    out,
                    "the agents' behaviour differs too (--agent-behaviour shows where)"
                )?;
            }
            Ok(HarnessExitCode::Failure)
        }
    }
}

/// `scenario from-journal`: `journal` converted to a scenario written to `file` (part files
/// next to it in `<stem>.d`), what cannot be expressed named on stderr; the written file must
/// load as a catalog case.
pub fn from_journal(
    journal: &Path,
    file: &Path,
    id: Option<String>,
    out: &mut impl std::io::Write,
) -> anyhow::Result<HarnessExitCode> {
    use a2a_harness_record::from_journal::{ConvertOptions, convert, read_journal};
    let recorded = read_journal(journal)?;
    let stem = file
        .file_stem()
        .map_or_else(|| "case".to_string(), |s| s.to_string_lossy().into_owned());
    let c = convert(
        &recorded,
        &ConvertOptions {
            id,
            files_dir: Some(format!("{stem}.d")),
        },
    );
    for u in &c.unsupported {
        writeln!(
            std::io::stderr(),
            "a2a-harness: from-journal: not expressible: {u}"
        )?;
    }
    let dir = file.parent().unwrap_or(Path::new("."));
    c.write(file)?;
    a2a_harness_core::catalog::load_case(file).map_err(|e| anyhow::anyhow!("{e}"))?;
    writeln!(
        out,
        "{}: {} agents, {} rules, {} delegations, {} TODOs, {} bytes{}",
        file.display(),
        c.agents,
        c.rules,
        c.delegations,
        c.unsupported.len(),
        c.toml.len(),
        if c.files.is_empty() {
            String::new()
        } else {
            format!(
                ", {} part files in {}",
                c.files.len(),
                dir.join(format!("{stem}.d")).display()
            )
        }
    )?;
    Ok(HarnessExitCode::Success)
}
