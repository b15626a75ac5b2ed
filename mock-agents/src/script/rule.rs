//! What an agent does with a request: a [`Rule`] selects requests with a [`Matcher`] (with
//! [`Pattern`]s) and answers with steps, a fault or a mutation.

use super::*;

/// What to do with requests that match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// A name for reports (default: a description of the matcher).
    #[serde(default)]
    pub name: Option<String>,
    /// How many requests this rule must match, checked when the network stops (and by
    /// `Network::verify`): `expect = 2`, or a range as a string (`"1.."`, `"2..=4"`, `"..3"`).
    #[serde(default)]
    #[schemars(with = "Option<TimesSchema>")]
    pub expect: Option<Times>,
    /// Which requests this rule applies to (default: every new send).
    #[serde(default)]
    pub when: Matcher,
    /// Rules are tried by descending priority (default 0); within one priority a rule with a
    /// longer `when.message_id_prefix` goes first, otherwise file order.
    #[serde(default)]
    pub priority: i32,
    /// Apply this rule to at most this many requests, then fall through to later rules.
    #[serde(default)]
    pub times: Option<u32>,
    /// A fault applied to the matching request.
    #[serde(default)]
    pub fault: Option<Fault>,
    /// Deliberate wire mutations of everything sent about the task this rule creates.
    #[serde(default)]
    pub mutate: Vec<Mutation>,
    /// What a `CancelTask` does while the task is open.
    #[serde(default)]
    pub on_cancel: CancelBehaviour,
    /// Steps run for new work, in order.
    #[serde(default)]
    pub steps: Vec<ScriptStep>,
}

impl Rule {
    /// How long the rule's own timers hold the requests it answers, in ms: its steps' waits
    /// and its fault's, the fault counted once per request it applies to (`times`, else once).
    pub fn scripted_wait_ms(&self) -> u64 {
        let steps = self
            .steps
            .iter()
            .map(ScriptStep::scripted_wait_ms)
            .fold(0u64, u64::saturating_add);
        let fault = self.fault.as_ref().map_or(0, |f| {
            f.scripted_wait_ms()
                .saturating_mul(u64::from(self.times.unwrap_or(1)))
        });
        steps.saturating_add(fault)
    }
}

/// Selects incoming requests. Every given field must match; an empty matcher matches every new
/// send (`SendMessage` or `SendStreamingMessage` without a `taskId`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Matcher {
    /// The JSON-RPC method (default: the two send methods).
    #[serde(default)]
    pub method: Option<String>,
    /// The skill id, read from message or request metadata key `skill`.
    #[serde(default)]
    pub skill: Option<String>,
    /// The message text contains this.
    #[serde(default)]
    pub text_contains: Option<String>,
    /// The message text equals this.
    #[serde(default)]
    pub text_equals: Option<String>,
    /// A data part holds this value at this JSON pointer (`{"/jurisdiction" = "England"}`).
    #[serde(default)]
    pub data: Option<serde_json::Map<String, Value>>,
    /// The message continues this task id.
    #[serde(default)]
    pub task_id: Option<String>,
    /// The n-th (1-based) new send this agent receives.
    #[serde(default)]
    pub round: Option<u32>,
    /// The message's `messageId` equals this.
    #[serde(default)]
    pub message_id: Option<String>,
    /// The message's `messageId` starts with this (the longest matching prefix wins, see
    /// [`Rule::priority`]).
    #[serde(default)]
    pub message_id_prefix: Option<String>,
    /// The message's `messageId` matches this regular expression (`regex` crate syntax,
    /// unanchored: use `^…$` for a whole-id match).
    #[serde(default)]
    pub message_id_regex: Option<Pattern>,
    /// The message's `contextId` equals this.
    #[serde(default)]
    pub context_id: Option<String>,
    /// `true`: the message continues a task (any `taskId`); `false`: it carries no `taskId`.
    /// Without it (and without `task_id`) only new sends match.
    #[serde(default)]
    pub has_task_id: Option<bool>,
    /// Every one of these keys is present in the message's or the request's `metadata`.
    #[serde(default)]
    pub metadata_keys: Option<Vec<String>>,
    /// `true`: the message lists at least one `referenceTaskIds` entry; `false`: none.
    #[serde(default)]
    pub has_reference_task_ids: Option<bool>,
}

/// A regular expression in a script, written as a string (`regex` crate syntax).
#[derive(Debug, Clone)]
pub struct Pattern(regex::Regex);

impl Pattern {
    /// Compile a pattern.
    pub fn new(re: &str) -> Result<Self, regex::Error> {
        regex::Regex::new(re).map(Pattern)
    }

    /// Does the pattern match somewhere in `s`?
    pub fn is_match(&self, s: &str) -> bool {
        self.0.is_match(s)
    }

    /// The pattern's source text.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Serialize for Pattern {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Pattern::new(&s).map_err(|e| serde::de::Error::custom(format!("invalid regex: {e}")))
    }
}

impl schemars::JsonSchema for Pattern {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Pattern".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "format": "regex"})
    }
}

impl Matcher {
    /// A one-line description for reports, such as `method=GetTask text_contains="book"`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(m) = &self.method {
            parts.push(format!("method={m}"));
        }
        if let Some(s) = &self.skill {
            parts.push(format!("skill={s:?}"));
        }
        if let Some(t) = &self.text_contains {
            parts.push(format!("text_contains={t:?}"));
        }
        if let Some(t) = &self.text_equals {
            parts.push(format!("text_equals={t:?}"));
        }
        if let Some(d) = &self.data {
            parts.push(format!("data={}", Value::Object(d.clone())));
        }
        if let Some(t) = &self.task_id {
            parts.push(format!("task_id={t:?}"));
        }
        if let Some(r) = self.round {
            parts.push(format!("round={r}"));
        }
        if let Some(m) = &self.message_id {
            parts.push(format!("message_id={m:?}"));
        }
        if let Some(m) = &self.message_id_prefix {
            parts.push(format!("message_id_prefix={m:?}"));
        }
        if let Some(m) = &self.message_id_regex {
            parts.push(format!("message_id_regex={:?}", m.as_str()));
        }
        if let Some(c) = &self.context_id {
            parts.push(format!("context_id={c:?}"));
        }
        if let Some(b) = self.has_task_id {
            parts.push(format!("has_task_id={b}"));
        }
        if let Some(k) = &self.metadata_keys {
            parts.push(format!("metadata_keys={k:?}"));
        }
        if let Some(b) = self.has_reference_task_ids {
            parts.push(format!("has_reference_task_ids={b}"));
        }
        if parts.is_empty() {
            "every new send".into()
        } else {
            parts.join(" ")
        }
    }
}

/// What `CancelTask` does to an open task.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum CancelBehaviour {
    /// Cancel the task (default).
    #[default]
    Cancel,
    /// The task completes first: the cancel loses the race and gets -32002.
    CompleteFirst,
    /// Acknowledge with the current task but keep working (an agent that ignores cancels).
    Ignore,
}
