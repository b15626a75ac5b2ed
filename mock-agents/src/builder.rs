//! A small builder for scripts, in the style of wiremock: `MockAgent::builder("name")`, then
//! rules made of a matcher, steps and an optional fault, then [`MockAgentBuilder::build`].
//!
//! ```
//! use a2a_mock_agents::{MockAgent, ScriptStep, NetworkSpec};
//! let agent = MockAgent::builder("flights")
//!     .skill("book-flight")
//!     .mount(MockAgent::when().text_contains("book").step(ScriptStep::Reply { text: "booked".into() }))
//!     .build();
//! let net = NetworkSpec { seed: 1, journal: Default::default(), agents: vec![agent] };
//! assert!(net.validate().is_ok());
//! ```

use crate::script::{
    AgentSpec, CancelBehaviour, Fault, JournalSpec, Matcher, Mutation, NetworkSpec,
    ProtocolVersionSpec, Rule, ScriptStep, SkillSpec,
};

/// Entry points of the builder API.
pub struct MockAgent;

impl MockAgent {
    /// Start building an agent with this name.
    pub fn builder(name: &str) -> MockAgentBuilder {
        let spec: AgentSpec =
            toml::from_str(&format!("name = {name:?}")).unwrap_or_else(|_| unreachable_spec(name));
        MockAgentBuilder { spec }
    }

    /// Start a rule (matches every new send until narrowed).
    pub fn when() -> RuleBuilder {
        RuleBuilder {
            rule: Rule::default(),
        }
    }

    /// A network of these agents with this seed.
    pub fn network(seed: u64, agents: Vec<AgentSpec>) -> NetworkSpec {
        NetworkSpec {
            seed,
            journal: JournalSpec::default(),
            agents,
        }
    }
}

fn unreachable_spec(name: &str) -> AgentSpec {
    // `name = "<escaped>"` is always valid TOML; this fallback only keeps the builder total.
    AgentSpec {
        name: name.to_string(),
        protocol: ProtocolVersionSpec::V1_0,
        streaming: true,
        push_notifications: true,
        dedup_message_id: true,
        enforce_x_deleg: true,
        max_depth: 3,
        close_stream_on_interrupt: true,
        push_duplicates: 0,
        max_body_bytes: 4 * 1024 * 1024,
        max_block_ms: 30_000,
        skills: Vec::new(),
        output_modes: Vec::new(),
        rules: Vec::new(),
    }
}

/// Builds one agent.
pub struct MockAgentBuilder {
    spec: AgentSpec,
}

impl MockAgentBuilder {
    /// Add a skill.
    pub fn skill(mut self, id: &str) -> Self {
        self.spec.skills.push(SkillSpec {
            id: id.into(),
            output_modes: Vec::new(),
            tags: Vec::new(),
        });
        self
    }
    /// Speak A2A 0.3.
    pub fn v03(mut self) -> Self {
        self.spec.protocol = ProtocolVersionSpec::V0_3;
        self
    }
    /// Set `capabilities.streaming`.
    pub fn streaming(mut self, on: bool) -> Self {
        self.spec.streaming = on;
        self
    }
    /// Set `capabilities.pushNotifications`.
    pub fn push_notifications(mut self, on: bool) -> Self {
        self.spec.push_notifications = on;
        self
    }
    /// Deduplicate `messageId` or not.
    pub fn dedup(mut self, on: bool) -> Self {
        self.spec.dedup_message_id = on;
        self
    }
    /// Deliver every push notification this many extra times.
    pub fn push_duplicates(mut self, n: u32) -> Self {
        self.spec.push_duplicates = n;
        self
    }
    /// Depth limit for incoming `x-deleg`.
    pub fn max_depth(mut self, d: u32) -> Self {
        self.spec.max_depth = d;
        self
    }
    /// Keep streams open (or not) on interrupted states.
    pub fn close_stream_on_interrupt(mut self, on: bool) -> Self {
        self.spec.close_stream_on_interrupt = on;
        self
    }
    /// Mount a rule (first mounted, first matched).
    pub fn mount(mut self, rule: RuleBuilder) -> Self {
        self.spec.rules.push(rule.rule);
        self
    }
    /// The finished agent spec.
    pub fn build(self) -> AgentSpec {
        self.spec
    }
}

/// Builds one rule.
pub struct RuleBuilder {
    rule: Rule,
}

impl RuleBuilder {
    /// Match this JSON-RPC method.
    pub fn method(mut self, m: &str) -> Self {
        self.rule.when.method = Some(m.into());
        self
    }
    /// Match this skill (`metadata.skill`).
    pub fn skill(mut self, s: &str) -> Self {
        self.rule.when.skill = Some(s.into());
        self
    }
    /// Match messages whose text contains this.
    pub fn text_contains(mut self, t: &str) -> Self {
        self.rule.when.text_contains = Some(t.into());
        self
    }
    /// Match the n-th new send.
    pub fn round(mut self, n: u32) -> Self {
        self.rule.when.round = Some(n);
        self
    }
    /// Replace the whole matcher.
    pub fn matcher(mut self, m: Matcher) -> Self {
        self.rule.when = m;
        self
    }
    /// Apply to at most `n` requests.
    pub fn up_to_n_times(mut self, n: u32) -> Self {
        self.rule.times = Some(n);
        self
    }
    /// Inject a fault.
    pub fn fault(mut self, f: Fault) -> Self {
        self.rule.fault = Some(f);
        self
    }
    /// Add a wire mutation.
    pub fn mutate(mut self, m: Mutation) -> Self {
        self.rule.mutate.push(m);
        self
    }
    /// What a cancel does.
    pub fn on_cancel(mut self, c: CancelBehaviour) -> Self {
        self.rule.on_cancel = c;
        self
    }
    /// Add a step.
    pub fn step(mut self, s: ScriptStep) -> Self {
        self.rule.steps.push(s);
        self
    }
    /// Shorthand: move to a state.
    pub fn state(self, state: &str) -> Self {
        self.step(ScriptStep::State {
            state: state.into(),
            message: None,
            delay_ms: 0,
        })
    }
}
