//! The client requirements of A2A 1.0 as data: the 68 rows C-01..C-68 (every normative statement
//! of the specification whose subject is the client), each with its section, its keyword as the
//! specification writes it, the level it counts as, a paraphrase and its coverage: the rules of
//! the registry that judge it, or why no rule does (handed on to a follow-up of the transport-security work, or
//! not automatable).
//!
//! This table is the one definition: `a2a-harness explain C-19`, `a2a-harness rules` (the spec
//! coverage at a glance), the compatibility section of every report
//! ([`crate::report::compatibility`](mod@crate::report::compatibility)) and `docs/a2a-client-requirements.md` ([`doc`]) all read it.

pub mod doc;
mod table;

use crate::rules::Level;
pub use table::REQUIREMENTS;

/// What the rows paraphrase.
pub const SPEC: &str = "A2A 1.0: the specification at a2aproject/A2A commit 16ba526 (v1.0.1 plus §7.6.4) and specification/a2a.proto";

/// Where the rows are listed for readers, generated from this table ([`doc::markdown`]).
pub const DOC_PATH: &str = "docs/a2a-client-requirements.md";

/// Who the rows that transport security left open are handed to (a jku fetched over HTTPS, the
/// webhook over TLS, credentials only over encrypted connections).
pub const FOLLOW_UP: &str = "a follow-up of the transport-security work (#23)";

/// One client requirement of A2A 1.0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Requirement {
    /// `C-01` .. `C-68`.
    pub id: &'static str,
    /// The section(s) of the specification, such as `§8.3.2 (4); proto AgentInterface.tenant`.
    pub section: &'static str,
    /// The keyword as the specification writes it: `MUST`, `SHOULD NOT`, `MUST (shared)`, ...
    pub keyword: &'static str,
    /// The level it counts as (MUST NOT is a MUST, SHOULD NOT a SHOULD).
    pub level: Level,
    /// The requirement in one sentence (a paraphrase).
    pub requirement: &'static str,
    /// What judges it.
    pub coverage: Coverage,
    /// What the coverage leaves aside, when it leaves something.
    pub note: Option<&'static str>,
}

/// How a requirement is judged: exactly one of these per row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coverage {
    /// By these rules of the registry, together.
    Rules(&'static [&'static str]),
    /// Not here: handed on to another issue.
    HandedOn {
        /// Who it is handed to.
        to: &'static str,
        /// Why it is not judged here.
        why: &'static str,
    },
    /// By no automated check, for this reason.
    NotAutomatable {
        /// Why.
        why: &'static str,
    },
}

impl Coverage {
    /// The rules that judge it (none for the other kinds).
    pub fn rules(&self) -> &'static [&'static str] {
        match self {
            Coverage::Rules(r) => r,
            _ => &[],
        }
    }

    /// Why no rule judges it, in words (`None` for [`Coverage::Rules`]).
    pub fn not_judged(&self) -> Option<String> {
        match self {
            Coverage::Rules(_) => None,
            Coverage::HandedOn { to, why } => Some(format!("handed on to {to}: {why}")),
            Coverage::NotAutomatable { why } => Some(format!("not automatable: {why}")),
        }
    }

    /// `rules`, `handed on` or `not automatable`.
    pub fn kind(&self) -> &'static str {
        match self {
            Coverage::Rules(_) => "rules",
            Coverage::HandedOn { .. } => "handed on",
            Coverage::NotAutomatable { .. } => "not automatable",
        }
    }
}

/// Every requirement, C-01..C-68 in order.
pub fn requirements() -> &'static [Requirement] {
    &REQUIREMENTS
}

/// The requirement with this id (`C-19`).
pub fn find(id: &str) -> Option<&'static Requirement> {
    REQUIREMENTS.iter().find(|r| r.id == id)
}

/// The requirements a rule judges (its rows), in row order.
pub fn covered_by(rule: &str) -> Vec<&'static Requirement> {
    REQUIREMENTS
        .iter()
        .filter(|r| r.coverage.rules().contains(&rule))
        .collect()
}

/// How the rows of one level are covered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LevelCoverage {
    /// Rows of the level.
    pub rows: usize,
    /// Covered by rules.
    pub by_rules: usize,
    /// Of those, every rule has a checker and is judged in some catalog case (listed by one, or
    /// always-on).
    pub judged_by_catalog: usize,
    /// Handed on.
    pub handed_on: usize,
    /// Not automatable.
    pub not_automatable: usize,
}

/// The levels in report order.
pub const LEVELS: [Level; 3] = [Level::Must, Level::Should, Level::May];

/// How the rows of each level are covered ([`LEVELS`] order), given which rules are judged in
/// some catalog case.
pub fn coverage_by_level(judged_in_catalog: impl Fn(&str) -> bool) -> Vec<(Level, LevelCoverage)> {
    LEVELS
        .iter()
        .map(|&level| {
            let mut c = LevelCoverage::default();
            for r in REQUIREMENTS.iter().filter(|r| r.level == level) {
                c.rows += 1;
                match r.coverage {
                    Coverage::Rules(rules) => {
                        c.by_rules += 1;
                        if rules.iter().all(|id| judged_in_catalog(id)) {
                            c.judged_by_catalog += 1;
                        }
                    }
                    Coverage::HandedOn { .. } => c.handed_on += 1,
                    Coverage::NotAutomatable { .. } => c.not_automatable += 1,
                }
            }
            (level, c)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::registry;
    use std::collections::BTreeSet;

    #[test]
    fn the_rows_are_c01_to_c68_each_once_with_the_spec_counts() {
        let ids: Vec<&str> = REQUIREMENTS.iter().map(|r| r.id).collect();
        let want: Vec<String> = (1..=68).map(|i| format!("C-{i:02}")).collect();
        assert_eq!(ids, want);
        let unique: BTreeSet<&str> = ids.iter().copied().collect();
        assert_eq!(unique.len(), 68);
        let count = |l: Level| REQUIREMENTS.iter().filter(|r| r.level == l).count();
        // 30 MUST / MUST NOT, 31 SHOULD / SHOULD NOT, 7 MAY.
        assert_eq!(
            (count(Level::Must), count(Level::Should), count(Level::May)),
            (30, 31, 7)
        );
        for r in &REQUIREMENTS {
            let kw = r.keyword.to_uppercase();
            let level_word = match r.level {
                Level::Must => "MUST",
                Level::Should => "SHOULD",
                Level::May => "MAY",
            };
            assert!(
                kw.starts_with(level_word),
                "{}: keyword {:?} vs level {level_word}",
                r.id,
                r.keyword
            );
            assert!(
                !r.requirement.is_empty() && !r.section.is_empty(),
                "{}",
                r.id
            );
        }
    }

    #[test]
    fn every_rule_a_row_names_is_in_the_registry() {
        let known: BTreeSet<&str> = registry().iter().map(|r| r.id).collect();
        for r in &REQUIREMENTS {
            if let Coverage::Rules(rules) = r.coverage {
                assert!(!rules.is_empty(), "{}: no rule", r.id);
                for id in rules {
                    assert!(known.contains(id), "{}: {id} is not in the registry", r.id);
                }
            }
        }
    }

    #[test]
    fn every_rule_whose_source_is_a_spec_section_maps_a_row() {
        // Every new rule of issue 21 cites its spec section as its source and judges a row;
        // so does every older rule the rows name.
        let named: BTreeSet<&str> = REQUIREMENTS
            .iter()
            .flat_map(|r| r.coverage.rules().iter().copied())
            .collect();
        let new_rules = [
            "DLG-SEND-10",
            "DLG-CARD-01",
            "DLG-CARD-02",
            "DLG-CARD-03",
            "DLG-CARD-04",
            "DLG-CARD-05",
            "DLG-ROUTE-07",
            "DLG-ROUTE-08",
            "DLG-ROUTE-09",
            "DLG-EXT-01",
            "DLG-EXT-02",
            "DLG-WIRE-02",
            "DLG-WIRE-03",
            "DLG-REST-01",
            "DLG-REST-02",
            "DLG-CTX-01",
            "DLG-CTX-02",
            "DLG-CTX-03",
            "DLG-PUSH-01",
            "DLG-PUSH-02",
            "DLG-PUSH-03",
            "DLG-SECRET-01",
            "DLG-AUTH-03",
            "DLG-AUTH-04",
            "DLG-UNTRUSTED-02",
        ];
        for id in new_rules {
            assert!(named.contains(id), "{id} maps no requirement row");
        }
        for r in registry() {
            if r.source.starts_with("spec §") {
                assert!(
                    named.contains(r.id) || r.id == "DLG-ROUTE-06",
                    "{} cites the spec ({}) but judges no row",
                    r.id,
                    r.source
                );
            }
        }
    }

    #[test]
    fn coverage_is_exactly_one_kind_and_the_not_judged_rows_say_why() {
        let handed: Vec<&str> = REQUIREMENTS
            .iter()
            .filter(|r| matches!(r.coverage, Coverage::HandedOn { .. }))
            .map(|r| r.id)
            .collect();
        assert_eq!(handed, ["C-30", "C-48", "C-55"]);
        let not: Vec<&str> = REQUIREMENTS
            .iter()
            .filter(|r| matches!(r.coverage, Coverage::NotAutomatable { .. }))
            .map(|r| r.id)
            .collect();
        assert_eq!(not, ["C-47", "C-60", "C-67"]);
        for r in &REQUIREMENTS {
            assert_eq!(
                r.coverage.not_judged().is_some(),
                r.coverage.rules().is_empty(),
                "{}",
                r.id
            );
        }
        let all = coverage_by_level(|_| true);
        let sum = |f: fn(&LevelCoverage) -> usize| all.iter().map(|(_, c)| f(c)).sum::<usize>();
        assert_eq!(sum(|c| c.rows), 68);
        assert_eq!(sum(|c| c.by_rules), 62);
        assert_eq!(sum(|c| c.handed_on), 3);
        assert_eq!(sum(|c| c.not_automatable), 3);
        assert_eq!(sum(|c| c.judged_by_catalog), 62);
        assert_eq!(
            covered_by("DLG-ROUTE-07")
                .iter()
                .map(|r| r.id)
                .collect::<Vec<_>>(),
            ["C-18", "C-19"]
        );
        assert_eq!(find("C-19").map(|r| r.level), Some(Level::Must));
        assert!(find("C-69").is_none());
    }
}
