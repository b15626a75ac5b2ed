//! The secrets the delegator holds ([`SecretKind`], [`known_secrets`]) and the parts of each
//! that are searched for.

use super::*;

/// Secrets shorter than this are not searched for: a short value matches by chance.
pub const MIN_SECRET_BYTES: usize = 8;

/// What a secret is to the delegator. The one list of secret kinds: a new kind is a variant
/// here and a source in [`known_secrets`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SecretKind {
    /// Its own credential (`init.credential`).
    OwnCredential,
    /// A credential scoped to an agent and task (a `credential` message).
    ScopedCredential,
    /// A push token it gave an agent (a push config's `token` or `authentication.credentials`).
    PushToken,
    /// A credential for an agent's security scheme (`init.agent_credentials`).
    AgentCredential,
}

impl SecretKind {
    /// The kind in words.
    pub fn describe(self) -> &'static str {
        match self {
            SecretKind::OwnCredential => "its own credential",
            SecretKind::ScopedCredential => "a scoped credential",
            SecretKind::PushToken => "a push token",
            SecretKind::AgentCredential => "an agent credential",
        }
    }
}

/// One secret the delegator holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Secret {
    /// What it is.
    pub kind: SecretKind,
    /// The value.
    pub value: String,
    /// Where it came from, in words that do not hold it (`init.credential`, `the credential
    /// given for d1`, `the push config sent to a (journal seq 12)`).
    pub origin: String,
    /// The journal sequence that shows it (a push config's request), if any.
    pub witness: Option<u64>,
}

/// Every secret the delegator holds in a case: its own credential, the agent credentials
/// (card URL, credential) it was given, the scoped credentials the harness gave (`given`, kind
/// `auth`) and the push tokens of the push configs it sent (`journal`). Each value once (the
/// first source wins).
pub fn known_secrets(
    own_credential: &str,
    agent_credentials: &[(String, String)],
    given: &[(String, EscalationKind, String)],
    journal: &[Entry],
) -> Vec<Secret> {
    let mut out: Vec<Secret> = Vec::new();
    let mut add = |kind, value: &str, origin: String, witness| {
        if !value.is_empty() && !out.iter().any(|s| s.value == value) {
            out.push(Secret {
                kind,
                value: value.to_string(),
                origin,
                witness,
            });
        }
    };
    add(
        SecretKind::OwnCredential,
        own_credential,
        "init.credential".into(),
        None,
    );
    for (card, cred) in agent_credentials {
        add(
            SecretKind::AgentCredential,
            cred,
            format!("init.agent_credentials for {card}"),
            None,
        );
    }
    for (id, kind, value) in given {
        if *kind == EscalationKind::Auth {
            add(
                SecretKind::ScopedCredential,
                value,
                format!("the credential given for {id}"),
                None,
            );
        }
    }
    for e in journal {
        let Event::Request {
            method: Some(m),
            params,
            ..
        } = &e.event
        else {
            continue;
        };
        for token in push_tokens(m, params) {
            add(
                SecretKind::PushToken,
                token,
                format!(
                    "the push config sent to {} (journal seq {})",
                    e.agent, e.seq
                ),
                Some(e.seq),
            );
        }
    }
    out
}

/// The push tokens in a request's params (JSON-RPC shaped, 1.0 or 0.3 names): the `token` and
/// `authentication.credentials` of the push config in a send's configuration or of a
/// push-config call.
fn push_tokens<'a>(method: &str, params: &'a Value) -> Vec<&'a str> {
    crate::rules::push::push_configs(method, params)
        .into_iter()
        .flat_map(crate::rules::push::config_tokens)
        .collect()
}

/// Which part of a secret was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The whole value.
    Whole,
    /// The token after the scheme word of a `Scheme token` credential.
    Token,
}

/// The token part of a `Scheme token` value: what follows the scheme word and its spaces.
pub(super) fn token_part(value: &str) -> Option<&str> {
    let (scheme, rest) = value.split_once(' ')?;
    let scheme_ok = scheme
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._~+/".contains(c));
    let token = rest.trim();
    (scheme_ok && !token.is_empty() && !token.contains(' ')).then_some(token)
}
