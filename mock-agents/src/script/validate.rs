//! Validation: what TOML cannot check (unique names, known agents, states and methods, sane
//! numbers), reported as a typed [`ValidationError`] with the field's path.

use super::load::{Located, Seg, path_text};
use super::{EventKind, Fault, NetworkSpec, PartSpec, ScriptStep};

impl NetworkSpec {
    /// Check what TOML cannot: unique names, known agents, states and methods, sane numbers.
    pub fn validate(&self) -> Result<(), ValidationError> {
        self.check().map_err(|(path, problem)| ValidationError {
            path: path_text(&path),
            problem,
        })
    }

    pub(super) fn check(&self) -> Result<(), Located> {
        use Seg::Index;
        let key = |k: &str| Seg::Key(k.to_string());
        let mut names = std::collections::BTreeSet::new();
        for (ai, a) in self.agents.iter().enumerate() {
            if a.name.is_empty() || !names.insert(a.name.as_str()) {
                return Err((
                    vec![key("agent"), Index(ai), key("name")],
                    Problem::DuplicateName(a.name.clone()),
                ));
            }
        }
        if let Some(list) = &self.default_bindings {
            if list.is_empty() {
                return Err((
                    vec![key("default_bindings")],
                    Problem::Empty("default_bindings"),
                ));
            }
            if let Some(i) = (1..list.len()).find(|&i| list[..i].contains(&list[i])) {
                return Err((
                    vec![key("default_bindings"), Index(i)],
                    Problem::DuplicateBinding(list[i].to_string()),
                ));
            }
        }
        for (ai, a) in self.agents.iter().enumerate() {
            let agent = |rest: &[Seg]| {
                let mut p = vec![key("agent"), Index(ai)];
                p.extend_from_slice(rest);
                p
            };
            for (field, value) in [
                ("header_timeout_ms", a.header_timeout_ms),
                ("body_timeout_ms", a.body_timeout_ms),
                ("max_connections", a.max_connections as u64),
            ] {
                if value == 0 {
                    return Err((agent(&[key(field)]), Problem::NotPositive(field)));
                }
            }
            for (field, list) in [
                ("bindings", &a.bindings),
                ("advertised_bindings", &a.advertised_bindings),
            ] {
                let Some(list) = list else { continue };
                if field == "bindings" && list.is_empty() {
                    return Err((agent(&[key(field)]), Problem::Empty(field)));
                }
                if let Some(i) = (1..list.len()).find(|&i| list[..i].contains(&list[i])) {
                    return Err((
                        agent(&[key(field), Index(i)]),
                        Problem::DuplicateBinding(list[i].to_string()),
                    ));
                }
                if a.protocol == super::ProtocolVersion::V0_3
                    && let Some(i) = list.iter().position(|b| *b != super::Binding::JsonRpc)
                {
                    return Err((
                        agent(&[key(field), Index(i)]),
                        Problem::BindingNeeds10(list[i].to_string()),
                    ));
                }
            }
            if a.list_page_size_max == Some(0) {
                return Err((
                    agent(&[key("list_page_size_max")]),
                    Problem::NotPositive("list_page_size_max"),
                ));
            }
            if a.max_body_bytes == 0 {
                return Err((
                    agent(&[key("max_body_bytes")]),
                    Problem::NotPositive("max_body_bytes"),
                ));
            }
            check_front_door(a).map_err(|(rest, p)| (agent(&rest), p))?;
            for (qi, q) in a.queued_faults.iter().enumerate() {
                let at = |field: &str| agent(&[key("queued_fault"), Index(qi), key(field)]);
                if !a2a_protocol::Method::ALL
                    .iter()
                    .any(|m| m.as_str() == q.method)
                {
                    return Err((at("method"), Problem::UnknownMethod(q.method.clone())));
                }
                if q.times == 0 {
                    return Err((at("times"), Problem::NotPositive("times")));
                }
                check_fault(&q.fault).map_err(|(f, p)| (at_fault(at("fault"), f), p))?;
            }
            for (ri, r) in a.rules.iter().enumerate() {
                let rule = |rest: &[Seg]| {
                    let mut p = agent(&[key("rule"), Index(ri)]);
                    p.extend_from_slice(rest);
                    p
                };
                if let Some(data) = &r.when.data
                    && let Some(k) = data.keys().find(|k| !k.is_empty() && !k.starts_with('/'))
                {
                    return Err((
                        rule(&[key("when"), key("data")]),
                        Problem::NotAJsonPointer(k.clone()),
                    ));
                }
                if let Some(f) = &r.fault {
                    check_fault(f).map_err(|(f, p)| (at_fault(rule(&[key("fault")]), f), p))?;
                }
                for (si, s) in r.steps.iter().enumerate() {
                    let step = |field: &'static str| rule(&[key("steps"), Index(si), key(field)]);
                    let parts_at = |field: &'static str, parts: &[PartSpec]| {
                        check_parts(parts).map_err(|(i, p)| {
                            (rule(&[key("steps"), Index(si), key(field), Index(i)]), p)
                        })
                    };
                    match s {
                        ScriptStep::Reply { text, parts } => {
                            if text.is_empty() && parts.is_empty() {
                                return Err((step("text"), Problem::Empty("text or parts")));
                            }
                            parts_at("parts", parts)?;
                        }
                        ScriptStep::State { parts, .. } => parts_at("parts", parts)?,
                        ScriptStep::Artifact { parts, chunks, .. } => {
                            if parts.is_empty() == chunks.is_empty() {
                                return Err((step("parts"), Problem::PartsOrChunks));
                            }
                            parts_at("parts", parts)?;
                            for (ci, c) in chunks.iter().enumerate() {
                                if c.is_empty() {
                                    return Err((
                                        rule(&[key("steps"), Index(si), key("chunks"), Index(ci)]),
                                        Problem::Empty("chunk"),
                                    ));
                                }
                                check_parts(c).map_err(|(i, p)| {
                                    (
                                        rule(&[
                                            key("steps"),
                                            Index(si),
                                            key("chunks"),
                                            Index(ci),
                                            Index(i),
                                        ]),
                                        p,
                                    )
                                })?;
                            }
                        }
                        _ => {}
                    }
                    match s {
                        ScriptStep::Reply { .. } if r.steps.len() != 1 => {
                            return Err((step("do"), Problem::NotTheOnlyStep("reply")));
                        }
                        ScriptStep::Error { .. } if r.steps.len() != 1 => {
                            return Err((step("do"), Problem::NotTheOnlyStep("error")));
                        }
                        ScriptStep::State { state, .. }
                            if a2a_protocol::TaskState::parse_lenient(state).is_none() =>
                        {
                            return Err((step("state"), Problem::UnknownState(state.clone())));
                        }
                        ScriptStep::Delegate {
                            to, budget_share, ..
                        } => {
                            if !names.contains(to.as_str()) {
                                return Err((step("to"), Problem::UnknownAgent(to.clone())));
                            }
                            if !(0.0..=1.0).contains(budget_share) {
                                return Err((
                                    step("budget_share"),
                                    Problem::OutOfRange("budget_share", "0..=1"),
                                ));
                            }
                        }
                        ScriptStep::Artifacts {
                            chunks,
                            chunk_bytes,
                            ..
                        } => {
                            if *chunks == 0 {
                                return Err((step("chunks"), Problem::NotPositive("chunks")));
                            }
                            if *chunk_bytes == 0 {
                                return Err((
                                    step("chunk_bytes"),
                                    Problem::NotPositive("chunk_bytes"),
                                ));
                            }
                        }
                        ScriptStep::InputRequired { rounds: 0, .. } => {
                            return Err((step("rounds"), Problem::NotPositive("rounds")));
                        }
                        ScriptStep::Gate { gate, .. } if gate.is_empty() => {
                            return Err((step("gate"), Problem::Empty("gate")));
                        }
                        ScriptStep::Chunk { artifact_id, .. } if artifact_id.is_empty() => {
                            return Err((step("artifact_id"), Problem::Empty("artifact_id")));
                        }
                        ScriptStep::UnknownState { state }
                            if state.is_empty()
                                || a2a_protocol::TaskState::parse_lenient(state).is_some() =>
                        {
                            return Err((step("state"), Problem::KnownState(state.clone())));
                        }
                        ScriptStep::PushForeign { state, .. }
                            if a2a_protocol::TaskState::parse_lenient(state).is_none() =>
                        {
                            return Err((step("state"), Problem::UnknownState(state.clone())));
                        }
                        ScriptStep::MalformedEvent { event, omit } => {
                            let kind = event.unwrap_or_else(|| EventKind::for_omitted(omit));
                            if !kind.omittable().contains(&omit.as_str()) {
                                return Err((
                                    step("omit"),
                                    Problem::NotOmittable(omit.clone(), kind.omittable()),
                                ));
                            }
                        }
                        ScriptStep::AuthRequired {
                            resume_after_ms: Some(r),
                            timeout_ms,
                            ..
                        } if r >= timeout_ms => {
                            return Err((
                                step("resume_after_ms"),
                                Problem::OutOfRange("resume_after_ms", "0..timeout_ms"),
                            ));
                        }
                        _ => {}
                    }
                }
            }
        }
        Ok(())
    }
}

/// The card and front-door options: tenants, the card's version and changes, extensions,
/// security. The error's path is relative to the agent.
fn check_front_door(a: &super::AgentSpec) -> Result<(), Located> {
    use Seg::Index;
    let key = |k: &str| Seg::Key(k.to_string());
    if a.protocol == super::ProtocolVersion::V0_3 {
        let set = [
            ("tenant", a.tenant.is_some()),
            ("card_protocol_version", a.card_protocol_version.is_some()),
            ("extension", !a.extensions.is_empty()),
            ("card_change", !a.card_changes.is_empty()),
            ("extended_tenant", a.extended_tenant.is_some()),
            ("card_signing", a.card_signing.is_some()),
        ];
        if let Some((field, _)) = set.iter().find(|(_, on)| *on) {
            return Err((vec![key(field)], Problem::Needs10(field)));
        }
    }
    let tenant_ok = |t: &str| -> Result<(), Problem> {
        if t.is_empty() {
            Err(Problem::Empty("tenant"))
        } else if ["tasks", "extendedAgentCard"].contains(&t) {
            Err(Problem::TenantIsARoute(t.to_string()))
        } else {
            Ok(())
        }
    };
    if let Some(t) = &a.tenant {
        tenant_ok(t).map_err(|p| (vec![key("tenant")], p))?;
    }
    if let Some(t) = &a.extended_tenant {
        tenant_ok(t).map_err(|p| (vec![key("extended_tenant")], p))?;
    }
    if let Some(v) = &a.card_protocol_version
        && !a2a_protocol::version::is_v1(v)
    {
        return Err((
            vec![key("card_protocol_version")],
            Problem::NotVersion10(v.clone()),
        ));
    }
    let mut before: (Option<u64>, Option<&str>) = (None, a.tenant.as_deref());
    for (i, c) in a.card_changes.iter().enumerate() {
        let at = |field: &str| vec![key("card_change"), Index(i), key(field)];
        if before.0.is_some_and(|ms| c.after_ms <= ms) {
            return Err((at("after_ms"), Problem::NotIncreasing("after_ms")));
        }
        tenant_ok(&c.tenant).map_err(|p| (at("tenant"), p))?;
        if before.1 == Some(c.tenant.as_str()) {
            return Err((at("tenant"), Problem::Unchanged(c.tenant.clone())));
        }
        before = (Some(c.after_ms), Some(c.tenant.as_str()));
    }
    for (i, e) in a.extensions.iter().enumerate() {
        let at = |field: &str| vec![key("extension"), Index(i), key(field)];
        if e.uri.trim().is_empty() || e.uri.contains(',') || e.uri.trim() != e.uri {
            return Err((at("uri"), Problem::NotAnExtensionUri(e.uri.clone())));
        }
        if a.extensions[..i].iter().any(|x| x.uri == e.uri) {
            return Err((at("uri"), Problem::DuplicateExtension(e.uri.clone())));
        }
    }
    if let Some(sec) = &a.security {
        let at = |field: &str| vec![key("security"), key(field)];
        let mut words = sec.credential.split(' ');
        let scheme_ok = words.next().is_some_and(|w| {
            !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
        });
        let rest: Vec<&str> = words.collect();
        if !scheme_ok || rest.is_empty() || rest.iter().any(|w| w.is_empty()) {
            return Err((at("credential"), Problem::NotACredential));
        }
        match sec.scope {
            super::SecurityScope::ExtendedCard
                if a.extended_skills.is_empty() && a.extended_tenant.is_none() =>
            {
                return Err((at("scope"), Problem::ScopeNeedsExtendedCard));
            }
            super::SecurityScope::All
                if a.rules.iter().any(|r| {
                    r.steps
                        .iter()
                        .any(|s| matches!(s, ScriptStep::AuthRequired { .. }))
                }) =>
            {
                return Err((at("scope"), Problem::ScopeAllWithAuthRequired));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Every part has exactly one content field; the error names the part's index.
fn check_parts(parts: &[PartSpec]) -> Result<(), (usize, Problem)> {
    match parts.iter().position(|p| p.contents() != 1) {
        Some(i) => Err((i, Problem::PartContent)),
        None => Ok(()),
    }
}

/// The path of a field inside a fault.
fn at_fault(mut path: Vec<Seg>, field: &'static str) -> Vec<Seg> {
    path.push(Seg::Key(field.to_string()));
    path
}

/// Check a fault's numbers; the error names the field.
fn check_fault(f: &Fault) -> Result<(), (&'static str, Problem)> {
    match f {
        Fault::Trickle { bytes_per_sec: 0 } => {
            Err(("bytes_per_sec", Problem::NotPositive("bytes_per_sec")))
        }
        Fault::HttpStatus { status, .. } if !(100..=599).contains(status) => {
            Err(("status", Problem::NotAnHttpStatus(*status)))
        }
        Fault::OmitFields { pointers } if pointers.is_empty() => {
            Err(("pointers", Problem::Empty("pointers")))
        }
        Fault::OmitFields { pointers } => match pointers
            .iter()
            .find(|p| !p.starts_with("/result/") || p.len() <= "/result/".len())
        {
            Some(p) => Err(("pointers", Problem::NotAResultPointer(p.clone()))),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

/// What is wrong with a well-formed script.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Problem {
    /// Two agents have the same name, or one has none.
    #[error("agent name {0:?} is empty or used twice")]
    DuplicateName(String),
    /// A number that must be positive is 0.
    #[error("{0} must be > 0")]
    NotPositive(&'static str),
    /// A number is outside its range.
    #[error("{0} must be in {1}")]
    OutOfRange(&'static str, &'static str),
    /// A `when.data` key is not a JSON pointer.
    #[error("{0:?} is not a JSON pointer (it must start with '/')")]
    NotAJsonPointer(String),
    /// An `http_status` fault's status is not an HTTP status.
    #[error("status {0} is not an HTTP status (100..=599)")]
    NotAnHttpStatus(u16),
    /// A step that must be alone (`reply`, `error`) has company.
    #[error("`{0}` must be the only step")]
    NotTheOnlyStep(&'static str),
    /// A `state` step names no task state.
    #[error("unknown state {0:?}")]
    UnknownState(String),
    /// An `unknown_state` step names a known state (or none).
    #[error("{0:?} is a known state (or empty); use a `state` step")]
    KnownState(String),
    /// A `delegate` step names no agent of the network.
    #[error("names no agent: {0:?}")]
    UnknownAgent(String),
    /// A queued fault names no A2A 1.0 method.
    #[error("unknown A2A 1.0 method {0:?}")]
    UnknownMethod(String),
    /// A name that must not be empty is.
    #[error("{0} must not be empty")]
    Empty(&'static str),
    /// A literal part has no content or more than one.
    #[error(
        "a part needs exactly one of `text`, `raw`, `raw_base64`, `url`, `data`, `text_file`, `raw_file`, `data_file`"
    )]
    PartContent,
    /// A binding is listed twice.
    #[error("binding {0:?} is listed twice")]
    DuplicateBinding(String),
    /// A 0.3 agent lists a binding other than JSON-RPC.
    #[error("binding {0:?} needs protocol 1.0 (a 0.3 agent serves jsonrpc only)")]
    BindingNeeds10(String),
    /// An option that only a 1.0 agent has is set on a 0.3 agent.
    #[error("{0} needs protocol 1.0")]
    Needs10(&'static str),
    /// A tenant the HTTP+JSON binding would read as one of its routes.
    #[error("tenant {0:?} is an HTTP+JSON route name (`/{0}/…` would not reach the tenant)")]
    TenantIsARoute(String),
    /// `card_protocol_version` does not name version 1.0.
    #[error("{0:?} is not a 1.0 version (such as \"1.0\" or \"1.0.3\")")]
    NotVersion10(String),
    /// A list of times that must increase does not.
    #[error("{0} must be greater than the previous one's")]
    NotIncreasing(&'static str),
    /// A card change that changes nothing.
    #[error("tenant {0:?} is the card's tenant already (a change must change it)")]
    Unchanged(String),
    /// An extension URI that is empty, padded or holds a comma (the `A2A-Extensions` separator).
    #[error("{0:?} is not an extension URI (non-empty, no comma, no surrounding space)")]
    NotAnExtensionUri(String),
    /// An extension is listed twice.
    #[error("extension {0:?} is listed twice")]
    DuplicateExtension(String),
    /// A credential that is not `<scheme> <credentials>`.
    #[error("must be `<scheme> <credentials>` such as \"Bearer agent-cred-7\"")]
    NotACredential,
    /// `scope = "extended_card"` on an agent without an extended card.
    #[error(
        "scope \"extended_card\" needs an extended card (an `extended_skill` or `extended_tenant`)"
    )]
    ScopeNeedsExtendedCard,
    /// `scope = "all"` with an `auth_required` step: both would use `Authorization`.
    #[error(
        "scope \"all\" cannot be combined with an `auth_required` step (both use Authorization)"
    )]
    ScopeAllWithAuthRequired,
    /// An `artifact` step has both `parts` and `chunks`, or neither.
    #[error("an `artifact` step needs exactly one of `parts` and `chunks`")]
    PartsOrChunks,
    /// An `omit_fields` pointer does not point inside the answer's `result`.
    #[error("{0:?} is not a JSON pointer inside the result (it must start with \"/result/\")")]
    NotAResultPointer(String),
    /// A `malformed_event` step's `omit` is no REQUIRED field of its event.
    #[error("{0:?} cannot be omitted from this event: one of {1:?}")]
    NotOmittable(String, &'static [&'static str]),
}

/// A script that parses but is inconsistent: where (a path such as `agent[0].rule[1].steps[2]`)
/// and what.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{path}: {problem}")]
pub struct ValidationError {
    /// The field, as a path into the script.
    pub path: String,
    /// What is wrong.
    pub problem: Problem,
}
