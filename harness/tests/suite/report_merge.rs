//! `a2a-harness report merge`: two shard runs merged from their files give the verdicts, totals,
//! rule counts, rules broken and A2A client compatibility of one run of their union; shards that are not parts of one run
//! are refused with exit 2 and a message saying why.

use crate::common;
use crate::report_support;

use a2a_driver_contract::report::RunIndex;
use a2a_harness_core::report::{ReportRun, write_all};
use a2a_harness_core::runner::CaseResult;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn write(dir: &Path, delegator: &str, results: &[CaseResult]) {
    write_all(
        dir,
        &ReportRun {
            delegator,
            seed: 1,
            wall_ms: 1000,
            incomplete: false,
        },
        &report_support::catalog(),
        results,
    )
    .unwrap();
}

/// A requirement as the merge test compares it: id, status, cases, first evidence's case and rule.
type RowSeen = (String, String, Vec<String>, Option<(String, String)>);

fn index(dir: &Path) -> RunIndex {
    serde_json::from_str(&std::fs::read_to_string(dir.join("index.json")).unwrap()).unwrap()
}

fn merge(args: &[&Path], out: &Path) -> (i32, String) {
    let o = Command::new(common::harness())
        .args(["report", "merge"])
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

#[test]
fn merged_shards_report_what_one_run_of_their_union_does() {
    let work = tempfile::tempdir().unwrap();
    let delegator = report_support::bugged_delegator();
    let a = [report_support::FAILING[0], report_support::PASSING[0]];
    let b = [report_support::FAILING[1], report_support::PASSING[1]];
    let union: Vec<&str> = a.iter().chain(&b).copied().collect();
    let mut runs =
        report_support::run_lists(&[&a, &b, &union], &delegator, &work.path().join("stores"))
            .into_iter();
    let (ra, rb, ru) = (
        runs.next().unwrap(),
        runs.next().unwrap(),
        runs.next().unwrap(),
    );
    let (sa, sb, su) = (
        work.path().join("shard-1"),
        work.path().join("shard-2"),
        work.path().join("union"),
    );
    write(&sa, &delegator, &ra);
    write(&sb, &delegator, &rb);
    write(&su, &delegator, &ru);

    let out = work.path().join("merged");
    let (code, said) = merge(&[&sa, &sb], &out);
    assert_eq!(code, 1, "some case failed, as in the union run: {said}");
    assert!(
        said.contains("Rules broken") && said.contains("DLG-ART-01"),
        "{said}"
    );
    let (m, u) = (index(&out), index(&su));
    let verdicts = |i: &RunIndex| -> BTreeMap<String, String> {
        i.cases
            .iter()
            .map(|c| (c.id.clone(), c.verdict.label().to_string()))
            .collect()
    };
    assert_eq!(verdicts(&m), verdicts(&u));
    assert_eq!(m.totals, u.totals);
    assert_eq!(m.matrix, u.matrix);
    let evaluated = |i: &RunIndex| -> Vec<(String, u64)> {
        i.rules
            .iter()
            .map(|r| (r.id.clone(), r.evaluated))
            .collect()
    };
    assert_eq!(evaluated(&m), evaluated(&u));
    let broken = |i: &RunIndex| -> BTreeMap<String, Vec<String>> {
        i.rules_broken
            .iter()
            .map(|b| {
                let mut c = b.cases.clone();
                c.sort();
                (b.id.clone(), c)
            })
            .collect()
    };
    assert_eq!(broken(&m), broken(&u));
    // The compatibility section is recomputed from the merged cases: the same statuses, cases
    // and first evidence as one run of the union (evidence texts may name other ports).
    let compat = |i: &RunIndex| -> Vec<RowSeen> {
        i.compatibility
            .as_ref()
            .expect("a compatibility section")
            .requirements
            .iter()
            .map(|r| {
                (
                    r.id.clone(),
                    r.status.label().to_string(),
                    r.cases.clone(),
                    r.evidence
                        .as_ref()
                        .map(|e| (e.case.clone(), e.rule.clone())),
                )
            })
            .collect()
    };
    assert_eq!(compat(&m), compat(&u));
    let levels = |i: &RunIndex| i.compatibility.as_ref().map(|c| c.levels.clone());
    assert_eq!(levels(&m), levels(&u));
    let line = a2a_harness_core::report::compatibility_line(m.compatibility.as_ref().unwrap());
    assert!(
        said.contains(&line),
        "merge prints the A2A client line: {said}"
    );
    for f in ["junit.xml", "summary.md", "index.html"] {
        assert!(out.join(f).is_file(), "{f}");
    }
    for id in &union {
        assert!(
            out.join("cases").join(format!("{id}.json")).is_file(),
            "{id}"
        );
        assert!(
            out.join("journals").join(format!("{id}.html")).is_file(),
            "{id}"
        );
    }
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("## Rules broken") && summary.contains("| DLG-ART-01 | MUST | 2 ("));

    // Not parts of one run: a case in both shards, another seed, an output holding a report.
    let (code, said) = merge(&[&sa, &sa], &work.path().join("twice"));
    assert_eq!(code, 2, "{said}");
    assert!(said.contains("is in both") && said.contains(a[0]), "{said}");
    let reseeded = work.path().join("reseeded");
    std::fs::create_dir_all(reseeded.join("cases")).unwrap();
    let mut other = index(&sb);
    other.run.seed = 7;
    std::fs::write(
        reseeded.join("index.json"),
        serde_json::to_string(&other).unwrap(),
    )
    .unwrap();
    for c in &other.cases {
        std::fs::copy(sb.join(&c.file), reseeded.join(&c.file)).unwrap();
    }
    let (code, said) = merge(&[&sa, &reseeded], &work.path().join("seeds"));
    assert_eq!(code, 2, "{said}");
    assert!(
        said.contains("seed is \"1\"") && said.contains("\"7\""),
        "{said}"
    );
    let (code, said) = merge(&[&sa, &sb], &out);
    assert_eq!(code, 2, "{said}");
    assert!(said.contains("already holds a report"), "{said}");
    let mut newer = index(&sb);
    newer.schema_version += 1;
    std::fs::write(
        sb.join("index.json"),
        serde_json::to_string(&newer).unwrap(),
    )
    .unwrap();
    let (code, said) = merge(&[&sa, &sb], &work.path().join("schemas"));
    assert_eq!(code, 2, "{said}");
    assert!(said.contains("schema_version"), "{said}");
}
