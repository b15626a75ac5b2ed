//! Fully populated Rust values of every object type, for the Rust → SDK direction.

use super::*;

pub(crate) fn strings(xs: &[&str]) -> Vec<String> {
    xs.iter().map(|s| s.to_string()).collect()
}

pub(crate) const EXT: &str = "https://ext.example/a2a/deleg/v1";

pub(crate) fn parts() -> Vec<Part> {
    vec![
        Part {
            content: PartContent::Text("Summarize the attached file".into()),
            metadata: Some(md(json!({"lang": "en"}))),
            filename: Some("prompt.txt".into()),
            media_type: Some("text/plain".into()),
        },
        Part {
            // Not a multiple of 3 bytes, so the base64 text needs padding.
            content: PartContent::Raw(b"\x89PNG\r\n\x1a\n\x00\xff\xfe".to_vec()),
            metadata: Some(md(json!({"source": "camera", "seq": 1}))),
            filename: Some("in.png".into()),
            media_type: Some("image/png".into()),
        },
        Part {
            content: PartContent::Url("https://files.example/out.pdf".into()),
            metadata: Some(md(json!({"sizeBytes": 1024}))),
            filename: Some("out.pdf".into()),
            media_type: Some("application/pdf".into()),
        },
        Part {
            content: PartContent::Data(
                json!({"budgetUsd": 3.5, "items": [1, 2], "ok": true, "none": null, "neg": -7}),
            ),
            metadata: Some(md(
                json!({"schema": "quote.v1", "nested": {"a": [1.25, "x"]}}),
            )),
            filename: Some("quote.json".into()),
            media_type: Some("application/json".into()),
        },
    ]
}

pub(crate) fn user_message() -> Message {
    Message {
        message_id: "m-1".into(),
        context_id: Some("c-1".into()),
        task_id: Some("t-1".into()),
        role: Role::User,
        parts: parts(),
        metadata: Some(md(
            json!({"x-deleg": {"depth": 1, "chain": ["http://127.0.0.1:4100/"]}}),
        )),
        extensions: strings(&[EXT]),
        reference_task_ids: strings(&["t-0"]),
    }
}

pub(crate) fn agent_message() -> Message {
    Message {
        message_id: "m-a1".into(),
        context_id: Some("c-1".into()),
        task_id: Some("t-1".into()),
        role: Role::Agent,
        parts: vec![Part::text("From which airport?").with_media_type("text/plain")],
        metadata: Some(md(json!({"turn": 2}))),
        extensions: strings(&[EXT]),
        reference_task_ids: strings(&["t-0"]),
    }
}

pub(crate) fn task_status() -> TaskStatus {
    TaskStatus {
        state: TaskState::InputRequired,
        message: Some(agent_message()),
        timestamp: Some(ts("2026-03-20T10:00:00.123Z")),
    }
}

pub(crate) fn artifact() -> Artifact {
    Artifact {
        artifact_id: "a-1".into(),
        name: Some("report".into()),
        description: Some("Quarterly report".into()),
        parts: parts(),
        metadata: Some(md(json!({"version": 3}))),
        extensions: strings(&[EXT]),
    }
}

pub(crate) fn task() -> Task {
    Task {
        id: "t-1".into(),
        context_id: "c-1".into(),
        status: task_status(),
        artifacts: vec![artifact()],
        history: vec![user_message(), agent_message()],
        metadata: Some(md(json!({"priority": "high"}))),
    }
}

pub(crate) fn status_update() -> TaskStatusUpdateEvent {
    TaskStatusUpdateEvent {
        task_id: "t-1".into(),
        context_id: "c-1".into(),
        status: TaskStatus {
            state: TaskState::Working,
            message: Some(agent_message()),
            // A whole second: the SDK prints it without a fraction (see `normalise`).
            timestamp: Some(ts("2026-03-20T10:00:01Z")),
        },
        metadata: Some(md(json!({"progress": 0.5}))),
    }
}

pub(crate) fn artifact_update() -> TaskArtifactUpdateEvent {
    TaskArtifactUpdateEvent {
        task_id: "t-1".into(),
        context_id: "c-1".into(),
        artifact: artifact(),
        append: true,
        last_chunk: true,
        metadata: Some(md(json!({"chunk": 2}))),
    }
}

pub(crate) fn auth() -> AuthenticationInfo {
    AuthenticationInfo {
        scheme: "Bearer".into(),
        credentials: Some("hook-secret".into()),
    }
}

pub(crate) fn push_config() -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        tenant: Some("tenant-a".into()),
        id: Some("cfg-1".into()),
        task_id: Some("t-1".into()),
        url: "http://127.0.0.1:7000/hook".into(),
        token: Some("tok-t1".into()),
        authentication: Some(auth()),
    }
}

pub(crate) fn send_configuration() -> SendMessageConfiguration {
    SendMessageConfiguration {
        accepted_output_modes: strings(&["text/plain", "application/json"]),
        task_push_notification_config: Some(TaskPushNotificationConfig {
            // Inside SendMessageConfiguration the taskId is left empty (reference §3.6).
            task_id: None,
            id: Some("cfg-2".into()),
            token: Some("tok-new".into()),
            ..push_config()
        }),
        history_length: Some(5),
        return_immediately: true,
    }
}

pub(crate) fn scopes() -> BTreeMap<String, String> {
    [("read", "Read access"), ("write", "Write access")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

pub(crate) const AUTH_URL: &str = "https://auth.example/authorize";
pub(crate) const TOKEN_URL: &str = "https://auth.example/token";
pub(crate) const REFRESH_URL: &str = "https://auth.example/refresh";
pub(crate) const METADATA_URL: &str = "https://auth.example/.well-known/oauth-authorization-server";

pub(crate) fn flows() -> Vec<(&'static str, OAuthFlows)> {
    vec![
        (
            "authorizationCode",
            OAuthFlows::AuthorizationCode(AuthorizationCodeOAuthFlow {
                authorization_url: AUTH_URL.into(),
                token_url: TOKEN_URL.into(),
                refresh_url: Some(REFRESH_URL.into()),
                scopes: scopes(),
                pkce_required: true,
            }),
        ),
        (
            "clientCredentials",
            OAuthFlows::ClientCredentials(ClientCredentialsOAuthFlow {
                token_url: TOKEN_URL.into(),
                refresh_url: Some(REFRESH_URL.into()),
                scopes: scopes(),
            }),
        ),
        (
            "deviceCode",
            OAuthFlows::DeviceCode(DeviceCodeOAuthFlow {
                device_authorization_url: "https://auth.example/device".into(),
                token_url: TOKEN_URL.into(),
                refresh_url: Some(REFRESH_URL.into()),
                scopes: scopes(),
            }),
        ),
        (
            "implicit",
            OAuthFlows::Implicit(ImplicitOAuthFlow {
                authorization_url: Some(AUTH_URL.into()),
                refresh_url: Some(REFRESH_URL.into()),
                scopes: scopes(),
            }),
        ),
        (
            "password",
            OAuthFlows::Password(PasswordOAuthFlow {
                token_url: Some(TOKEN_URL.into()),
                refresh_url: Some(REFRESH_URL.into()),
                scopes: scopes(),
            }),
        ),
    ]
}

pub(crate) fn oauth2(flows: OAuthFlows) -> OAuth2SecurityScheme {
    OAuth2SecurityScheme {
        description: Some("OAuth2".into()),
        flows: Some(flows),
        oauth2_metadata_url: Some(METADATA_URL.into()),
    }
}

pub(crate) fn api_key() -> ApiKeySecurityScheme {
    ApiKeySecurityScheme {
        description: Some("API key in a header".into()),
        location: "header".into(),
        name: "X-API-Key".into(),
    }
}

pub(crate) fn http_auth() -> HttpAuthSecurityScheme {
    HttpAuthSecurityScheme {
        description: Some("Bearer JWT".into()),
        scheme: "Bearer".into(),
        bearer_format: Some("JWT".into()),
    }
}

pub(crate) fn oidc() -> OpenIdConnectSecurityScheme {
    OpenIdConnectSecurityScheme {
        description: Some("OIDC".into()),
        open_id_connect_url: "https://auth.example/.well-known/openid-configuration".into(),
    }
}

pub(crate) fn mtls() -> MutualTlsSecurityScheme {
    MutualTlsSecurityScheme {
        description: Some("Client certificate".into()),
    }
}

/// Every SecurityScheme member, OAuth2 once per flow.
pub(crate) fn security_schemes() -> Vec<(String, SecurityScheme)> {
    let mut out = vec![
        (
            "apiKey".to_string(),
            SecurityScheme::ApiKeySecurityScheme(api_key()),
        ),
        (
            "httpAuth".to_string(),
            SecurityScheme::HttpAuthSecurityScheme(http_auth()),
        ),
        (
            "openIdConnect".to_string(),
            SecurityScheme::OpenIdConnectSecurityScheme(oidc()),
        ),
        (
            "mtls".to_string(),
            SecurityScheme::MtlsSecurityScheme(mtls()),
        ),
    ];
    for (name, flow) in flows() {
        out.push((
            format!("oauth2/{name}"),
            SecurityScheme::Oauth2SecurityScheme(oauth2(flow)),
        ));
    }
    out
}

pub(crate) fn string_list(xs: &[&str]) -> StringList {
    StringList { list: strings(xs) }
}

pub(crate) fn requirement(schemes: &[(&str, &[&str])]) -> SecurityRequirement {
    SecurityRequirement {
        schemes: schemes
            .iter()
            .map(|(name, scopes)| (name.to_string(), string_list(scopes)))
            .collect(),
    }
}

pub(crate) fn interfaces() -> Vec<AgentInterface> {
    [
        ("http://127.0.0.1:9101/a2a", "JSONRPC"),
        ("http://127.0.0.1:9101/rest", "HTTP+JSON"),
        ("127.0.0.1:9102", "GRPC"),
    ]
    .into_iter()
    .map(|(url, binding)| AgentInterface {
        url: url.into(),
        protocol_binding: binding.into(),
        tenant: Some("tenant-a".into()),
        protocol_version: "1.0".into(),
    })
    .collect()
}

pub(crate) fn extensions() -> Vec<AgentExtension> {
    vec![
        AgentExtension {
            uri: EXT.into(),
            description: "Delegation budget/deadline propagation".into(),
            required: false,
            params: Some(md(json!({"maxDepth": 4}))),
        },
        AgentExtension {
            uri: "https://ext.example/a2a/strict/v1".into(),
            description: "A required extension".into(),
            required: true,
            // An empty Struct is still a set field: the SDK keeps it as `{}`.
            params: Some(Metadata::new()),
        },
    ]
}

pub(crate) fn capabilities() -> AgentCapabilities {
    AgentCapabilities {
        streaming: Some(true),
        push_notifications: Some(true),
        extensions: extensions(),
        extended_agent_card: Some(true),
    }
}

pub(crate) fn skill() -> AgentSkill {
    AgentSkill {
        id: "book-flight".into(),
        name: "Book flight".into(),
        description: "Books a flight; may ask for input".into(),
        tags: strings(&["travel", "booking"]),
        examples: strings(&["Book SFO to JFK on Friday"]),
        input_modes: strings(&["text/plain", "application/json"]),
        output_modes: strings(&["text/plain", "application/pdf"]),
        security_requirements: vec![requirement(&[
            ("oauth", &["read", "write"]),
            ("apiKey", &[]),
        ])],
    }
}

pub(crate) fn provider() -> AgentProvider {
    AgentProvider {
        url: "https://example.invalid".into(),
        organization: "conformance-harness".into(),
    }
}

pub(crate) fn signature() -> AgentCardSignature {
    AgentCardSignature {
        protected: "eyJhbGciOiJFUzI1NiJ9".into(),
        signature: "c2lnbmF0dXJl".into(),
        header: Some(md(json!({"kid": "key-1"}))),
    }
}

pub(crate) fn agent_card() -> AgentCard {
    AgentCard {
        name: "mock-flight-agent".into(),
        description: "Deterministic mock A2A agent for conformance tests".into(),
        supported_interfaces: interfaces(),
        provider: Some(provider()),
        version: "0.1.0".into(),
        documentation_url: Some("https://example.invalid/docs".into()),
        capabilities: capabilities(),
        security_schemes: security_schemes()
            .into_iter()
            .map(|(name, s)| (name.replace('/', "-"), s))
            .collect(),
        security_requirements: vec![
            requirement(&[("bearer", &[])]),
            requirement(&[("oauth", &["read", "write"]), ("apiKey", &[])]),
        ],
        default_input_modes: strings(&["text/plain", "application/json"]),
        default_output_modes: strings(&["text/plain", "application/json"]),
        skills: vec![skill()],
        signatures: vec![signature()],
        icon_url: Some("https://example.invalid/icon.png".into()),
    }
}
