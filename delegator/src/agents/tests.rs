//! Tests of agent discovery and routing: lenient card reading, interface selection, caching,
//! routing by skill, output modes and required extensions.

use super::*;
use serde_json::json;

fn card_v1(skill: &str, modes: &[&str]) -> Value {
    json!({
        "name": "a", "description": "d", "version": "1",
        "supportedInterfaces": [
            {"url": "http://127.0.0.1:1/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
            {"url": "/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": "t1"}
        ],
        "capabilities": {"streaming": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": modes,
        "skills": [{"id": skill, "name": "n", "description": "d", "tags": ["x"]}]
    })
}

#[test]
fn v1_card_picks_jsonrpc_and_resolves_url() {
    let a = parse_card(
        "http://127.0.0.1:9/.well-known/agent-card.json",
        &card_v1("s", &["text/plain"]),
        &[Binding::JsonRpc],
    )
    .unwrap();
    assert_eq!(a.endpoint.url, "http://127.0.0.1:9/rpc");
    assert_eq!(a.endpoint.binding, Binding::JsonRpc);
    assert_eq!(a.endpoint.version, ProtocolVersion::V1_0);
    assert_eq!(a.endpoint.tenant.as_deref(), Some("t1"));
    assert!(a.streaming());
    assert!(!a.push());
}

#[test]
fn v03_card_goes_through_the_adapter() {
    let v = json!({
        "name": "old", "description": "d", "version": "1", "url": "http://127.0.0.1:9/a2a",
        "protocolVersion": "0.3.0", "capabilities": {"streaming": false},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "n", "description": "d", "tags": ["x"]}]
    });
    let a = parse_card("http://127.0.0.1:9/.well-known/agent-card.json", &v, &[]).unwrap();
    assert_eq!(a.endpoint.version, ProtocolVersion::V0_3);
    assert_eq!(a.endpoint.url, "http://127.0.0.1:9/a2a");
}

#[test]
fn bad_cards_name_the_problem() {
    let e = parse_card("http://x/", &json!([]), &[]).unwrap_err();
    assert!(e.message.contains("object"));
    let e = parse_card("http://x/", &json!({"name": "n"}), &[]).unwrap_err();
    assert!(e.message.contains("supportedInterfaces"));
    let mut c = card_v1("s", &["text/plain"]);
    c["supportedInterfaces"] = json!([{"url": "http://x", "protocolBinding":
        "https://example.com/soap", "protocolVersion": "1.0"}]);
    let e = parse_card("http://x/", &c, &[]).unwrap_err();
    assert!(e.message.contains("JSONRPC"), "{e}");
    let mut c = card_v1("s", &["text/plain"]);
    c["skills"] = json!("nope");
    let e = parse_card("http://x/", &c, &[]).unwrap_err();
    assert!(e.message.contains("skills"), "{e}");
}

fn iface(binding: &str, url: &str, version: &str) -> Value {
    json!({"url": url, "protocolBinding": binding, "protocolVersion": version})
}

fn select(ifaces: Vec<Value>, prefs: &[Binding]) -> Result<Endpoint, String> {
    let list: Vec<AgentInterface> = ifaces
        .into_iter()
        .map(|v| serde_json::from_value(v).unwrap())
        .collect();
    select_interfaces("http://h:1/.well-known/agent-card.json", &list, prefs)
}

pub(super) fn order(ep: &Endpoint) -> Vec<(Binding, String)> {
    ep.candidates()
        .into_iter()
        .map(|c| (c.binding, c.url))
        .collect()
}

#[test]
fn selection_follows_card_order_then_the_bindings_option() {
    let card = || {
        vec![
            iface("HTTP+JSON", "/rest/", "1.0"),
            iface("JSONRPC", "/rpc", "1.0"),
            iface("https://example.com/custom", "/c", "1.0"),
            iface("JSONRPC", "/old", "0.3"),
        ]
    };
    let ep = select(card(), &[]).unwrap();
    assert_eq!(
        order(&ep),
        vec![
            (Binding::Rest, "http://h:1/rest/".to_string()),
            (Binding::JsonRpc, "http://h:1/rpc".to_string()),
        ]
    );
    assert_eq!(ep.version, ProtocolVersion::V1_0);
    let ep = select(card(), &[Binding::JsonRpc, Binding::Rest]).unwrap();
    assert_eq!(ep.binding, Binding::JsonRpc);
    assert_eq!(ep.fallbacks.len(), 1);
    // The option also restricts: only JSON-RPC, no fallback.
    let ep = select(card(), &[Binding::JsonRpc]).unwrap();
    assert_eq!(
        order(&ep),
        vec![(Binding::JsonRpc, "http://h:1/rpc".to_string())]
    );
    // Never silently down to 0.3 while a 1.x interface is usable.
    let ep = select(card(), &[Binding::Rest]).unwrap();
    assert_eq!(ep.binding, Binding::Rest);
    assert!(ep.fallbacks.is_empty());
    // A 0.3-only card: its JSON-RPC interface, no fallbacks.
    let ep = select(
        vec![
            iface("HTTP+JSON", "/r", "0.3"),
            iface("JSONRPC", "/old", "0.3"),
        ],
        &[],
    )
    .unwrap();
    assert_eq!(
        (ep.binding, ep.version),
        (Binding::JsonRpc, ProtocolVersion::V0_3)
    );
    assert!(ep.fallbacks.is_empty());
    // Restricted to a binding the card lacks: a visible error naming the restriction.
    let e = select(vec![iface("JSONRPC", "/rpc", "1.0")], &[Binding::Rest]).unwrap_err();
    assert!(e.contains("HTTP+JSON") && e.contains("bindings"), "{e}");
}

#[test]
fn grpc_urls_are_normalized() {
    assert_eq!(
        grpc_target("127.0.0.1:50051").unwrap(),
        "http://127.0.0.1:50051"
    );
    assert_eq!(grpc_target("localhost:7").unwrap(), "http://localhost:7");
    assert_eq!(
        grpc_target("https://a.example/a2a/grpc").unwrap(),
        "https://a.example/a2a/grpc"
    );
    assert!(grpc_target("ftp://x:1").is_err());
    assert!(grpc_target("").is_err());
}

#[test]
fn routing_by_skill_and_output_mode() {
    let a = parse_card("http://a/", &card_v1("s", &["image/png"]), &[]).unwrap();
    let b = parse_card("http://b/", &card_v1("s", &["text/plain"]), &[]).unwrap();
    let agents = vec![a, b];
    let mut spec = ArtifactSpec {
        mime_types: vec!["text/*".into()],
        ..Default::default()
    };
    assert_eq!(
        route(&agents, "s", &spec, None).unwrap().card_url,
        "http://b/"
    );
    assert!(route(&agents, "other", &spec, None).is_err());
    assert!(route(&agents, "s", &spec, Some("http://a/")).is_err());
    spec.mime_types = vec!["*/*".into()];
    assert_eq!(
        route(&agents, "s", &spec, None).unwrap().card_url,
        "http://a/"
    );
}

pub(super) fn headers(pairs: &[(&str, &str)]) -> reqwest::header::HeaderMap {
    let mut h = reqwest::header::HeaderMap::new();
    for (k, v) in pairs {
        h.append(
            reqwest::header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
            v.parse().unwrap(),
        );
    }
    h
}

#[test]
fn card_freshness_follows_rfc_9111() {
    let now = Instant::now();
    let c = CardCache::from_headers(
        &headers(&[
            ("cache-control", "public, max-age=60"),
            ("age", "10"),
            ("etag", "\"v1\""),
            ("last-modified", "Sun, 06 Nov 1994 08:49:37 GMT"),
        ]),
        now,
        None,
    );
    assert_eq!(c.lifetime, Duration::from_secs(50));
    assert!(c.is_fresh(now + Duration::from_secs(49)));
    assert!(!c.is_fresh(now + Duration::from_secs(50)));
    assert_eq!(
        c.conditional_headers(),
        vec![
            ("If-None-Match", "\"v1\"".to_string()),
            (
                "If-Modified-Since",
                "Sun, 06 Nov 1994 08:49:37 GMT".to_string()
            )
        ]
    );
    // No caching headers: the default duration.
    let d = CardCache::from_headers(&headers(&[]), now, None);
    assert_eq!(d.lifetime, DEFAULT_CARD_MAX_AGE);
    assert!(d.conditional_headers().is_empty());
    // no-cache: kept, but revalidated before every use; no-store: never reused.
    let nc = CardCache::from_headers(
        &headers(&[
            ("cache-control", "no-cache, max-age=600"),
            ("etag", "\"x\""),
        ]),
        now,
        None,
    );
    assert!(!nc.is_fresh(now));
    assert_eq!(nc.conditional_headers().len(), 1);
    let ns = CardCache::from_headers(
        &headers(&[("cache-control", "no-store"), ("etag", "\"x\"")]),
        now,
        None,
    );
    assert!(!ns.is_fresh(now));
    assert!(ns.conditional_headers().is_empty());
    // Expires relative to Date; an invalid Expires is already stale.
    let e = CardCache::from_headers(
        &headers(&[
            ("date", "Sun, 06 Nov 1994 08:49:37 GMT"),
            ("expires", "Sun, 06 Nov 1994 08:50:37 GMT"),
        ]),
        now,
        None,
    );
    assert_eq!(e.lifetime, Duration::from_secs(60));
    let bad = CardCache::from_headers(&headers(&[("expires", "0")]), now, None);
    assert!(!bad.is_fresh(now));
    // A 304 without freshness headers keeps the entry's lifetime and validators, fresh
    // from now.
    let later = now + Duration::from_secs(100);
    let r = CardCache::from_headers(&headers(&[]), later, Some(&c));
    assert_eq!((r.lifetime, r.fetched), (c.lifetime, later));
    assert_eq!(r.etag, c.etag);
    let r = CardCache::from_headers(
        &headers(&[("cache-control", "max-age=5"), ("etag", "\"v2\"")]),
        later,
        Some(&c),
    );
    assert_eq!(r.lifetime, Duration::from_secs(5));
    assert_eq!(r.etag.as_deref(), Some("\"v2\""));
}

fn secured(schemes: Value, requirements: Value) -> AgentCard {
    let mut v = card_v1("s", &["text/plain"]);
    v["securitySchemes"] = schemes;
    v["securityRequirements"] = requirements;
    a2a_protocol::codec::decode_value(&v).unwrap()
}

#[test]
fn credentials_fit_only_declared_schemes() {
    let bearer = json!({"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}});
    let card = secured(
        bearer.clone(),
        json!([{"schemes": {"bearer": {"list": []}}}]),
    );
    assert!(credential_fits_card(&card, "Bearer abc"));
    assert!(credential_fits_card(&card, "bearer abc"));
    assert!(!credential_fits_card(&card, "Basic dXNlcjpwdw=="));
    assert!(credential_meets_requirements(&card, "Bearer abc"));
    // Declared but not required for every call.
    let card = secured(bearer, json!([]));
    assert!(credential_fits_card(&card, "Bearer abc"));
    assert!(!credential_meets_requirements(&card, "Bearer abc"));
    // A requirement naming an undeclared scheme cannot be met.
    let card = secured(
        json!({"basic": {"httpAuthSecurityScheme": {"scheme": "Basic"}}}),
        json!([{"schemes": {"oauth": {"list": ["read"]}}}]),
    );
    assert!(credential_fits_card(&card, "Basic dXNlcjpwdw=="));
    assert!(!credential_meets_requirements(&card, "Basic dXNlcjpwdw=="));
    let card = secured(
        json!({"o": {"oauth2SecurityScheme": {"flows": {"clientCredentials":
            {"tokenUrl": "https://t", "scopes": {}}}}}}),
        json!([{"schemes": {"o": {"list": []}}}]),
    );
    assert!(credential_meets_requirements(&card, "Bearer t"));
    assert!(!credential_fits_card(&card, "Basic x"));
    // No schemes at all: nothing fits.
    assert!(!credential_fits_card(
        &secured(json!({}), json!([])),
        "Bearer abc"
    ));
}

#[test]
fn required_extensions_decide_use_and_activation() {
    let mut v = card_v1("s", &["text/plain"]);
    v["capabilities"]["extensions"] = json!([
        {"uri": "urn:a", "required": true},
        {"uri": "urn:opt"},
        {"uri": "urn:b", "required": true}
    ]);
    let a = parse_card("http://a/", &v, &[]).unwrap();
    assert_eq!(a.unsupported_extensions, ["urn:a", "urn:b"]);
    assert!(!a.usable());
    let a = a.with_supported_extensions(&["urn:b".into(), "urn:opt".into(), "urn:a".into()]);
    assert!(a.usable());
    assert_eq!(a.endpoint.extensions, ["urn:a", "urn:b"]);
    assert!(
        a.endpoint
            .fallbacks
            .iter()
            .all(|f| f.extensions == ["urn:a", "urn:b"])
    );
    assert_eq!(
        a.endpoint.extensions_header().as_deref(),
        Some("urn:a,urn:b")
    );
    let spec = ArtifactSpec {
        mime_types: vec!["text/plain".into()],
        ..Default::default()
    };
    let picky = parse_card("http://picky/", &v, &[])
        .unwrap()
        .with_supported_extensions(&["urn:a".into()]);
    let e = route(std::slice::from_ref(&picky), "s", &spec, None).unwrap_err();
    assert!(
        e.0.contains("urn:b") && e.0.contains("http://picky/"),
        "{e}"
    );
    assert_eq!(
        route(&[picky, a], "s", &spec, None).unwrap().card_url,
        "http://a/"
    );
}

#[test]
fn the_extended_card_replaces_skills_and_interfaces() {
    let public = parse_card("http://127.0.0.1:9/c", &card_v1("s", &["text/plain"]), &[]).unwrap();
    let mut ext = card_v1("s", &["text/plain"]);
    ext["skills"] = json!([{"id": "premium", "name": "n", "description": "d", "tags": ["x"]}]);
    ext["supportedInterfaces"] = json!([
        {"url": "/premium", "protocolBinding": "JSONRPC", "protocolVersion": "1.0",
         "tenant": "vip"}
    ]);
    let ext = parse_card("http://127.0.0.1:9/c", &ext, &[]).unwrap();
    let spec = ArtifactSpec {
        mime_types: vec!["text/plain".into()],
        ..Default::default()
    };
    let mut with = public.clone();
    with.credential_on_every_request = true;
    let with = with.with_extended_card(ext, &[]);
    assert!(with.extended && with.credential_on_every_request);
    assert!(with.can_do("premium", &spec) && !public.can_do("premium", &spec));
    assert_eq!(with.endpoint.url, "http://127.0.0.1:9/premium");
    assert_eq!(with.endpoint.tenant.as_deref(), Some("vip"));
    assert_eq!(with.public_card, public.card);
}

#[test]
fn a_patch_version_is_version_1_0() {
    let ep = select(vec![iface("JSONRPC", "/rpc", "1.0.3")], &[]).unwrap();
    assert_eq!(ep.version, ProtocolVersion::V1_0);
    assert_eq!(ep.version.header_value(), "1.0");
}
