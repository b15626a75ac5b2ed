//! The catalog's situation matrix: for every rule of the registry, how many cases list it and in
//! which situations those cases put a delegator (bindings, delivery, shape of the work, restart,
//! reply shape, faults). It is generated from the registry and the catalog into
//! `scenarios/README.md`, between two markers; a test keeps the committed section current.
//! Regenerate it with
//!
//! ```text
//! UPDATE_SITUATION_MATRIX=1 cargo test -p a2a-harness-core --lib matrix
//! ```
//!
//! The matrix reads the cases' data, so it says which situations a case sets up; whether a
//! rule was judged in a run is the report's `rules[].evaluated` (`a2a-harness rules --report`).

use crate::catalog::listing;
use crate::rules::{Level, registry};
use crate::scenario::Scenario;
use a2a_mock_agents::ScriptStep;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// The file holding the matrix, relative to the workspace root.
pub const README_PATH: &str = "scenarios/README.md";
/// The line before the generated section.
pub const BEGIN: &str = "<!-- situation-matrix:begin (generated; do not edit by hand) -->";
/// The line after the generated section.
pub const END: &str = "<!-- situation-matrix:end -->";
/// The environment variable that makes the test rewrite the committed section.
pub const UPDATE_VAR: &str = "UPDATE_SITUATION_MATRIX";

/// The situations one case (or the union of several) sets up.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Situations {
    /// Bindings the case runs over (an agent's pinned ones, else the case's `bindings`).
    pub bindings: BTreeSet<String>,
    /// `stream` (streaming preferred and offered) and/or `poll/push` (the delegator's choice).
    pub delivery: BTreeSet<&'static str>,
    /// `single`, `several` (more than one delegation), `sub-delegation` (an agent delegates on),
    /// `incoming x-deleg` (the delegation arrives with a depth or chain).
    pub shape: BTreeSet<&'static str>,
    /// The case kills and restarts the delegator.
    pub restart: bool,
    /// Some agent answers with a `Message` instead of a task.
    pub message_reply: bool,
    /// The fault kinds agents inject (`drop_response`, `http_status`, ...).
    pub faults: BTreeSet<String>,
}

impl Situations {
    /// The situations `s` sets up, from its data.
    pub fn of(s: &Scenario) -> Situations {
        let agents = &s.network.agents;
        let mut out = Situations::default();
        let pinned: BTreeSet<String> = agents
            .iter()
            .filter_map(|a| a.bindings.as_ref())
            .flatten()
            .map(|b| b.to_string())
            .collect();
        out.bindings = if pinned.is_empty() {
            s.bindings.iter().map(|b| b.to_string()).collect()
        } else {
            pinned
        };
        let streaming_agent = agents.iter().any(|a| a.streaming);
        for d in &s.delegations {
            out.delivery
                .insert(if d.streaming_preferred && streaming_agent {
                    "stream"
                } else {
                    "poll/push"
                });
            if d.depth > 0 || !d.chain.is_empty() {
                out.shape.insert("incoming x-deleg");
            }
        }
        out.shape.insert(if s.delegations.len() > 1 {
            "several"
        } else {
            "single"
        });
        for a in agents {
            for r in &a.rules {
                for step in &r.steps {
                    match step {
                        ScriptStep::Delegate { .. } => {
                            out.shape.insert("sub-delegation");
                        }
                        ScriptStep::Reply { .. } => out.message_reply = true,
                        _ => {}
                    }
                }
                if let Some(f) = &r.fault {
                    out.faults.insert(fault_kind(f));
                }
            }
            for q in &a.queued_faults {
                out.faults.insert(fault_kind(&q.fault));
            }
        }
        out.restart = s.crash.is_some();
        out
    }

    /// The union of two sets of situations.
    fn merge(&mut self, o: Situations) {
        self.bindings.extend(o.bindings);
        self.delivery.extend(o.delivery);
        self.shape.extend(o.shape);
        self.restart |= o.restart;
        self.message_reply |= o.message_reply;
        self.faults.extend(o.faults);
    }
}

/// A fault's `kind` as scenarios write it.
fn fault_kind(f: &a2a_mock_agents::Fault) -> String {
    serde_json::to_value(f)
        .ok()
        .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(str::to_string))
        .unwrap_or_else(|| "fault".to_string())
}

fn join<T: AsRef<str>>(set: impl IntoIterator<Item = T>) -> String {
    let v: Vec<String> = set.into_iter().map(|x| x.as_ref().to_string()).collect();
    if v.is_empty() {
        "-".to_string()
    } else {
        v.join(", ")
    }
}

/// The fewest cases a rule of `level` should be listed in (the catalog-depth goal: three
/// different situations for a MUST, two for a SHOULD; a MAY is never failed).
pub fn wanted_cases(level: Level) -> usize {
    match level {
        Level::Must => 3,
        Level::Should => 2,
        _ => 1,
    }
}

/// The generated section (between [`BEGIN`] and [`END`], markers included) for `catalog`.
pub fn markdown(catalog: &[Scenario]) -> String {
    let rules = registry();
    let mut s = format!("{BEGIN}\n\n");
    s.push_str(
        "| rule | level | cases | bindings | delivery | shape | restart | Message reply | faults |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    let mut short: Vec<String> = Vec::new();
    for r in &rules {
        let cases = listing(catalog, r.id);
        let mut sit = Situations::default();
        for c in &cases {
            sit.merge(Situations::of(c));
        }
        let n = if r.always && cases.is_empty() {
            "always-on".to_string()
        } else if r.always {
            format!("{} + always-on", cases.len())
        } else {
            cases.len().to_string()
        };
        if !r.always && cases.len() < wanted_cases(r.level) {
            short.push(format!("{} ({}, {})", r.id, r.level, cases.len()));
        }
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.id,
            r.level,
            n,
            join(&sit.bindings),
            join(&sit.delivery),
            join(&sit.shape),
            if sit.restart { "yes" } else { "-" },
            if sit.message_reply { "yes" } else { "-" },
            join(&sit.faults),
        );
    }
    let _ = writeln!(
        s,
        "\nRules listed in fewer cases than their level asks (MUST 3, SHOULD 2; always-on rules \
         are judged wherever their situation arises): {}.\n",
        if short.is_empty() {
            "none".to_string()
        } else {
            format!("{}: {}", short.len(), short.join(", "))
        }
    );
    s.push_str(END);
    s.push('\n');
    s
}

/// `text` with its section between [`BEGIN`] and [`END`] replaced by `section`, or `None` when
/// the markers are missing.
pub fn splice(text: &str, section: &str) -> Option<String> {
    let start = text.find(BEGIN)?;
    let end = text[start..].find(END)? + start + END.len();
    let rest = text[end..].strip_prefix('\n').unwrap_or(&text[end..]);
    Some(format!("{}{section}{rest}", &text[..start]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn the_committed_matrix_is_generated_from_the_registry_and_the_catalog() {
        let catalog = crate::catalog::builtin_catalog().expect("the built-in catalog loads");
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(README_PATH);
        let committed = std::fs::read_to_string(&path).expect("scenarios/README.md");
        let want = splice(&committed, &markdown(&catalog))
            .unwrap_or_else(|| panic!("{README_PATH} has no {BEGIN} ... {END} section"));
        if std::env::var_os(UPDATE_VAR).is_some_and(|v| v == "1") {
            std::fs::write(&path, &want).expect("writing scenarios/README.md");
            return;
        }
        assert!(
            committed == want,
            "the situation matrix in {README_PATH} is stale: regenerate it with `{UPDATE_VAR}=1 cargo test -p a2a-harness-core --lib matrix` and commit the result"
        );
    }

    #[test]
    fn situations_come_from_the_case_data() {
        let case = |toml: &str| -> Scenario {
            Scenario::from_toml(Path::new("t.toml"), toml).expect("case parses")
        };
        let plain = case(
            r#"id = "t.plain"
title = "t"
rules = ["DLG-STATE-01"]
[network]
[[network.agent]]
name = "a"
[[network.agent.skill]]
id = "s"
[[network.agent.rule]]
steps = [{ do = "state", state = "TASK_STATE_COMPLETED" }]
[[delegate]]
id = "d1"
capability = "s"
text = "x"
"#,
        );
        let p = Situations::of(&plain);
        assert_eq!(p.bindings.len(), 3);
        assert_eq!(p.shape, BTreeSet::from(["single"]));
        assert!(!p.restart && !p.message_reply && p.faults.is_empty());
        let busy = case(
            r#"id = "t.busy"
title = "t"
rules = ["DLG-STATE-01"]
[network]
[[network.agent]]
name = "a"
bindings = ["grpc"]
[[network.agent.skill]]
id = "s"
[[network.agent.rule]]
times = 1
fault = { kind = "drop_response" }
steps = [{ do = "state", state = "TASK_STATE_COMPLETED" }]
[[network.agent.rule]]
steps = [{ do = "reply", text = "hi" }]
[[delegate]]
id = "d1"
capability = "s"
text = "x"
streaming_preferred = false
[[delegate]]
id = "d2"
capability = "s"
text = "y"
[crash]
trigger = "indefinite_send"
"#,
        );
        let b = Situations::of(&busy);
        assert_eq!(b.bindings, BTreeSet::from(["grpc".to_string()]));
        assert_eq!(b.shape, BTreeSet::from(["several"]));
        assert!(b.restart && b.message_reply);
        assert_eq!(b.faults, BTreeSet::from(["drop_response".to_string()]));
        assert!(b.delivery.contains("poll/push"));
    }

    #[test]
    fn splice_replaces_only_the_section() {
        let text = format!("head\n{BEGIN}\nold\n{END}\ntail\n");
        let out = splice(&text, &format!("{BEGIN}\nnew\n{END}\n")).expect("markers");
        assert_eq!(out, format!("head\n{BEGIN}\nnew\n{END}\ntail\n"));
        assert_eq!(splice("no markers", "x"), None);
    }
}
