//! The run index `index.json` that `a2a-harness run` writes into its report directory
//! ([`RunIndex`], `schema_version` [`INDEX_SCHEMA_VERSION`]), and the verdict and level
//! vocabulary it uses.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// The `schema_version` of the [`RunIndex`] this crate describes. It changes when a field is
/// removed or changes meaning; added fields keep it.
pub const INDEX_SCHEMA_VERSION: u32 = 1;

/// `index.json`: the run, its totals, the delegator × case matrix, every case and every rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunIndex {
    /// [`INDEX_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The tool that wrote the report.
    pub tool: Tool,
    /// The run's parameters and timing.
    pub run: RunInfo,
    /// Verdict counts.
    pub totals: Totals,
    /// Delegator command ⇒ case id ⇒ verdict.
    pub matrix: BTreeMap<String, BTreeMap<String, Verdict>>,
    /// Every case, in run order.
    pub cases: Vec<CaseSummary>,
    /// Every rule of the registry, with its coverage.
    pub rules: Vec<RuleSummary>,
    /// The rules broken in this run (MUST first, then by how many cases broke each): what the
    /// console, `summary.md` and `index.html` open with. Absent in reports written before it.
    #[serde(default)]
    pub rules_broken: Vec<BrokenRule>,
}

/// One rule of `index.json` `rules_broken`: a rule judged FAIL, NON-STRICT or UNKNOWN in at
/// least one case of the run, or `CONTRACT` for cases that failed with no rule to blame (the
/// delegator broke the driver contract, crashed or never started).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BrokenRule {
    /// Rule id, such as `DLG-ART-01`, or `CONTRACT`.
    pub id: String,
    /// How binding it is.
    pub level: Level,
    /// The requirement in one sentence.
    pub requirement: String,
    /// The cases that broke it, in run order.
    pub cases: Vec<String>,
    /// The evidence of the first of them, in words (expected, observed, witness entries).
    pub first_evidence: String,
}

/// `index.json` `tool`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Tool {
    /// `a2a-harness`.
    pub name: String,
    /// The harness's version.
    pub version: String,
}

/// `index.json` `run`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunInfo {
    /// The delegator command line as given.
    pub delegator: String,
    /// The run seed.
    pub seed: u64,
    /// Wall time of the whole run, in milliseconds.
    pub wall_ms: u64,
    /// When the run finished (RFC 3339, UTC).
    pub finished_at: String,
    /// The run was interrupted (Ctrl-C) before every selected case ran: the report holds
    /// only the cases that finished.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub incomplete: bool,
    /// The host the run ran on (empty in reports written before it was recorded).
    #[serde(default)]
    pub hostname: String,
}

/// `index.json` `totals`: the process exits [`HarnessExitCode::Failure`](crate::HarnessExitCode)
/// when `failed > 0`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Totals {
    /// Cases that are PASS, NON-STRICT or XFAIL.
    pub passed: u64,
    /// Cases that are FAIL, XPASS or UNKNOWN.
    pub failed: u64,
    /// Cases that are UNSUPPORTED.
    pub skipped: u64,
}

impl Totals {
    /// Count one case verdict.
    pub fn add(&mut self, v: Verdict) {
        if v.fails_run() {
            self.failed += 1;
        } else if matches!(v, Verdict::Unsupported | Verdict::NotExercised) {
            self.skipped += 1;
        } else {
            self.passed += 1;
        }
    }
}

/// One case of `index.json` `cases`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CaseSummary {
    /// Case id (`<id>@<seed>` for repeats).
    pub id: String,
    /// Case title.
    pub title: String,
    /// The case's verdict.
    pub verdict: Verdict,
    /// How long the case took.
    pub duration_ms: u64,
    /// The command that reproduces it.
    pub repro: String,
    /// The rules whose verdict is FAIL, NON-STRICT or UNKNOWN.
    pub failed_rules: Vec<FailedRule>,
    /// The case's own report, relative to the report directory (`cases/<id>.json`).
    pub file: String,
}

/// One entry of [`CaseSummary::failed_rules`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FailedRule {
    /// Rule id, such as `DLG-ART-08`.
    pub id: String,
    /// Its verdict in the case.
    pub verdict: Verdict,
}

/// One rule of `index.json` `rules`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RuleSummary {
    /// Stable rule id, such as `DLG-SEND-02`.
    pub id: String,
    /// How binding it is.
    pub level: Level,
    /// The requirement in one sentence.
    pub requirement: String,
    /// Where it comes from.
    pub source: String,
    /// How many catalog cases exercise it (the catalog size for always-on rules).
    pub cases: u64,
    /// `TESTED`, or `NOT TESTED` when `cases` is 0.
    pub status: Coverage,
    /// In how many cases of this run the rule was actually evaluated: judged PASS, FAIL or
    /// NON-STRICT on evidence that its situation arose (an always-on rule is evaluated only
    /// where that evidence appears; NOT EXERCISED, UNKNOWN and not-applicable do not count).
    #[serde(default)]
    pub evaluated: u64,
}

/// Whether any catalog case exercises a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(transform = crate::plain_enum)]
pub enum Coverage {
    /// At least one case exercises it.
    #[serde(rename = "TESTED")]
    Tested,
    /// No catalog case lists it, or it has no checker yet.
    #[serde(rename = "NOT TESTED")]
    NotTested,
}

impl Coverage {
    /// `TESTED` when `cases > 0`, else `NOT TESTED`.
    pub const fn of(cases: u64) -> Coverage {
        if cases == 0 {
            Coverage::NotTested
        } else {
            Coverage::Tested
        }
    }
}

/// How binding a rule is; ordered MUST, SHOULD, MAY.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[schemars(transform = crate::plain_enum)]
pub enum Level {
    /// A violation fails the case.
    #[serde(rename = "MUST")]
    Must,
    /// A violation makes the case NON-STRICT.
    #[serde(rename = "SHOULD")]
    Should,
    /// Optional.
    #[serde(rename = "MAY")]
    May,
}

impl Level {
    /// The label used in reports: `MUST`, `SHOULD` or `MAY`.
    pub const fn label(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::Should => "SHOULD",
            Level::May => "MAY",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// The verdict of a case or of a rule in a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(transform = crate::plain_enum)]
pub enum Verdict {
    /// Every rule held.
    #[serde(rename = "PASS")]
    Pass,
    /// A MUST rule was broken.
    #[serde(rename = "FAIL")]
    Fail,
    /// Only SHOULD rules were broken.
    #[serde(rename = "NON-STRICT")]
    NonStrict,
    /// The delegator declined through the contract (`error` code `unsupported`).
    #[serde(rename = "UNSUPPORTED")]
    Unsupported,
    /// Failed, and listed as known-failing.
    #[serde(rename = "XFAIL")]
    XFail,
    /// Passed, but listed as known-failing: the list is stale.
    #[serde(rename = "XPASS")]
    XPass,
    /// Nothing observed before the bound.
    #[serde(rename = "UNKNOWN")]
    Unknown,
    /// A rule the case lists was not exercised because the delegator legitimately took another
    /// path (for example push instead of polling); it does not fail the run.
    #[serde(rename = "NOT EXERCISED")]
    NotExercised,
}

impl Verdict {
    /// Every verdict.
    pub const ALL: [Verdict; 8] = [
        Verdict::Pass,
        Verdict::Fail,
        Verdict::NonStrict,
        Verdict::Unsupported,
        Verdict::XFail,
        Verdict::XPass,
        Verdict::Unknown,
        Verdict::NotExercised,
    ];

    /// The label used in reports, such as `NON-STRICT`.
    pub const fn label(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::NonStrict => "NON-STRICT",
            Verdict::Unsupported => "UNSUPPORTED",
            Verdict::XFail => "XFAIL",
            Verdict::XPass => "XPASS",
            Verdict::Unknown => "UNKNOWN",
            Verdict::NotExercised => "NOT EXERCISED",
        }
    }

    /// True when this verdict fails the run (FAIL, XPASS, UNKNOWN).
    pub const fn fails_run(self) -> bool {
        matches!(self, Verdict::Fail | Verdict::XPass | Verdict::Unknown)
    }

    /// True when a rule with this verdict is listed in [`CaseSummary::failed_rules`].
    pub const fn is_listed_as_failed(self) -> bool {
        matches!(self, Verdict::Fail | Verdict::NonStrict | Verdict::Unknown)
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_labels_are_the_serde_names() {
        for v in Verdict::ALL {
            assert_eq!(serde_json::to_value(v).unwrap(), v.label());
        }
    }

    #[test]
    fn an_index_without_the_newer_fields_still_parses() {
        let old = serde_json::json!({
            "schema_version": 1,
            "tool": {"name": "a2a-harness", "version": "0.1.0"},
            "run": {"delegator": "d", "seed": 1, "wall_ms": 5, "finished_at": "2026-01-01T00:00:00Z"},
            "totals": {"passed": 0, "failed": 0, "skipped": 0},
            "matrix": {},
            "cases": [],
            "rules": []
        });
        let index: RunIndex = serde_json::from_value(old).unwrap();
        assert!(index.rules_broken.is_empty());
        assert_eq!(index.run.hostname, "");
        for l in [Level::Must, Level::Should, Level::May] {
            assert_eq!(serde_json::to_value(l).unwrap(), l.label());
        }
        assert!(Level::Must < Level::Should && Level::Should < Level::May);
    }

    #[test]
    fn totals_count_as_the_readme_says() {
        let mut t = Totals::default();
        for v in Verdict::ALL {
            t.add(v);
        }
        assert_eq!(
            t,
            Totals {
                passed: 3,
                failed: 3,
                skipped: 2
            }
        );
        assert_eq!(Coverage::of(0), Coverage::NotTested);
        assert_eq!(
            serde_json::to_value(Coverage::NotTested).unwrap(),
            "NOT TESTED"
        );
    }
}
