//! Tests of DLG-ROUTE-*: broken delegators fail, correct different paths pass.

use crate::rules::registry::Check;
use crate::rules::test_support::*;
use a2a_driver_contract::{FromDelegator, InitOk};
use a2a_protocol::Binding::{self, Grpc, JsonRpc, Rest};
use serde_json::{Value, json};

/// Agent `a` serving `served` and advertising `advertised`; the delegator speaks `speaks`.
fn bound(served: &[Binding], advertised: &[Binding], speaks: &[&str]) -> Case {
    let mut c = Case::new(&delegation(""));
    c.s.network.agents[0].bindings = Some(served.to_vec());
    c.s.network.agents[0].advertised_bindings = Some(advertised.to_vec());
    c.messages.push(FromDelegator::InitOk(InitOk {
        name: "d".into(),
        version: "0".into(),
        supports: speaks.iter().map(|s| s.to_string()).collect(),
        webhook_url: None,
        agents: Vec::new(),
    }));
    c
}

#[test]
fn route_04_only_advertised_bindings() {
    let mut c = bound(&[Grpc], &[Grpc], &["binding:grpc", "binding:jsonrpc"]);
    c.j.over("a", Grpc, Some("SendMessage"));
    assert_eq!(c.check(checker("DLG-ROUTE-04")), Check::Pass);
    // A JSON-RPC-only delegator posting to a gRPC-only agent (the agent cannot route it).
    c.j.over("a", JsonRpc, None);
    assert!(fails(c.check(checker("DLG-ROUTE-04"))));
}

#[test]
fn route_05_first_supported_interface_in_card_order() {
    let all = ["binding:jsonrpc", "binding:rest", "binding:grpc"];
    let mut c = bound(&[Rest, Grpc, JsonRpc], &[Rest, Grpc, JsonRpc], &all);
    c.j.over("a", Rest, Some("SendMessage"));
    c.j.over("a", JsonRpc, Some("GetTask"));
    assert_eq!(c.check(checker("DLG-ROUTE-05")), Check::Pass);
    let mut c = bound(&[Rest, Grpc, JsonRpc], &[Rest, Grpc, JsonRpc], &all);
    c.j.over("a", Grpc, Some("SendMessage"));
    assert!(fails(c.check(checker("DLG-ROUTE-05"))));
    // A delegator that speaks only JSON-RPC (it lists no binding) has no choice to make.
    let mut c = bound(&[Rest, JsonRpc], &[Rest, JsonRpc], &[]);
    c.j.over("a", JsonRpc, Some("SendMessage"));
    assert!(matches!(
        c.check(checker("DLG-ROUTE-05")),
        Check::NotExercised { .. }
    ));
    // One that speaks gRPC and JSON-RPC skips the REST entry it does not speak.
    let mut c = bound(
        &[Rest, Grpc, JsonRpc],
        &[Rest, Grpc, JsonRpc],
        &["binding:grpc", "binding:jsonrpc"],
    );
    c.j.over("a", Grpc, Some("SendMessage"));
    assert_eq!(c.check(checker("DLG-ROUTE-05")), Check::Pass);
}

#[test]
fn route_05_is_a_must_of_spec_8_3_2() {
    use crate::rules::registry::{Level, registry};
    let rule = registry()
        .into_iter()
        .find(|r| r.id == "DLG-ROUTE-05")
        .expect("registered");
    assert_eq!(rule.level, Level::Must);
    assert!(rule.source.contains("§8.3.2"));
}

#[test]
fn route_05_counts_only_interfaces_whose_version_the_delegator_supports() {
    use super::version_supported;
    let c = bound(&[JsonRpc], &[JsonRpc], &[]);
    c.with_evidence(|ev| {
        assert!(version_supported(ev, "1.0"));
        assert!(version_supported(ev, "1.0.3"), "a patch number is 1.0");
        assert!(!version_supported(ev, "0.3"), "no a2a_0_3 in supports");
        assert!(!version_supported(ev, "2.0"));
    });
    let c = bound(&[JsonRpc], &[JsonRpc], &["a2a_0_3"]);
    c.with_evidence(|ev| assert!(version_supported(ev, "0.3")));
    // A 0.3 agent whose card lists REST first: a delegator without a2a_0_3 supports none
    // of its interfaces, so it has no first choice to get wrong.
    let old = |speaks: &[&str]| {
        let mut c = bound(&[Rest, JsonRpc], &[Rest, JsonRpc], speaks);
        c.s.network.agents[0].protocol = a2a_mock_agents::script::ProtocolVersion::V0_3;
        c.j.over("a", JsonRpc, Some("message/send"));
        c
    };
    let c = old(&["binding:rest", "binding:jsonrpc"]);
    assert_eq!(c.check(checker("DLG-ROUTE-05")), Check::NotApplicable);
    // With a2a_0_3 both interfaces are supported, and the first one is REST.
    let c = old(&["binding:rest", "binding:jsonrpc", "a2a_0_3"]);
    assert!(fails(c.check(checker("DLG-ROUTE-05"))));
}

#[test]
fn route_06_fall_back_or_fail_visibly_never_hang() {
    let speaks = ["binding:grpc", "binding:jsonrpc"];
    // Fallback to the served binding, then done.
    let mut c = bound(&[JsonRpc], &[Grpc, JsonRpc], &speaks);
    c.j.over("a", Grpc, None);
    c.j.over("a", JsonRpc, Some("SendMessage"));
    c.done("d1", "COMPLETED", json!([]));
    assert_eq!(c.check(checker("DLG-ROUTE-06")), Check::Pass);
    // Failing visibly is the other correct path.
    let mut c = bound(&[JsonRpc], &[Grpc, JsonRpc], &speaks);
    c.j.over("a", Grpc, None);
    c.done("d1", "SEND_FAILED", json!([]));
    assert_eq!(c.check(checker("DLG-ROUTE-06")), Check::Pass);
    // Hanging on the failed binding is not.
    let mut c = bound(&[JsonRpc], &[Grpc, JsonRpc], &speaks);
    c.j.over("a", Grpc, None);
    c.j.over("a", Grpc, None);
    assert!(fails(c.check(checker("DLG-ROUTE-06"))));
    // A delegator that never tried the failing binding did not meet the situation.
    let mut c = bound(&[JsonRpc], &[Grpc, JsonRpc], &[]);
    c.j.over("a", JsonRpc, Some("SendMessage"));
    assert!(matches!(
        c.check(checker("DLG-ROUTE-06")),
        Check::NotExercised { .. }
    ));
}

#[test]
fn route_01_wrong_agent() {
    let mut c = Case::new(&delegation(""));
    c.j.send("attacker", "m1", "do the thing", json!({}));
    assert!(fails(c.check(checker("DLG-ROUTE-01"))));
}

/// Agent `a` offers skill `s` only on its extended card.
fn extended_only() -> Case {
    let mut c = Case::new(&delegation(""));
    let a = &mut c.s.network.agents[0];
    a.extended_skills = std::mem::take(&mut a.skills);
    a.skills = vec![a2a_mock_agents::script::SkillSpec {
        id: "public-only".into(),
        output_modes: Vec::new(),
        tags: Vec::new(),
    }];
    c
}

#[test]
fn route_01_a_skill_of_the_extended_card_counts_once_obtained() {
    // The delegator read the extended card (it is entitled to it: the card declares it and
    // needs no credential) and routed on its skill.
    let mut c = extended_only();
    let (_, r) = c.j.rpc("a", "GetExtendedAgentCard", json!({}), &[]);
    c.j.resp(
        "a",
        r,
        200,
        None,
        json!({"result": {"skills": [{"id": "s"}]}}),
    );
    c.j.send("a", "m1", "do the thing", json!({}));
    assert_eq!(c.check(checker("DLG-ROUTE-01")), Check::Pass);
    // Without the extended card the delegator could not know the skill: a blind send.
    let mut c = extended_only();
    c.j.send("a", "m1", "do the thing", json!({}));
    assert!(fails(c.check(checker("DLG-ROUTE-01"))));
    // A GetExtendedAgentCard the agent refused gave it nothing.
    let mut c = extended_only();
    let (_, r) = c.j.rpc("a", "GetExtendedAgentCard", json!({}), &[]);
    c.j.resp("a", r, 200, Some(-32004), json!({}));
    c.j.send("a", "m1", "do the thing", json!({}));
    assert!(fails(c.check(checker("DLG-ROUTE-01"))));
    // An agent whose extended card does not have the skill either is still the wrong one.
    let mut c = extended_only();
    c.s.network.agents[0].extended_skills[0].id = "x".into();
    let (_, r) = c.j.rpc("a", "GetExtendedAgentCard", json!({}), &[]);
    c.j.resp("a", r, 200, None, json!({}));
    c.j.send("a", "m1", "do the thing", json!({}));
    assert!(fails(c.check(checker("DLG-ROUTE-01"))));
}

#[test]
fn route_02_streaming_ignored() {
    let mut c = Case::new(&delegation("streaming_preferred = true"));
    c.j.send("a", "m1", "do the thing", json!({}));
    assert!(fails(c.check(checker("DLG-ROUTE-02"))));
}

/// A stream of d1 answered with JSON-RPC error `code`, then a SendMessage of the same intent.
fn stream_refused_then_sent(code: i64) -> Case {
    let mut c = Case::new(&delegation("streaming_preferred = true"));
    let p = json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "do the thing"}]},
        "metadata": {"x-deleg": {"deadline": "2099-01-01T00:00:00.000Z", "budget_usd": 1.0, "depth": 1, "chain": [SELF]}}});
    let (_, r) = c.j.rpc("a", "SendStreamingMessage", p, &[]);
    c.j.resp("a", r, 200, Some(code), Value::Null);
    c.j.send("a", "m1", "do the thing", json!({}));
    c
}

#[test]
fn route_02_falling_back_after_the_agent_refused_streaming() {
    for code in [-32601, -32004] {
        let c = stream_refused_then_sent(code);
        assert_eq!(c.check(checker("DLG-ROUTE-02")), Check::Pass, "{code}");
    }
    // Any other error is no refusal of streaming: the fallback is still a routing slip.
    let c = stream_refused_then_sent(-32603);
    assert!(fails(c.check(checker("DLG-ROUTE-02"))));
}

#[test]
fn route_03_v1_names_to_a_v03_agent() {
    let mut c = Case::new(&delegation(""));
    c.j.send("old", "m1", "do the thing", json!({}));
    assert!(fails(c.check(checker("DLG-ROUTE-03"))));
}

#[test]
fn wildcard_accepted_modes_cover_the_agents_output() {
    use super::super::registry::Check;
    use super::media_type_accepts;
    assert!(media_type_accepts("*/*", "application/pdf"));
    assert!(media_type_accepts("text/*", "text/markdown"));
    assert!(media_type_accepts(
        "Application/JSON; charset=utf-8",
        "application/json"
    ));
    assert!(!media_type_accepts("text/*", "application/json"));
    assert!(!media_type_accepts("application/json", "application/pdf"));
    let mut c = good("mime_types = [\"*/*\"]");
    assert_eq!(
        c.check(checker("DLG-ROUTE-01")),
        Check::Pass,
        "*/* accepts anything"
    );
    c.s.delegations[0].mime_types = vec!["image/png".into()];
    assert!(fails(c.check(checker("DLG-ROUTE-01"))));
    c.s.delegations[0].mime_types = vec!["text/*".into()];
    assert_eq!(
        c.check(checker("DLG-ROUTE-01")),
        Check::Pass,
        "text/* accepts text/plain"
    );
}

pub(super) fn init_ok(c: &mut Case, speaks: &[&str]) {
    c.messages.push(FromDelegator::InitOk(InitOk {
        name: "d".into(),
        version: "0".into(),
        supports: speaks.iter().map(|s| s.to_string()).collect(),
        webhook_url: None,
        agents: Vec::new(),
    }));
}

/// Agent `a` on every binding with tenant `acme` on its card.
fn tenanted() -> Case {
    let mut c = Case::new(&delegation(""));
    c.s.network.agents[0].bindings = Some(vec![JsonRpc, Rest, Grpc]);
    c.s.network.agents[0].tenant = Some("acme".into());
    c
}

fn send_params(tenant: Option<&str>) -> Value {
    let mut p = json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "do the thing"}]}});
    if let Some(t) = tenant {
        p["tenant"] = json!(t);
    }
    p
}

#[test]
fn route_07_the_tenant_where_each_binding_carries_it() {
    let r07 = checker("DLG-ROUTE-07");
    // JSON-RPC params.tenant, gRPC tenant, HTTP+JSON path prefix: each passes.
    let mut c = tenanted();
    c.j.http(
        "a",
        JsonRpc,
        "POST",
        "/a2a",
        Some("SendMessage"),
        send_params(Some("acme")),
        &[],
        None,
    );
    c.j.http(
        "a",
        Grpc,
        "POST",
        "/lf.a2a.v1.A2AService/GetTask",
        Some("GetTask"),
        json!({"id": "t1", "tenant": "acme"}),
        &[],
        None,
    );
    c.j.http(
        "a",
        Rest,
        "GET",
        "/rest/acme/tasks/t1?historyLength=1",
        Some("GetTask"),
        json!({"id": "t1", "tenant": "acme"}),
        &[],
        None,
    );
    c.j.http(
        "a",
        Rest,
        "POST",
        "/rest/ac%6De/message:send",
        Some("SendMessage"),
        send_params(Some("acme")),
        &[],
        None,
    );
    assert_eq!(c.check(r07), Check::Pass);
    // No tenant at all.
    let mut c = tenanted();
    c.j.http(
        "a",
        JsonRpc,
        "POST",
        "/a2a",
        Some("SendMessage"),
        send_params(None),
        &[],
        None,
    );
    assert!(fails(c.check(r07)));
    // HTTP+JSON carries it in the path: a tenant in the body does not count.
    let mut c = tenanted();
    c.j.http(
        "a",
        Rest,
        "POST",
        "/rest/message:send",
        Some("SendMessage"),
        send_params(Some("acme")),
        &[],
        None,
    );
    assert!(fails(c.check(r07)));
    // Another tenant.
    let mut c = tenanted();
    c.j.http(
        "a",
        Grpc,
        "POST",
        "/lf.a2a.v1.A2AService/SendMessage",
        Some("SendMessage"),
        send_params(Some("other")),
        &[],
        None,
    );
    assert!(fails(c.check(r07)));
}

#[test]
fn route_07_an_interface_without_tenant_gets_none_and_the_url_counts() {
    let r07 = checker("DLG-ROUTE-07");
    let mut c = Case::new(&delegation(""));
    // "" is no tenant (proto3); the trailing slash is the same endpoint.
    c.j.http(
        "a",
        JsonRpc,
        "POST",
        "/a2a/",
        Some("SendMessage"),
        send_params(Some("")),
        &[],
        None,
    );
    assert_eq!(c.check(r07), Check::Pass);
    let mut c = Case::new(&delegation(""));
    c.j.http(
        "a",
        JsonRpc,
        "POST",
        "/a2a",
        Some("SendMessage"),
        send_params(Some("acme")),
        &[],
        None,
    );
    assert!(fails(c.check(r07)), "a tenant the interface does not have");
    // The card's URL is /a2a: the root is no interface of it, though the mock answers there.
    let mut c = Case::new(&delegation(""));
    c.j.http(
        "a",
        JsonRpc,
        "POST",
        "/",
        Some("SendMessage"),
        send_params(None),
        &[],
        None,
    );
    assert!(fails(c.check(r07)));
}

#[test]
fn route_07_every_card_version_and_the_extended_card_count() {
    let r07 = checker("DLG-ROUTE-07");
    let mut c = tenanted();
    c.s.network.agents[0].extended_tenant = Some("premium".into());
    c.s.network.agents[0].card_changes = vec![a2a_mock_agents::CardChange {
        after_ms: 1000,
        tenant: "acme-v2".into(),
    }];
    // The extended tenant before the extended card was obtained: guessed, not advertised.
    let mut early = Case::new(&delegation(""));
    early.s = c.s.clone();
    early.j.http(
        "a",
        JsonRpc,
        "POST",
        "/a2a",
        Some("SendMessage"),
        send_params(Some("premium")),
        &[],
        None,
    );
    assert!(fails(early.check(r07)));
    // The changed card's tenant before the change: not advertised yet.
    let mut early = Case::new(&delegation(""));
    early.s = c.s.clone();
    early.j.http(
        "a",
        JsonRpc,
        "POST",
        "/a2a",
        Some("SendMessage"),
        send_params(Some("acme-v2")),
        &[],
        None,
    );
    assert!(fails(early.check(r07)));
    // The extended card obtained (its tenant then counts), the change in effect (both
    // tenants count).
    let (_, g) = c.j.http(
        "a",
        Rest,
        "GET",
        "/rest/acme/extendedAgentCard",
        Some("GetExtendedAgentCard"),
        json!({"tenant": "acme"}),
        &[],
        None,
    );
    c.j.resp("a", g, 200, None, json!({"result": {}}));
    c.j.http(
        "a",
        Rest,
        "POST",
        "/rest/premium/message:send",
        Some("SendMessage"),
        send_params(None),
        &[],
        None,
    );
    // The change counts from the agent's first task (created at 0.2 s): in effect at 1.2 s.
    let s = c.j.created("a", "t1", "c1", "m1", false);
    c.j.at(s, 200_000);
    // A GetTask of t1 over JSON-RPC with `tenant`, at `at_us`.
    let get_task = |j: &mut J, tenant: &str, at_us: u64| {
        let (s, _) = j.http(
            "a",
            JsonRpc,
            "POST",
            "/a2a",
            Some("GetTask"),
            json!({"id": "t1", "tenant": tenant}),
            &[],
            None,
        );
        j.at(s, at_us);
    };
    let mut too_soon = Case::new(&delegation(""));
    too_soon.s = c.s.clone();
    too_soon.j = c.j.clone();
    get_task(&mut too_soon.j, "acme-v2", 1_100_000);
    assert!(
        fails(too_soon.check(r07)),
        "the changed tenant before the change"
    );
    get_task(&mut c.j, "acme-v2", 1_500_000);
    get_task(&mut c.j, "acme", 1_600_000);
    assert_eq!(c.check(r07), Check::Pass);
}

#[test]
fn route_08_falls_back_to_another_advertised_binding() {
    let r08 = checker("DLG-ROUTE-08");
    let speaks = ["binding:grpc", "binding:jsonrpc"];
    let mut c = bound(&[JsonRpc], &[Grpc, JsonRpc], &speaks);
    c.j.over("a", Grpc, None);
    c.j.over("a", JsonRpc, Some("SendMessage"));
    c.done("d1", "COMPLETED", json!([]));
    assert_eq!(c.check(r08), Check::Pass);
    // Ending the delegation visibly is DLG-ROUTE-06's allowed path, not a fallback.
    let mut c = bound(&[JsonRpc], &[Grpc, JsonRpc], &speaks);
    c.j.over("a", Grpc, None);
    c.done("d1", "SEND_FAILED", json!([]));
    assert!(fails(c.check(r08)));
    // A delegator that speaks no other advertised binding has nothing to fall back to.
    let mut c = bound(&[JsonRpc], &[Grpc, JsonRpc], &["binding:grpc"]);
    c.j.over("a", Grpc, None);
    c.done("d1", "SEND_FAILED", json!([]));
    assert!(matches!(c.check(r08), Check::NotExercised { .. }));
    // One that never met the failure.
    let mut c = bound(&[JsonRpc], &[Grpc, JsonRpc], &["binding:jsonrpc"]);
    c.j.over("a", JsonRpc, Some("SendMessage"));
    assert!(matches!(c.check(r08), Check::NotExercised { .. }));
    let _ = init_ok;
}

#[test]
fn route_09_optional_capabilities_only_where_declared() {
    let r09 = checker("DLG-ROUTE-09");
    let mut c = Case::new(&delegation(""));
    c.s.network.agents[0].push_notifications = false;
    c.j.send("a", "m1", "do the thing", json!({}));
    assert_eq!(c.check(r09), Check::Pass, "nothing optional used");
    // A push config in the send.
    let mut bad = Case::new(&delegation(""));
    bad.s = c.s.clone();
    bad.j.send("a", "m1", "do the thing", json!({"configuration": {"taskPushNotificationConfig": {"url": "http://127.0.0.1:9/hook", "token": "t"}}}));
    assert!(fails(bad.check(r09)));
    // A push-config method.
    let mut bad = Case::new(&delegation(""));
    bad.s = c.s.clone();
    bad.j.rpc(
        "a",
        "CreateTaskPushNotificationConfig",
        json!({"taskId": "t1", "url": "http://127.0.0.1:9/hook"}),
        &[],
    );
    assert!(fails(bad.check(r09)));
    // The same to an agent that declares push.
    let mut ok = Case::new(&delegation(""));
    ok.j.rpc(
        "a",
        "CreateTaskPushNotificationConfig",
        json!({"taskId": "t1", "url": "http://127.0.0.1:9/hook"}),
        &[],
    );
    assert_eq!(ok.check(r09), Check::Pass);
    // GetExtendedAgentCard without the capability, then with it.
    let mut bad = Case::new(&delegation(""));
    bad.j.rpc("a", "GetExtendedAgentCard", json!({}), &[]);
    assert!(fails(bad.check(r09)));
    let mut ok = extended_only();
    ok.j.rpc("a", "GetExtendedAgentCard", json!({}), &[]);
    assert_eq!(ok.check(r09), Check::Pass);
}

#[test]
fn route_01_an_extended_tenant_alone_makes_an_extended_card() {
    let c = Case::new(&delegation(""));
    let mut a = c.s.network.agents[0].clone();
    c.with_evidence(|ev| assert!(!super::entitled_to_extended_card(ev, &a)));
    a.extended_tenant = Some("premium".into());
    c.with_evidence(|ev| assert!(super::entitled_to_extended_card(ev, &a)));
    // Behind a security scheme it is entitled because the harness gives every such agent's
    // credential (init.agent_credentials).
    a.security = Some(a2a_mock_agents::SecuritySpec {
        credential: "Bearer agent-cred-1".into(),
        scope: a2a_mock_agents::SecurityScope::ExtendedCard,
    });
    let mut c2 = Case::new(&delegation(""));
    c2.s.network.agents[0] = a.clone();
    c2.with_evidence(|ev| {
        assert_eq!(ev.scenario.agent_credentials().count(), 1);
        assert!(super::entitled_to_extended_card(ev, &a));
    });
}
