//! Rust → SDK: the SDK's strict parser accepts every Rust-encoded value unchanged.

use super::*;

/// One item sent to the SDK's `check`, with its verdict.
pub(crate) struct Verdict {
    pub(crate) label: String,
    pub(crate) ty: ObjectType,
    pub(crate) sent: Value,
    pub(crate) verdict: Value,
}

/// The SDK's verdicts on [`rust_items`] and on [`zero_probes`], fetched once per test binary in
/// a single Python run.
pub(crate) fn sdk_verdicts() -> &'static (Vec<Verdict>, Vec<Verdict>) {
    static VERDICTS: OnceLock<(Vec<Verdict>, Vec<Verdict>)> = OnceLock::new();
    VERDICTS.get_or_init(|| {
        let items = rust_items();
        let probes = zero_probes();
        let batch: Vec<Value> = items
            .iter()
            .chain(&probes)
            .map(|(_, t, json)| json!({"type": t.name(), "json": json}))
            .collect();
        let out = oracle("check", Some(&Value::Array(batch)));
        let mut verdicts = out
            .as_array()
            .expect("check prints a JSON array")
            .clone()
            .into_iter();
        assert_eq!(
            verdicts.len(),
            items.len() + probes.len(),
            "check answered a different number of items"
        );
        let mut take = |list: Vec<(String, ObjectType, Value)>| -> Vec<Verdict> {
            list.into_iter()
                .map(|(label, ty, sent)| Verdict {
                    label,
                    ty,
                    sent,
                    verdict: verdicts.next().expect("counted above"),
                })
                .collect()
        };
        let items = take(items);
        let probes = take(probes);
        (items, probes)
    })
}

#[test]
fn rust_json_is_accepted_unchanged_by_the_sdk_parser() {
    let verdicts = &sdk_verdicts().0;
    let mut failures = Vec::new();
    for Verdict {
        label,
        ty,
        sent,
        verdict,
    } in verdicts
    {
        let mut problems = Vec::new();
        if verdict["ok"] != Value::Bool(true) {
            problems.push(format!(
                "rejected by the SDK: {}\n    sent: {sent}",
                verdict["error"].as_str().unwrap_or("(no error text)"),
            ));
        } else {
            match verdict["requiredViolations"].as_array() {
                None => problems.push(
                    "the oracle ran no REQUIRED-field check (SDK validator not importable?)".into(),
                ),
                Some(v) if !v.is_empty() => problems.push(format!(
                    "REQUIRED-field violations per the SDK: {}",
                    Value::Array(v.clone())
                )),
                Some(_) => {}
            }
            let (canonical, ours) = (normalise(&verdict["canonical"]), normalise(sent));
            if canonical != ours {
                problems.push(format!(
                    "the SDK's canonical form differs from what was sent\n{}",
                    differences("sent", &ours, "canonical", &canonical)
                ));
            }
        }
        // What this crate emits must also pass this crate's own strict check.
        let deviations = conformance(*ty, sent);
        if !deviations.is_empty() {
            let list: Vec<String> = deviations.iter().map(|d| format!("    {d}")).collect();
            problems.push(format!(
                "our own output has deviations:\n{}",
                list.join("\n")
            ));
        }
        if !problems.is_empty() {
            failures.push(format!(
                "{label} ({}):\n  {}",
                ty.name(),
                problems.join("\n  ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} Rust-encoded items did not cross Rust → SDK:\n\n{}",
        failures.len(),
        verdicts.len(),
        failures.join("\n\n")
    );
}
