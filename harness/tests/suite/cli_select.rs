//! Selecting cases: several `--case` globs, `--rule`, `--partition` (the shards together are
//! the selection, each case once), and `rules`, `explain` and the report agreeing on counts.

use crate::common;

use assert_cmd::Command;
use serde_json::Value;
use std::collections::BTreeMap;

fn harness() -> Command {
    let mut c = Command::new(common::harness());
    c.current_dir(common::root())
        .env_remove("A2A_HARNESS_SCENARIOS");
    c
}

/// The case ids `list` prints for these arguments.
fn list(args: &[&str]) -> Vec<String> {
    let out = harness()
        .arg("list")
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8_lossy(&out)
        .lines()
        .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
        .collect()
}

#[test]
fn the_shards_of_list_are_the_selection_each_case_once() {
    for sel in [&[][..], &["--rule", "DLG-ART-04"][..]] {
        let all = list(sel);
        assert!(!all.is_empty());
        for mode in ["count", "hash"] {
            let mut seen = Vec::new();
            for k in 1..=3 {
                let p = format!("{mode}:{k}/3");
                let mut args = sel.to_vec();
                args.extend(["--partition", &p]);
                seen.extend(list(&args));
            }
            let n = seen.len();
            seen.sort();
            seen.dedup();
            assert_eq!(n, seen.len(), "{mode}: a case in two shards");
            assert_eq!(seen, all, "{mode}: the shards are not the selection");
        }
    }
    harness()
        .args(["list", "--partition", "count:4/3"])
        .assert()
        .code(2);
}

#[test]
fn several_case_globs_and_rules_select_their_union_and_intersection() {
    let states = list(&["--case", "states.*"]);
    let recovery = list(&["--case", "recovery.*"]);
    let both = list(&["--case", "states.*", "--case", "recovery.*"]);
    let mut want = [states.clone(), recovery].concat();
    want.sort();
    assert_eq!(both, want);
    // --rule: the cases that list the rule, as `explain` names them.
    let by_rule = list(&["--rule", "DLG-ART-04"]);
    let explained = harness()
        .args(["explain", "DLG-ART-04"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let mut named: Vec<String> = String::from_utf8_lossy(&explained)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("case "))
        .map(|l| l.split(':').next().unwrap_or("").to_string())
        .collect();
    named.sort();
    assert_eq!(by_rule, named);
    // Both: a case must match a glob and list the rule.
    let states_art04 = list(&["--case", "states.*", "--rule", "DLG-ART-04"]);
    assert!(
        states_art04
            .iter()
            .all(|c| states.contains(c) && by_rule.contains(c))
    );
    let err = harness()
        .args(["list", "--rule", "DLG-NOPE-99"])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    assert!(String::from_utf8_lossy(&err).contains("DLG-NOPE-99"));
}

/// The count `rules` prints for each rule ("N cases", "listed in N").
fn rules_counts() -> BTreeMap<String, usize> {
    let out = harness()
        .arg("rules")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8_lossy(&out)
        .lines()
        // Rule lines only: the history invariants (no case lists them), group headings and the
        // requirements at a glance are not.
        .filter(|l| l.starts_with("DLG-"))
        .map(|l| {
            let id = l.split_whitespace().next().unwrap().to_string();
            let words: Vec<&str> = l.split_whitespace().collect();
            let n = words
                .windows(2)
                .find_map(|w| match (w[0], w[1]) {
                    (n, "cases") => n.parse().ok(),
                    ("in", n) => n.trim_end_matches(',').parse().ok(),
                    _ => None,
                })
                .unwrap_or(0);
            (id, n)
        })
        .collect()
}

#[test]
fn rules_explain_and_the_report_agree_on_counts() {
    let counts = rules_counts();
    assert!(counts.len() >= 59, "{counts:?}");
    for (id, n) in &counts {
        let out = harness()
            .args(["explain", id])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let text = String::from_utf8_lossy(&out);
        assert!(
            text.contains(&format!("listed in {n} cases:")),
            "{id}: rules says {n}; explain says {text}"
        );
        let cases = text.lines().filter(|l| l.starts_with("  case ")).count();
        assert_eq!(cases, *n, "{id}: {text}");
    }
    // The report's coverage of a rule that is not always-on is the same count.
    let dir = tempfile::tempdir().unwrap();
    let delegator = format!("{} drive", common::delegator().display());
    harness()
        .args([
            "run",
            "--case",
            "states.rejected",
            "--delegator",
            &delegator,
            "--out",
        ])
        .arg(dir.path())
        .assert()
        .success();
    let index: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("index.json")).unwrap()).unwrap();
    let always: Vec<&str> = a2a_harness_core::rules::registry()
        .iter()
        .filter(|r| r.always || r.check.is_none())
        .map(|r| r.id)
        .collect();
    for r in index["rules"].as_array().unwrap() {
        let id = r["id"].as_str().unwrap();
        if always.contains(&id) {
            continue;
        }
        assert_eq!(
            r["cases"].as_u64().unwrap() as usize,
            counts[id],
            "{id}: index.json vs rules"
        );
    }
}
