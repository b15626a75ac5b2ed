//! Strategies for the agent card and its security schemes.

use super::*;

pub(crate) fn oauth_flows() -> impl Strategy<Value = OAuthFlows> {
    prop_oneof![
        (url(), url(), of(url()), string_map(), any::<bool>()).prop_map(
            |(authorization_url, token_url, refresh_url, scopes, pkce_required)| {
                OAuthFlows::AuthorizationCode(AuthorizationCodeOAuthFlow {
                    authorization_url,
                    token_url,
                    refresh_url,
                    scopes,
                    pkce_required,
                })
            }
        ),
        (url(), of(url()), string_map()).prop_map(|(token_url, refresh_url, scopes)| {
            OAuthFlows::ClientCredentials(ClientCredentialsOAuthFlow {
                token_url,
                refresh_url,
                scopes,
            })
        }),
        (url(), url(), of(url()), string_map()).prop_map(
            |(device_authorization_url, token_url, refresh_url, scopes)| {
                OAuthFlows::DeviceCode(DeviceCodeOAuthFlow {
                    device_authorization_url,
                    token_url,
                    refresh_url,
                    scopes,
                })
            }
        ),
        (of(url()), of(url()), string_map()).prop_map(
            |(authorization_url, refresh_url, scopes)| {
                OAuthFlows::Implicit(ImplicitOAuthFlow {
                    authorization_url,
                    refresh_url,
                    scopes,
                })
            }
        ),
        (of(url()), of(url()), string_map()).prop_map(|(token_url, refresh_url, scopes)| {
            OAuthFlows::Password(PasswordOAuthFlow {
                token_url,
                refresh_url,
                scopes,
            })
        }),
    ]
}

pub(crate) fn security_scheme() -> impl Strategy<Value = SecurityScheme> {
    prop_oneof![
        (
            of(text()),
            select(vec!["query", "header", "cookie"]),
            ident()
        )
            .prop_map(|(description, location, name)| {
                SecurityScheme::ApiKeySecurityScheme(ApiKeySecurityScheme {
                    description,
                    location: location.to_string(),
                    name,
                })
            }),
        (of(text()), select(vec!["Bearer", "Basic"]), of(ident())).prop_map(
            |(description, scheme, bearer_format)| {
                SecurityScheme::HttpAuthSecurityScheme(HttpAuthSecurityScheme {
                    description,
                    scheme: scheme.to_string(),
                    bearer_format,
                })
            }
        ),
        (of(text()), oauth_flows(), of(url())).prop_map(
            |(description, flows, oauth2_metadata_url)| {
                SecurityScheme::Oauth2SecurityScheme(OAuth2SecurityScheme {
                    description,
                    flows: Some(flows),
                    oauth2_metadata_url,
                })
            }
        ),
        (of(text()), url()).prop_map(|(description, open_id_connect_url)| {
            SecurityScheme::OpenIdConnectSecurityScheme(OpenIdConnectSecurityScheme {
                description,
                open_id_connect_url,
            })
        }),
        of(text()).prop_map(|description| {
            SecurityScheme::MtlsSecurityScheme(MutualTlsSecurityScheme { description })
        }),
    ]
}

pub(crate) fn security_requirement() -> impl Strategy<Value = SecurityRequirement> {
    btree_map(ident(), vec(ident(), 0..3), 0..3).prop_map(|m| SecurityRequirement {
        schemes: m
            .into_iter()
            .map(|(k, list)| (k, StringList { list }))
            .collect(),
    })
}

pub(crate) fn agent_interface() -> impl Strategy<Value = AgentInterface> {
    (
        url(),
        select(vec![BINDING_JSONRPC, "GRPC", "HTTP+JSON"]),
        of(ident()),
        select(vec!["1.0", "0.3"]),
    )
        .prop_map(
            |(url, protocol_binding, tenant, protocol_version)| AgentInterface {
                url,
                protocol_binding: protocol_binding.to_string(),
                tenant,
                protocol_version: protocol_version.to_string(),
            },
        )
}

pub(crate) fn agent_provider() -> impl Strategy<Value = AgentProvider> {
    (url(), ident()).prop_map(|(url, organization)| AgentProvider { url, organization })
}

pub(crate) fn agent_extension() -> impl Strategy<Value = AgentExtension> {
    (
        prop_oneof![Just(String::new()), url()],
        text(),
        any::<bool>(),
        of(metadata()),
    )
        .prop_map(|(uri, description, required, params)| AgentExtension {
            uri,
            description,
            required,
            params,
        })
}

pub(crate) fn agent_capabilities() -> impl Strategy<Value = AgentCapabilities> {
    (
        of(any::<bool>()),
        of(any::<bool>()),
        vec(agent_extension(), 0..3),
        of(any::<bool>()),
    )
        .prop_map(
            |(streaming, push_notifications, extensions, extended_agent_card)| AgentCapabilities {
                streaming,
                push_notifications,
                extensions,
                extended_agent_card,
            },
        )
}

pub(crate) fn agent_skill() -> impl Strategy<Value = AgentSkill> {
    (
        ident(),
        ident(),
        ident(),
        vec(ident(), 1..3),
        vec(text(), 0..2),
        vec(media_type(), 0..2),
        vec(media_type(), 0..2),
        vec(security_requirement(), 0..2),
    )
        .prop_map(
            |(
                id,
                name,
                description,
                tags,
                examples,
                input_modes,
                output_modes,
                security_requirements,
            )| AgentSkill {
                id,
                name,
                description,
                tags,
                examples,
                input_modes,
                output_modes,
                security_requirements,
            },
        )
}

pub(crate) fn agent_card_signature() -> impl Strategy<Value = AgentCardSignature> {
    ("[A-Za-z0-9_-]{1,16}", "[A-Za-z0-9_-]{1,16}", of(metadata())).prop_map(
        |(protected, signature, header)| AgentCardSignature {
            protected,
            signature,
            header,
        },
    )
}

pub(crate) fn agent_card() -> BoxedStrategy<AgentCard> {
    (
        (
            ident(),
            ident(),
            vec(agent_interface(), 1..3),
            of(agent_provider()),
            ident(),
            of(url()),
            agent_capabilities(),
        ),
        (
            btree_map(ident(), security_scheme(), 0..3),
            vec(security_requirement(), 0..2),
            vec(media_type(), 1..3),
            vec(media_type(), 1..3),
            vec(agent_skill(), 1..3),
            vec(agent_card_signature(), 0..2),
            of(url()),
        ),
    )
        .prop_map(
            |(
                (
                    name,
                    description,
                    supported_interfaces,
                    provider,
                    version,
                    documentation_url,
                    capabilities,
                ),
                (
                    security_schemes,
                    security_requirements,
                    default_input_modes,
                    default_output_modes,
                    skills,
                    signatures,
                    icon_url,
                ),
            )| AgentCard {
                name,
                description,
                supported_interfaces,
                provider,
                version,
                documentation_url,
                capabilities,
                security_schemes,
                security_requirements,
                default_input_modes,
                default_output_modes,
                skills,
                signatures,
                icon_url,
            },
        )
        .boxed()
}
