use super::*;
use a2a_mock_agents::Event;
use a2a_mock_agents::script::Binding;
use serde_json::json;

/// Builds a journal the way an agent records one, with the ids and times of one run.
struct Run {
    entries: Vec<Entry>,
    /// Stands for the ids a run makes: the same "run" number makes the same ids.
    run: u32,
    port: u16,
    next_req: u64,
}

impl Run {
    fn new(run: u32, port: u16) -> Run {
        Run {
            entries: Vec::new(),
            run,
            port,
            next_req: 1,
        }
    }

    fn id(&self, what: &str) -> String {
        // A UUID-shaped id that differs per run.
        let h = what
            .bytes()
            .fold(17u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
        format!(
            "{:08x}-0000-4000-8000-{:012x}",
            self.run,
            h & 0xffff_ffff_ffff
        )
    }

    fn push(&mut self, agent: &str, event: Event) {
        let seq = self.entries.len() as u64 + 1;
        self.entries.push(Entry {
            seq,
            at_us: seq * 1000 + u64::from(self.run) * 37,
            agent: agent.into(),
            event,
        });
    }

    /// A request and its unary response; returns the request number.
    fn call(&mut self, agent: &str, method: &str, params: Value, result: Value) -> u64 {
        let req = self.next_req;
        self.next_req += 1;
        let rpc = format!("rpc-{}-{req}", self.run);
        let host = format!("127.0.0.1:{}", self.port);
        self.push(
            agent,
            Event::Request {
                req,
                binding: Binding::JsonRpc,
                http_method: "POST".into(),
                path: "/a2a".into(),
                method: Some(method.into()),
                rpc_id: Some(Box::new(json!(rpc))),
                params: Box::new(params),
                headers: Box::new(
                    [
                        ("host".to_string(), host),
                        ("content-length".to_string(), format!("{}", 100 + self.run)),
                    ]
                    .into(),
                ),
                envelope: None,
            },
        );
        self.push(
            agent,
            Event::Response {
                retry_after_s: None,
                req,
                status: 200,
                rpc_error: None,
                grpc_status: None,
                body: json!({"jsonrpc": "2.0", "id": rpc, "result": result}),
            },
        );
        req
    }

    fn state(&mut self, agent: &str, task: &str, state: &str) {
        let task_id = self.id(task);
        self.push(
            agent,
            Event::TaskState {
                task_id,
                state: state.into(),
            },
        );
    }

    /// A task created by a SendMessage with `text`, then `states`.
    fn task(&mut self, agent: &str, task: &str, text: &str) {
        let (task_id, context_id) = (self.id(task), self.id(&format!("ctx-{task}")));
        let message_id = format!("m-{task}");
        let params = json!({
            "message": {"messageId": message_id, "parts": [{"text": text}], "role": "ROLE_USER"},
            "metadata": {"x-deleg": {"deadline": format!("2026-12-01T19:4{}:00.000Z", self.run % 10)}},
            "configuration": {"taskPushNotificationConfig": {"url": format!("http://127.0.0.1:{}/hook", self.port + 1), "token": format!("tok{}", self.run)}}
        });
        self.push(
            agent,
            Event::TaskCreated {
                task_id: task_id.clone(),
                context_id: context_id.clone(),
                message_id,
                dedup: false,
            },
        );
        self.call(
            agent,
            "SendMessage",
            params,
            json!({"task": {"id": task_id, "contextId": context_id,
                "status": {"state": "TASK_STATE_SUBMITTED", "timestamp": format!("2026-12-01T19:45:0{}.123Z", self.run % 10)}}}),
        );
    }

    fn poll(&mut self, agent: &str, task: &str, state: &str) {
        let task_id = self.id(task);
        let ctx = self.id(&format!("ctx-{task}"));
        self.call(
            agent,
            "GetTask",
            json!({"id": task_id}),
            json!({"id": task_id, "contextId": ctx, "status": {"state": state, "timestamp": "2026-12-01T00:00:00Z"}}),
        );
    }

    fn artifact(&mut self, agent: &str, task: &str, sha: &str) {
        let task_id = self.id(task);
        self.push(
            agent,
            Event::ArtifactSent {
                task_id,
                artifact_id: "artifact-1".into(),
                bytes: 80,
                sha256: sha.into(),
                chunks: 1,
            },
        );
    }
}

fn one_task(run: u32, port: u16, polls: usize, final_state: &str, method: &str) -> Vec<Entry> {
    let mut r = Run::new(run, port);
    r.task("a", "t1", "do the thing");
    r.state("a", "t1", "TASK_STATE_WORKING");
    for _ in 0..polls {
        r.poll("a", "t1", "TASK_STATE_WORKING");
    }
    r.artifact("a", "t1", "abc");
    r.state("a", "t1", final_state);
    let (task_id, ctx) = (r.id("t1"), r.id("ctx-t1"));
    r.call(
        "a",
        method,
        json!({"id": task_id}),
        json!({"id": task_id, "contextId": ctx, "status": {"state": final_state}}),
    );
    r.entries
}

/// A JSON-RPC request event to `/a2a`.
fn a2a_request(req: u64, method: &str, params: Value) -> Event {
    Event::Request {
        req,
        binding: Binding::JsonRpc,
        http_method: "POST".into(),
        path: "/a2a".into(),
        method: Some(method.into()),
        rpc_id: None,
        params: Box::new(params),
        headers: Box::default(),
        envelope: None,
    }
}

#[test]
fn journals_that_differ_only_in_ids_ports_times_and_poll_counts_are_equal() {
    let a = one_task(
        1,
        40001,
        2,
        "TASK_STATE_COMPLETED",
        "GetTaskPushNotificationConfig",
    );
    let b = one_task(
        2,
        51234,
        5,
        "TASK_STATE_COMPLETED",
        "GetTaskPushNotificationConfig",
    );
    assert_ne!(a, b);
    assert_eq!(compare(&a, &b), None);
    let n = normalise(&a);
    let text: String = n.lines.iter().map(|l| l.value.to_string()).collect();
    assert!(
        text.contains("<task#1>") && text.contains("<context#1>"),
        "{text}"
    );
    assert!(text.contains("127.0.0.1:<port#"), "{text}");
    assert!(
        text.contains("<token#1>") && text.contains("<time>"),
        "{text}"
    );
    assert!(!text.contains("content-length"), "{text}");
    // The two polls in a row count once, and say so.
    assert!(n.lines.iter().any(|l| l.repeats == 2), "{:#?}", n.lines);
}

#[test]
fn a_changed_state_is_the_first_difference_at_its_place() {
    let a = one_task(
        1,
        40001,
        2,
        "TASK_STATE_COMPLETED",
        "GetTaskPushNotificationConfig",
    );
    let b = one_task(
        2,
        40001,
        2,
        "TASK_STATE_FAILED",
        "GetTaskPushNotificationConfig",
    );
    let d = compare(&a, &b).expect("a difference");
    let (l, r) = (d.left.as_ref().unwrap(), d.right.as_ref().unwrap());
    assert_eq!(l.value["event"], "task_state");
    assert_eq!(l.value["state"], "TASK_STATE_COMPLETED");
    assert_eq!(r.value["state"], "TASK_STATE_FAILED");
    assert_eq!(d.path.as_deref(), Some("state"));
    assert_eq!(l.place, "agent a, task <task#1>, task life");
    // The seq of the task_state entry in each journal.
    assert_eq!(
        a[l.seq as usize - 1].event,
        Event::TaskState {
            task_id: a[l.seq as usize - 1].event.clone().task_state_id(),
            state: "TASK_STATE_COMPLETED".into()
        }
    );
    let text = d.to_string();
    assert!(text.contains("they differ at state"), "{text}");
    assert!(text.contains("TASK_STATE_FAILED"), "{text}");
    assert!(text.contains("before it, the same in both"), "{text}");
}

#[test]
fn a_changed_artifact_byte_or_method_is_found() {
    let a = one_task(
        1,
        40001,
        1,
        "TASK_STATE_COMPLETED",
        "GetTaskPushNotificationConfig",
    );
    let mut b = one_task(
        1,
        40001,
        1,
        "TASK_STATE_COMPLETED",
        "GetTaskPushNotificationConfig",
    );
    for e in &mut b {
        if let Event::ArtifactSent { sha256, .. } = &mut e.event {
            *sha256 = "abd".into();
        }
    }
    let d = compare(&a, &b).expect("a difference");
    assert_eq!(d.path.as_deref(), Some("sha256"));
    assert_eq!(d.left.as_ref().unwrap().value["event"], "artifact_sent");

    let c = one_task(
        3,
        40001,
        1,
        "TASK_STATE_COMPLETED",
        "DeleteTaskPushNotificationConfig",
    );
    let d = compare(&a, &c).expect("a difference");
    assert_eq!(d.path.as_deref(), Some("method"));
    assert_eq!(
        d.left.as_ref().unwrap().value["method"],
        "GetTaskPushNotificationConfig"
    );
    assert_eq!(
        d.right.as_ref().unwrap().value["method"],
        "DeleteTaskPushNotificationConfig"
    );
    assert_eq!(
        d.left.as_ref().unwrap().place,
        "agent a, task <task#1>, requests"
    );
}

#[test]
fn a_journal_that_ends_early_differs_where_it_ends() {
    let a = one_task(
        1,
        40001,
        1,
        "TASK_STATE_COMPLETED",
        "GetTaskPushNotificationConfig",
    );
    let b = a[..a.len() - 1].to_vec();
    let d = compare(&a, &b).expect("a difference");
    assert!(d.right.is_none());
    assert_eq!(d.left.as_ref().unwrap().value["event"], "response");
    assert!(d.to_string().contains("B: (ends here"), "{d}");
}

#[test]
fn the_interleaving_of_tasks_and_agents_is_ignored_but_a_response_to_the_wrong_rpc_id_is_not() {
    let mut a = Run::new(1, 40001);
    a.task("a", "t1", "first");
    a.task("a", "t2", "second");
    a.task("b", "t3", "third");
    a.state("a", "t1", "TASK_STATE_COMPLETED");
    a.state("a", "t2", "TASK_STATE_COMPLETED");
    let mut b = Run::new(2, 40002);
    b.task("b", "t3", "third");
    b.task("a", "t2", "second");
    b.state("a", "t2", "TASK_STATE_COMPLETED");
    b.task("a", "t1", "first");
    b.state("a", "t1", "TASK_STATE_COMPLETED");
    assert_eq!(compare(&a.entries, &b.entries), None);

    let mut c = Run::new(2, 40002);
    c.task("b", "t3", "third");
    c.task("a", "t2", "second");
    c.task("a", "t1", "first");
    c.state("a", "t2", "TASK_STATE_COMPLETED");
    c.state("a", "t1", "TASK_STATE_COMPLETED");
    // The answer to the first request of t1 names another request's id.
    for e in &mut c.entries {
        if let Event::Response { req: 3, body, .. } = &mut e.event {
            body["id"] = json!("rpc-2-2");
        }
    }
    let d = compare(&a.entries, &c.entries).expect("a difference");
    assert_eq!(d.path.as_deref(), Some("body.id"));
    let text = d.to_string();
    assert!(
        text.contains("<rpc#1>") && text.contains("<rpc#2>"),
        "{text}"
    );
}

#[test]
fn what_an_agent_did_after_the_last_request_is_compared_as_far_as_both_have_it() {
    let mut a = Run::new(1, 40001);
    a.task("a", "t1", "alpha");
    a.state("a", "t1", "TASK_STATE_WORKING");
    let mut b = Run::new(2, 40001);
    b.task("a", "t1", "alpha");
    b.state("a", "t1", "TASK_STATE_WORKING");
    b.state("a", "t1", "TASK_STATE_COMPLETED");
    assert_eq!(compare(&a.entries, &b.entries), None);
    // But not a late entry that differs from the other journal's at the same place.
    let mut c = Run::new(3, 40001);
    c.task("a", "t1", "alpha");
    c.state("a", "t1", "TASK_STATE_FAILED");
    let d = compare(&a.entries, &c.entries).expect("a difference");
    assert_eq!(d.path.as_deref(), Some("state"));
}

#[test]
fn a_stream_the_client_left_is_compared_as_far_as_both_have_it() {
    let stream = |events: u32, reason: &str| {
        let mut s = Run::new(events, 40001);
        s.task("a", "t1", "alpha");
        s.push(
            "a",
            a2a_request(
                9,
                "SendStreamingMessage",
                json!({"message": {"taskId": s.id("t1"), "messageId": "m2"}}),
            ),
        );
        for index in 0..events {
            s.push(
                "a",
                Event::SseEvent {
                    req: 9,
                    index,
                    data: json!({"n": index}),
                },
            );
        }
        s.push(
            "a",
            Event::StreamClosed {
                req: 9,
                events,
                reason: reason.into(),
            },
        );
        s.entries
    };
    assert_eq!(
        compare(&stream(3, "client_gone"), &stream(5, "client_gone")),
        None
    );
    assert_eq!(
        compare(&stream(3, "terminal"), &stream(5, "client_gone")),
        None
    );
    // Two streams that both ended on their own must agree to the end.
    let d = compare(&stream(3, "terminal"), &stream(5, "terminal")).expect("a difference");
    assert_eq!(d.right.as_ref().unwrap().value["event"], "sse_event");
}

#[test]
fn a_resent_stream_left_where_the_first_was_is_no_difference_from_one_that_ran_on() {
    // The first stream's client died; the restarted one resent the same request. In one run it
    // left its stream at the same point (the two exchanges count as one repeated), in the other
    // the stream ran on to the task's end first.
    let run = |n: u32, second_ends: &str| {
        let mut s = Run::new(n, 40001);
        s.task("a", "t1", "alpha");
        for req in [9, 10] {
            s.push(
                "a",
                a2a_request(
                    req,
                    "SendStreamingMessage",
                    json!({"message": {"taskId": s.id("t1"), "messageId": "m1"}}),
                ),
            );
            s.push(
                "a",
                Event::SseEvent {
                    req,
                    index: 0,
                    data: json!({"n": 0}),
                },
            );
            let ends = if req == 9 { "client_gone" } else { second_ends };
            if ends == "terminal" {
                s.push(
                    "a",
                    Event::SseEvent {
                        req,
                        index: 1,
                        data: json!({"n": 1}),
                    },
                );
            }
            s.push(
                "a",
                Event::StreamClosed {
                    req,
                    events: 1,
                    reason: ends.into(),
                },
            );
        }
        s.push(
            "a",
            a2a_request(11, "CancelTask", json!({"id": s.id("t1")})),
        );
        s.entries
    };
    assert_eq!(compare(&run(1, "client_gone"), &run(2, "terminal")), None);
    assert_eq!(compare(&run(2, "terminal"), &run(1, "client_gone")), None);
    // Two resends that both ran on must agree.
    assert_eq!(compare(&run(1, "terminal"), &run(2, "terminal")), None);
    // But a second exchange that differs before any stream was left is a difference.
    let mut other = run(2, "terminal");
    for e in &mut other {
        if let Event::Request {
            req: 10, params, ..
        } = &mut e.event
        {
            params["message"]["messageId"] = json!("m2");
        }
    }
    assert!(compare(&run(1, "client_gone"), &other).is_some());
}

#[test]
fn a_resend_the_agent_deduplicated_joins_its_task_as_a_subscription() {
    // The restarted delegator resends the creating message as a stream; the agent returns the
    // task it made. Which of its events land on that stream before the cancel is timing.
    let run = |n: u32, events: u32, dedup: bool| {
        let mut s = Run::new(n, 40001);
        s.task("a", "t1", "alpha");
        s.push(
            "a",
            a2a_request(9, "SendStreamingMessage", json!({"message": {"messageId": "m-t1", "parts": [{"text": "alpha"}], "role": "ROLE_USER"}})),
        );
        let (task_id, context_id) = (s.id("t1"), s.id("ctx-t1"));
        s.push(
            "a",
            Event::TaskCreated {
                task_id: task_id.clone(),
                context_id: context_id.clone(),
                message_id: "m-t1".into(),
                dedup,
            },
        );
        for index in 0..events {
            s.push(
                "a",
                Event::SseEvent {
                    req: 9,
                    index,
                    data: json!({"result": {"n": index, "taskId": task_id}}),
                },
            );
        }
        s.push(
            "a",
            Event::StreamClosed {
                req: 9,
                events,
                reason: "terminal".into(),
            },
        );
        s.entries
    };
    assert_eq!(compare(&run(1, 3, true), &run(2, 2, true)), None);
    // A stream that created nothing anew is compared to its end.
    assert!(compare(&run(1, 3, false), &run(2, 2, false)).is_some());
}

#[test]
fn a_difference_in_the_first_request_pairs_the_right_tasks() {
    let mut a = Run::new(1, 40001);
    a.task("a", "t1", "alpha");
    a.task("a", "t2", "beta");
    a.poll("a", "t1", "TASK_STATE_WORKING");
    let mut b = Run::new(2, 40001);
    b.task("a", "t1", "alpha");
    b.task("a", "t2", "beta");
    b.state("a", "t2", "TASK_STATE_WORKING");
    b.poll("a", "t1", "TASK_STATE_WORKING");
    let d = compare(&a.entries, &b.entries).expect("a difference");
    let r = d.right.as_ref().unwrap();
    assert_eq!(r.value["event"], "task_state");
    // Tasks are ordered by their first request ("alpha" < "beta"): t2 is the second.
    assert_eq!(r.place, "agent a, task <task#2>, task life");
}

trait TaskStateId {
    fn task_state_id(self) -> String;
}

impl TaskStateId for Event {
    fn task_state_id(self) -> String {
        match self {
            Event::TaskState { task_id, .. } => task_id,
            _ => String::new(),
        }
    }
}

#[test]
fn an_observed_task_lacking_its_status_is_still_a_snapshot_whose_artifacts_are_timing() {
    // hostile.missing-fields-answer: GetTask answers with the task's `status` left out, asked
    // before or after the agent made its artifact.
    let journal = |run: u32, with_artifact: bool| {
        let mut r = Run::new(run, 40001);
        r.task("a", "t1", "write the report");
        let (task_id, ctx) = (r.id("t1"), r.id("ctx-t1"));
        let mut task = json!({"id": task_id, "contextId": ctx});
        if with_artifact {
            task["artifacts"] = json!([{"artifactId": "artifact-1", "parts": [{"text": "x"}]}]);
        }
        r.call("a", "GetTask", json!({"id": task_id}), task);
        r.entries
    };
    assert_eq!(compare(&journal(1, false), &journal(2, true)), None);
    // An object with an id but neither a context id nor a status is not taken for a task.
    let mut other = Run::new(1, 40001);
    let with = |r: &mut Run, n: u32| {
        r.call(
            "a",
            "GetExtendedAgentCard",
            json!({}),
            json!({"id": "x", "skills": [{"n": n}]}),
        );
    };
    with(&mut other, 1);
    let mut other2 = Run::new(1, 40001);
    with(&mut other2, 2);
    assert!(compare(&other.entries, &other2.entries).is_some());
}

#[test]
fn http_dates_in_card_revalidation_headers_are_points_in_time() {
    let with_date = |date: &str, etag: &str| {
        let mut j = one_task(1, 40001, 1, "TASK_STATE_COMPLETED", "GetTask");
        if let Event::Request { headers, .. } = &mut j[1].event {
            headers.insert("if-modified-since".into(), date.into());
            headers.insert("if-none-match".into(), etag.into());
        }
        j
    };
    let a = with_date("Fri, 04 Dec 2026 00:02:07 GMT", "\"e1\"");
    let b = with_date("Fri, 04 Dec 2026 00:02:08 GMT", "\"e2\"");
    assert_eq!(compare(&a, &b), None);
    // Whether the header was sent at all still counts.
    let c = one_task(1, 40001, 1, "TASK_STATE_COMPLETED", "GetTask");
    assert!(compare(&a, &c).is_some());
}

/// Another loopback address (the trap on 127.0.0.9) keeps its address and has its port
/// numbered like the agents' ports: two runs differ only in the trap's port, a url moved from
/// the trap to the agents' host is a difference.
#[test]
fn another_loopback_address_keeps_its_address_and_loses_its_port() {
    let forbidden = |url: &str| {
        let mut r = Run::new(1, 4000);
        r.push(
            "a",
            Event::ForbiddenUrl {
                task_id: "t1".into(),
                artifact_id: "artifact-1".into(),
                url: url.into(),
                why: "origin outside the allowed fetch origins".into(),
            },
        );
        r.entries
    };
    let a = forbidden("http://127.0.0.9:39563/trap/t1-1");
    let b = forbidden("http://127.0.0.9:45387/trap/t1-1");
    assert_eq!(compare(&a, &b), None);
    let text: String = normalise(&a)
        .lines
        .iter()
        .map(|l| l.value.to_string())
        .collect();
    assert!(text.contains("127.0.0.9:<port#1>"), "{text}");
    let c = forbidden("http://127.0.0.1:39563/trap/t1-1");
    assert!(compare(&a, &c).is_some());
}

/// Two tasks of one agent: `texts` are the texts sent (in order) and `shas` the sha256 of the
/// artifact each task gets; `note` adds a recorder-like note.
fn two_tasks(run: u32, texts: [&str; 2], shas: [&str; 2], note: bool) -> Vec<Entry> {
    let mut r = Run::new(run, 40000 + run as u16);
    if note {
        r.push(
            "a",
            Event::Note {
                req: None,
                text: "recorded by a proxy".into(),
            },
        );
    }
    for (i, (text, sha)) in texts.iter().zip(shas).enumerate() {
        let t = format!("t{i}");
        r.task("a", &t, text);
        r.state("a", &t, "TASK_STATE_WORKING");
        r.artifact("a", &t, sha);
        r.state("a", &t, "TASK_STATE_COMPLETED");
    }
    r.entries
}

#[test]
fn agent_behaviour_leaves_out_the_delegators_side_and_the_order_of_tasks() {
    // A recording (a note, one text) and a replay (another text for the second delegation,
    // which the normalised order puts first): the agents did the same.
    let rec = two_tasks(1, ["look it up", "look it up"], ["aaa", "bbb"], true);
    let replay = two_tasks(2, ["look it up", "look it up [2]"], ["aaa", "bbb"], false);
    assert!(
        compare(&rec, &replay).is_some(),
        "the full comparison sees the texts"
    );
    assert_eq!(compare_agent_behaviour(&rec, &replay), None);
    // Polls: how many, and the states they read, are the delegator's timing.
    let a = one_task(1, 40001, 1, "TASK_STATE_COMPLETED", "GetTask");
    let b = one_task(2, 40002, 4, "TASK_STATE_COMPLETED", "GetTask");
    assert_eq!(compare_agent_behaviour(&a, &b), None);
}

#[test]
fn agent_behaviour_sees_other_bytes_other_states_and_other_errors() {
    let rec = two_tasks(1, ["x", "y"], ["aaa", "bbb"], false);
    // Another artifact.
    let bytes = two_tasks(2, ["x", "y"], ["aaa", "ccc"], false);
    let d = compare_agent_behaviour(&rec, &bytes).expect("the sha256 differs");
    assert_eq!(d.path.as_deref(), Some("sha256"), "{d}");
    // Another final state.
    let a = one_task(1, 40001, 1, "TASK_STATE_COMPLETED", "GetTask");
    let b = one_task(2, 40002, 1, "TASK_STATE_FAILED", "GetTask");
    assert!(compare_agent_behaviour(&a, &b).is_some());
    // An error answer where the recording had a message.
    let mut err = Run::new(3, 40003);
    err.call(
        "a",
        "SendMessage",
        json!({"message": {"messageId": "m"}}),
        json!(null),
    );
    if let Some(Event::Response {
        status, rpc_error, ..
    }) = err.entries.last_mut().map(|e| &mut e.event)
    {
        *status = 200;
        *rpc_error = Some(-32001);
    }
    let mut ok = Run::new(4, 40004);
    ok.call(
        "a",
        "SendMessage",
        json!({"message": {"messageId": "m"}}),
        json!({"message": {"messageId": "r", "role": "ROLE_AGENT", "parts": []}}),
    );
    let d = compare_agent_behaviour(&ok.entries, &err.entries).expect("an error is behaviour");
    assert!(d.to_string().contains("rpc_error"), "{d}");
}

#[test]
fn agent_behaviour_compares_chunk_boundaries_and_takes_a_whole_artifact_as_one_chunk() {
    let chunked = |sizes: &[u64]| {
        let mut r = Run::new(1, 40001);
        r.task("a", "t", "go");
        let task_id = r.id("t");
        for (i, n) in sizes.iter().enumerate() {
            r.push(
                "a",
                Event::ArtifactChunk {
                    task_id: task_id.clone(),
                    artifact_id: "artifact-1".into(),
                    append: i > 0,
                    last_chunk: i + 1 == sizes.len(),
                    bytes: *n,
                },
            );
        }
        r.artifact("a", "t", "abc");
        r.state("a", "t", "TASK_STATE_COMPLETED");
        r.entries
    };
    // The same bytes cut elsewhere: a UTF-8 sequence split across chunks, say.
    assert!(compare_agent_behaviour(&chunked(&[30, 50]), &chunked(&[31, 49])).is_some());
    // Known only whole (a recorder that read the final task) is one chunk of it.
    let mut whole = Run::new(2, 40002);
    whole.task("a", "t", "go");
    whole.artifact("a", "t", "abc");
    whole.state("a", "t", "TASK_STATE_COMPLETED");
    assert_eq!(
        compare_agent_behaviour(&whole.entries, &chunked(&[80])),
        None
    );
    assert!(compare_agent_behaviour(&whole.entries, &chunked(&[40, 40])).is_some());
}

/// One streamed task whose stream ends with `end` (after `drop_phase`'s drop, if any).
fn streamed(run: u32, end: &str, drop_phase: Option<&str>) -> Vec<Entry> {
    let mut r = Run::new(run, 40000 + run as u16);
    r.task("a", "t", "go");
    let req = r.next_req - 1;
    let task_id = r.id("t");
    r.push(
        "a",
        Event::SseEvent {
            req,
            index: 0,
            data: json!({"result": {"statusUpdate": {"taskId": task_id, "status": {"state": "TASK_STATE_COMPLETED"}}}}),
        },
    );
    if let Some(phase) = drop_phase {
        r.push(
            "a",
            Event::ConnectionDropped {
                req,
                phase: phase.into(),
            },
        );
    }
    r.push(
        "a",
        Event::StreamClosed {
            req,
            events: 1,
            reason: end.into(),
        },
    );
    r.state("a", "t", "TASK_STATE_COMPLETED");
    r.entries
}

#[test]
fn agent_behaviour_says_stream_ends_and_drops_as_an_observer_can_tell() {
    // After a final state: the mock's "the script ended" and a recorder's "terminal".
    assert_eq!(
        compare_agent_behaviour(
            &streamed(1, "terminal", None),
            &streamed(2, "task_ended", None)
        ),
        None
    );
    // A drop before any answer, whatever the mock says of how far the agent had got.
    assert_eq!(
        compare_agent_behaviour(
            &streamed(1, "terminal", Some("before_response")),
            &streamed(2, "terminal", Some("after_processing"))
        ),
        None
    );
    // A drop inside a stream is not one before any answer.
    assert!(
        compare_agent_behaviour(
            &streamed(1, "terminal", Some("before_response")),
            &streamed(2, "terminal", Some("mid_event"))
        )
        .is_some()
    );
    // A gRPC status is not a clean end.
    assert!(
        compare_agent_behaviour(
            &streamed(1, "terminal", None),
            &streamed(2, "grpc_status 13", None)
        )
        .is_some()
    );
}
