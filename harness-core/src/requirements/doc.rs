//! `docs/a2a-client-requirements.md`, generated from the requirement table, the rule registry
//! (levels, requirements, checkers) and the catalog (which cases judge each rule). A test keeps
//! the committed file equal to [`markdown`] of the built-in catalog; regenerate it with
//!
//! ```text
//! UPDATE_REQUIREMENTS_DOC=1 cargo test -p a2a-harness-core --lib requirements::doc
//! ```

use super::{Coverage, DOC_PATH, LEVELS, REQUIREMENTS, Requirement, SPEC, coverage_by_level};
use crate::catalog::listing;
use crate::rules::{Rule, registry};
use crate::scenario::Scenario;
use std::fmt::Write as _;

/// The environment variable that makes the doc test rewrite the committed file.
pub const UPDATE_VAR: &str = "UPDATE_REQUIREMENTS_DOC";

/// Escape a table cell: pipes and line breaks would end it.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// How a rule is judged by `catalog`, in a few words: `always-on`, `N cases`, or NOT TESTED.
pub fn judged_by(rule: Option<&Rule>, catalog: &[Scenario]) -> String {
    let Some(r) = rule else {
        return "not in the registry yet: NOT TESTED".to_string();
    };
    let n = listing(catalog, r.id).len();
    match (r.check.is_some(), r.always, n) {
        (false, _, _) => "no checker yet: NOT TESTED".to_string(),
        (true, true, 0) => "always-on".to_string(),
        (true, true, n) => format!("always-on, listed in {n}"),
        (true, false, 0) => "listed in no case: NOT TESTED".to_string(),
        (true, false, 1) => "1 case".to_string(),
        (true, false, n) => format!("{n} cases"),
    }
}

/// Whether a rule is judged in some case of `catalog`: it has a checker and is always-on or
/// listed by a case.
pub fn judged_in(catalog: &[Scenario], rules: &[Rule], id: &str) -> bool {
    rules
        .iter()
        .find(|r| r.id == id)
        .is_some_and(|r| r.check.is_some() && (r.always || !listing(catalog, id).is_empty()))
}

/// The rules of a row with their levels: `DLG-ROUTE-07 (MUST)`.
fn rules_cell(r: &Requirement, rules: &[Rule]) -> String {
    r.coverage
        .rules()
        .iter()
        .map(|id| match rules.iter().find(|x| x.id == *id) {
            Some(x) => format!("{id} ({})", x.level),
            None => format!("{id} (not in the registry yet)"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The Markdown of `docs/a2a-client-requirements.md` for `catalog`.
pub fn markdown(catalog: &[Scenario]) -> String {
    let rules = registry();
    let mut s = String::from("# A2A 1.0 client requirements\n\n");
    let _ = writeln!(
        s,
        "<!-- Generated from harness-core/src/requirements (the table), the rule registry and the built-in catalog; do not edit by hand. Regenerate: `{}=1 cargo test -p a2a-harness-core --lib requirements::doc`. -->\n",
        super::doc::UPDATE_VAR
    );
    let _ = writeln!(
        s,
        "Every normative statement whose subject is the client, in {SPEC}: {} rows, C-01..C-{}. Each row is judged by rules of the harness, or is handed on to {} (a jku fetched over HTTPS, the webhook over TLS, credentials only over encrypted connections), or is not automatable, with the reason. `a2a-harness explain C-19` shows one row, `a2a-harness rules` the coverage at a glance, and every run reports a verdict per row (the compatibility section of `index.json`, `summary.md` and `index.html`, and the closing line `A2A client: MUST a/b SHOULD c/d MAY e/f`; see [`reports/README.md`](../reports/README.md)).\n",
        REQUIREMENTS.len(),
        REQUIREMENTS.len(),
        super::FOLLOW_UP
    );
    let _ = writeln!(
        s,
        "The keyword is the specification's own; the level is what it counts as (MUST NOT is a MUST, SHOULD NOT a SHOULD). \"shared\" marks statements about implementations or deployments that a client must itself satisfy. A MAY row is permitted behaviour: the harness never fails it.\n"
    );

    let _ = writeln!(
        s,
        "## At a glance\n\n| level | rows | judged by rules | of which by catalog cases today | handed on | not automatable |\n| --- | --- | --- | --- | --- | --- |"
    );
    let by_level = coverage_by_level(|id| judged_in(catalog, &rules, id));
    for (level, c) in &by_level {
        let _ = writeln!(
            s,
            "| {level} | {} | {} | {} | {} | {} |",
            c.rows, c.by_rules, c.judged_by_catalog, c.handed_on, c.not_automatable
        );
    }
    let total =
        |f: fn(&super::LevelCoverage) -> usize| by_level.iter().map(|(_, c)| f(c)).sum::<usize>();
    let _ = writeln!(
        s,
        "| all | {} | {} | {} | {} | {} |\n",
        total(|c| c.rows),
        total(|c| c.by_rules),
        total(|c| c.judged_by_catalog),
        total(|c| c.handed_on),
        total(|c| c.not_automatable)
    );
    let _ = writeln!(
        s,
        "\"By catalog cases today\": every rule of the row has a checker and is judged in some catalog case (listed by one, or always-on: judged wherever its situation arises).\n"
    );

    for level in LEVELS {
        let _ = writeln!(
            s,
            "## {level} rows\n\n| id | § | keyword | requirement | judged by |\n| --- | --- | --- | --- | --- |"
        );
        for r in REQUIREMENTS.iter().filter(|r| r.level == level) {
            let judged = match r.coverage {
                Coverage::Rules(_) => rules_cell(r, &rules),
                Coverage::HandedOn { .. } => "handed on (see below)".to_string(),
                Coverage::NotAutomatable { .. } => "not automatable (see below)".to_string(),
            };
            let note = r.note.map(|n| format!(" *Note: {n}.*")).unwrap_or_default();
            let _ = writeln!(
                s,
                "| {} | {} | {} | {}{} | {} |",
                r.id,
                cell(r.section),
                cell(r.keyword),
                cell(r.requirement),
                cell(&note),
                judged
            );
        }
        let _ = writeln!(s);
    }

    let _ = writeln!(
        s,
        "## Handed on to {}\n\n| id | § | keyword | requirement | why not here |\n| --- | --- | --- | --- | --- |",
        super::FOLLOW_UP
    );
    for r in &REQUIREMENTS {
        if let Coverage::HandedOn { why, .. } = r.coverage {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                r.id,
                cell(r.section),
                cell(r.keyword),
                cell(r.requirement),
                cell(why)
            );
        }
    }
    let _ = writeln!(
        s,
        "\n## Not automatable\n\n| id | § | keyword | requirement | why |\n| --- | --- | --- | --- | --- |"
    );
    for r in &REQUIREMENTS {
        if let Coverage::NotAutomatable { why } = r.coverage {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                r.id,
                cell(r.section),
                cell(r.keyword),
                cell(r.requirement),
                cell(why)
            );
        }
    }

    let _ = writeln!(
        s,
        "\n## The rules that judge them\n\nEach rule named above, with its level, its requirement and the catalog cases that judge it (a case lists the rule; an always-on rule is also judged in every other case where its situation arises).\n\n| rule | level | requirement | rows | judged in |\n| --- | --- | --- | --- | --- |"
    );
    let mut named: Vec<&str> = REQUIREMENTS
        .iter()
        .flat_map(|r| r.coverage.rules().iter().copied())
        .collect();
    // Registry order, then rules not in the registry yet.
    named.sort_by_key(|id| {
        (
            rules.iter().position(|r| r.id == *id).unwrap_or(usize::MAX),
            *id,
        )
    });
    named.dedup();
    for id in named {
        let rule = rules.iter().find(|r| r.id == id);
        let rows: Vec<&str> = super::covered_by(id).iter().map(|r| r.id).collect();
        let cases: Vec<String> = listing(catalog, id).iter().map(|c| c.id.clone()).collect();
        let judged = judged_by(rule, catalog);
        let judged = if cases.is_empty() {
            judged
        } else {
            format!("{judged}: {}", cases.join(", "))
        };
        let _ = writeln!(
            s,
            "| {id} | {} | {} | {} | {} |",
            rule.map_or("-".to_string(), |r| r.level.to_string()),
            cell(
                rule.map_or("(added by another work package of issue 21)", |r| r
                    .requirement)
            ),
            rows.join(", "),
            cell(&judged)
        );
    }
    let _ = writeln!(
        s,
        "\nThis file is `{DOC_PATH}`; the table it is generated from is `harness-core/src/requirements/table.rs`."
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn the_committed_doc_is_generated_from_the_table() {
        let catalog = crate::catalog::builtin_catalog().expect("the built-in catalog loads");
        let text = markdown(&catalog);
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(DOC_PATH);
        if std::env::var_os(UPDATE_VAR).is_some_and(|v| v == "1") {
            std::fs::write(&path, &text).expect("writing the doc");
            return;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == text,
            "{DOC_PATH} is stale: regenerate it with `{UPDATE_VAR}=1 cargo test -p a2a-harness-core --lib requirements::doc` and commit the result"
        );
    }

    #[test]
    fn the_doc_lists_every_row_and_says_why_for_the_rows_no_rule_judges() {
        let text = markdown(&[]);
        for r in &REQUIREMENTS {
            assert!(text.contains(&format!("| {} |", r.id)), "{}", r.id);
            if let Some(why) = r.coverage.not_judged() {
                let reason = why.split(": ").last().unwrap_or_default();
                assert!(text.contains(&cell(reason)), "{}: {reason}", r.id);
            }
        }
        // With no catalog no rule listed by cases is judged; always-on ones are.
        assert!(text.contains("| DLG-ROUTE-07 | MUST |"), "{text}");
        assert!(text.contains("listed in no case: NOT TESTED"), "{text}");
        // A rule without a checker is NOT TESTED, whatever the catalog.
        let mut r07 = registry()
            .into_iter()
            .find(|r| r.id == "DLG-ROUTE-07")
            .expect("DLG-ROUTE-07");
        r07.check = None;
        assert_eq!(judged_by(Some(&r07), &[]), "no checker yet: NOT TESTED");
    }
}
