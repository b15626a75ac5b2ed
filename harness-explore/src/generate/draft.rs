//! A scenario under construction: the agents, delegations and rules the situations add, and the
//! checks that decide whether one more situation may join without changing what the others judge.

use super::Topic;
use a2a_driver_contract::Outcome;
use a2a_harness_core::scenario::{Answer, Cancel, Crash, Delegation, Scenario};
use a2a_mock_agents::script::{AgentSpec, Binding, NetworkSpec, SkillSpec};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Most agents in a generated network.
pub(super) const MAX_AGENTS: usize = 4;

/// The time bound of a case with nothing slow in it.
const BASE_TIMEOUT_MS: u64 = 15_000;

/// A scenario being built.
#[derive(Debug, Clone)]
pub(super) struct Draft {
    network_seed: u64,
    pub agents: Vec<AgentSpec>,
    pub delegations: Vec<Delegation>,
    pub answers: Vec<Answer>,
    pub cancels: Vec<Cancel>,
    pub rules: BTreeSet<&'static str>,
    pub crash: Option<Crash>,
    pub forge_push: bool,
    /// Options set by situations; a second situation that wants another value conflicts.
    pub options: BTreeMap<String, Value>,
    option_conflict: Option<String>,
    /// The bindings over which every situation has a meaning.
    pub bindings: Vec<Binding>,
    /// The case's time bound: the longest any situation needs.
    pub timeout_ms: u64,
    /// The limit a refused delegation breaks (`deadline`, `depth`, `loop`): the refusal rules
    /// judge the reason of every refused delegation, so a case refuses for one reason only.
    pub refusals: BTreeSet<&'static str>,
    /// Delegations whose local deadline is the point (DLG-LIMIT-03 judges every delegation with
    /// a deadline that may end FAILED or CANCELED, so no other may have one).
    pub deadline_bound: BTreeSet<String>,
    /// The first situation wants the case to itself (a crash, forged pushes, backoff timings).
    pub alone: bool,
    /// What each situation is, for the title.
    pub titles: Vec<String>,
    /// The extension URIs the delegator is told it supports (`init.extensions`).
    pub extensions: Vec<String>,
    /// The case's memory allowance over the baseline at `init_ok` (DLG-ART-10), if it watches
    /// memory.
    pub memory_bound_mib: Option<u64>,
    /// Every agent over TLS (the network's `tls`).
    pub tls: bool,
    /// Whether the delegator is told to require card signatures, if a situation says.
    card_signatures_required: Option<bool>,
    serial: u32,
}

impl Draft {
    pub fn new(network_seed: u64) -> Draft {
        Draft {
            network_seed,
            agents: Vec::new(),
            delegations: Vec::new(),
            answers: Vec::new(),
            cancels: Vec::new(),
            rules: BTreeSet::new(),
            crash: None,
            forge_push: false,
            options: BTreeMap::new(),
            option_conflict: None,
            bindings: Binding::ALL.to_vec(),
            timeout_ms: BASE_TIMEOUT_MS,
            refusals: BTreeSet::new(),
            deadline_bound: BTreeSet::new(),
            alone: false,
            titles: Vec::new(),
            extensions: Vec::new(),
            memory_bound_mib: None,
            tls: false,
            card_signatures_required: None,
            serial: 0,
        }
    }

    /// A fresh number for names.
    pub fn next(&mut self) -> u32 {
        self.serial += 1;
        self.serial
    }

    /// Add an agent named `<role>-<n>` offering `skill`; its index.
    pub fn agent(&mut self, role: &str, skill: &str) -> usize {
        let n = self.next();
        let mut a = AgentSpec {
            name: format!("{role}-{n}"),
            ..AgentSpec::default()
        };
        a.skills.push(skill_spec(skill));
        self.agents.push(a);
        self.agents.len() - 1
    }

    /// A fresh skill id `<base>-<n>`.
    pub fn skill(&mut self, base: &str) -> String {
        format!("{base}-{}", self.next())
    }

    /// A delegation `d<n>` for `capability` whose text (unique in the case: the harness finds
    /// its traffic by it) says `what`, with every field at its default.
    pub fn delegation(&mut self, capability: &str, what: &str) -> Delegation {
        let n = self.next();
        let id = format!("d{n}");
        blank_delegation(&id, capability, &format!("{what} (job {id})"))
    }

    /// List rules as exercised.
    pub fn list(&mut self, rules: &[&'static str]) {
        self.rules.extend(rules.iter().copied());
    }

    /// Set an option; a different value already set by another situation is a conflict.
    pub fn option(&mut self, key: &str, value: Value) {
        match self.options.get(key) {
            Some(v) if *v != value => {
                self.option_conflict = Some(format!("option {key}: {v} and {value}"));
            }
            _ => {
                self.options.insert(key.to_string(), value);
            }
        }
    }

    /// Tell the delegator to require card signatures or not; another situation that said
    /// otherwise conflicts.
    pub fn signatures_required(&mut self, required: bool) {
        match self.card_signatures_required {
            Some(r) if r != required => {
                self.option_conflict =
                    Some("card signatures required by one situation, not by another".into());
            }
            _ => self.card_signatures_required = Some(required),
        }
    }

    /// Keep only these bindings for the case.
    pub fn only_bindings(&mut self, allowed: &[Binding]) {
        self.bindings.retain(|b| allowed.contains(b));
    }

    /// The case needs at least this long.
    pub fn needs_ms(&mut self, ms: u64) {
        self.timeout_ms = self.timeout_ms.max(ms);
    }

    /// Why the draft cannot stand as one case, if it cannot.
    pub fn consistent(&self) -> Result<(), String> {
        if self.agents.len() > MAX_AGENTS {
            return Err(format!("{} agents", self.agents.len()));
        }
        let mut names = BTreeSet::new();
        if let Some(a) = self.agents.iter().find(|a| !names.insert(a.name.as_str())) {
            return Err(format!("two agents named {}", a.name));
        }
        if let Some(c) = &self.option_conflict {
            return Err(c.clone());
        }
        if self.bindings.is_empty() {
            return Err("no binding suits every situation".into());
        }
        if self.refusals.len() > 1 {
            return Err(format!("refusals for {:?}", self.refusals));
        }
        if self.alone {
            return Err("the first situation wants the case alone".into());
        }
        if self.rules.contains("DLG-LIMIT-03") {
            let other = self.delegations.iter().find(|d| {
                d.deadline_in_ms.is_some()
                    && !self.deadline_bound.contains(&d.id)
                    && d.expect
                        .state
                        .iter()
                        .any(|s| matches!(s, Outcome::Canceled | Outcome::Failed))
            });
            if let Some(d) = other {
                return Err(format!("{} has a deadline next to DLG-LIMIT-03", d.id));
            }
        }
        Ok(())
    }

    /// The scenario.
    pub fn finish(self, id: String, topic: Topic) -> Scenario {
        let title = format!(
            "Generated ({topic}): {}",
            if self.titles.is_empty() {
                "nothing".to_string()
            } else {
                self.titles.join("; ")
            }
        );
        Scenario {
            id,
            title,
            rules: self.rules.iter().map(|r| r.to_string()).collect(),
            timeout_ms: self.timeout_ms,
            network: NetworkSpec {
                seed: self.network_seed,
                journal: Default::default(),
                default_bindings: None,
                tls: self.tls,
                agents: self.agents,
            },
            delegations: self.delegations,
            answers: self.answers,
            cancels: self.cancels,
            crash: self.crash,
            memory_bound_mib: self.memory_bound_mib,
            forge_push: self.forge_push,
            bytes_differ: Vec::new(),
            options: self.options,
            extensions: self.extensions,
            card_signatures_required: self.card_signatures_required,
            bindings: self.bindings,
            variants: Vec::new(),
            variant_of: None,
            file: Default::default(),
            local_dir: None,
        }
    }
}

/// A skill with the agent's output modes and the default tags.
pub(super) fn skill_spec(id: &str) -> SkillSpec {
    SkillSpec {
        id: id.to_string(),
        output_modes: Vec::new(),
        tags: Vec::new(),
    }
}

/// A delegation with every optional field at the format's default (the defaults are the
/// format's own: read through its deserializer, never restated here).
pub(super) fn blank_delegation(id: &str, capability: &str, text: &str) -> Delegation {
    let v = serde_json::json!({ "id": id, "capability": capability, "text": text });
    // Not data from a peer or a file: id, capability and text are the format's only required
    // fields (the unit test below proves the call total).
    serde_json::from_value(v).expect("a delegation needs only id, capability and text")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blank_delegation_has_the_format_defaults() {
        let d = blank_delegation("d1", "s", "t");
        let parsed: Delegation =
            toml::from_str("id = \"d1\"\ncapability = \"s\"\ntext = \"t\"\n").expect("parses");
        assert_eq!(
            serde_json::to_value(&d).ok(),
            serde_json::to_value(&parsed).ok()
        );
        assert_eq!(d.max_retries, parsed.max_retries);
    }
}
