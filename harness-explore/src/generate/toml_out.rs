//! Writing a scenario as catalog TOML: the plain serialization with every field that holds its
//! default left out (an agent's, a rule's, a delegation's, the case's), so that a shrunk
//! scenario reads like a hand-written catalog file. What the defaults are is read from the types
//! themselves, never restated.

use super::draft::blank_delegation;
use a2a_harness_core::scenario::Scenario;
use a2a_mock_agents::script::{AgentSpec, JournalSpec, Rule, ScriptStep};
use toml::{Table, Value};

/// A scenario could not be written as TOML.
#[derive(Debug, thiserror::Error)]
#[error("scenario {id}: cannot be written as TOML: {source}")]
pub struct ToTomlError {
    /// The scenario's id.
    pub id: String,
    /// What the serializer said.
    pub source: toml::ser::Error,
}

/// The scenario as catalog TOML, fields at their defaults left out; it loads back through
/// [`a2a_harness_core::catalog::parse_case`] to an equal scenario.
pub fn to_toml(s: &Scenario) -> Result<String, ToTomlError> {
    let err = |source| ToTomlError {
        id: s.id.clone(),
        source,
    };
    let mut table = Table::try_from(s).map_err(err)?;
    prune_case(&mut table);
    toml::to_string(&table).map_err(err)
}

/// Remove from `t` every key whose value equals the one in `defaults`, except `keep`.
fn prune_equal(t: &mut Table, defaults: &Table, keep: &[&str]) {
    t.retain(|k, v| keep.contains(&k) || defaults.get(k) != Some(v));
}

/// Remove every key of `t` whose absence reads back as the same `T` (a default the type's
/// deserializer fills in), one key at a time.
fn prune_redundant<T>(t: &mut Table)
where
    T: serde::de::DeserializeOwned + PartialEq,
{
    let read = |t: &Table| Value::Table(t.clone()).try_into::<T>().ok();
    let Some(original) = read(t) else { return };
    let keys: Vec<String> = t.keys().cloned().collect();
    for k in keys {
        let mut fewer = t.clone();
        fewer.remove(&k);
        if read(&fewer).is_some_and(|v| v == original) {
            *t = fewer;
        }
    }
}

fn prune_case(t: &mut Table) {
    let empty = |v: &Value| match v {
        Value::Array(a) => a.is_empty(),
        Value::Table(t) => t.is_empty(),
        Value::Boolean(b) => !b,
        _ => false,
    };
    for key in [
        "options",
        "answer",
        "cancel",
        "delegate",
        "forge_push",
        "extensions",
    ] {
        if t.get(key).is_some_and(empty) {
            t.remove(key);
        }
    }
    let all_bindings = Value::try_from(a2a_protocol::Binding::ALL.to_vec()).ok();
    if all_bindings.is_some() && t.get("bindings") == all_bindings.as_ref() {
        t.remove("bindings");
    }
    if let Some(Value::Table(net)) = t.get_mut("network") {
        prune_network(net);
    }
    if let Some(Value::Array(dels)) = t.get_mut("delegate") {
        for d in dels.iter_mut() {
            if let Value::Table(d) = d {
                prune_delegation(d);
            }
        }
    }
}

fn prune_network(net: &mut Table) {
    if let Ok(journal) = Value::try_from(JournalSpec::default())
        && net.get("journal") == Some(&journal)
    {
        net.remove("journal");
    }
    let rule_defaults = Table::try_from(Rule::default()).unwrap_or_default();
    let Some(Value::Array(agents)) = net.get_mut("agent") else {
        return;
    };
    for a in agents.iter_mut() {
        let Value::Table(a) = a else { continue };
        let name = a.get("name").and_then(Value::as_str).unwrap_or_default();
        let defaults = Table::try_from(AgentSpec {
            name: name.to_string(),
            ..AgentSpec::default()
        })
        .unwrap_or_default();
        if let Some(Value::Array(rules)) = a.get_mut("rule") {
            for r in rules.iter_mut() {
                if let Value::Table(r) = r {
                    prune_equal(r, &rule_defaults, &[]);
                    if let Some(Value::Array(steps)) = r.get_mut("steps") {
                        for st in steps.iter_mut() {
                            if let Value::Table(st) = st {
                                prune_redundant::<ScriptStep>(st);
                            }
                        }
                    }
                }
            }
        }
        prune_equal(a, &defaults, &["name"]);
        if let Some(Value::Array(skills)) = a.get_mut("skill") {
            for k in skills.iter_mut() {
                if let Value::Table(k) = k {
                    k.retain(|_, v| !matches!(v, Value::Array(a) if a.is_empty()));
                }
            }
        }
    }
}

fn prune_delegation(d: &mut Table) {
    let text = |k: &str| {
        d.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let blank = blank_delegation(&text("id"), &text("capability"), &text("text"));
    let defaults = Table::try_from(blank).unwrap_or_default();
    prune_equal(d, &defaults, &["id", "capability", "text"]);
    // What is left of the expectation: only what it says.
    if let Some(Value::Table(e)) = d.get_mut("expect") {
        e.retain(|_, v| {
            !matches!(v, Value::Boolean(false)) && !matches!(v, Value::Array(a) if a.is_empty())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{Topic, generate};
    use std::path::Path;

    #[test]
    fn defaults_are_left_out_and_the_case_loads_back_equal() {
        let s = generate(3, Some(Topic::Retry));
        let text = to_toml(&s).expect("serializes");
        assert!(!text.contains("max_body_bytes"), "{text}");
        assert!(!text.contains("header_timeout_ms"), "{text}");
        assert!(!text.contains("omit_last_chunk = false"), "{text}");
        let back =
            a2a_harness_core::catalog::parse_case(Path::new("x.toml"), &text).expect("loads");
        assert_eq!(
            serde_json::to_value(&back).ok(),
            serde_json::to_value(&s).ok(),
            "{text}"
        );
    }
}
