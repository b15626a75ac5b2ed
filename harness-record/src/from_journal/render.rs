//! The scenario text: a header saying where it came from and what a journal cannot hold, the
//! rules with why each is listed, each agent (card, queued faults, rules with the journal seq
//! each came from), the delegations and their answers.

use super::RecordedJournal;
use super::analyse::{AgentModel, DelegationModel, Model, RuleModel, StepLine};
use super::toml_text::{comment, inline, script_value, string};
use a2a_mock_agents::script::CancelBehaviour;
use std::fmt::Write as _;

/// The rule every case lists: always on, and its situation (a request to an agent) is in any
/// journal with a delegation.
const BASE_RULE: (&str, &str) = (
    "DLG-SEND-07",
    "always on: every request to an agent carries x-deleg",
);

pub(crate) fn render(m: &Model, journal: &RecordedJournal, id: &str) -> String {
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(
        w,
        "# Written by `a2a-harness scenario from-journal` from {} ({} journal entries, {} agents).",
        comment(&journal.source),
        m.entries,
        m.agents.len()
    );
    for line in [
        "# A recording shows one run: these agents do what the recorded ones did, matched to the",
        "# requests that triggered them. A journal holds no response headers but Retry-After, nor",
        "# the bytes of long strings it summarised, nor timing below 10 ms. Artifact bytes the journal",
        "# kept are replayed byte for byte (long parts in files beside this one); summarised ones are",
        "# generated content of the same length and media type (listed in `bytes_differ`; the",
        "# recorded sha256 is in a comment). Comments name the journal seq each rule and step came",
        "# from; `# TODO (seq N)` marks what could not be written. Edit freely.",
    ] {
        let _ = writeln!(w, "{line}");
    }
    let _ = writeln!(w, "id = {}", string(id));
    let _ = writeln!(
        w,
        "title = {}",
        string(&format!(
            "Replay of the recorded journal {}",
            journal.source
        ))
    );
    let _ = writeln!(w, "rules = [");
    let _ = writeln!(w, "  {}, # {}", string(BASE_RULE.0), BASE_RULE.1);
    for (rule, why) in m.rules.iter().filter(|(r, _)| **r != BASE_RULE.0) {
        let _ = writeln!(w, "  {}, # {}", string(rule), comment(why));
    }
    let _ = writeln!(w, "]");
    if !m.generated.is_empty() {
        let _ = writeln!(
            w,
            "# The journal summarised these artifacts' bytes: the replay sends generated content of the"
        );
        let _ = writeln!(
            w,
            "# recorded length (record with a larger --max-artifact-bytes to keep them); `run` says so."
        );
        let _ = writeln!(w, "bytes_differ = [");
        let mut g = m.generated.clone();
        g.sort();
        for (_, what) in &g {
            let _ = writeln!(w, "  {},", string(what));
        }
        let _ = writeln!(w, "]");
    }
    let span_ms = m.span_us / 1000;
    let timeout = (span_ms * 2 + 10_000).clamp(30_000, 600_000);
    let _ = writeln!(
        w,
        "timeout_ms = {timeout} # twice the recording ({span_ms} ms) plus 10 s, at least 30 s"
    );
    let _ = writeln!(w);
    let _ = writeln!(w, "[network]");
    let _ = writeln!(
        w,
        "seed = 1 # generated content comes from the seed, not from the recording"
    );
    for a in &m.agents {
        agent(w, a);
    }
    if m.delegations.is_empty() {
        let _ = writeln!(w);
        let _ = writeln!(
            w,
            "# TODO (seq {}): the journal holds no message send: no [[delegate]] could be written (add one; until then no rule has anything to judge)",
            m.first_seq
        );
    }
    for d in &m.delegations {
        delegation(w, d);
    }
    out
}

fn agent(w: &mut String, a: &AgentModel) {
    let _ = writeln!(w);
    let _ = writeln!(w, "[[network.agent]]");
    let _ = writeln!(w, "name = {}", string(&a.name));
    let _ = writeln!(w, "# card: {}", comment(&a.card_source));
    if a.v03 {
        let _ = writeln!(w, "protocol = \"0.3\"");
    }
    if !a.bindings.is_empty() {
        let list: Vec<String> = a.bindings.iter().map(|b| string(&b.to_string())).collect();
        let _ = writeln!(w, "bindings = [{}]", list.join(", "));
    }
    if let Some(s) = a.streaming {
        let _ = writeln!(w, "streaming = {s}");
    }
    if let Some(p) = a.push {
        let _ = writeln!(w, "push_notifications = {p}");
    }
    if !a.output_modes.is_empty() {
        let list: Vec<String> = a.output_modes.iter().map(|m| string(m)).collect();
        let _ = writeln!(w, "output_modes = [{}]", list.join(", "));
    }
    if !a.input_modes.is_empty() {
        let list: Vec<String> = a.input_modes.iter().map(|m| string(m)).collect();
        let _ = writeln!(w, "input_modes = [{}]", list.join(", "));
    }
    for n in &a.notes {
        line(w, n, "");
    }
    for (id, modes, tags) in &a.skills {
        let _ = writeln!(w, "[[network.agent.skill]]");
        let _ = writeln!(w, "id = {}", string(id));
        if !modes.is_empty() {
            let list: Vec<String> = modes.iter().map(|m| string(m)).collect();
            let _ = writeln!(w, "output_modes = [{}]", list.join(", "));
        }
        if !tags.is_empty() {
            let list: Vec<String> = tags.iter().map(|m| string(m)).collect();
            let _ = writeln!(w, "tags = [{}]", list.join(", "));
        }
    }
    for q in &a.queued {
        let _ = writeln!(
            w,
            "# {} (queued: applied to the next {} call(s) of {} before any rule)",
            comment(&q.comment),
            q.times,
            q.method
        );
        no_retry_after_note(w, &q.fault);
        let _ = writeln!(w, "[[network.agent.queued_fault]]");
        let _ = writeln!(w, "method = {}", string(&q.method));
        if q.times != 1 {
            let _ = writeln!(w, "times = {}", q.times);
        }
        let _ = writeln!(w, "fault = {}", inline(&script_value(&q.fault)));
    }
    for r in &a.rules {
        rule(w, r);
    }
}

/// Under an `http_status` fault without `retry_after_s`: the answer carried no Retry-After,
/// or the journal predates recording it.
fn no_retry_after_note(w: &mut String, f: &a2a_mock_agents::Fault) {
    if matches!(
        f,
        a2a_mock_agents::Fault::HttpStatus {
            retry_after_s: None,
            ..
        }
    ) {
        let _ = writeln!(
            w,
            "# No Retry-After in the journal (none sent, or a journal older than its recording): add retry_after_s if the agent sent one."
        );
    }
}

fn rule(w: &mut String, r: &RuleModel) {
    for c in &r.comments {
        let _ = writeln!(w, "# {}", comment(c));
    }
    let _ = writeln!(w, "[[network.agent.rule]]");
    let when = script_value(&r.when);
    if when.as_object().is_some_and(|o| !o.is_empty()) {
        let _ = writeln!(w, "when = {}", inline(&when));
    }
    if let Some(t) = r.times {
        let _ = writeln!(
            w,
            "times = {t} # a later rule takes the next send that matches"
        );
    }
    if let Some((f, why)) = &r.fault {
        let _ = writeln!(w, "fault = {} # {}", inline(&script_value(f)), comment(why));
        no_retry_after_note(w, f);
    }
    if let Some(c) = r.on_cancel {
        let name = match c {
            CancelBehaviour::Cancel => "cancel",
            CancelBehaviour::CompleteFirst => "complete_first",
            CancelBehaviour::Ignore => "ignore",
        };
        let _ = writeln!(
            w,
            "on_cancel = {} # the agent answered CancelTask and went on",
            string(name)
        );
    }
    if r.steps.is_empty() {
        return;
    }
    let _ = writeln!(w, "steps = [");
    for s in &r.steps {
        line(w, s, "  ");
    }
    let _ = writeln!(w, "]");
}

/// A step inside `steps = [...]` (with a trailing comma), a TODO or a comment.
fn line(w: &mut String, s: &StepLine, indent: &str) {
    match s {
        StepLine::Step(step, why) => {
            let _ = writeln!(
                w,
                "{indent}{}, # {}",
                inline(&script_value(step)),
                comment(why)
            );
        }
        StepLine::Todo(seq, what) => {
            let _ = writeln!(w, "{indent}# TODO (seq {seq}): {}", comment(what));
        }
        StepLine::Comment(c) => {
            let _ = writeln!(w, "{indent}# {}", comment(c));
        }
    }
}

fn delegation(w: &mut String, d: &DelegationModel) {
    let _ = writeln!(w);
    for c in &d.comments {
        let _ = writeln!(w, "# {}", comment(c));
    }
    let _ = writeln!(w, "[[delegate]]");
    let _ = writeln!(w, "id = {}", string(&d.id));
    let _ = writeln!(w, "capability = {}", string(&d.capability));
    let _ = writeln!(w, "text = {}", string(&d.text));
    if let Some(i) = &d.inputs {
        let _ = writeln!(
            w,
            "inputs = {} # the data part of the first message",
            inline(&serde_json::Value::Object(i.clone()))
        );
    }
    if let Some(m) = &d.mime_types {
        let list: Vec<String> = m.iter().map(|x| string(x)).collect();
        let _ = writeln!(
            w,
            "mime_types = [{}] # acceptedOutputModes of the first request",
            list.join(", ")
        );
    }
    if let Some(s) = d.streaming_preferred {
        let _ = writeln!(w, "streaming_preferred = {s}");
    }
    if let Some(ms) = d.deadline_in_ms {
        let _ = writeln!(w, "deadline_in_ms = {ms}");
    }
    if let Some(b) = d.max_size_bytes {
        let _ = writeln!(w, "max_size_bytes = {b}");
    }
    if let Some(b) = d.budget_usd {
        let _ = writeln!(w, "budget_usd = {}", inline(&serde_json::json!(b)));
    }
    if let Some(depth) = d.depth.filter(|x| *x > 0) {
        let _ = writeln!(
            w,
            "depth = {depth} # x-deleg depth minus the one the delegator adds"
        );
    }
    if let Some(chain) = &d.chain {
        let list: Vec<String> = chain.iter().map(|x| string(x)).collect();
        let _ = writeln!(
            w,
            "chain = [{}] # x-deleg chain without the delegator's own entry (its last)",
            list.join(", ")
        );
    }
    if let Some(r) = &d.refine_of {
        let _ = writeln!(w, "refine_of = {}", string(r));
        let _ = writeln!(w, "after = {}", string(r));
    }
    if !d.expect_state.is_empty() {
        let list: Vec<String> = d.expect_state.iter().map(|x| string(x)).collect();
        let _ = writeln!(w, "expect = {{ state = [{}] }}", list.join(", "));
    }
    for (state, why) in &d.cancels {
        let _ = writeln!(w);
        let _ = writeln!(w, "# {}", comment(why));
        let _ = writeln!(w, "[[cancel]]");
        let _ = writeln!(w, "id = {}", string(&d.id));
        let _ = writeln!(w, "when_state = {}", string(state));
    }
    for (kind, value, why) in &d.answers {
        let _ = writeln!(w);
        let _ = writeln!(w, "# {}", comment(why));
        let _ = writeln!(w, "[[answer]]");
        let _ = writeln!(w, "id = {}", string(&d.id));
        let _ = writeln!(w, "kind = {}", string(kind));
        let _ = writeln!(w, "value = {}", string(value));
    }
}
