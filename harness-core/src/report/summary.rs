//! `summary.md`: the run in Markdown, opening with the totals and the A2A client line, the rules
//! broken, then the cases, the evidence of every failure (with the tail of the delegator's
//! stderr), the rule coverage and the A2A client compatibility (a table per level).

use super::compatibility::{cases_text, compatibility_line, compatibility_note, evidence_text};
use super::text::{failure_text, non_passing, stderr_tail};
use crate::runner::CaseResult;
use a2a_driver_contract::report::{Compatibility, Coverage, RunIndex};
use std::fmt::Write as _;

/// Escape a table cell: pipes and line breaks would end it.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// `summary.md` of a report.
pub fn summary(index: &RunIndex, results: &[CaseResult]) -> String {
    let t = &index.totals;
    let mut s = String::from("# a2a-harness report\n\n");
    if index.run.incomplete {
        let _ = writeln!(
            s,
            "> **INCOMPLETE**: the run was interrupted; this report holds only the {} cases that finished.\n",
            results.len()
        );
    }
    let _ = writeln!(
        s,
        "Delegator: `{}`  \nSeed: {}  \nWall time: {:.1} s  \nTotals: {} passed, {} failed, {} skipped\n",
        index.run.delegator,
        index.run.seed,
        index.run.wall_ms as f64 / 1000.0,
        t.passed,
        t.failed,
        t.skipped
    );
    if let Some(c) = &index.compatibility {
        let _ = writeln!(
            s,
            "{}  \n{} (the tables under [A2A client compatibility](#a2a-client-compatibility))\n",
            compatibility_line(c),
            compatibility_note(c)
        );
    }

    let _ = writeln!(s, "## Rules broken ({})\n", index.rules_broken.len());
    if index.rules_broken.is_empty() {
        let _ = writeln!(s, "No rule broken.\n");
    } else {
        let _ = writeln!(
            s,
            "| rule | level | cases | requirement | first evidence |\n| --- | --- | --- | --- | --- |"
        );
        for b in &index.rules_broken {
            let _ = writeln!(
                s,
                "| {} | {} | {} ({}) | {} | {} |",
                b.id,
                b.level,
                b.cases.len(),
                cell(&b.cases.join(", ")),
                cell(&b.requirement),
                cell(&b.first_evidence)
            );
        }
        let _ = writeln!(s);
    }

    let _ = writeln!(
        s,
        "## Cases\n\n| case | verdict | rules not passed |\n| --- | --- | --- |"
    );
    for r in results {
        let rules: Vec<String> = non_passing(r)
            .map(|v| format!("{} ({})", v.id, v.verdict.label()))
            .collect();
        let _ = writeln!(
            s,
            "| {} | {} | {} |",
            cell(&r.id),
            r.verdict.label(),
            rules.join(", ")
        );
    }
    let _ = writeln!(s);

    let failures: Vec<&CaseResult> = results
        .iter()
        .filter(|r| r.verdict.fails_run() || r.verdict == crate::runner::Verdict::XFail)
        .collect();
    if !failures.is_empty() {
        let _ = writeln!(s, "## Failures\n");
    }
    for r in failures {
        let _ = writeln!(
            s,
            "### {} ({})\n\n```\n{}```\n",
            r.id,
            r.verdict.label(),
            failure_text(r)
        );
        if !r.stderr.trim().is_empty() {
            let (tail, skipped) = stderr_tail(&r.stderr);
            let _ = writeln!(
                s,
                "Delegator stderr (last lines{}):\n\n```\n{tail}\n```\n",
                if skipped > 0 {
                    format!(", {skipped} earlier left out")
                } else {
                    String::new()
                }
            );
        }
    }

    let not_tested: Vec<&str> = index
        .rules
        .iter()
        .filter(|r| r.status == Coverage::NotTested)
        .map(|r| r.id.as_str())
        .collect();
    let _ = writeln!(
        s,
        "## Rules\n\nNOT TESTED ({}): {}\n\n| rule | level | catalog cases | evaluated in this run |\n| --- | --- | --- | --- |",
        not_tested.len(),
        not_tested.join(", ")
    );
    for r in &index.rules {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} |",
            r.id,
            r.level,
            if r.status == Coverage::NotTested {
                "NOT TESTED".to_string()
            } else {
                r.cases.to_string()
            },
            r.evaluated
        );
    }
    if let Some(c) = &index.compatibility {
        compatibility_tables(&mut s, c);
    }
    let _ = writeln!(
        s,
        "\n{} passed, {} failed, {} skipped",
        t.passed, t.failed, t.skipped
    );
    s
}

/// The compatibility section: a table per level, every requirement with its status, rules,
/// cases and first evidence (or the reason it has no verdict).
fn compatibility_tables(s: &mut String, c: &Compatibility) {
    let _ = writeln!(
        s,
        "\n## A2A client compatibility\n\nThe delegator as an A2A 1.0 client: a verdict per client requirement of the specification ({}), from the rule verdicts of every case; {} lists each with its coverage.\n\n{}\n",
        c.spec,
        c.doc,
        compatibility_line(c)
    );
    for t in &c.levels {
        let _ = writeln!(
            s,
            "### {} ({} PASS, {} FAIL, {} NOT EXERCISED, {} NOT TESTED of {})\n\n| req | § | keyword | status | requirement | rules | cases | evidence |\n| --- | --- | --- | --- | --- | --- | --- | --- |",
            t.level, t.pass, t.fail, t.not_exercised, t.not_tested, t.total
        );
        for v in c.requirements.iter().filter(|v| v.level == t.level) {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                v.id,
                cell(&v.section),
                cell(&v.keyword),
                v.status,
                cell(&v.requirement),
                if v.rules.is_empty() {
                    "-".to_string()
                } else {
                    v.rules.join(", ")
                },
                cell(&cases_text(v)),
                cell(&evidence_text(v))
            );
        }
        let _ = writeln!(s);
    }
}
