//! Strategies for requests, results and push configs.

use super::*;

pub(crate) fn authentication_info() -> impl Strategy<Value = AuthenticationInfo> {
    (select(vec!["Bearer", "Basic", "Digest"]), of(text())).prop_map(|(scheme, credentials)| {
        AuthenticationInfo {
            scheme: scheme.to_string(),
            credentials,
        }
    })
}

pub(crate) fn push_config() -> impl Strategy<Value = TaskPushNotificationConfig> {
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

pub(crate) fn send_configuration() -> impl Strategy<Value = SendMessageConfiguration> {
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

pub(crate) fn send_message_request() -> BoxedStrategy<SendMessageRequest> {
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

pub(crate) fn get_task_request() -> impl Strategy<Value = GetTaskRequest> {
    (of(ident()), ident(), of(any::<i32>())).prop_map(|(tenant, id, history_length)| {
        GetTaskRequest {
            tenant,
            id,
            history_length,
        }
    })
}

pub(crate) fn list_tasks_request() -> impl Strategy<Value = ListTasksRequest> {
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

pub(crate) fn list_tasks_response() -> impl Strategy<Value = ListTasksResponse> {
    (vec(task(), 0..3), text(), any::<i32>(), any::<i32>()).prop_map(
        |(tasks, next_page_token, page_size, total_size)| ListTasksResponse {
            tasks,
            next_page_token,
            page_size,
            total_size,
        },
    )
}

pub(crate) fn cancel_task_request() -> impl Strategy<Value = CancelTaskRequest> {
    (of(ident()), ident(), of(metadata())).prop_map(|(tenant, id, metadata)| CancelTaskRequest {
        tenant,
        id,
        metadata,
    })
}

pub(crate) fn subscribe_request() -> impl Strategy<Value = SubscribeToTaskRequest> {
    (of(ident()), ident()).prop_map(|(tenant, id)| SubscribeToTaskRequest { tenant, id })
}

pub(crate) fn push_config_ref() -> impl Strategy<Value = TaskPushNotificationConfigRef> {
    (of(ident()), ident(), ident()).prop_map(|(tenant, task_id, id)| {
        TaskPushNotificationConfigRef {
            tenant,
            task_id,
            id,
        }
    })
}

pub(crate) fn list_push_configs_request()
-> impl Strategy<Value = ListTaskPushNotificationConfigsRequest> {
    (of(ident()), ident(), any::<i32>(), of(text())).prop_map(
        |(tenant, task_id, page_size, page_token)| ListTaskPushNotificationConfigsRequest {
            tenant,
            task_id,
            page_size,
            page_token,
        },
    )
}

pub(crate) fn list_push_configs_response()
-> impl Strategy<Value = ListTaskPushNotificationConfigsResponse> {
    (vec(push_config(), 0..3), of(text())).prop_map(|(configs, next_page_token)| {
        ListTaskPushNotificationConfigsResponse {
            configs,
            next_page_token,
        }
    })
}

pub(crate) fn extended_card_request() -> impl Strategy<Value = GetExtendedAgentCardRequest> {
    of(ident()).prop_map(|tenant| GetExtendedAgentCardRequest { tenant })
}
