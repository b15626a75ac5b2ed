//! What `a2a-harness rules` and `a2a-harness explain` print: the rules grouped by source with
//! the A2A client requirements at a glance, and one rule, history invariant, client requirement
//! (`C-19`) or case explained. The CLI only parses arguments and reads the report given with
//! `--report`; the text is made here.

use crate::catalog::listing;
use crate::invariants::INVARIANTS;
use crate::requirements::{self, Coverage, FOLLOW_UP, Requirement};
use crate::rules::{Level, Rule, registry};
use crate::scenario::Scenario;
use a2a_driver_contract::report::RunIndex;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// How `rules` groups the rules, for `--help`.
pub const GROUPING: &str = "Rules are grouped by source: first the A2A 1.0 specification, one group per chapter of the first section the source cites (§3, §5, ...), then seed 000 (A2A Task Delegation, in depth), seed 001 (streaming artifact exchange), then the R-rules of the A2A reference (R01..R57); a rule that cites several sources goes under the first of these it cites. The history invariants (HIST-*) follow, and last the A2A client requirements (C-01..C-68) at a glance: per level, how many requirements rules judge (and of those, how many catalog cases judge today), how many are handed on and how many are not automatable.";

/// Why nothing was found under a name.
#[derive(Debug, thiserror::Error)]
#[error(
    "no rule, requirement or case named {0:?} (see `a2a-harness rules`, docs/a2a-client-requirements.md and `a2a-harness list`)"
)]
pub struct Unknown(pub String);

/// The group of a rule's source (see [`GROUPING`]), ordered as `rules` prints them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SourceGroup {
    /// A chapter of the A2A 1.0 specification (`§3.6.1` is chapter 3).
    Spec(u32),
    /// Seed 000.
    Seed000,
    /// Seed 001.
    Seed001,
    /// The R-rules of the A2A reference.
    RRules,
    /// Anything else.
    Other,
}

impl SourceGroup {
    /// The group of a `source` string such as `R56; spec §5.2, §8.3` (spec chapter 5).
    pub fn of(source: &str) -> SourceGroup {
        if let Some(at) = source.find('§') {
            let digits: String = source[at + '§'.len_utf8()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if let Ok(chapter) = digits.parse() {
                return SourceGroup::Spec(chapter);
            }
        }
        let tokens: Vec<&str> = source
            .split([';', ','])
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .collect();
        let cites = |prefix: &str| tokens.iter().any(|t| t.starts_with(prefix));
        if cites("000") {
            SourceGroup::Seed000
        } else if cites("001") {
            SourceGroup::Seed001
        } else if tokens.iter().any(|t| {
            t.strip_prefix('R')
                .is_some_and(|n| n.starts_with(|c: char| c.is_ascii_digit()))
        }) {
            SourceGroup::RRules
        } else {
            SourceGroup::Other
        }
    }

    /// The heading `rules` prints for the group.
    pub fn heading(self) -> String {
        match self {
            SourceGroup::Spec(c) => format!("A2A 1.0 specification §{c}"),
            SourceGroup::Seed000 => "seed 000: A2A Task Delegation, in depth".into(),
            SourceGroup::Seed001 => {
                "seed 001: Implement A2A task delegation with streaming artifact exchange".into()
            }
            SourceGroup::RRules => "A2A reference rules (R01..R57)".into(),
            SourceGroup::Other => "other sources".into(),
        }
    }
}

/// How a rule stands in the catalog, as `rules` prints it: `N cases`, `always-on, listed in N`
/// or NOT TESTED.
fn catalog_status(r: &Rule, catalog: &[Scenario]) -> String {
    let n = listing(catalog, r.id).len();
    if r.check.is_none() && n > 0 {
        format!("NOT TESTED, listed in {n}")
    } else if r.check.is_none() || (n == 0 && !r.always) {
        "NOT TESTED".to_string()
    } else if r.always {
        format!("always-on, listed in {n}")
    } else {
        format!("{n} cases")
    }
}

/// One rule line of `rules`: id, level, status (with how often the report judged it),
/// requirement.
fn rule_line(
    id: &str,
    level: Level,
    mut status: String,
    requirement: &str,
    judged: Option<&BTreeMap<String, u64>>,
) -> String {
    if let Some(j) = judged {
        let _ = write!(status, ", evaluated in {}", j.get(id).copied().unwrap_or(0));
    }
    format!("{id:<18} {:<6} {status:<24} {requirement}\n", level.label())
}

/// The per-rule evaluated counts of a run's index.
pub fn evaluated_counts(index: &RunIndex) -> BTreeMap<String, u64> {
    index
        .rules
        .iter()
        .map(|r| (r.id.clone(), r.evaluated))
        .collect()
}

/// `a2a-harness rules`: every rule grouped by source ([`GROUPING`]) with how many catalog cases
/// list it (and with a report, in how many of its cases it was evaluated), the history
/// invariants, then the A2A client requirements at a glance.
pub fn rules_text(catalog: &[Scenario], report: Option<&RunIndex>) -> String {
    let judged = report.map(evaluated_counts);
    let rules = registry();
    let mut groups: BTreeMap<SourceGroup, Vec<&Rule>> = BTreeMap::new();
    for r in &rules {
        groups.entry(SourceGroup::of(r.source)).or_default().push(r);
    }
    let mut s = String::new();
    for (group, members) in &groups {
        let _ = writeln!(s, "== {} ==", group.heading());
        for r in members {
            s.push_str(&rule_line(
                r.id,
                r.level,
                catalog_status(r, catalog),
                r.requirement,
                judged.as_ref(),
            ));
        }
    }
    // The history invariants: judged over every run of explore and crash sweeps, and by `run`
    // with --invariants; no case lists them.
    let _ = writeln!(s, "== history invariants ==");
    for i in INVARIANTS {
        s.push_str(&rule_line(
            i.id,
            i.level,
            "history invariant".into(),
            i.requirement,
            judged.as_ref(),
        ));
    }
    s.push_str(&glance(catalog, &rules));
    s
}

/// The A2A client requirements at a glance: per level, how they are covered.
fn glance(catalog: &[Scenario], rules: &[Rule]) -> String {
    let by_level =
        requirements::coverage_by_level(|id| requirements::doc::judged_in(catalog, rules, id));
    let mut s = format!(
        "== A2A 1.0 client requirements (C-01..C-{}; {}) ==\n",
        requirements::REQUIREMENTS.len(),
        requirements::DOC_PATH
    );
    let mut all = requirements::LevelCoverage::default();
    for (level, c) in &by_level {
        let _ = writeln!(
            s,
            "{:<6} {:>2} rows: {:>2} judged by rules ({:>2} by catalog cases today), {:>2} handed on, {} not automatable",
            level.label(),
            c.rows,
            c.by_rules,
            c.judged_by_catalog,
            c.handed_on,
            c.not_automatable
        );
        all.rows += c.rows;
        all.by_rules += c.by_rules;
        all.judged_by_catalog += c.judged_by_catalog;
        all.handed_on += c.handed_on;
        all.not_automatable += c.not_automatable;
    }
    let _ = writeln!(
        s,
        "all    {} rows: {} judged by rules ({} by catalog cases today), {} handed on to {FOLLOW_UP}, {} not automatable (`a2a-harness explain C-NN`)",
        all.rows, all.by_rules, all.judged_by_catalog, all.handed_on, all.not_automatable
    );
    s
}

/// A requirement row in one line: `C-18 (MUST, §8.3.2 (3)): The URL ...`.
fn row_line(r: &Requirement) -> String {
    format!("{} ({}, {}): {}", r.id, r.keyword, r.section, r.requirement)
}

/// `a2a-harness explain WHAT`: a rule (its requirement, source, checker, the requirement rows
/// it judges and the cases that list it), a history invariant, a client requirement (`C-19`:
/// section, keyword, paraphrase, coverage and the cases that judge its rules) or a case. With
/// a report (and where it is), the rule's evaluated count or the requirement's status there.
pub fn explain_text(
    catalog: &[Scenario],
    what: &str,
    report: Option<(&RunIndex, &str)>,
) -> Result<String, Unknown> {
    let mut out = String::new();
    let rules = registry();
    if let Some(r) = rules.iter().find(|r| r.id == what) {
        let _ = writeln!(
            out,
            "{} ({:?})\n  {}\n  source: {}\n  checker: {}",
            r.id,
            r.level,
            r.requirement,
            r.source,
            if r.check.is_some() {
                "yes"
            } else {
                "none yet (NOT TESTED)"
            }
        );
        let rows = requirements::covered_by(r.id);
        if rows.is_empty() {
            let _ = writeln!(
                out,
                "  A2A client requirements: none (it judges no row C-01..C-68)"
            );
        } else {
            let _ = writeln!(out, "  A2A client requirements it judges ({}):", rows.len());
            for row in rows {
                let _ = writeln!(out, "    {}", row_line(row));
            }
        }
        let listed = listing(catalog, r.id);
        if r.always {
            let _ = writeln!(
                out,
                "  always-on: judged in every case where its situation arises (of {} catalog cases)",
                catalog.len()
            );
        }
        let _ = writeln!(out, "  listed in {} cases:", listed.len());
        for s in &listed {
            let _ = writeln!(out, "  case {}: {}", s.id, s.title);
        }
        if let Some((index, from)) = report {
            let j = evaluated_counts(index);
            let _ = writeln!(
                out,
                "  evaluated in {} cases of the run in {from}",
                j.get(r.id).copied().unwrap_or(0)
            );
        }
        return Ok(out);
    }
    if let Some(i) = INVARIANTS.iter().find(|i| i.id == what) {
        let _ = writeln!(
            out,
            "{} ({:?})\n  {}\n  source: {}\n  history invariant: judged over a whole case's evidence, needing no expected outcome, in `explore`, `run --crash-sweep`, `run --crash-at-event` and `run --invariants`; no case lists it",
            i.id, i.level, i.requirement, i.source
        );
        return Ok(out);
    }
    if let Some(req) = requirements::find(what) {
        return Ok(explain_requirement(catalog, &rules, req, report));
    }
    let Some(s) = catalog.iter().find(|s| s.id == what) else {
        return Err(Unknown(what.to_string()));
    };
    let _ = writeln!(
        out,
        "{} — {}\n  file: {}{}\n  rules: {}\n  agents: {}\n  delegations: {}",
        s.id,
        s.title,
        s.file.display(),
        if s.local_dir.is_some() {
            ""
        } else {
            " (built in)"
        },
        s.rules.join(", "),
        s.network
            .agents
            .iter()
            .map(|a| a.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        s.delegations
            .iter()
            .map(|d| d.id.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(c) = &s.crash {
        let _ = writeln!(out, "  crash: {:?}", c.trigger);
    }
    Ok(out)
}

/// `explain C-19`.
fn explain_requirement(
    catalog: &[Scenario],
    rules: &[Rule],
    req: &Requirement,
    report: Option<(&RunIndex, &str)>,
) -> String {
    let mut out = format!(
        "{} ({}): {}\n  {}\n  keyword: {}, counted as {} (A2A 1.0 client requirement; see {})\n",
        req.id,
        req.level,
        req.section,
        req.requirement,
        req.keyword,
        req.level,
        requirements::DOC_PATH
    );
    if let Some(n) = req.note {
        let _ = writeln!(out, "  note: {n}");
    }
    match req.coverage {
        Coverage::Rules(ids) => {
            let _ = writeln!(out, "  judged by:");
            let mut cases: Vec<(&str, &str, Vec<&str>)> = Vec::new();
            for id in ids {
                let Some(r) = rules.iter().find(|r| r.id == *id) else {
                    let _ = writeln!(
                        out,
                        "    {id}: not in the registry yet (another work package adds it)"
                    );
                    continue;
                };
                let _ = writeln!(
                    out,
                    "    {} ({}, {}): {}",
                    r.id,
                    r.level,
                    requirements::doc::judged_by(Some(r), catalog),
                    r.requirement
                );
                for s in catalog.iter().filter(|s| s.rules.iter().any(|x| x == r.id)) {
                    match cases.iter_mut().find(|(c, _, _)| *c == s.id) {
                        Some((_, _, by)) => by.push(r.id),
                        None => cases.push((&s.id, &s.title, vec![r.id])),
                    }
                }
            }
            let always: Vec<&str> = ids
                .iter()
                .copied()
                .filter(|id| {
                    rules
                        .iter()
                        .any(|r| r.id == *id && r.always && r.check.is_some())
                })
                .collect();
            if !always.is_empty() {
                let _ = writeln!(
                    out,
                    "  always-on: {} judged in every case where its situation arises",
                    always.join(", ")
                );
            }
            let _ = writeln!(
                out,
                "  catalog cases that list these rules ({}):",
                cases.len()
            );
            for (id, title, by) in &cases {
                let _ = writeln!(out, "    {id}: {title} ({})", by.join(", "));
            }
        }
        _ => {
            let _ = writeln!(
                out,
                "  NOT TESTED: {}",
                req.coverage.not_judged().unwrap_or_default()
            );
        }
    }
    if let Some((index, from)) = report {
        match index
            .compatibility
            .as_ref()
            .and_then(|c| c.requirements.iter().find(|v| v.id == req.id))
        {
            Some(v) => {
                let _ = writeln!(
                    out,
                    "  in the run in {from}: {} ({})",
                    v.status,
                    crate::report::compatibility::evidence_text(v)
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "  the run in {from} has no compatibility section (written before it)"
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_group_spec_first_then_seeds_then_r_rules() {
        assert_eq!(SourceGroup::of("spec §8.3.2 (3, 4)"), SourceGroup::Spec(8));
        assert_eq!(
            SourceGroup::of("R56; spec §5.2, §8.3"),
            SourceGroup::Spec(5)
        );
        assert_eq!(SourceGroup::of("R02; spec §3.6.1"), SourceGroup::Spec(3));
        assert_eq!(
            SourceGroup::of("000 Sending; 001 Retry"),
            SourceGroup::Seed000
        );
        assert_eq!(SourceGroup::of("R34; 001 Don'ts"), SourceGroup::Seed001);
        assert_eq!(SourceGroup::of("000; 001"), SourceGroup::Seed000);
        assert_eq!(SourceGroup::of("R01, R05, R06, R07"), SourceGroup::RRules);
        assert_eq!(SourceGroup::of("issue 14"), SourceGroup::Other);
        assert!(SourceGroup::Spec(14) < SourceGroup::Seed000);
        assert!(SourceGroup::Seed001 < SourceGroup::RRules);
    }

    #[test]
    fn rules_lists_every_rule_once_under_its_group_and_ends_with_the_glance() {
        let text = rules_text(&[], None);
        for r in registry() {
            let n = text
                .lines()
                .filter(|l| l.split_whitespace().next() == Some(r.id))
                .count();
            assert_eq!(n, 1, "{}", r.id);
        }
        let spec = text.find("== A2A 1.0 specification §3 ==").unwrap();
        let seed = text.find("== seed 000").unwrap();
        let r = text.find("== A2A reference rules").unwrap();
        assert!(spec < seed && seed < r, "{text}");
        let glance = text.split("== A2A 1.0 client requirements").nth(1).unwrap();
        assert!(glance.contains("MUST   30 rows"), "{glance}");
        assert!(
            glance.contains("all    68 rows: 62 judged by rules"),
            "{glance}"
        );
        assert!(glance.contains("3 handed on"), "{glance}");
    }

    #[test]
    fn explain_shows_a_requirement_and_the_rows_of_a_rule() {
        let c19 = explain_text(&[], "C-19", None).unwrap();
        assert!(c19.starts_with("C-19 (MUST): §8.3.2 (4)"), "{c19}");
        assert!(c19.contains("DLG-ROUTE-07 (MUST"), "{c19}");
        let c55 = explain_text(&[], "C-55", None).unwrap();
        assert!(
            c55.contains(
                "NOT TESTED: handed on to a follow-up of the transport-security work (#23)"
            ),
            "{c55}"
        );
        let route07 = explain_text(&[], "DLG-ROUTE-07", None).unwrap();
        assert!(route07.contains("    C-18 (MUST, §8.3.2 (3))"), "{route07}");
        assert!(route07.contains("    C-19 (MUST, §8.3.2 (4)"), "{route07}");
        let limit = explain_text(&[], "DLG-LIMIT-01", None).unwrap();
        assert!(limit.contains("A2A client requirements: none"), "{limit}");
        assert!(explain_text(&[], "C-99", None).is_err());
    }
}
