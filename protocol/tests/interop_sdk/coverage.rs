//! What each direction must cover: every SDK message type and every one-of member.

use super::*;

/// The members of every one-of, as `Type.member` (SecurityScheme's OAuth2 member once per flow).
const ONE_OF_MEMBERS: &[&str] = &[
    "Part.text",
    "Part.raw",
    "Part.url",
    "Part.data",
    "SendMessageResponse.task",
    "SendMessageResponse.message",
    "StreamResponse.task",
    "StreamResponse.message",
    "StreamResponse.statusUpdate",
    "StreamResponse.artifactUpdate",
    "SecurityScheme.apiKeySecurityScheme",
    "SecurityScheme.httpAuthSecurityScheme",
    "SecurityScheme.oauth2SecurityScheme.flows.authorizationCode",
    "SecurityScheme.oauth2SecurityScheme.flows.clientCredentials",
    "SecurityScheme.oauth2SecurityScheme.flows.deviceCode",
    "SecurityScheme.oauth2SecurityScheme.flows.implicit",
    "SecurityScheme.oauth2SecurityScheme.flows.password",
    "SecurityScheme.openIdConnectSecurityScheme",
    "SecurityScheme.mtlsSecurityScheme",
    "OAuthFlows.authorizationCode",
    "OAuthFlows.clientCredentials",
    "OAuthFlows.deviceCode",
    "OAuthFlows.implicit",
    "OAuthFlows.password",
];

/// What a set of items covers: each object type's name, and `Type.member` for one-of members.
fn covered(items: &[(ObjectType, &Value)]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (t, v) in items {
        out.insert(t.name());
        let Some(obj) = v.as_object() else { continue };
        for key in obj.keys() {
            let member = format!("{}.{key}", t.name());
            if *t == O::SecurityScheme && key == "oauth2SecurityScheme" {
                if let Some(flows) = v[key]["flows"].as_object() {
                    for flow in flows.keys() {
                        out.insert(format!("{member}.flows.{flow}"));
                    }
                }
            } else if ONE_OF_MEMBERS.contains(&member.as_str()) {
                out.insert(member);
            }
        }
    }
    out
}

/// Everything (types and one-of members) a direction must cover, given the SDK's type names.
fn required_coverage(sdk_types: &[String]) -> BTreeSet<String> {
    let mut want: BTreeSet<String> = ONE_OF_MEMBERS.iter().map(|s| s.to_string()).collect();
    for name in sdk_types {
        match ObjectType::from_name(name) {
            Some(t) => want.insert(t.name()),
            None => want.insert(format!("{name} (an SDK type with no ObjectType)")),
        };
    }
    want
}

#[test]
fn every_sdk_type_and_one_of_member_crosses_both_ways() {
    let types = oracle("types", None);
    assert_eq!(
        types["sdkVersion"], "1.3.0",
        "interop is pinned to a2a-sdk 1.3.0; re-run `bash scripts/setup-python.sh`"
    );
    assert_eq!(types["protoPackage"], "lf.a2a.v1");
    assert_eq!(
        types["missing"],
        json!({}),
        "type names the harness expects are missing from the SDK"
    );
    let sdk_types: Vec<String> = types["allMessages"]
        .as_array()
        .expect("types lists allMessages")
        .iter()
        .map(|v| v.as_str().expect("a type name").to_string())
        .collect();

    // The two type lists agree: every SDK message has an ObjectType and vice versa.
    let no_object_type: Vec<&String> = sdk_types
        .iter()
        .filter(|n| ObjectType::from_name(n).is_none())
        .collect();
    let unknown_to_sdk: Vec<String> = ObjectType::ALL
        .iter()
        .map(|t| t.name())
        .filter(|n| !sdk_types.contains(n))
        .collect();
    assert!(
        no_object_type.is_empty() && unknown_to_sdk.is_empty(),
        "type lists differ: SDK messages with no ObjectType: {no_object_type:?}; \
         ObjectTypes the SDK lacks: {unknown_to_sdk:?}"
    );

    let want = required_coverage(&sdk_types);
    let sdk_side: Vec<(ObjectType, &Value)> = emitted().iter().map(|e| (e.ty, &e.json)).collect();
    let items = rust_items();
    let rust_side: Vec<(ObjectType, &Value)> = items.iter().map(|(_, t, v)| (*t, v)).collect();
    let mut problems = Vec::new();
    for (direction, have) in [
        ("SDK → Rust", covered(&sdk_side)),
        ("Rust → SDK", covered(&rust_side)),
    ] {
        let missing: Vec<&String> = want.difference(&have).collect();
        if !missing.is_empty() {
            problems.push(format!("{direction} does not cover: {missing:?}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
