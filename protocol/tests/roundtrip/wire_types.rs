//! Round trip and conformance of every wire type.

use super::*;

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
