//! `index.json`: the contract's [`RunIndex`], built from case results (by `run` and by `report
//! merge` alike).

use super::{ReportRun, compatibility, evaluated, rules_broken, totals};
use crate::rules::registry;
use crate::runner::CaseResult;
use a2a_driver_contract::report::{
    CaseSummary, Coverage, FailedRule, INDEX_SCHEMA_VERSION, RuleSummary, RunIndex, RunInfo, Tool,
};
use std::collections::BTreeMap;

/// The run index `index.json` of a run.
pub fn run_index(
    run: &ReportRun<'_>,
    coverage: &BTreeMap<&'static str, usize>,
    results: &[CaseResult],
) -> RunIndex {
    let rules = registry()
        .iter()
        .map(|r| {
            let cases = coverage.get(r.id).copied().unwrap_or(0) as u64;
            RuleSummary {
                id: r.id.to_string(),
                level: r.level,
                requirement: r.requirement.to_string(),
                source: r.source.to_string(),
                cases,
                status: Coverage::of(cases),
                evaluated: 0,
            }
        })
        .collect();
    let info = RunInfo {
        delegator: run.delegator.to_string(),
        seed: run.seed,
        wall_ms: run.wall_ms,
        finished_at: a2a_protocol::Timestamp::now().to_rfc3339(),
        incomplete: run.incomplete,
        hostname: hostname(),
        tls: results.iter().any(|r| r.tls),
    };
    index_of(info, rules, results)
}

/// The index of `results` run as `run`, with the catalog coverage of `rules` (their
/// `evaluated` counts are recomputed from `results`, as are the rules broken and the
/// compatibility section: a merged report computes them from the merged cases).
pub(super) fn index_of(
    run: RunInfo,
    mut rules: Vec<RuleSummary>,
    results: &[CaseResult],
) -> RunIndex {
    let judged = evaluated(results);
    for r in &mut rules {
        r.evaluated = judged.get(&r.id).copied().unwrap_or(0);
    }
    let cases = results
        .iter()
        .map(|r| CaseSummary {
            id: r.id.clone(),
            title: r.title.clone(),
            verdict: r.verdict,
            duration_ms: r.duration_ms,
            repro: r.repro.clone(),
            failed_rules: r
                .broken_rules()
                .map(|v| FailedRule {
                    id: v.id.clone(),
                    verdict: v.verdict,
                })
                .collect(),
            file: format!("cases/{}.json", r.id),
        })
        .collect();
    RunIndex {
        schema_version: INDEX_SCHEMA_VERSION,
        tool: Tool {
            name: "a2a-harness".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        totals: totals(results),
        matrix: BTreeMap::from([(
            run.delegator.clone(),
            results.iter().map(|r| (r.id.clone(), r.verdict)).collect(),
        )]),
        run,
        cases,
        rules,
        rules_broken: rules_broken(results),
        compatibility: Some(compatibility(results)),
    }
}

/// This machine's host name (`/proc/sys/kernel/hostname`, `/etc/hostname`, `$HOSTNAME`), or
/// `localhost` when none says.
pub fn hostname() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .chain(std::env::var("HOSTNAME").ok())
        .map(|s| s.trim().to_string())
        .find(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}
