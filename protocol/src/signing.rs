//! Signed agent cards (A2A 1.0 §8.4): the canonical payload, JWS signing and verification.
//!
//! **Payload** ([`canonical_payload`], §8.4.1, §8.4.3 steps 3-5): the card as JSON, without its
//! `signatures` member and without members that hold a default value, canonicalised with JCS
//! (RFC 8785). A member is dropped when its value is the proto3 default (`""`, `false`, `0`,
//! `null`, `[]`, `{}`) and its field is neither `REQUIRED` nor declared `optional` in the proto
//! (`AgentCard.documentationUrl`, `AgentCapabilities.streaming`, …); members this module does
//! not know, and the contents of free-form `Struct`s (`params`, `header`), are kept as they
//! are.
//!
//! **Signature** (§8.4.2): a JWS (RFC 7515) in the card's `signatures` array as an
//! `AgentCardSignature` (`protected`, `signature`, optional `header`): the protected header
//! carries `alg`, `typ: "JOSE"`, `kid` and optionally `jku`; the signing input is
//! `BASE64URL(protected) '.' BASE64URL(payload)`.
//!
//! **Keys**: [`SigningKey`] is an Ed25519 key (JWS `alg: "EdDSA"`, RFC 8037) made from a seed,
//! so a run's keys and signatures are the same every time. [`verify_card`] accepts any
//! asymmetric JWS algorithm `jsonwebtoken` implements. A key in a JWKS may carry `exp` (a
//! NumericDate, seconds since the epoch, as RFC 7519 §4.1.4 defines it for tokens; JOSE
//! libraries such as Nimbus read the same member on a JWK): from then on the key is expired and
//! is never used (§8.4.3: expired or revoked keys MUST NOT be used for verification).
//!
//! The cryptography is `jsonwebtoken` over `aws-lc-rs`; JCS is `serde_json_canonicalizer`.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, jwk::Jwk};
use serde_json::{Map, Value, json};

/// The JWS algorithm of [`SigningKey`].
pub const ALG: &str = "EdDSA";

/// Why a card could not be signed or verified.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SignatureError {
    /// The card has no `signatures` (or an empty array).
    #[error("the card carries no signature")]
    Unsigned,
    /// A signature or key is not well formed.
    #[error("malformed: {0}")]
    Malformed(String),
    /// No trusted key has the signature's `kid`.
    #[error("key {0:?} is not a trusted key")]
    UntrustedKey(String),
    /// The trusted key with this `kid` has expired (`exp` in the past).
    #[error("key {0:?} has expired")]
    ExpiredKey(String),
    /// The algorithm is not an asymmetric JWS algorithm this module verifies.
    #[error("algorithm {0:?} is not accepted")]
    Algorithm(String),
    /// The signature does not verify with the key: the card was altered, or another key signed.
    #[error("the signature by key {0:?} does not verify")]
    BadSignature(String),
    /// Signing failed.
    #[error("signing failed: {0}")]
    Sign(String),
}

/// How a field of a card message is treated when default values are removed.
#[derive(Clone, Copy)]
enum Field {
    /// `REQUIRED` or `optional`: always kept.
    Kept,
    /// Dropped when it holds a default value.
    Plain,
}

/// The card messages' fields this module knows: (json name, presence, message of the value or
/// of each element / map value).
type Schema = &'static [(&'static str, Field, Option<Msg>)];

#[derive(Clone, Copy)]
enum Msg {
    Card,
    Interface,
    Provider,
    Capabilities,
    Extension,
    Skill,
    SecurityRequirement,
    SecurityScheme,
    ApiKey,
    HttpAuth,
    OAuth2,
    OpenId,
    Mtls,
    Flows,
    AuthCodeFlow,
    ClientCredentialsFlow,
    DeviceCodeFlow,
    LegacyFlow,
    StringList,
    /// A `map<string, string>` (OAuth scopes): entries are data.
    StringMap,
}

use Field::{Kept, Plain};

fn schema(m: Msg) -> Schema {
    match m {
        Msg::Card => &[
            ("name", Kept, None),
            ("description", Kept, None),
            ("supportedInterfaces", Kept, Some(Msg::Interface)),
            ("provider", Plain, Some(Msg::Provider)),
            ("version", Kept, None),
            ("documentationUrl", Kept, None),
            ("capabilities", Kept, Some(Msg::Capabilities)),
            ("securitySchemes", Plain, Some(Msg::SecurityScheme)),
            (
                "securityRequirements",
                Plain,
                Some(Msg::SecurityRequirement),
            ),
            ("defaultInputModes", Kept, None),
            ("defaultOutputModes", Kept, None),
            ("skills", Kept, Some(Msg::Skill)),
            ("iconUrl", Kept, None),
        ],
        Msg::Interface => &[
            ("url", Kept, None),
            ("protocolBinding", Kept, None),
            ("tenant", Plain, None),
            ("protocolVersion", Kept, None),
        ],
        Msg::Provider => &[("url", Kept, None), ("organization", Kept, None)],
        Msg::Capabilities => &[
            ("streaming", Kept, None),
            ("pushNotifications", Kept, None),
            ("extensions", Plain, Some(Msg::Extension)),
            ("extendedAgentCard", Kept, None),
        ],
        Msg::Extension => &[
            ("uri", Plain, None),
            ("description", Plain, None),
            ("required", Plain, None),
            ("params", Plain, None),
        ],
        Msg::Skill => &[
            ("id", Kept, None),
            ("name", Kept, None),
            ("description", Kept, None),
            ("tags", Kept, None),
            ("examples", Plain, None),
            ("inputModes", Plain, None),
            ("outputModes", Plain, None),
            (
                "securityRequirements",
                Plain,
                Some(Msg::SecurityRequirement),
            ),
        ],
        Msg::SecurityRequirement => &[("schemes", Plain, Some(Msg::StringList))],
        Msg::StringList => &[("list", Plain, None)],
        Msg::SecurityScheme => &[
            ("apiKeySecurityScheme", Plain, Some(Msg::ApiKey)),
            ("httpAuthSecurityScheme", Plain, Some(Msg::HttpAuth)),
            ("oauth2SecurityScheme", Plain, Some(Msg::OAuth2)),
            ("openIdConnectSecurityScheme", Plain, Some(Msg::OpenId)),
            ("mtlsSecurityScheme", Plain, Some(Msg::Mtls)),
        ],
        Msg::ApiKey => &[
            ("description", Plain, None),
            ("location", Kept, None),
            ("name", Kept, None),
        ],
        Msg::HttpAuth => &[
            ("description", Plain, None),
            ("scheme", Kept, None),
            ("bearerFormat", Plain, None),
        ],
        Msg::OAuth2 => &[
            ("description", Plain, None),
            ("flows", Kept, Some(Msg::Flows)),
            ("oauth2MetadataUrl", Plain, None),
        ],
        Msg::OpenId => &[
            ("description", Plain, None),
            ("openIdConnectUrl", Kept, None),
        ],
        Msg::Mtls => &[("description", Plain, None)],
        Msg::Flows => &[
            ("authorizationCode", Plain, Some(Msg::AuthCodeFlow)),
            ("clientCredentials", Plain, Some(Msg::ClientCredentialsFlow)),
            ("implicit", Plain, Some(Msg::LegacyFlow)),
            ("password", Plain, Some(Msg::LegacyFlow)),
            ("deviceCode", Plain, Some(Msg::DeviceCodeFlow)),
        ],
        Msg::AuthCodeFlow => &[
            ("authorizationUrl", Kept, None),
            ("tokenUrl", Kept, None),
            ("refreshUrl", Plain, None),
            ("scopes", Kept, Some(Msg::StringMap)),
            ("pkceRequired", Plain, None),
        ],
        Msg::ClientCredentialsFlow => &[
            ("tokenUrl", Kept, None),
            ("refreshUrl", Plain, None),
            ("scopes", Kept, Some(Msg::StringMap)),
        ],
        Msg::DeviceCodeFlow => &[
            ("deviceAuthorizationUrl", Kept, None),
            ("tokenUrl", Kept, None),
            ("refreshUrl", Plain, None),
            ("scopes", Kept, Some(Msg::StringMap)),
        ],
        Msg::LegacyFlow => &[
            ("authorizationUrl", Plain, None),
            ("tokenUrl", Plain, None),
            ("refreshUrl", Plain, None),
            ("scopes", Plain, Some(Msg::StringMap)),
        ],
        Msg::StringMap => &[],
    }
}

/// Is `v` the proto3 default of whatever field holds it?
fn is_default(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

/// Map fields: their values are messages, their keys data.
fn is_map(m: Msg, key: &str) -> bool {
    matches!(
        (m, key),
        (Msg::Card, "securitySchemes") | (Msg::SecurityRequirement, "schemes")
    )
}

fn strip_message(m: Msg, obj: &Map<String, Value>) -> Map<String, Value> {
    let fields = schema(m);
    let mut out = Map::new();
    for (k, v) in obj {
        let Some((_, presence, child)) = fields.iter().find(|(name, ..)| name == k) else {
            // Unknown to this module (or a map entry): kept as it is.
            out.insert(k.clone(), v.clone());
            continue;
        };
        let v = match (child, v) {
            (Some(c), Value::Object(o)) if is_map(m, k) => Value::Object(
                o.iter()
                    .map(|(mk, mv)| {
                        let mv = match mv {
                            Value::Object(inner) => Value::Object(strip_message(*c, inner)),
                            other => other.clone(),
                        };
                        (mk.clone(), mv)
                    })
                    .collect(),
            ),
            (Some(Msg::StringMap), other) => other.clone(),
            (Some(c), Value::Object(o)) => Value::Object(strip_message(*c, o)),
            (Some(c), Value::Array(a)) => Value::Array(
                a.iter()
                    .map(|e| match e {
                        Value::Object(o) => Value::Object(strip_message(*c, o)),
                        other => other.clone(),
                    })
                    .collect(),
            ),
            (_, other) => other.clone(),
        };
        if matches!(presence, Plain) && is_default(&v) {
            continue;
        }
        out.insert(k.clone(), v);
    }
    out
}

/// The card without `signatures` and without members holding default values (§8.4.1 rule 1,
/// §8.4.3 steps 3-4), still as JSON.
pub fn strip_for_signing(card: &Value) -> Result<Value, SignatureError> {
    let Value::Object(o) = card else {
        return Err(SignatureError::Malformed(
            "the card is not a JSON object".into(),
        ));
    };
    let mut o = o.clone();
    o.remove("signatures");
    Ok(Value::Object(strip_message(Msg::Card, &o)))
}

/// The bytes a card signature covers: [`strip_for_signing`], then JCS (RFC 8785).
///
/// ```
/// # use serde_json::json;
/// let card = json!({"name": "Example Agent", "description": "",
///     "capabilities": {"streaming": false, "pushNotifications": false, "extensions": []},
///     "skills": [], "signatures": [{"protected": "e30", "signature": "AA"}]});
/// let payload = a2a_protocol::signing::canonical_payload(&card).unwrap();
/// assert_eq!(
///     String::from_utf8(payload).unwrap(),
///     r#"{"capabilities":{"pushNotifications":false,"streaming":false},"description":"","name":"Example Agent","skills":[]}"#
/// );
/// ```
pub fn canonical_payload(card: &Value) -> Result<Vec<u8>, SignatureError> {
    jcs(&strip_for_signing(card)?)
}

/// JCS (RFC 8785) of any JSON value.
pub fn jcs(v: &Value) -> Result<Vec<u8>, SignatureError> {
    serde_json_canonicalizer::to_vec(v).map_err(|e| SignatureError::Malformed(e.to_string()))
}

/// An Ed25519 signing key with its key id.
pub struct SigningKey {
    kid: String,
    pkcs8: Vec<u8>,
    public: Vec<u8>,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// The key made from a 32-byte seed (the same seed gives the same key).
    pub fn from_seed(kid: impl Into<String>, seed: &[u8; 32]) -> Result<Self, SignatureError> {
        use aws_lc_rs::signature::KeyPair;
        let pair = aws_lc_rs::signature::Ed25519KeyPair::from_seed_unchecked(seed)
            .map_err(|e| SignatureError::Sign(e.to_string()))?;
        let pkcs8 = pair
            .to_pkcs8()
            .map_err(|e| SignatureError::Sign(e.to_string()))?
            .as_ref()
            .to_vec();
        Ok(SigningKey {
            kid: kid.into(),
            pkcs8,
            public: pair.public_key().as_ref().to_vec(),
        })
    }

    /// The key id.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The raw 32-byte public key.
    pub fn public_key(&self) -> &[u8] {
        &self.public
    }

    /// The public key as a JWK (RFC 8037 `OKP`/`Ed25519`), with `exp` when given.
    pub fn public_jwk(&self, exp: Option<i64>) -> Value {
        let mut jwk = json!({
            "kty": "OKP",
            "crv": "Ed25519",
            "x": B64.encode(&self.public),
            "kid": self.kid,
            "alg": ALG,
            "use": "sig",
        });
        if let (Some(e), Value::Object(o)) = (exp, &mut jwk) {
            o.insert("exp".into(), json!(e));
        }
        jwk
    }

    /// Sign `card` (its `signatures` are ignored): the `AgentCardSignature` object, with `jku`
    /// in the protected header when given.
    pub fn sign_card(&self, card: &Value, jku: Option<&str>) -> Result<Value, SignatureError> {
        let mut header = json!({"alg": ALG, "typ": "JOSE", "kid": self.kid});
        if let (Some(u), Value::Object(o)) = (jku, &mut header) {
            o.insert("jku".into(), json!(u));
        }
        let protected = B64
            .encode(serde_json::to_vec(&header).map_err(|e| SignatureError::Sign(e.to_string()))?);
        let input = format!("{protected}.{}", B64.encode(canonical_payload(card)?));
        let signature = jsonwebtoken::crypto::sign(
            input.as_bytes(),
            &EncodingKey::from_ed_der(&self.pkcs8),
            Algorithm::EdDSA,
        )
        .map_err(|e| SignatureError::Sign(e.to_string()))?;
        Ok(json!({"protected": protected, "signature": signature}))
    }
}

/// The decoded protected header of one `AgentCardSignature`.
pub fn protected_header(sig: &Value) -> Result<Map<String, Value>, SignatureError> {
    let p = sig
        .get("protected")
        .and_then(Value::as_str)
        .ok_or_else(|| SignatureError::Malformed("signature without protected".into()))?;
    let bytes = B64
        .decode(p.trim_end_matches('='))
        .map_err(|e| SignatureError::Malformed(format!("protected: {e}")))?;
    match serde_json::from_slice(&bytes) {
        Ok(Value::Object(o)) => Ok(o),
        _ => Err(SignatureError::Malformed(
            "protected is not a JSON object".into(),
        )),
    }
}

/// The asymmetric JWS algorithms accepted (never `none` nor an HMAC).
fn asymmetric(alg: &str) -> Option<Algorithm> {
    let a: Algorithm = alg.parse().ok()?;
    match a {
        Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => None,
        a => Some(a),
    }
}

/// Verify one signature of `card` against `keys` (a JWKS `{"keys": [...]}`) at `now` (seconds
/// since the epoch): the key is found by the protected header's `kid` among `keys`, must not be
/// expired (`exp` <= `now`), and must verify the signature over [`canonical_payload`]. Returns
/// the key id.
pub fn verify_signature(
    card: &Value,
    sig: &Value,
    keys: &Value,
    now: i64,
) -> Result<String, SignatureError> {
    verify_signature_over(&canonical_payload(card)?, sig, keys, now)
}

/// [`verify_signature`] over a payload the caller canonicalised.
pub fn verify_signature_over(
    payload: &[u8],
    sig: &Value,
    keys: &Value,
    now: i64,
) -> Result<String, SignatureError> {
    let header = protected_header(sig)?;
    let kid = header
        .get("kid")
        .and_then(Value::as_str)
        .ok_or_else(|| SignatureError::Malformed("protected header without kid".into()))?
        .to_string();
    let alg_name = header
        .get("alg")
        .and_then(Value::as_str)
        .ok_or_else(|| SignatureError::Malformed("protected header without alg".into()))?;
    let alg = asymmetric(alg_name).ok_or_else(|| SignatureError::Algorithm(alg_name.into()))?;
    let jwk_value = keys
        .get("keys")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|k| k.get("kid").and_then(Value::as_str) == Some(kid.as_str()))
        .ok_or_else(|| SignatureError::UntrustedKey(kid.clone()))?;
    if let Some(exp) = jwk_value.get("exp") {
        match exp.as_i64() {
            Some(e) if e > now => {}
            _ => return Err(SignatureError::ExpiredKey(kid)),
        }
    }
    let jwk: Jwk = serde_json::from_value(jwk_value.clone())
        .map_err(|e| SignatureError::Malformed(format!("key {kid:?}: {e}")))?;
    let key = DecodingKey::from_jwk(&jwk)
        .map_err(|e| SignatureError::Malformed(format!("key {kid:?}: {e}")))?;
    let signature = sig
        .get("signature")
        .and_then(Value::as_str)
        .ok_or_else(|| SignatureError::Malformed("signature without signature".into()))?;
    let protected = sig
        .get("protected")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let input = format!("{protected}.{}", B64.encode(payload));
    match jsonwebtoken::crypto::verify(signature, input.as_bytes(), &key, alg) {
        Ok(true) => Ok(kid),
        _ => Err(SignatureError::BadSignature(kid)),
    }
}

/// Verify `card` (§8.4.3): at least one of its `signatures` verifies with a trusted, unexpired
/// key of `keys` ([`verify_signature`]). Returns that key's id, or the first signature's error
/// ([`SignatureError::Unsigned`] without any).
pub fn verify_card(card: &Value, keys: &Value, now: i64) -> Result<String, SignatureError> {
    verify_card_over(card, &canonical_payload(card)?, keys, now)
}

/// [`verify_card`] over a payload the caller canonicalised from `card`.
pub fn verify_card_over(
    card: &Value,
    payload: &[u8],
    keys: &Value,
    now: i64,
) -> Result<String, SignatureError> {
    let sigs = card
        .get("signatures")
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
        .ok_or(SignatureError::Unsigned)?;
    let mut first = None;
    for s in sigs {
        match verify_signature_over(payload, s, keys, now) {
            Ok(kid) => return Ok(kid),
            Err(e) => {
                first.get_or_insert(e);
            }
        }
    }
    Err(first.unwrap_or(SignatureError::Unsigned))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card() -> Value {
        json!({
            "name": "signer",
            "description": "a signed agent",
            "supportedInterfaces": [{"url": "http://127.0.0.1:1/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "version": "1.0.0",
            "capabilities": {"streaming": true, "pushNotifications": false},
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}]
        })
    }

    fn key() -> SigningKey {
        SigningKey::from_seed("k1", &[7u8; 32]).unwrap()
    }

    fn signed(c: &Value, k: &SigningKey) -> Value {
        let mut c = c.clone();
        c["signatures"] = json!([k.sign_card(&c, None).unwrap()]);
        c
    }

    fn jwks(k: &SigningKey, exp: Option<i64>) -> Value {
        json!({"keys": [k.public_jwk(exp)]})
    }

    #[test]
    fn spec_example_of_default_removal() {
        // §8.4.1's example, with the canonical form the spec gives.
        let c = json!({"name": "Example Agent", "description": "",
            "capabilities": {"streaming": false, "pushNotifications": false, "extensions": []},
            "skills": []});
        assert_eq!(
            String::from_utf8(canonical_payload(&c).unwrap()).unwrap(),
            r#"{"capabilities":{"pushNotifications":false,"streaming":false},"description":"","name":"Example Agent","skills":[]}"#
        );
    }

    #[test]
    fn defaults_dropped_required_and_optional_kept_unknown_untouched() {
        let c = json!({"name": "", "securitySchemes": {}, "securityRequirements": [],
            "documentationUrl": "", "provider": {"url": "", "organization": ""},
            "supportedInterfaces": [{"url": "u", "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": ""}],
            "skills": [{"id": "s", "tags": [], "examples": [], "securityRequirements": [{"schemes": {"b": {"list": []}}}]}],
            "capabilities": {"extensions": [{"uri": "x", "required": false, "description": ""}]},
            "futureField": [], "signatures": [1]});
        assert_eq!(
            strip_for_signing(&c).unwrap(),
            json!({"name": "", "documentationUrl": "", "provider": {"url": "", "organization": ""},
                "supportedInterfaces": [{"url": "u", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
                "skills": [{"id": "s", "tags": [], "securityRequirements": [{"schemes": {"b": {}}}]}],
                "capabilities": {"extensions": [{"uri": "x"}]}, "futureField": []})
        );
    }

    #[test]
    fn sign_then_verify_and_every_way_to_fail() {
        let k = key();
        let c = signed(&card(), &k);
        assert_eq!(verify_card(&c, &jwks(&k, None), 1000).as_deref(), Ok("k1"));
        // Default-valued members added after signing change nothing.
        let mut d = c.clone();
        d["capabilities"]["extensions"] = json!([]);
        d["securitySchemes"] = json!({});
        d["skills"][0]["examples"] = json!([]);
        assert!(verify_card(&d, &jwks(&k, None), 1000).is_ok());
        // Altered after signing.
        let mut a = c.clone();
        a["description"] = json!("something else");
        assert_eq!(
            verify_card(&a, &jwks(&k, None), 1000),
            Err(SignatureError::BadSignature("k1".into()))
        );
        // Expired, untrusted, unsigned.
        assert_eq!(
            verify_card(&c, &jwks(&k, Some(1000)), 1000),
            Err(SignatureError::ExpiredKey("k1".into()))
        );
        assert!(verify_card(&c, &jwks(&k, Some(1001)), 1000).is_ok());
        let other = SigningKey::from_seed("k2", &[8u8; 32]).unwrap();
        assert_eq!(
            verify_card(&c, &jwks(&other, None), 1000),
            Err(SignatureError::UntrustedKey("k1".into()))
        );
        // Another key under the trusted kid: the signature fails.
        let impostor = SigningKey::from_seed("k1", &[9u8; 32]).unwrap();
        assert_eq!(
            verify_card(&signed(&card(), &impostor), &jwks(&k, None), 1000),
            Err(SignatureError::BadSignature("k1".into()))
        );
        assert_eq!(
            verify_card(&card(), &jwks(&k, None), 1000),
            Err(SignatureError::Unsigned)
        );
        // A second, good signature is enough (key rotation).
        let mut two = c.clone();
        two["signatures"] = json!([
            other.sign_card(&card(), None).unwrap(),
            k.sign_card(&card(), None).unwrap()
        ]);
        assert!(verify_card(&two, &jwks(&k, None), 1000).is_ok());
    }

    #[test]
    fn keys_and_signatures_are_deterministic() {
        let a = signed(&card(), &key());
        let b = signed(&card(), &key());
        assert_eq!(a, b);
        assert_eq!(key().public_jwk(None), key().public_jwk(None));
    }

    /// An independent check: the signature is verified with `ring` (not the `jsonwebtoken` /
    /// `aws-lc-rs` pair that made it) over a signing input built from the expected canonical
    /// bytes written out by hand.
    #[test]
    fn independent_verification_with_ring() {
        let k = key();
        let c = signed(&card(), &k);
        let sig = &c["signatures"][0];
        let header = protected_header(sig).unwrap();
        assert_eq!(header.get("alg"), Some(&json!("EdDSA")));
        assert_eq!(header.get("typ"), Some(&json!("JOSE")));
        assert_eq!(header.get("kid"), Some(&json!("k1")));
        let expected = r#"{"capabilities":{"pushNotifications":false,"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"description":"a signed agent","name":"signer","skills":[{"description":"d","id":"s","name":"S","tags":["t"]}],"supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0","url":"http://127.0.0.1:1/a2a"}],"version":"1.0.0"}"#;
        let input = format!(
            "{}.{}",
            sig["protected"].as_str().unwrap(),
            B64.encode(expected)
        );
        let raw = B64.decode(sig["signature"].as_str().unwrap()).unwrap();
        let x = B64
            .decode(k.public_jwk(None)["x"].as_str().unwrap())
            .unwrap();
        ring::signature::UnparsedPublicKey::new(&ring::signature::ED25519, &x)
            .verify(input.as_bytes(), &raw)
            .expect("ring verifies the mock's signature");
    }
}
