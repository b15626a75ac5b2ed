//! Signed agent cards (A2A §8.4): each agent with [`CardSigning`] signs its card with its own
//! Ed25519 key, made from the network seed and its name, and serves the public key as a JWKS
//! at [`JWKS_PATH`] on its origin. The harness hands the trusted keys to the delegator
//! ([`trusted_keys`]).

use crate::agent::AgentState;
use crate::journal::Event;
use crate::script::{CardSigning, EXPIRED_KEY_EXP, NetworkSpec, SigningKeyTrust};
use a2a_protocol::signing::{SignatureError, SigningKey};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::sync::Arc;

/// Where an agent serves the JWKS with its card-signing key (the `jku` of its signatures).
pub const JWKS_PATH: &str = "/.well-known/jwks.json";

/// The key id of `agent`'s card-signing key.
pub fn key_id(agent: &str) -> String {
    format!("{agent}-key")
}

/// `agent`'s card-signing key in a network with this seed (the same every run).
pub fn signing_key(seed: u64, agent: &str) -> Result<SigningKey, SignatureError> {
    let mut h = Sha256::new();
    h.update(b"a2a-mock card-signing key\0");
    h.update(seed.to_le_bytes());
    h.update(agent.as_bytes());
    let bytes: [u8; 32] = h.finalize().into();
    SigningKey::from_seed(key_id(agent), &bytes)
}

/// The public JWK of `agent`'s key as the agent publishes it (with `exp` when it is expired).
pub fn public_jwk(seed: u64, agent: &str, trust: SigningKeyTrust) -> Result<Value, SignatureError> {
    let exp = (trust == SigningKeyTrust::Expired).then_some(EXPIRED_KEY_EXP);
    Ok(signing_key(seed, agent)?.public_jwk(exp))
}

/// The JWKS of the keys a delegator is to trust in this network
/// (`init.card_signatures.trusted_keys`): the key of every signing agent whose key is
/// `trusted` or `expired` (the latter with its `exp`), in agent order.
pub fn trusted_keys(spec: &NetworkSpec) -> Result<Value, SignatureError> {
    let mut keys = Vec::new();
    for a in &spec.agents {
        if let Some(s) = &a.card_signing
            && s.key != SigningKeyTrust::Untrusted
        {
            keys.push(public_jwk(spec.seed, &a.name, s.key)?);
        }
    }
    Ok(json!({"keys": keys}))
}

/// The served form of a signed card: signed over `card`, then the default-valued members and
/// the alteration the scenario asks for.
pub(crate) fn sign(st: &AgentState, how: &CardSigning, mut card: Value) -> Value {
    let jku = how.jku.then(|| format!("{}{JWKS_PATH}", st.base_url));
    let sig =
        signing_key(st.net.seed, &st.spec.name).and_then(|k| k.sign_card(&card, jku.as_deref()));
    let Value::Object(o) = &mut card else {
        return card;
    };
    match sig {
        Ok(s) => {
            o.insert("signatures".into(), json!([s]));
        }
        Err(e) => tracing::error!(agent = %st.spec.name, "card signing failed: {e}"),
    }
    if how.default_fields {
        o.insert("securitySchemes".into(), json!({}));
        o.insert("securityRequirements".into(), json!([]));
        if let Some(Value::Object(c)) = o.get_mut("capabilities") {
            c.entry("extensions").or_insert_with(|| json!([]));
        }
        if let Some(Value::Array(skills)) = o.get_mut("skills") {
            for s in skills {
                if let Value::Object(s) = s {
                    s.entry("examples").or_insert_with(|| json!([]));
                }
            }
        }
    }
    if how.altered {
        o.insert(
            "description".into(),
            json!(format!("{} (edited after signing)", st.spec.name)),
        );
    }
    card
}

/// `GET /.well-known/jwks.json`: the agent's public signing key (404 for an agent that does not
/// sign), journaled like a card fetch.
pub(crate) async fn jwks_handler(
    State(st): State<Arc<AgentState>>,
    uri: axum::http::Uri,
    headers: HeaderMap,
) -> Response {
    let req =
        crate::rpc::journal_plain_request(&st, "GET", crate::rpc::path_and_query(&uri), &headers);
    let body = st
        .spec
        .card_signing
        .as_ref()
        .and_then(|s| public_jwk(st.net.seed, &st.spec.name, s.key).ok())
        .map(|k| json!({"keys": [k]}));
    let status = if body.is_some() {
        StatusCode::OK
    } else {
        StatusCode::NOT_FOUND
    };
    let body = body.unwrap_or_else(|| json!({"error": "this agent does not sign its card"}));
    st.journal(Event::Response {
        retry_after_s: None,
        grpc_status: None,
        req,
        status: status.as_u16(),
        rpc_error: None,
        body: body.clone(),
    });
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}
