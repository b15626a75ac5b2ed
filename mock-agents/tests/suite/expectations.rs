//! The builder and expectations (wiremock style): typed steps build the same scripts as TOML,
//! `AgentSpec::default()` is the TOML default, validation errors are typed, and `expect(n)` is
//! verified by `Network::verify`, by `Network::finish` and on drop (with an expected-vs-matched
//! report; not while already panicking).

use crate::common;

use a2a_mock_agents::{
    AgentSpec, MockAgent, Network, NetworkSpec, Problem, ScriptStep, Step, Times, ValidationError,
};
use a2a_protocol::{ErrorCode, Method, TaskState};
use common::*;
use serde_json::json;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

#[test]
fn the_default_agent_is_the_toml_default_and_typed_steps_are_the_toml_steps() {
    let toml = NetworkSpec::from_toml(
        "t.toml",
        r#"
        seed = 3
        [[agent]]
        name = "a"
        [[agent.rule]]
        when = { method = "GetTask" }
        steps = [{ do = "error", code = -32001 }]
        [[agent.rule]]
        when = { text_contains = "book" }
        expect = "1.."
        steps = [
          { do = "state", state = "TASK_STATE_WORKING", message = "on it", delay_ms = 5 },
          { do = "artifacts", count = 2, chunks = 3, chunk_bytes = 16, content = "raw", interleave = true },
          { do = "input_required", question = "Which day?", expect = { text_contains = "Mon" }, rounds = 2, on_wrong = "fail" },
          { do = "gate", gate = "go", timeout_ms = 30000 },
          { do = "wait", ms = 7 },
          { do = "state", state = "TASK_STATE_COMPLETED" },
        ]
        "#,
    )
    .unwrap();
    let built = MockAgent::network(
        3,
        vec![
            MockAgent::builder("a")
                .mount(
                    MockAgent::when()
                        .method(Method::GetTask)
                        .step(Step::error(ErrorCode::TaskNotFound)),
                )
                .mount(
                    MockAgent::when()
                        .text_contains("book")
                        .expect(1..)
                        .step(
                            Step::state(TaskState::Working)
                                .message("on it")
                                .after(Duration::from_millis(5)),
                        )
                        .step(
                            Step::artifacts(2)
                                .chunks(3)
                                .chunk_bytes(16)
                                .raw()
                                .interleave(),
                        )
                        .step(
                            Step::input_required("Which day?")
                                .expect_text("Mon")
                                .rounds(2)
                                .fail_on_wrong(),
                        )
                        .step(Step::gate("go"))
                        .step(Step::wait(Duration::from_millis(7)))
                        .state(TaskState::Completed),
                )
                .build(),
        ],
    );
    assert_eq!(built, toml);
    let minimal = NetworkSpec::from_toml("t.toml", "[[agent]]\nname = \"x\"\n").unwrap();
    assert_eq!(
        minimal.agents[0],
        AgentSpec {
            name: "x".into(),
            ..AgentSpec::default()
        }
    );
    assert_eq!(MockAgent::builder("x").build(), minimal.agents[0]);
}

#[test]
fn validation_errors_are_typed() {
    let spec = MockAgent::network(
        1,
        vec![
            MockAgent::builder("a")
                .mount(MockAgent::when().step(Step::artifacts(1).chunks(0)))
                .build(),
            MockAgent::builder("b")
                .mount(MockAgent::when().step(Step::delegate("nobody", "hi")))
                .build(),
        ],
    );
    let e: ValidationError = spec.validate().unwrap_err();
    assert_eq!(e.path, "agent[0].rule[0].steps[0].chunks");
    assert_eq!(e.problem, Problem::NotPositive("chunks"));
    assert_eq!(
        e.to_string(),
        "agent[0].rule[0].steps[0].chunks: chunks must be > 0"
    );
    let spec = MockAgent::network(
        1,
        vec![
            MockAgent::builder("b")
                .mount(MockAgent::when().step(Step::delegate("nobody", "hi")))
                .build(),
        ],
    );
    assert_eq!(
        spec.validate().unwrap_err().problem,
        Problem::UnknownAgent("nobody".into())
    );
    let dup = MockAgent::network(
        1,
        vec![
            MockAgent::builder("a").build(),
            MockAgent::builder("a").build(),
        ],
    );
    assert_eq!(
        dup.validate().unwrap_err(),
        ValidationError {
            path: "agent[1].name".into(),
            problem: Problem::DuplicateName("a".into()),
        }
    );
    let two = MockAgent::network(
        1,
        vec![
            MockAgent::builder("a")
                .mount(
                    MockAgent::when()
                        .step(Step::reply("x"))
                        .state(TaskState::Completed),
                )
                .build(),
        ],
    );
    assert_eq!(
        two.validate().unwrap_err().problem,
        Problem::NotTheOnlyStep("reply")
    );
}

#[test]
fn times_are_counts_or_ranges() {
    for (t, yes, no) in [
        (Times::from(2), &[2][..], &[1, 3][..]),
        (Times::from(1..), &[1, 100], &[0]),
        (Times::from(2..=4), &[2, 4], &[1, 5]),
        (Times::from(1..3), &[1, 2], &[0, 3]),
        (Times::from(..=1), &[0, 1], &[2]),
        (Times::from(..), &[0, 9], &[]),
    ] {
        for n in yes {
            assert!(t.contains(*n), "{t} should contain {n}");
        }
        for n in no {
            assert!(!t.contains(*n), "{t} should not contain {n}");
        }
        assert_eq!(
            t.to_string().parse::<Times>().ok(),
            (t.to_string() != "any number").then_some(t)
        );
    }
    assert_eq!("1..3".parse::<Times>().unwrap(), Times::from(1..=2));
    assert!("two".parse::<Times>().is_err());
    assert!("5..2".parse::<Times>().is_err());
}

/// An agent whose one rule expects exactly one send.
fn expects_one() -> NetworkSpec {
    MockAgent::network(
        1,
        vec![
            MockAgent::builder("booking")
                .mount(
                    MockAgent::when()
                        .named("first booking")
                        .text_contains("book")
                        .state(TaskState::Completed)
                        .expect(1),
                )
                .mount(MockAgent::when().method(Method::GetTask).expect(1..))
                .mount(MockAgent::when().state(TaskState::Completed))
                .build(),
        ],
    )
}

#[tokio::test]
async fn met_expectations_pass_verify_and_the_drop() {
    let f = Fixture::agents(expects_one().agents).await;
    let r = f.call("SendMessage", send_params("book it")).await;
    let tid = r["task"]["id"].as_str().unwrap().to_string();
    f.call("GetTask", json!({"id": tid})).await;
    f.call("GetTask", json!({"id": tid})).await;
    // A rule without `expect` is not checked: this send matched the third rule.
    f.call("SendMessage", send_params("other")).await;
    assert_eq!(f.net.verify(), Ok(()));
    f.shutdown().await; // verifies again on drop, silently
}

#[tokio::test]
#[should_panic(expected = "FAIL agent \"booking\" rule[0] first booking: expected 1, matched 2")]
async fn an_unmet_expectation_panics_when_the_network_is_dropped() {
    let f = Fixture::agents(expects_one().agents).await;
    f.call("SendMessage", send_params("book")).await;
    f.call("SendMessage", send_params("book again")).await;
    f.shutdown().await;
}

#[test]
fn the_drop_report_lists_every_rule_with_expected_and_matched() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let net = rt.block_on(Network::start(expects_one())).unwrap();
    let url = net.rpc_url("booking").unwrap();
    rt.block_on(call(
        &client(),
        &url,
        "SendMessage",
        send_params("no match"),
    ));
    let panic = std::panic::catch_unwind(AssertUnwindSafe(|| drop(net))).unwrap_err();
    let report = panic
        .downcast_ref::<String>()
        .cloned()
        .expect("a formatted report");
    assert_eq!(
        report,
        "mock expectations not met: 2 of 2 rules matched a different number of requests\n  \
         FAIL agent \"booking\" rule[0] first booking: expected 1, matched 0\n  \
         FAIL agent \"booking\" rule[1] method=GetTask: expected 1.., matched 0\n"
    );
}

#[test]
fn no_second_panic_while_already_panicking() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let net = rt.block_on(Network::start(expects_one())).unwrap();
    // The test's own failure is what surfaces, not the (also failing) expectations.
    let panic = std::panic::catch_unwind(AssertUnwindSafe(move || {
        let _net = net;
        panic!("the test's own assertion");
    }))
    .unwrap_err();
    assert_eq!(
        panic.downcast_ref::<&str>(),
        Some(&"the test's own assertion")
    );
}

#[tokio::test]
async fn finish_returns_the_report_instead_of_panicking() {
    let net = Network::start(expects_one()).await.unwrap();
    let e = net.finish().await.unwrap_err();
    assert_eq!(e.failed().count(), 2);
    assert_eq!(e.rules[0].name, "first booking");
    assert_eq!(e.rules[1].name, "method=GetTask");
    assert_eq!(
        (e.rules[0].expected, e.rules[0].matched),
        (Times::from(1), 0)
    );
}

#[test]
fn builder_steps_convert_to_script_steps() {
    assert_eq!(
        ScriptStep::from(Step::state(TaskState::InputRequired)),
        ScriptStep::State {
            state: "TASK_STATE_INPUT_REQUIRED".into(),
            message: None,
            parts: Vec::new(),
            delay_ms: 0,
        }
    );
    assert_eq!(
        Step::gate_within("g", Duration::from_secs(2)),
        ScriptStep::Gate {
            gate: "g".into(),
            timeout_ms: 2000,
        }
    );
}
