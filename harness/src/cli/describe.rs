//! The commands that describe the catalog and the rules without running anything: `list`,
//! `rules`, `explain` and `schema`.

use super::reports::read_index;
use a2a_driver_contract::HarnessExitCode;
use a2a_harness_core::catalog::Selection;
use a2a_harness_core::scenario::Scenario;
use std::path::Path;

/// `list`: one line per selected case (id, title, rules).
pub fn list(
    cat: &[Scenario],
    selection: &Selection,
    out: &mut impl std::io::Write,
) -> anyhow::Result<HarnessExitCode> {
    for s in selection.apply(cat) {
        writeln!(out, "{:<40} {}  [{}]", s.id, s.title, s.rules.join(", "))?;
    }
    Ok(HarnessExitCode::Success)
}

/// `rules`: the rules grouped by source, each with how many catalog cases list it, and with
/// `--report`, in how many cases of that run it was evaluated; the A2A client requirements at a
/// glance last ([`a2a_harness_core::explain::rules_text`]).
pub fn rules(
    cat: &[Scenario],
    from: Option<&Path>,
    out: &mut impl std::io::Write,
) -> anyhow::Result<HarnessExitCode> {
    let index = from.map(read_index).transpose()?;
    write!(
        out,
        "{}",
        a2a_harness_core::explain::rules_text(cat, index.as_ref())
    )?;
    Ok(HarnessExitCode::Success)
}

/// `explain`: a rule, a history invariant, an A2A client requirement (`C-19`) or a case
/// ([`a2a_harness_core::explain::explain_text`]).
pub fn explain(
    cat: &[Scenario],
    what: &str,
    from: Option<&Path>,
    out: &mut impl std::io::Write,
) -> anyhow::Result<HarnessExitCode> {
    let index = from.map(read_index).transpose()?;
    let shown = from.map(|p| p.display().to_string()).unwrap_or_default();
    let text = a2a_harness_core::explain::explain_text(
        cat,
        what,
        index.as_ref().map(|i| (i, shown.as_str())),
    )?;
    write!(out, "{text}")?;
    Ok(HarnessExitCode::Success)
}

/// `schema`: the JSON Schema of the scenario format ([`a2a_harness_core::scenario::json_schema`]).
pub fn schema(out: &mut impl std::io::Write) -> anyhow::Result<HarnessExitCode> {
    writeln!(
        out,
        "{}",
        serde_json::to_string_pretty(&a2a_harness_core::scenario::json_schema())?
    )?;
    Ok(HarnessExitCode::Success)
}
