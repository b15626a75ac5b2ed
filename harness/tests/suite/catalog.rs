//! The catalog loads strictly, and the reference delegator passes every MUST case.

use crate::common;

use a2a_harness_core::catalog::{load_catalog, parse_case};
use a2a_harness_core::rules::registry;
use a2a_harness_core::run::passes;
use a2a_harness_core::runner::{RunSettings, Verdict, run_case};
use a2a_harness_core::scenario::Scenario;
use a2a_protocol::Binding;
use std::path::Path;

#[test]
fn every_catalog_file_parses_and_cites_known_rules() {
    let cat = load_catalog(&common::root().join("scenarios")).expect("catalog loads");
    assert!(cat.len() >= 50, "catalog has {} cases", cat.len());
    let ids: Vec<&str> = registry().iter().map(|r| r.id).collect();
    for s in &cat {
        for r in &s.rules {
            assert!(ids.contains(&r.as_str()), "{} cites unknown rule {r}", s.id);
        }
    }
}

#[test]
fn every_rule_of_rules_md_is_in_the_registry() {
    let text = std::fs::read_to_string(common::root().join("../shared/rules.md"));
    let Ok(text) = text else {
        // shared/ sits beside the checkout in CI and on developer machines; without it there is
        // nothing to compare against, which the registry's own size check below still guards.
        assert!(registry().len() >= 59);
        return;
    };
    let ids: Vec<&str> = registry().iter().map(|r| r.id).collect();
    for line in text.lines() {
        if let Some(id) = line
            .strip_prefix("| DLG-")
            .and_then(|l| l.split_whitespace().next())
        {
            let id = format!("DLG-{id}");
            assert!(
                ids.contains(&id.as_str()),
                "rules.md names {id} but the registry does not"
            );
        }
    }
}

#[test]
fn malformed_scenario_names_file_line_and_field() {
    let text = "id = \"x\"\ntitle = \"t\"\nrules = [\"DLG-SEND-02\"]\n[network]\nseed = 1\n[[network.agent]]\nname = \"a\"\nbogus_key = 3\n";
    let err = Scenario::from_toml(Path::new("scenarios/bad.toml"), text)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("scenarios/bad.toml:8:"), "{err}");
    assert!(err.contains("bogus_key"), "{err}");
    let base = "id = \"x\"\ntitle = \"t\"\nrules = [\"DLG-SEND-02\"]\n[network]\n[[network.agent]]\nname = \"a\"\n";
    for (extra, needle) in [
        (
            "[[delegate]]\nid = \"d1\"\ncapability = \"s\"\ntext = \"t\"\nafter = \"d9\"\n",
            "after names no other delegation",
        ),
        (
            "[[delegate]]\nid = \"d1\"\ncapability = \"s\"\ntext = \"t\"\nexpect = { state = [\"COMPLETD\"] }\n",
            "COMPLETD",
        ),
        (
            "[[delegate]]\nid = \"d1\"\ncapability = \"s\"\ntext = \"t\"\nexpect = { escalates = \"maybe\" }\n",
            "escalates",
        ),
        (
            "[[delegate]]\nid = \"d1\"\ncapability = \"s\"\ntext = \" \"\n",
            "text must not be empty",
        ),
        (
            "[[delegate]]\nid = \"a/b\"\ncapability = \"s\"\ntext = \"t\"\n",
            "id must be",
        ),
        (
            "[[delegate]]\nid = \"d1\"\ncapability = \"s\"\ntext = \"t\"\ndeadline_in_ms = 9223372036854775807\n",
            "ten days",
        ),
        ("[[cancel]]\nid = \"nobody\"\n", "names no delegation"),
    ] {
        let err = Scenario::from_toml(Path::new("bad.toml"), &format!("{base}{extra}"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("bad.toml") && err.contains(needle),
            "{needle}: {err}"
        );
    }
    let text = "id = \"x\"\ntitle = \"t\"\nrules = [\"DLG-NOPE-01\"]\n[network]\n";
    let err = parse_case(Path::new("bad.toml"), text)
        .unwrap_err()
        .to_string();
    assert!(err.contains("DLG-NOPE-01"), "{err}");
}

#[test]
fn reference_delegator_passes_every_case_over_every_binding() {
    let cat = load_catalog(&common::root().join("scenarios")).expect("catalog loads");
    let delegator = format!("{} drive", common::delegator().display());
    let work = tempfile::tempdir().unwrap();
    // `run --binding all`: each case over each binding it has a meaning for.
    let passes: Vec<(Scenario, Binding)> = passes(&cat, &Binding::ALL)
        .into_iter()
        .map(|(s, b)| (s.clone(), b.expect("a binding pass")))
        .collect();
    for b in Binding::ALL {
        let n = passes.iter().filter(|(_, pb)| *pb == b).count();
        assert!(n >= 20, "only {n} cases run over {b}");
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let results = rt.block_on(async {
        let mut set = tokio::task::JoinSet::new();
        let sem = std::sync::Arc::new(tokio::sync::Semaphore::new(4));
        for (i, (s, b)) in passes.into_iter().enumerate() {
            let settings = RunSettings {
                delegator: delegator.clone(),
                seed: 1,
                work_dir: work.path().join(i.to_string()),
                binding: Some(b),
                tls: false,
            };
            let sem = sem.clone();
            set.spawn(async move {
                let _p = sem.acquire_owned().await;
                let mut r = run_case(&s, &settings).await;
                r.id = format!("{}:{b}", r.id);
                r
            });
        }
        let mut out = Vec::new();
        while let Some(r) = set.join_next().await {
            out.push(r.unwrap());
        }
        out
    });
    let mut failures = Vec::new();
    for r in &results {
        // The reference delegator breaks no rule at all: not a MUST, not a SHOULD.
        if r.verdict != Verdict::Pass {
            let rules: Vec<String> = r
                .rules
                .iter()
                .filter(|v| v.verdict != Verdict::Pass)
                .map(|v| {
                    format!(
                        "{} {}: expected {:?}, observed {:?}",
                        v.id,
                        v.verdict.label(),
                        v.expected,
                        v.observed
                    )
                })
                .collect();
            failures.push(format!(
                "{} {}: {:?} {:?}",
                r.id,
                r.verdict.label(),
                rules,
                r.notes
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "MUST failures of the reference delegator:\n{}",
        failures.join("\n")
    );
    assert_depth(&results);
}

/// Depth: every MUST rule is judged (PASS, FAIL or NON-STRICT, not merely listed) in at least
/// three catalog cases, every SHOULD in at least two; a case counts once whatever the bindings
/// it ran over. The catalog README's situation matrix shows how those cases differ.
fn assert_depth(results: &[a2a_harness_core::runner::CaseResult]) {
    let mut judged: std::collections::BTreeMap<&str, std::collections::BTreeSet<&str>> =
        Default::default();
    for r in results {
        let case = r.id.split(':').next().unwrap_or(&r.id);
        for v in &r.rules {
            if matches!(
                v.verdict,
                Verdict::Pass | Verdict::Fail | Verdict::NonStrict
            ) {
                judged.entry(v.id.as_str()).or_default().insert(case);
            }
        }
    }
    let shallow: Vec<String> = registry()
        .iter()
        .filter_map(|r| {
            let need = match r.level {
                a2a_harness_core::rules::Level::Must => 3,
                a2a_harness_core::rules::Level::Should => 2,
                _ => return None,
            };
            let n = judged.get(r.id).map_or(0, |c| c.len());
            (n < need).then(|| {
                format!(
                    "{} ({:?}): judged in {n} case(s), needs {need}",
                    r.id, r.level
                )
            })
        })
        .collect();
    assert!(
        shallow.is_empty(),
        "rules judged in too few catalog cases:\n{}",
        shallow.join("\n")
    );
}

#[test]
fn committed_scenario_schema_is_generated_from_the_types() {
    let path = common::root().join("scenarios/scenario.schema.json");
    let committed: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).expect("scenarios/scenario.schema.json"))
            .expect("valid JSON");
    assert_eq!(
        committed,
        a2a_harness_core::scenario::json_schema(),
        "scenarios/scenario.schema.json is stale: regenerate it with `a2a-harness schema > scenarios/scenario.schema.json`"
    );
}

#[test]
fn every_catalog_file_validates_against_the_schema() {
    let schema = a2a_harness_core::scenario::json_schema();
    let validator = jsonschema::validator_for(&schema).expect("the generated schema compiles");
    let mut files = Vec::new();
    let mut stack = vec![common::root().join("scenarios")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "toml") {
                files.push(p);
            }
        }
    }
    assert!(!files.is_empty());
    for f in files {
        let value: serde_json::Value =
            toml::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", f.display());
    }
    // And the schema rejects what the loader rejects: an unknown key.
    let bad: serde_json::Value = serde_json::json!({"id": "x", "title": "t", "rules": ["DLG-SEND-02"], "network": {}, "bogus": 1});
    assert!(!validator.is_valid(&bad));
}
