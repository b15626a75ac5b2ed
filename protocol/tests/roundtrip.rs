//! Property tests for every public wire type: serialize → deserialize is the identity, values that
//! satisfy the required fields have no conformance deviations, and no input (arbitrary JSON values,
//! mutated valid payloads, arbitrary bytes) makes a decoder or the conformance check panic.

use a2a_protocol::codec::{decode, decode_value};
use a2a_protocol::conformance::{
    ObjectType, conformance, conformance_response, params_type, result_type,
};
use a2a_protocol::jsonrpc::{Id, JsonRpcError, JsonRpcRequest, JsonRpcResponse, Method};
use a2a_protocol::*;
use proptest::collection::{btree_map, vec};
use proptest::option::of;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::fmt::Debug;

// ---------------------------------------------------------------------------
// Configuration and shared checks
// ---------------------------------------------------------------------------

/// Moderate case counts keep the suite fast; no regression files are written into the tree.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// serialize → deserialize gives the same value, through text, `codec::decode` and
/// `codec::decode_value`.
fn check_roundtrip<T>(v: &T) -> Result<(), TestCaseError>
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let text = serde_json::to_string(v).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let back: T = serde_json::from_str(&text)
        .map_err(|e| TestCaseError::fail(format!("from_str: {e}\n{text}")))?;
    prop_assert_eq!(&back, v, "text round trip of {}", text);
    let back: T = decode(text.as_bytes())
        .map_err(|e| TestCaseError::fail(format!("codec::decode: {e}\n{text}")))?;
    prop_assert_eq!(&back, v);
    let value = serde_json::to_value(v).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let back: T = decode_value(&value)
        .map_err(|e| TestCaseError::fail(format!("codec::decode_value: {e}\n{text}")))?;
    prop_assert_eq!(&back, v);
    // Canonical output is stable: re-encoding the decoded value gives the same JSON.
    prop_assert_eq!(
        serde_json::to_value(&back).map_err(|e| TestCaseError::fail(e.to_string()))?,
        value
    );
    Ok(())
}

/// The canonical JSON of `v` has no deviations when read as `t`.
fn check_conforms<T: Serialize>(t: ObjectType, v: &T) -> Result<(), TestCaseError> {
    let value = serde_json::to_value(v).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let found = conformance(t, &value);
    prop_assert!(found.is_empty(), "{:?}: {:#?}\n{:#}", t, found, value);
    Ok(())
}

fn check_both<T>(t: ObjectType, v: &T) -> Result<(), TestCaseError>
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    check_roundtrip(v)?;
    check_conforms(t, v)
}

// ---------------------------------------------------------------------------
// Leaf strategies
// ---------------------------------------------------------------------------

/// A non-empty identifier (required strings).
fn ident() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9][a-zA-Z0-9_.:-]{0,11}"
}

/// Any printable text, possibly empty.
fn text() -> impl Strategy<Value = String> {
    "\\PC{0,12}"
}

fn url() -> impl Strategy<Value = String> {
    "https://[a-z]{1,8}\\.example(/[a-z0-9]{1,6}){0,2}"
}

fn media_type() -> impl Strategy<Value = String> {
    select(vec![
        "text/plain",
        "application/json",
        "image/png",
        "application/pdf",
        "text/markdown",
    ])
    .prop_map(str::to_string)
}

fn valid_role() -> impl Strategy<Value = Role> {
    select(vec![Role::User, Role::Agent])
}

fn valid_state() -> impl Strategy<Value = TaskState> {
    select(TaskState::ALL[1..].to_vec())
}

/// A timestamp at millisecond precision anywhere in years 0001-9999.
fn timestamp() -> impl Strategy<Value = Timestamp> {
    (
        1i32..=9999,
        1u8..=12,
        1u8..=28,
        0u8..24,
        0u8..60,
        0u8..60,
        0u16..1000,
    )
        .prop_map(|(y, mo, d, h, mi, s, ms)| {
            let text = format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z");
            let t = Timestamp::parse(&text).expect("valid timestamp");
            assert_eq!(t.to_rfc3339(), text);
            t
        })
}

/// A finite number that survives text round trips exactly (a dyadic fraction).
fn exact_f64() -> impl Strategy<Value = f64> {
    (any::<i32>(), 0u32..10).prop_map(|(m, e)| f64::from(m) / f64::from(1u32 << e))
}

fn json_key() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z_-]{1,8}",
        select(vec![
            "kind", "text", "raw", "url", "data", "task", "message", "state", "id", "parts",
            "x-deleg", "@type",
        ])
        .prop_map(str::to_string),
    ]
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        exact_f64().prop_map(Value::from),
        text().prop_map(Value::String),
    ]
}

/// Any JSON value (google.protobuf.Value), small and shallow.
fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 24, 5, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..5).prop_map(Value::Array),
            btree_map(json_key(), inner, 0..5).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Any JSON value except `null` (`Option<Value>` fields cannot carry a present `null`).
fn non_null_json() -> impl Strategy<Value = Value> {
    json_value().prop_filter("not null", |v| !v.is_null())
}

/// A google.protobuf.Struct.
fn metadata() -> impl Strategy<Value = Metadata> {
    btree_map(json_key(), json_value(), 0..4).prop_map(|m| m.into_iter().collect::<Map<_, _>>())
}

fn string_map() -> impl Strategy<Value = BTreeMap<String, String>> {
    btree_map("[a-z:._]{1,10}", text(), 0..3)
}

// ---------------------------------------------------------------------------
// Message and Part
// ---------------------------------------------------------------------------

fn part_content() -> impl Strategy<Value = PartContent> {
    prop_oneof![
        text().prop_map(PartContent::Text),
        vec(any::<u8>(), 0..24).prop_map(PartContent::Raw),
        url().prop_map(PartContent::Url),
        json_value().prop_map(PartContent::Data),
    ]
}

fn part() -> impl Strategy<Value = Part> {
    (part_content(), of(metadata()), of(text()), of(media_type())).prop_map(
        |(content, metadata, filename, media_type)| Part {
            content,
            metadata,
            filename,
            media_type,
        },
    )
}

fn message_with(role: impl Strategy<Value = Role>) -> impl Strategy<Value = Message> {
    (
        ident(),
        of(ident()),
        of(ident()),
        role,
        vec(part(), 1..4),
        of(metadata()),
        vec(url(), 0..2),
        vec(ident(), 0..3),
    )
        .prop_map(
            |(
                message_id,
                context_id,
                task_id,
                role,
                parts,
                metadata,
                extensions,
                reference_task_ids,
            )| Message {
                message_id,
                context_id,
                task_id,
                role,
                parts,
                metadata,
                extensions,
                reference_task_ids,
            },
        )
}

fn message() -> impl Strategy<Value = Message> {
    message_with(valid_role())
}

// ---------------------------------------------------------------------------
// Task and events
// ---------------------------------------------------------------------------

fn task_status() -> impl Strategy<Value = TaskStatus> {
    (valid_state(), of(message()), of(timestamp())).prop_map(|(state, message, timestamp)| {
        TaskStatus {
            state,
            message,
            timestamp,
        }
    })
}

fn artifact() -> impl Strategy<Value = Artifact> {
    (
        ident(),
        of(text()),
        of(text()),
        vec(part(), 1..3),
        of(metadata()),
        vec(url(), 0..2),
    )
        .prop_map(
            |(artifact_id, name, description, parts, metadata, extensions)| Artifact {
                artifact_id,
                name,
                description,
                parts,
                metadata,
                extensions,
            },
        )
}

fn task() -> BoxedStrategy<Task> {
    (
        ident(),
        prop_oneof![Just(String::new()), ident()],
        task_status(),
        vec(artifact(), 0..3),
        vec(message(), 0..3),
        of(metadata()),
    )
        .prop_map(
            |(id, context_id, status, artifacts, history, metadata)| Task {
                id,
                context_id,
                status,
                artifacts,
                history,
                metadata,
            },
        )
        .boxed()
}

fn status_update() -> impl Strategy<Value = TaskStatusUpdateEvent> {
    (ident(), ident(), task_status(), of(metadata())).prop_map(
        |(task_id, context_id, status, metadata)| TaskStatusUpdateEvent {
            task_id,
            context_id,
            status,
            metadata,
        },
    )
}

fn artifact_update() -> impl Strategy<Value = TaskArtifactUpdateEvent> {
    (
        ident(),
        ident(),
        artifact(),
        any::<bool>(),
        any::<bool>(),
        of(metadata()),
    )
        .prop_map(
            |(task_id, context_id, artifact, append, last_chunk, metadata)| {
                TaskArtifactUpdateEvent {
                    task_id,
                    context_id,
                    artifact,
                    append,
                    last_chunk,
                    metadata,
                }
            },
        )
}

fn send_message_response() -> impl Strategy<Value = SendMessageResponse> {
    prop_oneof![
        task().prop_map(SendMessageResponse::Task),
        message().prop_map(SendMessageResponse::Message),
    ]
}

fn stream_response() -> BoxedStrategy<StreamResponse> {
    prop_oneof![
        task().prop_map(StreamResponse::Task),
        message().prop_map(StreamResponse::Message),
        status_update().prop_map(StreamResponse::StatusUpdate),
        artifact_update().prop_map(StreamResponse::ArtifactUpdate),
    ]
    .boxed()
}

// ---------------------------------------------------------------------------
// Requests and results
// ---------------------------------------------------------------------------

fn authentication_info() -> impl Strategy<Value = AuthenticationInfo> {
    (select(vec!["Bearer", "Basic", "Digest"]), of(text())).prop_map(|(scheme, credentials)| {
        AuthenticationInfo {
            scheme: scheme.to_string(),
            credentials,
        }
    })
}

fn push_config() -> impl Strategy<Value = TaskPushNotificationConfig> {
    (
        of(ident()),
        of(ident()),
        of(ident()),
        url(),
        of(text()),
        of(authentication_info()),
    )
        .prop_map(|(tenant, id, task_id, url, token, authentication)| {
            TaskPushNotificationConfig {
                tenant,
                id,
                task_id,
                url,
                token,
                authentication,
            }
        })
}

fn send_configuration() -> impl Strategy<Value = SendMessageConfiguration> {
    (
        vec(media_type(), 0..3),
        of(push_config()),
        of(any::<i32>()),
        any::<bool>(),
    )
        .prop_map(
            |(
                accepted_output_modes,
                task_push_notification_config,
                history_length,
                return_immediately,
            )| SendMessageConfiguration {
                accepted_output_modes,
                task_push_notification_config,
                history_length,
                return_immediately,
            },
        )
}

fn send_message_request() -> BoxedStrategy<SendMessageRequest> {
    (
        of(ident()),
        message_with(Just(Role::User)),
        of(send_configuration()),
        of(metadata()),
    )
        .prop_map(
            |(tenant, message, configuration, metadata)| SendMessageRequest {
                tenant,
                message,
                configuration,
                metadata,
            },
        )
        .boxed()
}

fn get_task_request() -> impl Strategy<Value = GetTaskRequest> {
    (of(ident()), ident(), of(any::<i32>())).prop_map(|(tenant, id, history_length)| {
        GetTaskRequest {
            tenant,
            id,
            history_length,
        }
    })
}

fn list_tasks_request() -> impl Strategy<Value = ListTasksRequest> {
    (
        of(ident()),
        of(ident()),
        of(select(TaskState::ALL.to_vec())),
        of(any::<i32>()),
        of(text()),
        of(any::<i32>()),
        of(timestamp()),
        of(any::<bool>()),
    )
        .prop_map(
            |(
                tenant,
                context_id,
                status,
                page_size,
                page_token,
                history_length,
                status_timestamp_after,
                include_artifacts,
            )| ListTasksRequest {
                tenant,
                context_id,
                status,
                page_size,
                page_token,
                history_length,
                status_timestamp_after,
                include_artifacts,
            },
        )
}

fn list_tasks_response() -> impl Strategy<Value = ListTasksResponse> {
    (vec(task(), 0..3), text(), any::<i32>(), any::<i32>()).prop_map(
        |(tasks, next_page_token, page_size, total_size)| ListTasksResponse {
            tasks,
            next_page_token,
            page_size,
            total_size,
        },
    )
}

fn cancel_task_request() -> impl Strategy<Value = CancelTaskRequest> {
    (of(ident()), ident(), of(metadata())).prop_map(|(tenant, id, metadata)| CancelTaskRequest {
        tenant,
        id,
        metadata,
    })
}

fn subscribe_request() -> impl Strategy<Value = SubscribeToTaskRequest> {
    (of(ident()), ident()).prop_map(|(tenant, id)| SubscribeToTaskRequest { tenant, id })
}

fn push_config_ref() -> impl Strategy<Value = TaskPushNotificationConfigRef> {
    (of(ident()), ident(), ident()).prop_map(|(tenant, task_id, id)| {
        TaskPushNotificationConfigRef {
            tenant,
            task_id,
            id,
        }
    })
}

fn list_push_configs_request() -> impl Strategy<Value = ListTaskPushNotificationConfigsRequest> {
    (of(ident()), ident(), any::<i32>(), of(text())).prop_map(
        |(tenant, task_id, page_size, page_token)| ListTaskPushNotificationConfigsRequest {
            tenant,
            task_id,
            page_size,
            page_token,
        },
    )
}

fn list_push_configs_response() -> impl Strategy<Value = ListTaskPushNotificationConfigsResponse> {
    (vec(push_config(), 0..3), of(text())).prop_map(|(configs, next_page_token)| {
        ListTaskPushNotificationConfigsResponse {
            configs,
            next_page_token,
        }
    })
}

fn extended_card_request() -> impl Strategy<Value = GetExtendedAgentCardRequest> {
    of(ident()).prop_map(|tenant| GetExtendedAgentCardRequest { tenant })
}

// ---------------------------------------------------------------------------
// Agent card
// ---------------------------------------------------------------------------

fn oauth_flows() -> impl Strategy<Value = OAuthFlows> {
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

fn security_scheme() -> impl Strategy<Value = SecurityScheme> {
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

fn security_requirement() -> impl Strategy<Value = SecurityRequirement> {
    btree_map(ident(), vec(ident(), 0..3), 0..3).prop_map(|m| SecurityRequirement {
        schemes: m
            .into_iter()
            .map(|(k, list)| (k, StringList { list }))
            .collect(),
    })
}

fn agent_interface() -> impl Strategy<Value = AgentInterface> {
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

fn agent_provider() -> impl Strategy<Value = AgentProvider> {
    (url(), ident()).prop_map(|(url, organization)| AgentProvider { url, organization })
}

fn agent_extension() -> impl Strategy<Value = AgentExtension> {
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

fn agent_capabilities() -> impl Strategy<Value = AgentCapabilities> {
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

fn agent_skill() -> impl Strategy<Value = AgentSkill> {
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

fn agent_card_signature() -> impl Strategy<Value = AgentCardSignature> {
    ("[A-Za-z0-9_-]{1,16}", "[A-Za-z0-9_-]{1,16}", of(metadata())).prop_map(
        |(protected, signature, header)| AgentCardSignature {
            protected,
            signature,
            header,
        },
    )
}

fn agent_card() -> BoxedStrategy<AgentCard> {
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

// ---------------------------------------------------------------------------
// JSON-RPC
// ---------------------------------------------------------------------------

fn id() -> impl Strategy<Value = Id> {
    prop_oneof![
        text().prop_map(Id::String),
        any::<i64>().prop_map(Id::from),
        any::<u64>().prop_map(|n| Id::Number(n.into())),
        exact_f64().prop_map(|f| Id::Number(serde_json::Number::from_f64(f).unwrap())),
        Just(Id::Null),
    ]
}

fn json_rpc_error() -> impl Strategy<Value = JsonRpcError> {
    (
        prop_oneof![
            select(ErrorCode::ALL.to_vec()).prop_map(ErrorCode::code),
            any::<i64>(),
        ],
        text(),
        of(non_null_json()),
    )
        .prop_map(|(code, message, data)| JsonRpcError {
            code,
            message,
            data,
        })
}

/// A method name with params of the matching type, as JSON.
fn method_and_params() -> impl Strategy<Value = (Method, Option<Value>)> {
    fn v<T: Serialize>(t: T) -> Option<Value> {
        Some(serde_json::to_value(t).unwrap())
    }
    prop_oneof![
        send_message_request().prop_map(|p| (Method::SendMessage, v(p))),
        send_message_request().prop_map(|p| (Method::SendStreamingMessage, v(p))),
        get_task_request().prop_map(|p| (Method::GetTask, v(p))),
        list_tasks_request().prop_map(|p| (Method::ListTasks, v(p))),
        cancel_task_request().prop_map(|p| (Method::CancelTask, v(p))),
        subscribe_request().prop_map(|p| (Method::SubscribeToTask, v(p))),
        push_config().prop_map(|p| (Method::CreateTaskPushNotificationConfig, v(p))),
        push_config_ref().prop_map(|p| (Method::GetTaskPushNotificationConfig, v(p))),
        push_config_ref().prop_map(|p| (Method::DeleteTaskPushNotificationConfig, v(p))),
        list_push_configs_request().prop_map(|p| (Method::ListTaskPushNotificationConfigs, v(p))),
        extended_card_request().prop_map(|p| (Method::GetExtendedAgentCard, v(p))),
        Just((Method::GetExtendedAgentCard, None)),
    ]
}

/// A method name with a result of the matching type, as JSON.
fn method_and_result() -> impl Strategy<Value = (Method, Value)> {
    fn v<T: Serialize>(t: T) -> Value {
        serde_json::to_value(t).unwrap()
    }
    prop_oneof![
        send_message_response().prop_map(|r| (Method::SendMessage, v(r))),
        stream_response().prop_map(|r| (Method::SendStreamingMessage, v(r))),
        stream_response().prop_map(|r| (Method::SubscribeToTask, v(r))),
        task().prop_map(|r| (Method::GetTask, v(r))),
        task().prop_map(|r| (Method::CancelTask, v(r))),
        list_tasks_response().prop_map(|r| (Method::ListTasks, v(r))),
        push_config().prop_map(|r| (Method::CreateTaskPushNotificationConfig, v(r))),
        push_config().prop_map(|r| (Method::GetTaskPushNotificationConfig, v(r))),
        list_push_configs_response().prop_map(|r| (Method::ListTaskPushNotificationConfigs, v(r))),
        Just((Method::DeleteTaskPushNotificationConfig, json!({}))),
        agent_card().prop_map(|r| (Method::GetExtendedAgentCard, v(r))),
    ]
}

// ---------------------------------------------------------------------------
// Round trip + conformance of every wire type
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn role_and_state_round_trip(role in select(Role::ALL.to_vec()), state in select(TaskState::ALL.to_vec())) {
        check_roundtrip(&role)?;
        check_roundtrip(&state)?;
        prop_assert_eq!(serde_json::to_value(role).unwrap(), json!(role.as_str()));
        prop_assert_eq!(serde_json::to_value(state).unwrap(), json!(state.as_str()));
        // The proto number decodes to the same value.
        prop_assert_eq!(decode::<TaskState>(state.number().to_string().as_bytes()).unwrap(), state);
        prop_assert_eq!(decode::<Role>(role.number().to_string().as_bytes()).unwrap(), role);
    }

    #[test]
    fn part_round_trips_and_conforms(p in part()) {
        check_both(ObjectType::Part, &p)?;
        // Exactly one content key on the wire.
        let v = serde_json::to_value(&p).unwrap();
        let n = ["text", "raw", "url", "data"].iter().filter(|k| v.get(**k).is_some()).count();
        prop_assert_eq!(n, 1);
    }

    #[test]
    fn message_round_trips_and_conforms(m in message()) {
        check_both(ObjectType::Message, &m)?;
    }

    #[test]
    fn message_with_any_role_round_trips(m in message_with(select(Role::ALL.to_vec()))) {
        check_roundtrip(&m)?;
    }

    #[test]
    fn task_status_round_trips_and_conforms(s in task_status()) {
        check_both(ObjectType::TaskStatus, &s)?;
    }

    #[test]
    fn task_round_trips_and_conforms(t in task()) {
        check_both(ObjectType::Task, &t)?;
    }

    #[test]
    fn artifact_round_trips_and_conforms(a in artifact()) {
        check_both(ObjectType::Artifact, &a)?;
    }

    #[test]
    fn status_update_round_trips_and_conforms(e in status_update()) {
        check_both(ObjectType::TaskStatusUpdateEvent, &e)?;
    }

    #[test]
    fn artifact_update_round_trips_and_conforms(e in artifact_update()) {
        check_both(ObjectType::TaskArtifactUpdateEvent, &e)?;
    }

    #[test]
    fn send_message_request_round_trips_and_conforms(r in send_message_request()) {
        check_both(ObjectType::SendMessageRequest, &r)?;
    }

    #[test]
    fn send_message_configuration_round_trips_and_conforms(c in send_configuration()) {
        check_both(ObjectType::SendMessageConfiguration, &c)?;
    }

    #[test]
    fn send_message_response_round_trips_and_conforms(r in send_message_response()) {
        check_both(ObjectType::SendMessageResponse, &r)?;
        // Also valid as a StreamResponse, and the conversion keeps the wire form.
        check_conforms(ObjectType::StreamResponse, &r)?;
        prop_assert_eq!(
            serde_json::to_value(StreamResponse::from(r.clone())).unwrap(),
            serde_json::to_value(&r).unwrap()
        );
    }

    #[test]
    fn stream_response_round_trips_and_conforms(r in stream_response()) {
        check_both(ObjectType::StreamResponse, &r)?;
        let v = serde_json::to_value(&r).unwrap();
        let obj = v.as_object().unwrap();
        prop_assert_eq!(obj.len(), 1);
        prop_assert!(obj.contains_key(r.key()));
    }

    #[test]
    fn get_task_request_round_trips_and_conforms(r in get_task_request()) {
        check_both(ObjectType::GetTaskRequest, &r)?;
    }

    #[test]
    fn list_tasks_request_round_trips_and_conforms(r in list_tasks_request()) {
        check_both(ObjectType::ListTasksRequest, &r)?;
    }

    #[test]
    fn list_tasks_response_round_trips_and_conforms(r in list_tasks_response()) {
        check_both(ObjectType::ListTasksResponse, &r)?;
        // Every field is always present (R46: nextPageToken even when empty).
        let v = serde_json::to_value(&r).unwrap();
        for k in ["tasks", "nextPageToken", "pageSize", "totalSize"] {
            prop_assert!(v.get(k).is_some(), "{} missing", k);
        }
    }

    #[test]
    fn cancel_and_subscribe_round_trip_and_conform(c in cancel_task_request(), s in subscribe_request()) {
        check_both(ObjectType::CancelTaskRequest, &c)?;
        check_both(ObjectType::SubscribeToTaskRequest, &s)?;
    }

    #[test]
    fn push_config_round_trips_and_conforms(c in push_config()) {
        check_both(ObjectType::TaskPushNotificationConfig, &c)?;
    }

    #[test]
    fn authentication_info_round_trips_and_conforms(a in authentication_info()) {
        check_both(ObjectType::AuthenticationInfo, &a)?;
    }

    #[test]
    fn push_config_ref_round_trips_and_conforms(r in push_config_ref()) {
        check_both(ObjectType::GetTaskPushNotificationConfigRequest, &r)?;
        check_conforms(ObjectType::DeleteTaskPushNotificationConfigRequest, &r)?;
    }

    #[test]
    fn list_push_configs_round_trip_and_conform(
        req in list_push_configs_request(),
        resp in list_push_configs_response(),
    ) {
        check_both(ObjectType::ListTaskPushNotificationConfigsRequest, &req)?;
        check_both(ObjectType::ListTaskPushNotificationConfigsResponse, &resp)?;
    }

    #[test]
    fn extended_card_request_round_trips_and_conforms(r in extended_card_request()) {
        check_both(ObjectType::GetExtendedAgentCardRequest, &r)?;
    }

    #[test]
    fn agent_card_round_trips_and_conforms(c in agent_card()) {
        check_both(ObjectType::AgentCard, &c)?;
    }

    #[test]
    fn security_scheme_round_trips_and_conforms(s in security_scheme()) {
        check_both(ObjectType::SecurityScheme, &s)?;
        let v = serde_json::to_value(&s).unwrap();
        prop_assert_eq!(v.as_object().unwrap().len(), 1);
    }

    #[test]
    fn oauth_flows_round_trip_and_conform(f in oauth_flows()) {
        check_both(ObjectType::OAuthFlows, &f)?;
    }

    #[test]
    fn card_parts_round_trip_and_conform(
        i in agent_interface(),
        p in agent_provider(),
        caps in agent_capabilities(),
        ext in agent_extension(),
        skill in agent_skill(),
        sig in agent_card_signature(),
        req in security_requirement(),
    ) {
        check_both(ObjectType::AgentInterface, &i)?;
        check_both(ObjectType::AgentProvider, &p)?;
        check_both(ObjectType::AgentCapabilities, &caps)?;
        check_both(ObjectType::AgentExtension, &ext)?;
        check_both(ObjectType::AgentSkill, &skill)?;
        check_both(ObjectType::AgentCardSignature, &sig)?;
        check_both(ObjectType::SecurityRequirement, &req)?;
        for list in req.schemes.values() {
            check_both(ObjectType::StringList, list)?;
        }
    }

    #[test]
    fn id_round_trips_exactly(id in id()) {
        check_roundtrip(&id)?;
        // A numeric id echoes as the same JSON text.
        let text = serde_json::to_string(&id).unwrap();
        let back: Id = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(serde_json::to_string(&back).unwrap(), text);
    }

    #[test]
    fn json_rpc_request_round_trips_and_params_conform(
        id in of(id()),
        (method, params) in method_and_params(),
    ) {
        let req = JsonRpcRequest {
            jsonrpc: "2.0".to_string(),
            id,
            method: method.as_str().to_string(),
            params,
        };
        check_roundtrip(&req)?;
        prop_assert_eq!(Method::parse(&req.method), Some(method));
        if let Some(p) = &req.params {
            let t = params_type(&req.method).expect("params type");
            let found = conformance(t, p);
            prop_assert!(found.is_empty(), "{:#?}", found);
        }
    }

    #[test]
    fn typed_json_rpc_requests_round_trip(
        id in id(),
        send in send_message_request(),
        get in get_task_request(),
        list in list_tasks_request(),
    ) {
        check_roundtrip(&JsonRpcRequest::new(id.clone(), Method::SendMessage.as_str(), send))?;
        check_roundtrip(&JsonRpcRequest::new(id.clone(), Method::GetTask.as_str(), get))?;
        check_roundtrip(&JsonRpcRequest::new(id, Method::ListTasks.as_str(), list))?;
    }

    #[test]
    fn json_rpc_response_with_result_round_trips_and_conforms(
        id in id(),
        (method, result) in method_and_result(),
    ) {
        let resp = JsonRpcResponse::success(id, result);
        check_roundtrip(&resp)?;
        let v = serde_json::to_value(&resp).unwrap();
        let found = conformance_response(result_type(method.as_str()), &v);
        prop_assert!(found.is_empty(), "{:#?}", found);
    }

    #[test]
    fn json_rpc_response_with_error_round_trips_and_conforms(
        id in id(),
        err in json_rpc_error(),
        method in select(Method::ALL.to_vec()),
    ) {
        let resp: JsonRpcResponse<StreamResponse> = JsonRpcResponse::error(id.clone(), err.clone());
        check_roundtrip(&resp)?;
        let found = conformance_response(result_type(method.as_str()), &serde_json::to_value(&resp).unwrap());
        prop_assert!(found.is_empty(), "{:#?}", found);
        let raw: JsonRpcResponse = JsonRpcResponse::error(id, err);
        check_roundtrip(&raw)?;
    }

    #[test]
    fn typed_json_rpc_responses_round_trip(
        id in id(),
        event in stream_response(),
        sent in send_message_response(),
        card in agent_card(),
    ) {
        check_roundtrip(&JsonRpcResponse::success(id.clone(), event))?;
        check_roundtrip(&JsonRpcResponse::success(id.clone(), sent))?;
        check_roundtrip(&JsonRpcResponse::success(id, card))?;
    }
}

// ---------------------------------------------------------------------------
// Robustness: nothing panics
// ---------------------------------------------------------------------------

/// Leaves biased towards what the wire types look for.
fn fuzz_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => json_leaf(),
        1 => select(
            TaskState::ALL
                .iter()
                .map(|s| s.as_str())
                .chain(["completed", "input-required", "user", "ROLE_AGENT", "TASK_STATE_FOO"])
                .collect::<Vec<_>>()
        )
        .prop_map(Value::from),
        1 => select(vec![
            "2026-03-20T10:00:01.000Z",
            "2026-03-20T12:00:01+02:00",
            "yesterday",
            "iVBORw0KGgo=",
            "not base64!",
            "-_-_",
            "2.0",
            "3",
        ])
        .prop_map(Value::from),
        1 => prop_oneof![
            Just(json!(i64::MAX)),
            Just(json!(u64::MAX)),
            Just(json!(i64::MIN)),
            Just(json!(f64::MAX)),
            Just(json!(3_000_000_000u64)),
        ],
    ]
}

fn fuzz_key() -> impl Strategy<Value = String> {
    prop_oneof![
        1 => "[a-zA-Z_]{1,6}",
        4 => select(vec![
            "id", "contextId", "context_id", "taskId", "messageId", "role", "parts", "text",
            "raw", "url", "data", "metadata", "filename", "mediaType", "status", "state",
            "message", "timestamp", "artifacts", "artifact", "artifactId", "history", "task",
            "statusUpdate", "artifactUpdate", "append", "lastChunk", "kind", "final", "index",
            "configuration", "historyLength", "pageSize", "tasks", "nextPageToken", "totalSize",
            "jsonrpc", "result", "error", "code", "params", "method", "name", "description",
            "supportedInterfaces", "skills", "capabilities", "securitySchemes", "flows",
            "httpAuthSecurityScheme", "oauth2SecurityScheme", "authorizationCode", "scopes",
            "schemes", "list", "authentication", "scheme",
        ])
        .prop_map(str::to_string),
    ]
}

/// Arbitrary JSON, with keys and leaves that reach deep into the decoders.
fn fuzz_value() -> impl Strategy<Value = Value> {
    fuzz_leaf().prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..5).prop_map(Value::Array),
            btree_map(fuzz_key(), inner, 0..6).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Replace the subtree reached by following `path` (each index picks a child) with `new`.
fn replace_at(v: &mut Value, path: &[Index], new: Value) {
    let (first, rest) = match path.split_first() {
        Some(x) => x,
        None => {
            *v = new;
            return;
        }
    };
    match v {
        Value::Object(m) if !m.is_empty() => {
            let i = first.index(m.len());
            let key = m.keys().nth(i).cloned().unwrap();
            replace_at(m.get_mut(&key).unwrap(), rest, new);
        }
        Value::Array(a) if !a.is_empty() => {
            let i = first.index(a.len());
            replace_at(&mut a[i], rest, new);
        }
        _ => *v = new,
    }
}

/// A valid payload of some type with one subtree replaced by arbitrary JSON.
fn mutated_payload() -> impl Strategy<Value = Value> {
    fn v<T: Serialize>(t: T) -> Value {
        serde_json::to_value(t).unwrap()
    }
    // Boxed arms keep the value trees off the (small, debug-mode) test thread stack.
    let base = prop_oneof![
        task().prop_map(v).boxed(),
        message().prop_map(v).boxed(),
        stream_response().prop_map(v).boxed(),
        send_message_request().prop_map(v).boxed(),
        agent_card().prop_map(v).boxed(),
        list_tasks_response().prop_map(v).boxed(),
        (id(), stream_response())
            .prop_map(|(id, r)| v(JsonRpcResponse::success(id, r)))
            .boxed(),
    ];
    (base, vec(any::<Index>(), 0..6), fuzz_value()).prop_map(|(mut base, path, new)| {
        replace_at(&mut base, &path, new);
        base
    })
}

/// Decode `v` as every wire type, from the value and from its text; only errors are allowed.
fn decode_as_everything(v: &Value) {
    let bytes = serde_json::to_vec(v).unwrap();
    macro_rules! try_all {
        ($($t:ty),+ $(,)?) => {$(
            let _ = decode_value::<$t>(v);
            let _ = decode::<$t>(&bytes);
        )+};
    }
    try_all!(
        Role,
        TaskState,
        Timestamp,
        Part,
        Message,
        TaskStatus,
        Task,
        Artifact,
        TaskStatusUpdateEvent,
        TaskArtifactUpdateEvent,
        SendMessageConfiguration,
        SendMessageRequest,
        SendMessageResponse,
        StreamResponse,
        GetTaskRequest,
        ListTasksRequest,
        ListTasksResponse,
        CancelTaskRequest,
        SubscribeToTaskRequest,
        AuthenticationInfo,
        TaskPushNotificationConfig,
        TaskPushNotificationConfigRef,
        ListTaskPushNotificationConfigsRequest,
        ListTaskPushNotificationConfigsResponse,
        GetExtendedAgentCardRequest,
        AgentCard,
        AgentInterface,
        AgentProvider,
        AgentCapabilities,
        AgentExtension,
        AgentSkill,
        AgentCardSignature,
        SecurityRequirement,
        StringList,
        SecurityScheme,
        OAuthFlows,
        Id,
        JsonRpcError,
        JsonRpcRequest,
        JsonRpcRequest<SendMessageRequest>,
        JsonRpcResponse,
        JsonRpcResponse<StreamResponse>,
        JsonRpcResponse<SendMessageResponse>,
        JsonRpcResponse<Task>,
        JsonRpcResponse<AgentCard>,
        JsonRpcResponse<()>,
        ErrorInfo,
    );
}

/// Run every conformance entry point on `v`, also wrapped as a response result.
fn check_everything(v: &Value) {
    for t in ObjectType::ALL {
        let found = conformance(*t, v);
        assert!(found.len() <= conformance::MAX_DEVIATIONS);
        for d in &found {
            assert!(d.path.starts_with('$'), "{d}");
        }
    }
    let _ = conformance_response(None, v);
    let wrapped = json!({"jsonrpc": "2.0", "id": 1, "result": v});
    for m in Method::ALL {
        let _ = conformance_response(result_type(m.as_str()), v);
        let _ = conformance_response(result_type(m.as_str()), &wrapped);
    }
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn arbitrary_json_never_panics(v in fuzz_value()) {
        decode_as_everything(&v);
        check_everything(&v);
    }

    #[test]
    fn mutated_payloads_never_panic(v in mutated_payload()) {
        decode_as_everything(&v);
        check_everything(&v);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in vec(any::<u8>(), 0..256)) {
        let _ = decode::<JsonRpcRequest>(&bytes);
        let _ = decode::<JsonRpcResponse<StreamResponse>>(&bytes);
        let _ = decode::<JsonRpcRequest<SendMessageRequest>>(&bytes);
    }

    #[test]
    fn corrupted_bytes_never_panic(
        (id, event) in (id(), stream_response()),
        cuts in vec((any::<Index>(), any::<u8>()), 0..4),
        truncate in of(any::<Index>()),
    ) {
        let mut bytes = serde_json::to_vec(&JsonRpcResponse::success(id, event)).unwrap();
        for (at, b) in cuts {
            let i = at.index(bytes.len());
            bytes[i] = b;
        }
        if let Some(t) = truncate {
            bytes.truncate(t.index(bytes.len() + 1));
        }
        let _ = decode::<JsonRpcRequest>(&bytes);
        let _ = decode::<JsonRpcResponse<StreamResponse>>(&bytes);
        let _ = decode::<JsonRpcResponse>(&bytes);
    }
}

#[test]
fn deeply_nested_input_is_an_error_not_a_crash() {
    let depth = 10_000;
    let mut text = String::from(
        r#"{"jsonrpc":"2.0","id":1,"result":{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"data":"#,
    );
    text.push_str(&"[".repeat(depth));
    text.push_str(&"]".repeat(depth));
    text.push_str("}]}}}");
    assert!(decode::<JsonRpcResponse<StreamResponse>>(text.as_bytes()).is_err());
    assert!(decode::<JsonRpcResponse>(text.as_bytes()).is_err());
}
