//! The agent card served at `/.well-known/agent-card.json` and its parts (reference §4).

use crate::de::nullable;
use crate::message::Metadata;
use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// Where an agent card is served, relative to the agent's base URL (R55).
pub const AGENT_CARD_PATH: &str = "/.well-known/agent-card.json";

pub use crate::binding::BINDING_JSONRPC;

/// An agent's self-description: who it is, where and how to reach it, what it can do.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AgentCard {
    /// Name; required.
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    /// Description; required.
    #[serde(deserialize_with = "nullable")]
    pub description: String,
    /// Every supported interface, preferred first; at least one.
    #[serde(deserialize_with = "nullable")]
    #[serde(alias = "supported_interfaces")]
    pub supported_interfaces: Vec<AgentInterface>,
    /// Who provides the agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    /// The agent's own version; required.
    #[serde(deserialize_with = "nullable")]
    pub version: String,
    /// Documentation link.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(alias = "documentation_url")]
    pub documentation_url: Option<String>,
    /// Optional capabilities; required object.
    #[serde(deserialize_with = "nullable")]
    pub capabilities: AgentCapabilities,
    /// Security schemes by name.
    #[serde(
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "nullable"
    )]
    #[serde(alias = "security_schemes")]
    pub security_schemes: BTreeMap<String, SecurityScheme>,
    /// Which schemes (and scopes) a request must satisfy.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "nullable")]
    #[serde(alias = "security_requirements")]
    pub security_requirements: Vec<SecurityRequirement>,
    /// Media types accepted by default; at least one.
    #[serde(deserialize_with = "nullable")]
    #[serde(alias = "default_input_modes")]
    pub default_input_modes: Vec<String>,
    /// Media types produced by default; at least one.
    #[serde(deserialize_with = "nullable")]
    #[serde(alias = "default_output_modes")]
    pub default_output_modes: Vec<String>,
    /// What the agent can do; at least one.
    #[serde(deserialize_with = "nullable")]
    pub skills: Vec<AgentSkill>,
    /// JWS signatures over the card.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "nullable")]
    pub signatures: Vec<AgentCardSignature>,
    /// Icon link.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(alias = "icon_url")]
    pub icon_url: Option<String>,
}

impl AgentCard {
    /// The first JSON-RPC interface, which a client uses (R56).
    pub fn jsonrpc_interface(&self) -> Option<&AgentInterface> {
        self.supported_interfaces
            .iter()
            .find(|i| i.protocol_binding == BINDING_JSONRPC)
    }

    /// The first interface of this binding, in card order.
    pub fn interface(&self, binding: crate::Binding) -> Option<&AgentInterface> {
        self.supported_interfaces
            .iter()
            .find(|i| crate::Binding::from_protocol_binding(&i.protocol_binding) == Some(binding))
    }

    /// The skill with this id.
    pub fn skill(&self, id: &str) -> Option<&AgentSkill> {
        self.skills.iter().find(|s| s.id == id)
    }

    /// Output modes of a skill, falling back to the card's defaults.
    pub fn output_modes(&self, skill: &AgentSkill) -> Vec<String> {
        if skill.output_modes.is_empty() {
            self.default_output_modes.clone()
        } else {
            skill.output_modes.clone()
        }
    }
}

/// One way to reach the agent.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AgentInterface {
    /// Absolute URL; required.
    #[serde(deserialize_with = "nullable")]
    pub url: String,
    /// `JSONRPC`, `GRPC` or `HTTP+JSON`; required.
    #[serde(deserialize_with = "nullable")]
    #[serde(alias = "protocol_binding")]
    pub protocol_binding: String,
    /// Routing string the client copies into every request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// Protocol version such as `1.0`; required.
    #[serde(deserialize_with = "nullable")]
    #[serde(alias = "protocol_version")]
    pub protocol_version: String,
}

/// Who provides the agent.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AgentProvider {
    /// Provider URL; required.
    #[serde(deserialize_with = "nullable")]
    pub url: String,
    /// Organization; required.
    #[serde(deserialize_with = "nullable")]
    pub organization: String,
}

/// Optional capabilities; absent booleans mean false.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AgentCapabilities {
    /// Streaming methods are served.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// Push-notification config methods are served.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(alias = "push_notifications")]
    pub push_notifications: Option<bool>,
    /// Extensions supported.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "nullable")]
    pub extensions: Vec<AgentExtension>,
    /// An extended card is available to authenticated clients.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(alias = "extended_agent_card")]
    pub extended_agent_card: Option<bool>,
}

/// An extension the agent supports.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AgentExtension {
    /// The extension URI.
    #[serde(
        skip_serializing_if = "String::is_empty",
        deserialize_with = "nullable"
    )]
    pub uri: String,
    /// What it is for.
    #[serde(
        skip_serializing_if = "String::is_empty",
        deserialize_with = "nullable"
    )]
    pub description: String,
    /// Clients must request it.
    #[serde(
        skip_serializing_if = "crate::de::is_false",
        deserialize_with = "nullable"
    )]
    pub required: bool,
    /// Extension parameters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<Metadata>,
}

/// One thing the agent can do.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AgentSkill {
    /// Skill id; required.
    #[serde(deserialize_with = "nullable")]
    pub id: String,
    /// Name; required.
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    /// Description; required.
    #[serde(deserialize_with = "nullable")]
    pub description: String,
    /// Tags; at least one.
    #[serde(deserialize_with = "nullable")]
    pub tags: Vec<String>,
    /// Example prompts.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "nullable")]
    pub examples: Vec<String>,
    /// Accepted media types (overrides the card default).
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "nullable")]
    #[serde(alias = "input_modes")]
    pub input_modes: Vec<String>,
    /// Produced media types (overrides the card default).
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "nullable")]
    #[serde(alias = "output_modes")]
    pub output_modes: Vec<String>,
    /// Security requirements for this skill.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "nullable")]
    #[serde(alias = "security_requirements")]
    pub security_requirements: Vec<SecurityRequirement>,
}

/// A list of strings (proto `StringList`), used for scopes.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct StringList {
    /// The strings.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "nullable")]
    pub list: Vec<String>,
}

/// Scheme names (with scopes) that together satisfy a requirement.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SecurityRequirement {
    /// Scheme name to required scopes.
    #[serde(
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "nullable"
    )]
    pub schemes: BTreeMap<String, StringList>,
}

/// A security scheme (proto oneof `scheme`): the wrapper key names the kind.
///
/// Decoding is lenient like the other one-ofs: the first member present wins, snake_case member
/// keys are accepted and other keys (such as a legacy 0.3 `type`) are ignored;
/// [`crate::conformance`] reports them.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SecurityScheme {
    /// An API key in a query parameter, header or cookie.
    ApiKeySecurityScheme(ApiKeySecurityScheme),
    /// HTTP authentication such as `Bearer`.
    HttpAuthSecurityScheme(HttpAuthSecurityScheme),
    /// OAuth 2.0.
    Oauth2SecurityScheme(OAuth2SecurityScheme),
    /// OpenID Connect.
    OpenIdConnectSecurityScheme(OpenIdConnectSecurityScheme),
    /// Mutual TLS.
    MtlsSecurityScheme(MutualTlsSecurityScheme),
}

/// An API key scheme.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ApiKeySecurityScheme {
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `query`, `header` or `cookie`; required.
    #[serde(deserialize_with = "nullable")]
    pub location: String,
    /// Parameter name; required.
    #[serde(deserialize_with = "nullable")]
    pub name: String,
}

/// An HTTP authentication scheme.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct HttpAuthSecurityScheme {
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Scheme such as `Bearer`; required.
    #[serde(deserialize_with = "nullable")]
    pub scheme: String,
    /// Token format hint such as `JWT`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(alias = "bearer_format")]
    pub bearer_format: Option<String>,
}

/// An OAuth 2.0 scheme.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct OAuth2SecurityScheme {
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The flow; required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flows: Option<OAuthFlows>,
    /// RFC 8414 metadata URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(alias = "oauth2_metadata_url")]
    pub oauth2_metadata_url: Option<String>,
}

/// An OpenID Connect scheme.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct OpenIdConnectSecurityScheme {
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Discovery URL; required.
    #[serde(deserialize_with = "nullable")]
    #[serde(alias = "open_id_connect_url")]
    pub open_id_connect_url: String,
}

/// A mutual TLS scheme.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MutualTlsSecurityScheme {
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The OAuth flow (proto oneof `flow`). Decoded leniently like [`SecurityScheme`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum OAuthFlows {
    /// Authorization code flow.
    AuthorizationCode(AuthorizationCodeOAuthFlow),
    /// Client credentials flow.
    ClientCredentials(ClientCredentialsOAuthFlow),
    /// Device code flow.
    DeviceCode(DeviceCodeOAuthFlow),
    /// Deprecated implicit flow.
    Implicit(ImplicitOAuthFlow),
    /// Deprecated password flow.
    Password(PasswordOAuthFlow),
}

/// Authorization code flow.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AuthorizationCodeOAuthFlow {
    /// Authorization URL; required.
    #[serde(deserialize_with = "nullable")]
    #[serde(alias = "authorization_url")]
    pub authorization_url: String,
    /// Token URL; required.
    #[serde(deserialize_with = "nullable")]
    #[serde(alias = "token_url")]
    pub token_url: String,
    /// Refresh URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(alias = "refresh_url")]
    pub refresh_url: Option<String>,
    /// Scopes and their descriptions; required.
    #[serde(deserialize_with = "nullable")]
    pub scopes: BTreeMap<String, String>,
    /// PKCE is required.
    #[serde(
        skip_serializing_if = "crate::de::is_false",
        deserialize_with = "nullable"
    )]
    #[serde(alias = "pkce_required")]
    pub pkce_required: bool,
}

/// Client credentials flow.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ClientCredentialsOAuthFlow {
    /// Token URL; required.
    #[serde(deserialize_with = "nullable")]
    #[serde(alias = "token_url")]
    pub token_url: String,
    /// Refresh URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(alias = "refresh_url")]
    pub refresh_url: Option<String>,
    /// Scopes; required.
    #[serde(deserialize_with = "nullable")]
    pub scopes: BTreeMap<String, String>,
}

/// Device code flow.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DeviceCodeOAuthFlow {
    /// Device authorization URL; required.
    #[serde(deserialize_with = "nullable")]
    #[serde(alias = "device_authorization_url")]
    pub device_authorization_url: String,
    /// Token URL; required.
    #[serde(deserialize_with = "nullable")]
    #[serde(alias = "token_url")]
    pub token_url: String,
    /// Refresh URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(alias = "refresh_url")]
    pub refresh_url: Option<String>,
    /// Scopes; required.
    #[serde(deserialize_with = "nullable")]
    pub scopes: BTreeMap<String, String>,
}

/// Implicit flow (deprecated).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ImplicitOAuthFlow {
    /// Authorization URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(alias = "authorization_url")]
    pub authorization_url: Option<String>,
    /// Refresh URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(alias = "refresh_url")]
    pub refresh_url: Option<String>,
    /// Scopes.
    #[serde(
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "nullable"
    )]
    pub scopes: BTreeMap<String, String>,
}

/// Password flow (deprecated).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PasswordOAuthFlow {
    /// Token URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(alias = "token_url")]
    pub token_url: Option<String>,
    /// Refresh URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(alias = "refresh_url")]
    pub refresh_url: Option<String>,
    /// Scopes.
    #[serde(
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "nullable"
    )]
    pub scopes: BTreeMap<String, String>,
}

/// A JWS signature over the card.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AgentCardSignature {
    /// Protected header (base64url); required.
    #[serde(deserialize_with = "nullable")]
    pub protected: String,
    /// Signature (base64url); required.
    #[serde(deserialize_with = "nullable")]
    pub signature: String,
    /// Unprotected header.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header: Option<Metadata>,
}

/// Decode a one-of wrapper object leniently: the first known member (camelCase or snake_case key)
/// whose value is not `null` wins; unknown keys are skipped.
macro_rules! lenient_one_of {
    ($ty:ident, $what:literal, { $($($key:literal)|+ => $variant:ident($inner:ty)),+ $(,)? }) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<$ty, A::Error> {
                        let mut out = None;
                        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                            // The first member wins; conformance reports any second one.
                            let v = match key.as_ref() {
                                $(
                                    $($key)|+ => map
                                        .next_value::<Option<$inner>>()?
                                        .map($ty::$variant),
                                )+
                                _ => {
                                    map.next_value::<IgnoredAny>()?;
                                    None
                                }
                            };
                            if out.is_none() {
                                out = v;
                            }
                        }
                        out.ok_or_else(|| de::Error::custom(concat!("expected ", $what)))
                    }
                }
                d.deserialize_map(V)
            }
        }
    };
}

lenient_one_of!(SecurityScheme, "an object with one of apiKeySecurityScheme, httpAuthSecurityScheme, \
    oauth2SecurityScheme, openIdConnectSecurityScheme or mtlsSecurityScheme", {
    "apiKeySecurityScheme" | "api_key_security_scheme" => ApiKeySecurityScheme(ApiKeySecurityScheme),
    "httpAuthSecurityScheme" | "http_auth_security_scheme" => HttpAuthSecurityScheme(HttpAuthSecurityScheme),
    "oauth2SecurityScheme" | "oauth2_security_scheme" => Oauth2SecurityScheme(OAuth2SecurityScheme),
    "openIdConnectSecurityScheme" | "open_id_connect_security_scheme" => OpenIdConnectSecurityScheme(OpenIdConnectSecurityScheme),
    "mtlsSecurityScheme" | "mtls_security_scheme" => MtlsSecurityScheme(MutualTlsSecurityScheme),
});

lenient_one_of!(OAuthFlows, "an object with one of authorizationCode, clientCredentials, deviceCode, \
    implicit or password", {
    "authorizationCode" | "authorization_code" => AuthorizationCode(AuthorizationCodeOAuthFlow),
    "clientCredentials" | "client_credentials" => ClientCredentials(ClientCredentialsOAuthFlow),
    "deviceCode" | "device_code" => DeviceCode(DeviceCodeOAuthFlow),
    "implicit" => Implicit(ImplicitOAuthFlow),
    "password" => Password(PasswordOAuthFlow),
});
