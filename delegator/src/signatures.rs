//! Signed agent cards (A2A §8.4.3) under the policy of `init.card_signatures`.
//!
//! A card with `signatures` is trusted when one of them verifies
//! ([`a2a_protocol::signing::verify_card`]): the protected header's `kid` names a key of the
//! policy's `trusted_keys` that has not expired (`exp`), and the JWS verifies over the card
//! without `signatures` and without default-valued members, canonicalised with JCS. Keys are
//! taken only from the trusted keys (the spec's "trusted key store"): a card's `jku` is never
//! fetched, since a key found through the card itself proves nothing about the card. A card
//! whose signatures all fail is not used; an unsigned card is not used when the policy requires
//! signatures. Without a policy the delegator has no keys: signatures are not checked.

use crate::bugs::{Bug, Bugs};
use a2a_driver_contract::CardSignaturePolicy;
use a2a_protocol::signing;
use serde_json::Value;

/// Why `card` must not be used under `policy` at `now` (seconds since the epoch), or `None`
/// when it may be.
pub fn card_problem(
    card: &Value,
    policy: Option<&CardSignaturePolicy>,
    now: i64,
    bugs: Bugs,
) -> Option<String> {
    let problem = signature_problem(card, policy?, now, bugs)?;
    // The planted bug `skip-card-signature` is asked only about a card that would be refused.
    if bugs.has(Bug::SkipCardSignature) {
        return None;
    }
    Some(problem)
}

/// Why `card` fails `policy`'s signature requirements at `now`, or `None` when it meets them.
fn signature_problem(
    card: &Value,
    policy: &CardSignaturePolicy,
    now: i64,
    bugs: Bugs,
) -> Option<String> {
    let signed = card
        .get("signatures")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    if !signed {
        return policy
            .required
            .then(|| "the card carries no signature and signatures are required".to_string());
    }
    let payload = if bugs.has(Bug::CanonicaliseWrong) {
        // Planted: JCS over the card as received, default-valued members kept.
        let mut c = card.clone();
        if let Some(o) = c.as_object_mut() {
            o.remove("signatures");
        }
        signing::jcs(&c)
    } else {
        signing::canonical_payload(card)
    };
    let verified = payload
        .and_then(|p: Vec<u8>| signing::verify_card_over(card, &p, &policy.trusted_keys, now));
    match verified {
        Ok(kid) => {
            tracing::debug!(kid, "agent card signature verified");
            None
        }
        Err(e) => Some(format!("its card signature does not verify: {e}")),
    }
}

/// Now, in seconds since the epoch.
pub fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn card() -> Value {
        json!({"name": "a", "description": "d", "version": "1",
            "supportedInterfaces": [{"url": "http://127.0.0.1:1/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "s", "description": "s", "tags": ["t"]}]})
    }

    fn policy(keys: Value, required: bool) -> CardSignaturePolicy {
        CardSignaturePolicy {
            trusted_keys: json!({"keys": keys}),
            required,
        }
    }

    #[test]
    fn policy_decides_which_cards_are_used() {
        let k = signing::SigningKey::from_seed("k", &[1; 32]).unwrap();
        let mut signed = card();
        signed["signatures"] = json!([k.sign_card(&card(), None).unwrap()]);
        // Served with default-valued members: still good.
        signed["securitySchemes"] = json!({});
        let trusted = policy(json!([k.public_jwk(None)]), true);
        let none = Bugs::none();
        assert_eq!(card_problem(&signed, Some(&trusted), now(), none), None);
        assert!(card_problem(&card(), Some(&trusted), now(), none).is_some());
        assert_eq!(
            card_problem(&card(), Some(&policy(json!([]), false)), now(), none),
            None
        );
        assert!(card_problem(&signed, Some(&policy(json!([]), false)), now(), none).is_some());
        let expired = policy(json!([k.public_jwk(Some(1))]), false);
        assert!(card_problem(&signed, Some(&expired), now(), none).is_some());
        let mut altered = signed.clone();
        altered["name"] = json!("b");
        assert!(card_problem(&altered, Some(&trusted), now(), none).is_some());
        // No policy: nothing is checked.
        assert_eq!(card_problem(&altered, None, now(), none), None);
    }
}
