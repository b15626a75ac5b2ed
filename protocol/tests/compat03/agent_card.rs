//! The agent card.

use super::*;

fn card03() -> Value {
    json!({
        "protocolVersion": "0.3",
        "name": "mock", "description": "d", "version": "0.1.0",
        "url": "http://127.0.0.1:9101/a2a",
        "preferredTransport": "JSONRPC",
        "additionalInterfaces": [
            {"url": "http://127.0.0.1:9101/a2a", "transport": "JSONRPC"},
            {"url": "http://127.0.0.1:9101/rest", "transport": "HTTP+JSON"}
        ],
        "capabilities": {"streaming": true, "pushNotifications": false},
        "supportsAuthenticatedExtendedCard": true,
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"],
                    "security": [{"oauth": ["read"]}]}],
        "securitySchemes": {
            "key": {"type": "apiKey", "name": "X-Key", "in": "header", "description": "k"},
            "bearer": {"type": "http", "scheme": "Bearer", "bearerFormat": "JWT"},
            "oauth": {"type": "oauth2", "flows": {"clientCredentials":
                {"tokenUrl": "https://t", "scopes": {"read": "r"}}}},
            "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://o"},
            "mtls": {"type": "mutualTLS", "description": "m"}
        },
        "security": [{"bearer": []}, {"oauth": ["read", "write"], "key": []}]
    })
}

fn card1() -> Value {
    json!({
        "name": "mock", "description": "d", "version": "0.1.0",
        "supportedInterfaces": [
            {"url": "http://127.0.0.1:9101/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            {"url": "http://127.0.0.1:9101/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3"}
        ],
        "capabilities": {"streaming": true, "pushNotifications": false, "extendedAgentCard": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"],
                    "securityRequirements": [{"schemes": {"oauth": {"list": ["read"]}}}]}],
        "securitySchemes": {
            "key": {"apiKeySecurityScheme": {"name": "X-Key", "location": "header", "description": "k"}},
            "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}},
            "oauth": {"oauth2SecurityScheme": {"flows": {"clientCredentials":
                {"tokenUrl": "https://t", "scopes": {"read": "r"}}}}},
            "oidc": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://o"}},
            "mtls": {"mtlsSecurityScheme": {"description": "m"}}
        },
        "securityRequirements": [
            {"schemes": {"bearer": {"list": []}}},
            {"schemes": {"oauth": {"list": ["read", "write"]}, "key": {"list": []}}}
        ]
    })
}

#[test]
fn card_both_ways() {
    both_ways(ObjectKind::AgentCard, card03(), card1());
}

#[test]
fn card_interfaces() {
    let v1 = to_v1(
        ObjectKind::AgentCard,
        &json!({"url": "http://a/", "protocolVersion": "0.3.0", "capabilities": {}}),
    )
    .expect("card");
    assert_eq!(
        v1["supportedInterfaces"],
        json!([{"url": "http://a/", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}])
    );
    for legacy in [
        "url",
        "preferredTransport",
        "additionalInterfaces",
        "protocolVersion",
    ] {
        assert!(v1.get(legacy).is_none(), "{legacy}");
    }
    let back = to_v03(
        ObjectKind::AgentCard,
        &json!({"supportedInterfaces": [
            {"url": "http://a/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": "x"},
            {"url": "grpc://a", "protocolBinding": "GRPC", "protocolVersion": "1.0"}]}),
    )
    .expect("0.3 card");
    assert_eq!(back["url"], json!("http://a/"));
    assert_eq!(back["preferredTransport"], json!("JSONRPC"));
    assert_eq!(back["protocolVersion"], json!("1.0"));
    assert_eq!(
        back["additionalInterfaces"],
        json!([{"url": "http://a/", "transport": "JSONRPC"},
               {"url": "grpc://a", "transport": "GRPC"}])
    );
}

#[test]
fn card_keeps_existing_supported_interfaces() {
    let hybrid = json!({"url": "http://legacy/", "protocolVersion": "0.3",
        "supportedInterfaces": [{"url": "http://new/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]});
    let v1 = to_v1(ObjectKind::AgentCard, &hybrid).expect("hybrid");
    assert_eq!(
        v1,
        json!({"supportedInterfaces": [{"url": "http://new/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]})
    );
}

#[test]
fn card_extended_card_flag() {
    let v1 = to_v1(
        ObjectKind::AgentCard,
        &json!({"url": "u", "supportsAuthenticatedExtendedCard": false}),
    )
    .expect("flag");
    assert_eq!(v1["capabilities"], json!({"extendedAgentCard": false}));
    let v03 = to_v03(
        ObjectKind::AgentCard,
        &json!({"supportedInterfaces": [{"url": "u", "protocolBinding": "JSONRPC"}],
                "capabilities": {"extendedAgentCard": true}}),
    )
    .expect("flag");
    assert_eq!(v03["supportsAuthenticatedExtendedCard"], json!(true));
    assert_eq!(v03["capabilities"], json!({}));
}

#[test]
fn card_state_transition_history_is_dropped() {
    let v1 = to_v1(
        ObjectKind::AgentCard,
        &json!({"url": "u", "capabilities": {"stateTransitionHistory": true, "streaming": true}}),
    )
    .expect("caps");
    assert_eq!(v1["capabilities"], json!({"streaming": true}));
}

#[test]
fn card_security_scheme_api_key_location() {
    let card = json!({"url": "u", "securitySchemes": {"k": {"type": "apiKey", "name": "n", "in": "query"}}});
    let v1 = to_v1(ObjectKind::AgentCard, &card).expect("apiKey");
    assert_eq!(
        v1["securitySchemes"]["k"],
        json!({"apiKeySecurityScheme": {"name": "n", "location": "query"}})
    );
}

#[test]
fn card_security_scheme_oauth_keeps_one_flow() {
    let card = json!({"url": "u", "securitySchemes": {"o": {"type": "oauth2",
        "flows": {"implicit": {"authorizationUrl": "a", "scopes": {}},
                  "authorizationCode": {"authorizationUrl": "a", "tokenUrl": "t", "scopes": {}}}}}});
    let v1 = to_v1(ObjectKind::AgentCard, &card).expect("oauth");
    let flows = &v1["securitySchemes"]["o"]["oauth2SecurityScheme"]["flows"];
    assert!(flows.get("authorizationCode").is_some());
    assert!(flows.get("implicit").is_none());
}

#[test]
fn card_security_scheme_errors() {
    let card = json!({"url": "u", "securitySchemes": {"my key": {"type": "kerberos"}}});
    let e = to_v1(ObjectKind::AgentCard, &card).expect_err("type");
    assert_eq!(
        e.to_string(),
        "$.securitySchemes[\"my key\"].type: unknown security scheme type \"kerberos\""
    );
    let card = json!({"supportedInterfaces": [{"url": "u", "protocolBinding": "JSONRPC"}],
                      "securitySchemes": {"k": {}}});
    let e = to_v03(ObjectKind::AgentCard, &card).expect_err("wrapper");
    assert_eq!(e.path, "$.securitySchemes.k");
}

#[test]
fn card_security_requirements() {
    let v1 = to_v1(
        ObjectKind::AgentCard,
        &json!({"url": "u", "security": [{"a": ["s1", "s2"]}]}),
    )
    .expect("security");
    assert_eq!(
        v1["securityRequirements"],
        json!([{"schemes": {"a": {"list": ["s1", "s2"]}}}])
    );
    assert!(v1.get("security").is_none());
    let v03 = to_v03(
        ObjectKind::AgentCard,
        &json!({"supportedInterfaces": [{"url": "u", "protocolBinding": "JSONRPC"}],
                "securityRequirements": [{"schemes": {"a": {}}}]}),
    )
    .expect("requirements");
    assert_eq!(v03["security"], json!([{"a": []}]));
}

#[test]
fn card_missing_url_errors() {
    let e = to_v1(ObjectKind::AgentCard, &json!({"name": "x"})).expect_err("url");
    assert_eq!(e.to_string(), "$.url: missing required field");
    let e = to_v03(ObjectKind::AgentCard, &json!({"supportedInterfaces": []})).expect_err("empty");
    assert_eq!(e.path, "$.supportedInterfaces");
}
