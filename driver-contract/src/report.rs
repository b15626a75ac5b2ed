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
    /// The delegator as an A2A 1.0 client: a verdict per client requirement of the
    /// specification (C-01..C-68), from the rule verdicts of every case. Absent in reports
    /// written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compatibility: Option<Compatibility>,
}

/// `index.json` `compatibility`: the run's verdict on each client requirement of A2A 1.0,
/// modelled on the official TCK's `compatibility.json` (which tests servers).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Compatibility {
    /// What the requirements paraphrase (the specification and its commit).
    pub spec: String,
    /// Where every requirement is listed with its coverage (`docs/a2a-client-requirements.md`).
    pub doc: String,
    /// Per level (MUST, SHOULD, MAY): how many requirements have each status.
    pub levels: Vec<LevelTally>,
    /// Every requirement, C-01..C-68 in order.
    pub requirements: Vec<RequirementVerdict>,
}

/// The requirements of one level in [`Compatibility::levels`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LevelTally {
    /// MUST, SHOULD or MAY.
    pub level: Level,
    /// Requirements of this level (the denominator of the closing line).
    pub total: u64,
    /// PASS (the numerator of the closing line).
    pub pass: u64,
    /// FAIL.
    pub fail: u64,
    /// NOT EXERCISED.
    pub not_exercised: u64,
    /// NOT TESTED: handed on, not automatable, or a rule without a checker yet.
    pub not_tested: u64,
    /// Of the NOT TESTED: handed on to another issue.
    pub handed_on: u64,
    /// Of the NOT TESTED: not automatable.
    pub not_automatable: u64,
}

/// One requirement of [`Compatibility::requirements`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RequirementVerdict {
    /// `C-01` .. `C-68`.
    pub id: String,
    /// The section(s) of the specification.
    pub section: String,
    /// The keyword as the specification writes it (`MUST NOT`, `SHOULD (shared)`, ...).
    pub keyword: String,
    /// The level it counts as.
    pub level: Level,
    /// The requirement in one sentence.
    pub requirement: String,
    /// Its status in this run.
    pub status: RequirementStatus,
    /// The rules that judge it (empty when none does).
    pub rules: Vec<String>,
    /// The cases (result ids, with their binding such as `states.completed:rest`) whose verdicts
    /// on those rules counted, in run order.
    pub cases: Vec<String>,
    /// Why it has its status when that is not PASS or FAIL: the rules not judged in this run, or
    /// why no rule judges it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// For a FAIL the first failing case, for a PASS the first case that judged it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<RequirementEvidence>,
    /// The status over the cases of each binding of `run --binding` (absent without it).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub bindings: BTreeMap<String, RequirementStatus>,
}

/// The first evidence of a [`RequirementVerdict`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RequirementEvidence {
    /// The case (result id).
    pub case: String,
    /// The rule.
    pub rule: String,
    /// The rule's verdict in that case.
    pub verdict: Verdict,
    /// What should have happened (on failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// What happened (on failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<String>,
    /// Journal sequence numbers of the witness entries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub witnesses: Vec<u64>,
}

/// The status of a requirement in a run.
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
pub enum RequirementStatus {
    /// Every rule of it was judged PASS in some case and none broke.
    #[serde(rename = "PASS")]
    Pass,
    /// A rule of it was broken in some case (never for a MAY).
    #[serde(rename = "FAIL")]
    Fail,
    /// Some rule of it was not judged in this run.
    #[serde(rename = "NOT EXERCISED")]
    NotExercised,
    /// No rule judges it (handed on, not automatable) or one has no checker yet.
    #[serde(rename = "NOT TESTED")]
    NotTested,
}

impl RequirementStatus {
    /// Every status.
    pub const ALL: [RequirementStatus; 4] = [
        RequirementStatus::Pass,
        RequirementStatus::Fail,
        RequirementStatus::NotExercised,
        RequirementStatus::NotTested,
    ];

    /// The label used in reports, such as `NOT EXERCISED`.
    pub const fn label(self) -> &'static str {
        match self {
            RequirementStatus::Pass => "PASS",
            RequirementStatus::Fail => "FAIL",
            RequirementStatus::NotExercised => "NOT EXERCISED",
            RequirementStatus::NotTested => "NOT TESTED",
        }
    }
}

impl fmt::Display for RequirementStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// One rule of `index.json` `rules_broken`: a rule judged FAIL, NON-STRICT or UNKNOWN in at
/// least one case of the run (UNKNOWN not counting in a case the delegator declined), or
/// `CONTRACT` for cases that failed with no rule to blame (the delegator broke the driver
/// contract, crashed or never started).
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
    /// Every agent was served over TLS (`a2a-harness run --tls`); absent otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tls: bool,
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
    /// The rules whose verdict is FAIL, NON-STRICT or UNKNOWN (in a case the delegator declined,
    /// FAIL and NON-STRICT only: declining breaks no rule).
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
        for s in RequirementStatus::ALL {
            assert_eq!(serde_json::to_value(s).unwrap(), s.label());
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
        assert!(index.compatibility.is_none());
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
