//! SDK → Rust: every SDK-emitted value conforms, decodes here and re-encodes equal.

use super::*;

/// One SDK-produced JSON value.
pub(crate) struct Emitted {
    pub(crate) label: String,
    pub(crate) ty: ObjectType,
    pub(crate) json: Value,
}

/// Object types the SDK emits only nested inside others: (label of the emitted item, JSON
/// pointer into it, type). Each is checked on its own as well, so that every message type of
/// the SDK crosses SDK → Rust.
pub(crate) const NESTED: &[(&str, &str, ObjectType)] = &[
    ("AgentCard", "/provider", O::AgentProvider),
    ("AgentCard", "/signatures/0", O::AgentCardSignature),
    (
        "AgentCard",
        "/securityRequirements/0",
        O::SecurityRequirement,
    ),
    (
        "AgentCard",
        "/securityRequirements/1",
        O::SecurityRequirement,
    ),
    (
        "AgentCard",
        "/securityRequirements/0/schemes/bearer",
        O::StringList,
    ),
    (
        "AgentCard",
        "/securityRequirements/1/schemes/oauth",
        O::StringList,
    ),
    ("AgentCapabilities", "/extensions/0", O::AgentExtension),
    ("AgentCapabilities", "/extensions/1", O::AgentExtension),
    (
        "SecurityScheme/apiKey",
        "/apiKeySecurityScheme",
        O::ApiKeySecurityScheme,
    ),
    (
        "SecurityScheme/httpAuth",
        "/httpAuthSecurityScheme",
        O::HttpAuthSecurityScheme,
    ),
    (
        "SecurityScheme/openIdConnect",
        "/openIdConnectSecurityScheme",
        O::OpenIdConnectSecurityScheme,
    ),
    (
        "SecurityScheme/mtls",
        "/mtlsSecurityScheme",
        O::MutualTlsSecurityScheme,
    ),
    (
        "SecurityScheme/oauth2/authorizationCode",
        "/oauth2SecurityScheme",
        O::OAuth2SecurityScheme,
    ),
    (
        "SecurityScheme/oauth2/authorizationCode",
        "/oauth2SecurityScheme/flows",
        O::OAuthFlows,
    ),
    (
        "SecurityScheme/oauth2/authorizationCode",
        "/oauth2SecurityScheme/flows/authorizationCode",
        O::AuthorizationCodeOAuthFlow,
    ),
    (
        "SecurityScheme/oauth2/clientCredentials",
        "/oauth2SecurityScheme/flows",
        O::OAuthFlows,
    ),
    (
        "SecurityScheme/oauth2/clientCredentials",
        "/oauth2SecurityScheme/flows/clientCredentials",
        O::ClientCredentialsOAuthFlow,
    ),
    (
        "SecurityScheme/oauth2/deviceCode",
        "/oauth2SecurityScheme/flows",
        O::OAuthFlows,
    ),
    (
        "SecurityScheme/oauth2/deviceCode",
        "/oauth2SecurityScheme/flows/deviceCode",
        O::DeviceCodeOAuthFlow,
    ),
    (
        "SecurityScheme/oauth2/implicit(deprecated)",
        "/oauth2SecurityScheme",
        O::OAuth2SecurityScheme,
    ),
    (
        "SecurityScheme/oauth2/implicit(deprecated)",
        "/oauth2SecurityScheme/flows",
        O::OAuthFlows,
    ),
    (
        "SecurityScheme/oauth2/implicit(deprecated)",
        "/oauth2SecurityScheme/flows/implicit",
        O::ImplicitOAuthFlow,
    ),
    (
        "SecurityScheme/oauth2/password(deprecated)",
        "/oauth2SecurityScheme/flows",
        O::OAuthFlows,
    ),
    (
        "SecurityScheme/oauth2/password(deprecated)",
        "/oauth2SecurityScheme/flows/password",
        O::PasswordOAuthFlow,
    ),
];

/// The SDK's `emit` output plus the nested values of [`NESTED`], fetched once per test binary.
pub(crate) fn emitted() -> &'static [Emitted] {
    static EMITTED: OnceLock<Vec<Emitted>> = OnceLock::new();
    EMITTED.get_or_init(|| {
        let raw = oracle("emit", None);
        let items = raw.as_array().expect("emit prints a JSON array");
        let mut out = Vec::new();
        for item in items {
            let name = item["type"].as_str().expect("emit item has a type");
            let label = item["label"].as_str().expect("emit item has a label");
            let ty = ObjectType::from_name(name)
                .unwrap_or_else(|| panic!("the SDK emitted {name:?}, which has no ObjectType"));
            out.push(Emitted {
                label: label.to_string(),
                ty,
                json: item["json"].clone(),
            });
        }
        for (label, pointer, ty) in NESTED {
            let parent = out
                .iter()
                .find(|e| e.label == *label)
                .unwrap_or_else(|| panic!("the SDK emitted no item labelled {label:?}"));
            let json = parent
                .json
                .pointer(pointer)
                .unwrap_or_else(|| panic!("SDK item {label:?} has nothing at {pointer}"))
                .clone();
            out.push(Emitted {
                label: format!("{label}{pointer}"),
                ty: *ty,
                json,
            });
        }
        out
    })
}

#[test]
fn sdk_json_decodes_here_without_deviation_and_reencodes_equal() {
    let items = emitted();
    assert!(!items.is_empty(), "the SDK emitted nothing");
    let mut failures = Vec::new();
    for Emitted { label, ty, json } in items {
        let deviations = conformance(*ty, json);
        if !deviations.is_empty() {
            let list: Vec<String> = deviations.iter().map(|d| format!("    {d}")).collect();
            failures.push(format!(
                "{label} ({}): {} deviation(s) on SDK output:\n{}",
                ty.name(),
                deviations.len(),
                list.join("\n")
            ));
        }
        match reencode(*ty, json) {
            Err(e) => failures.push(format!("{label} ({}): {e}", ty.name())),
            Ok(ours) => {
                let (ours, theirs) = (normalise(&ours), normalise(json));
                if ours != theirs {
                    failures.push(format!(
                        "{label} ({}): re-encoded JSON differs from the SDK's\n{}",
                        ty.name(),
                        differences("SDK", &theirs, "Rust", &ours)
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} SDK-produced items did not cross SDK → Rust:\n\n{}",
        failures.len(),
        items.len(),
        failures.join("\n\n")
    );
}
