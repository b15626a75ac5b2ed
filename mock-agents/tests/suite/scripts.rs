//! Scripts: TOML errors name file, line, column and field; every README example parses and the
//! README covers every step, fault and mutation; the example network parses; the `a2a-mock` CLI
//! (`--help`, `check`, `serve` until SIGINT with the journal written) behaves as documented.

use a2a_mock_agents::script::{Fault, Mutation, ScriptError, ScriptStep};
use a2a_mock_agents::{NetworkSpec, Problem};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn parse_err(text: &str) -> (String, usize, usize, String) {
    match NetworkSpec::from_toml("net.toml", text) {
        Err(ScriptError::Parse {
            file,
            line,
            column,
            message,
        }) => (file, line, column, message),
        other => panic!("expected a parse error, got {other:?}"),
    }
}

#[test]
fn unknown_keys_are_rejected_with_file_line_column_and_field() {
    let text = "seed = 1\n[[agent]]\nname = \"a\"\n[[agent.rule]]\nsteps = [\n  { do = \"state\", state = \"TASK_STATE_WORKING\", dealy_ms = 5 },\n]\n";
    let (file, line, col, message) = parse_err(text);
    assert_eq!(
        (file.as_str(), line, col),
        ("net.toml", 6, 49),
        "points at the key"
    );
    assert!(message.contains("dealy_ms"), "{message}");
    assert!(message.contains("agent[0].rule[0].steps[0]"), "{message}");
    let shown = NetworkSpec::from_toml("net.toml", text)
        .unwrap_err()
        .to_string();
    assert!(shown.starts_with("net.toml:6:"), "{shown}");

    // An unknown key on the agent itself.
    let (_, line, col, message) =
        parse_err("[[agent]]\nname = \"a\"\nstreaming = true\nstreeming = false\n");
    assert_eq!((line, col), (4, 1));
    assert!(message.contains("unknown field `streeming`"), "{message}");
    assert!(message.starts_with("agent[0]"), "{message}");
}

#[test]
fn queued_faults_gates_and_expectations_are_as_strict_as_the_rest() {
    // An unknown key inside a queued fault.
    let (file, line, col, message) = parse_err(
        "[[agent]]\nname = \"a\"\n[[agent.queued_fault]]\nmethod = \"SendMessage\"\ncount = 2\nfault = { kind = \"drop_before\" }\n",
    );
    assert_eq!((file.as_str(), line, col), ("net.toml", 5, 1));
    assert!(message.contains("unknown field `count`"), "{message}");
    assert!(message.starts_with("agent[0].queued_fault[0]"), "{message}");
    // A method no A2A 1.0 agent has: located at the value.
    let (_, line, col, message) = parse_err(
        "[[agent]]\nname = \"a\"\n[[agent.queued_fault]]\nmethod = \"message/send\"\nfault = { kind = \"drop_before\" }\n",
    );
    assert_eq!((line, col), (4, 10));
    assert_eq!(
        message,
        "agent[0].queued_fault[0].method: unknown A2A 1.0 method \"message/send\""
    );
    // A fault of a queued fault is checked like a rule's.
    let (_, line, _, message) = parse_err(
        "[[agent]]\nname = \"a\"\n[[agent.queued_fault]]\nmethod = \"GetTask\"\nfault = { kind = \"http_status\", status = 42 }\n",
    );
    assert_eq!(line, 5);
    assert!(
        message.starts_with("agent[0].queued_fault[0].fault.status: status 42"),
        "{message}"
    );
    // A new fault kind with an unknown key.
    let (_, line, _, message) = parse_err(
        "[[agent]]\nname = \"a\"\n[[agent.rule]]\nfault = { kind = \"garbage_body\", bytes = 3 }\n",
    );
    assert_eq!(line, 4);
    assert!(message.contains("bytes"), "{message}");
    // An expectation that is no count or range.
    let (_, line, _, message) =
        parse_err("[[agent]]\nname = \"a\"\n[[agent.rule]]\nexpect = \"3..1\"\n");
    assert_eq!(line, 4);
    assert!(
        message.contains("\"3..1\" is not a count or a range"),
        "{message}"
    );
    let (_, _, _, message) = parse_err("[[agent]]\nname = \"a\"\n[[agent.rule]]\nexpect = -1\n");
    assert!(message.contains("must not be negative"), "{message}");
    // A gate without a name.
    let (_, line, _, message) = parse_err(
        "[[agent]]\nname = \"a\"\n[[agent.rule]]\nsteps = [{ do = \"gate\", gate = \"\" }]\n",
    );
    assert_eq!(line, 4);
    assert!(
        message.ends_with("steps[0].gate: gate must not be empty"),
        "{message}"
    );
    // And they all parse when right.
    let spec = NetworkSpec::from_toml(
        "net.toml",
        "[[agent]]\nname = \"a\"\n[[agent.queued_fault]]\nmethod = \"GetTask\"\ntimes = 3\nfault = { kind = \"rpc_error\", code = -32603 }\n[[agent.rule]]\nname = \"r\"\nexpect = \"2..=4\"\nsteps = [{ do = \"gate\", gate = \"g\" }]\n",
    )
    .unwrap();
    let a = &spec.agents[0];
    assert_eq!(a.queued_faults[0].times, 3);
    assert_eq!(a.rules[0].expect, Some((2..=4).into()));
    assert_eq!(a.rules[0].name.as_deref(), Some("r"));
}

#[test]
fn wrong_types_and_syntax_errors_name_the_place() {
    let (_, line, col, message) = parse_err("[[agent]]\nname = \"a\"\nmax_depth = \"deep\"\n");
    assert_eq!((line, col), (3, 13));
    let (_, line, col, message2) = parse_err(
        "[[agent]]\nname = \"a\"\n[[agent.rule]]\nsteps = [{ do = \"wait\", ms = \"slow\" }]\n",
    );
    assert_eq!((line, col), (4, 30), "points at the value inside the step");
    assert!(
        message2.starts_with("agent[0].rule[0].steps[0].ms: invalid type"),
        "{message2}"
    );
    assert!(message.contains("agent[0].max_depth"), "{message}");

    let (_, line, _, message) =
        parse_err("[[agent]]\nname = \"a\"\n[[agent.rule]]\nfault = { kind = \"explode\" }\n");
    assert_eq!(line, 4);
    assert!(message.contains("agent[0].rule[0].fault"), "{message}");
    assert!(message.contains("explode"), "{message}");

    let (_, line, _, message) = parse_err("[[agent]]\nname = \"a\n");
    assert_eq!(line, 2, "{message}");
}

#[test]
fn validation_errors_name_the_field_and_its_line() {
    let text = r#"
[[agent]]
name = "a"
[[agent.rule]]
steps = [
  { do = "state", state = "TASK_STATE_WORKING" },
  { do = "state", state = "TASK_STATE_DONE" },
]
"#;
    let (_, line, col, message) = parse_err(text);
    assert_eq!((line, col), (7, 27));
    assert_eq!(
        message,
        "agent[0].rule[0].steps[1].state: unknown state \"TASK_STATE_DONE\""
    );

    let text = "[[agent]]\nname = \"a\"\n[[agent.rule]]\nsteps = [{ do = \"delegate\", to = \"hotel\", text = \"x\" }]\n";
    let (_, line, _, message) = parse_err(text);
    assert_eq!(line, 4);
    assert!(
        message.starts_with("agent[0].rule[0].steps[0].to: names no agent"),
        "{message}"
    );

    let text = "[[agent]]\nname = \"a\"\n[[agent]]\nname = \"a\"\n";
    let (_, line, _, message) = parse_err(text);
    assert_eq!(line, 4);
    assert!(message.contains("agent[1].name"), "{message}");

    for (bad, field) in [
        (
            "steps = [{ do = \"reply\", text = \"x\" }, { do = \"wait\", ms = 1 }]",
            "steps[0].do",
        ),
        (
            "steps = [{ do = \"wait\", ms = 1 }, { do = \"error\", code = -32603 }]",
            "steps[1].do",
        ),
        (
            "steps = [{ do = \"artifacts\", chunks = 0 }]",
            "steps[0].chunks",
        ),
        (
            "steps = [{ do = \"input_required\", question = \"?\", rounds = 0 }]",
            "steps[0].rounds",
        ),
        (
            "fault = { kind = \"trickle\", bytes_per_sec = 0 }",
            "fault.bytes_per_sec",
        ),
        (
            "fault = { kind = \"http_status\", status = 42 }",
            "fault.status",
        ),
        ("when = { data = { jurisdiction = \"x\" } }", "when.data"),
    ] {
        let text = format!("[[agent]]\nname = \"a\"\n[[agent.rule]]\n{bad}\n");
        let (_, line, _, message) = parse_err(&text);
        assert_eq!(line, 4, "{bad}: {message}");
        assert!(message.contains(field), "{bad}: {message}");
    }
    // `validate` (used on specs built in Rust) reports the same path.
    let mut spec = NetworkSpec::from_toml("ok.toml", "[[agent]]\nname = \"a\"\n").unwrap();
    spec.agents[0].max_body_bytes = 0;
    let e = spec.validate().unwrap_err();
    assert_eq!(e.path, "agent[0].max_body_bytes");
    assert_eq!(e.problem, Problem::NotPositive("max_body_bytes"));
    assert_eq!(
        e.to_string(),
        "agent[0].max_body_bytes: max_body_bytes must be > 0"
    );
}

#[test]
fn a_missing_file_is_named() {
    let e = NetworkSpec::load(&crate_dir().join("no-such.toml")).unwrap_err();
    assert!(matches!(e, ScriptError::Io { .. }));
    assert!(e.to_string().contains("no-such.toml"));
}

fn step_name(s: &ScriptStep) -> &'static str {
    // Exhaustive on purpose: a new step kind must get a README example.
    match s {
        ScriptStep::Reply { .. } => "reply",
        ScriptStep::Error { .. } => "error",
        ScriptStep::State { .. } => "state",
        ScriptStep::Artifacts { .. } => "artifacts",
        ScriptStep::ArtifactUrl { .. } => "artifact_url",
        ScriptStep::Artifact { .. } => "artifact",
        ScriptStep::DataArtifact { .. } => "data_artifact",
        ScriptStep::InputRequired { .. } => "input_required",
        ScriptStep::AuthRequired { .. } => "auth_required",
        ScriptStep::Delegate { .. } => "delegate",
        ScriptStep::Wait { .. } => "wait",
        ScriptStep::RawEvent { .. } => "raw_event",
        ScriptStep::RawSse { .. } => "raw_sse",
        ScriptStep::AppendUnknown => "append_unknown",
        ScriptStep::HugeEvent { .. } => "huge_event",
        ScriptStep::Purge => "purge",
        ScriptStep::CloseStreams => "close_streams",
        ScriptStep::Gate { .. } => "gate",
        ScriptStep::Chunk { .. } => "chunk",
        ScriptStep::UnknownState { .. } => "unknown_state",
        ScriptStep::PushForeign { .. } => "push_foreign",
        ScriptStep::MalformedEvent { .. } => "malformed_event",
    }
}

fn fault_name(f: &Fault) -> &'static str {
    match f {
        Fault::DropBefore => "drop_before",
        Fault::DropResponse => "drop_response",
        Fault::HttpStatus { .. } => "http_status",
        Fault::Stall { .. } => "stall",
        Fault::StallResponse { .. } => "stall_response",
        Fault::CloseAfter { .. } => "close_after",
        Fault::ResetAfter { .. } => "reset_after",
        Fault::Trickle { .. } => "trickle",
        Fault::RpcError { .. } => "rpc_error",
        Fault::GarbageBody { .. } => "garbage_body",
        Fault::OmitFields { .. } => "omit_fields",
    }
}

fn mutation_name(m: &Mutation) -> &'static str {
    match m {
        Mutation::WrongRpcId => "wrong_rpc_id",
        Mutation::LegacyFields => "legacy_fields",
        Mutation::LowercaseEnums => "lowercase_enums",
        Mutation::UnknownField => "unknown_field",
    }
}

const ALL_STEPS: &[&str] = &[
    "reply",
    "error",
    "state",
    "artifacts",
    "artifact_url",
    "artifact",
    "data_artifact",
    "input_required",
    "auth_required",
    "delegate",
    "wait",
    "raw_event",
    "raw_sse",
    "append_unknown",
    "huge_event",
    "purge",
    "close_streams",
    "gate",
    "chunk",
    "unknown_state",
    "push_foreign",
    "malformed_event",
];
const ALL_FAULTS: &[&str] = &[
    "drop_before",
    "drop_response",
    "http_status",
    "stall",
    "stall_response",
    "close_after",
    "reset_after",
    "trickle",
    "rpc_error",
    "garbage_body",
    "omit_fields",
];
const ALL_MUTATIONS: &[&str] = &[
    "wrong_rpc_id",
    "legacy_fields",
    "lowercase_enums",
    "unknown_field",
];

#[test]
fn every_readme_example_parses_and_every_kind_is_documented() {
    let md = std::fs::read_to_string(crate_dir().join("README.md")).unwrap();
    // Each block: the lines between "```toml" and the next fence, with its first line number.
    let mut blocks = Vec::new();
    let mut cur: Option<(usize, String)> = None;
    for (i, line) in md.lines().enumerate() {
        let fence = line.trim_start().starts_with("```");
        match cur.take() {
            None if line.trim_start() == "```toml" => cur = Some((i + 2, String::new())),
            None => {}
            Some(b) if fence => blocks.push(b),
            Some((start, mut text)) => {
                text.push_str(line);
                text.push('\n');
                cur = Some((start, text));
            }
        }
    }
    assert!(cur.is_none(), "unterminated block");
    assert!(blocks.len() >= 20, "{} blocks", blocks.len());
    let (mut steps, mut faults, mut mutations) =
        (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    for (line, text) in &blocks {
        let spec = NetworkSpec::from_toml(&format!("README.md block at line {line}"), text)
            .unwrap_or_else(|e| panic!("{e}"));
        for a in &spec.agents {
            for r in &a.rules {
                steps.extend(r.steps.iter().map(step_name));
                faults.extend(r.fault.iter().map(fault_name));
                mutations.extend(r.mutate.iter().map(mutation_name));
            }
            for q in &a.queued_faults {
                faults.insert(fault_name(&q.fault));
            }
        }
    }
    assert_eq!(steps, ALL_STEPS.iter().copied().collect());
    assert_eq!(faults, ALL_FAULTS.iter().copied().collect());
    assert_eq!(mutations, ALL_MUTATIONS.iter().copied().collect());
}

#[test]
fn the_example_network_parses() {
    let spec = NetworkSpec::load(&crate_dir().join("examples/flights.toml")).unwrap();
    let names: Vec<&str> = spec.agents.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["flights", "docs", "planner"]);
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_a2a-mock"))
}

#[test]
fn help_lists_every_step_fault_and_mutation() {
    let out = bin().arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for name in ALL_STEPS.iter().chain(ALL_FAULTS).chain(ALL_MUTATIONS) {
        assert!(help.contains(name), "--help does not mention {name}");
    }
    for word in ["serve", "check", "README.md", "A2A-Version"] {
        assert!(help.contains(word), "--help does not mention {word}");
    }
    let out = bin().args(["serve", "--help"]).output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(help.contains("--journal") && help.contains("--seed") && help.contains("SIGTERM"));
}

#[test]
fn check_reports_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[[agent]]\nname = \"a\"\nmax_deep = 3\n").unwrap();
    let out = bin().arg("check").arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains(&format!("{}:3:1", bad.display())), "{err}");
    assert!(err.contains("max_deep"), "{err}");
    let out = bin()
        .arg("check")
        .arg(crate_dir().join("examples/flights.toml"))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .contains("ok (3 agents)")
    );
}

/// Start `a2a-mock serve` on the flights example with `extra` arguments, journal in `dir`; the
/// process and the lines it printed before `serving` (read with a bound).
fn serve_flights(
    dir: &std::path::Path,
    extra: &[&std::ffi::OsStr],
) -> (std::process::Child, Vec<String>) {
    let mut child = bin()
        .arg("serve")
        .arg(crate_dir().join("examples/flights.toml"))
        .arg("--journal")
        .arg(dir.join("journal.jsonl"))
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut lines = Vec::new();
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("a2a-mock printed its URLs");
        if line.starts_with("serving") {
            break;
        }
        lines.push(line);
    }
    (child, lines)
}

/// `serve --tls`: every card URL is HTTPS, the run's authority is written to `--ca` and named on
/// the `trust roots:` line, and a client that trusts only that file reads a card.
#[test]
fn serve_tls_writes_the_authority_and_serves_https() {
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("roots.pem");
    let (mut child, lines) = serve_flights(
        dir.path(),
        &["--tls".as_ref(), "--ca".as_ref(), ca.as_os_str()],
    );
    assert_eq!(
        lines.last().map(String::as_str),
        Some(format!("trust roots: {}", ca.display()).as_str())
    );
    let cards: Vec<&str> = lines[..lines.len() - 1]
        .iter()
        .map(|l| l.split_once('\t').expect("NAME<TAB>URL").1)
        .collect();
    assert_eq!(cards.len(), 3);
    assert!(
        cards.iter().all(|u| u.starts_with("https://127.0.0.1:")),
        "{cards:?}"
    );
    let roots = a2a_mock_agents::tls::read_pem_certs(&ca).expect("the written authority");
    let cfg = a2a_mock_agents::tls::client_config(&roots, &[b"http/1.1"]).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let card: serde_json::Value = rt.block_on(async {
        let http = reqwest::Client::builder()
            .no_proxy()
            .tls_backend_preconfigured(cfg)
            .timeout(Duration::from_secs(20))
            .build()
            .unwrap();
        http.get(cards[0])
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    });
    assert!(
        card["supportedInterfaces"][0]["url"]
            .as_str()
            .is_some_and(|u| u.starts_with("https://")),
        "{card}"
    );
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn serve_runs_the_example_until_interrupted_and_writes_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.jsonl");
    let (mut child, lines) = serve_flights(dir.path(), &[]);
    let cards: Vec<(String, String)> = lines
        .iter()
        .map(|l| {
            let (name, url) = l.split_once('\t').expect("NAME<TAB>URL");
            (name.to_string(), url.to_string())
        })
        .collect();
    assert_eq!(cards.len(), 3);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let http = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(20))
            .build()
            .unwrap();
        let planner = &cards.iter().find(|(n, _)| n == "planner").unwrap().1;
        let card: serde_json::Value = http.get(planner).send().await.unwrap().json().await.unwrap();
        let rpc = card["supportedInterfaces"][0]["url"].as_str().unwrap().to_string();
        let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
            "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "plan my trip"}],
                        "metadata": {"skill": "plan-trip"}}}});
        let v: serde_json::Value = http
            .post(&rpc)
            .header("A2A-Version", "1.0")
            .json(&body)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(v["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{v}");
    });
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let (done_tx, done_rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let status = child.wait();
        let _ = done_tx.send(());
        (status, child)
    });
    if done_rx.recv_timeout(Duration::from_secs(20)).is_err() {
        panic!("a2a-mock did not exit after SIGINT");
    }
    let (status, mut child) = waiter.join().unwrap();
    assert!(status.unwrap().success());
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(stderr.contains("journal entries"), "{stderr}");
    let text = std::fs::read_to_string(&journal).unwrap();
    let entries: Vec<a2a_mock_agents::Entry> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let agents: BTreeSet<&str> = entries.iter().map(|e| e.agent.as_str()).collect();
    assert_eq!(agents, ["docs", "flights", "planner"].into_iter().collect());
    assert!(entries.iter().any(|e| matches!(&e.event, a2a_mock_agents::Event::Delegated { to, outcome, .. } if to == "flights" && outcome == "TASK_STATE_COMPLETED")));
    assert!(entries.windows(2).all(|w| w[0].seq < w[1].seq));
}

#[test]
fn front_door_keys_are_checked_at_their_line_and_field() {
    // Each bad value of a new key family: `file:line:column: field: problem`, exactly.
    let cases: &[(&str, &str)] = &[
        (
            "tenant = \"\"",
            "3:10: agent[0].tenant: tenant must not be empty",
        ),
        (
            "tenant = \"tasks\"",
            "3:10: agent[0].tenant: tenant \"tasks\" is an HTTP+JSON route name (`/tasks/…` would not reach the tenant)",
        ),
        (
            "tenant = 7",
            "3:10: agent[0].tenant: invalid type: integer `7`, expected a string",
        ),
        (
            "protocol = \"0.3\"\ntenant = \"acme\"",
            "4:10: agent[0].tenant: tenant needs protocol 1.0",
        ),
        (
            "card_protocol_version = \"1.1\"",
            "3:25: agent[0].card_protocol_version: \"1.1\" is not a 1.0 version (such as \"1.0\" or \"1.0.3\")",
        ),
        (
            "card_max_age_s = -1",
            "3:18: agent[0].card_max_age_s: invalid value: integer `-1`, expected u64",
        ),
        (
            "card_cache_headers = \"no\"",
            "3:22: agent[0].card_cache_headers: invalid type: string \"no\", expected a boolean",
        ),
        (
            "extended_tenant = \"extendedAgentCard\"",
            "3:19: agent[0].extended_tenant: tenant \"extendedAgentCard\" is an HTTP+JSON route name (`/extendedAgentCard/…` would not reach the tenant)",
        ),
        (
            "id_style = \"weird\"",
            "3:12: agent[0].id_style: unknown variant `weird`, expected `uuid` or `opaque`",
        ),
        (
            "security = { credential = \"agent-cred-7\" }",
            "3:27: agent[0].security.credential: must be `<scheme> <credentials>` such as \"Bearer agent-cred-7\"",
        ),
        (
            "security = { credential = \"Bearer x\", scope = \"everything\" }",
            "3:47: agent[0].security.scope: unknown variant `everything`, expected `extended_card` or `all`",
        ),
        (
            "security = { credential = \"Bearer x\" }",
            "3:12: agent[0].security.scope: scope \"extended_card\" needs an extended card (an `extended_skill` or `extended_tenant`)",
        ),
        (
            "security = { credential = \"Bearer x\", scope = \"all\" }\n[[agent.rule]]\nsteps = [{ do = \"auth_required\", credential = \"Bearer y\" }]",
            "3:47: agent[0].security.scope: scope \"all\" cannot be combined with an `auth_required` step (both use Authorization)",
        ),
        (
            "[[agent.extension]]\nuri = \"a,b\"",
            "4:7: agent[0].extension[0].uri: \"a,b\" is not an extension URI (non-empty, no comma, no surrounding space)",
        ),
        (
            "[[agent.extension]]\nuri = \"u\"\n[[agent.extension]]\nuri = \"u\"",
            "6:7: agent[0].extension[1].uri: extension \"u\" is listed twice",
        ),
        (
            "[[agent.extension]]\nurl = \"u\"",
            "4:1: agent[0].extension[0].url: unknown field `url`, expected one of `uri`, `description`, `required`",
        ),
        (
            "tenant = \"t\"\n[[agent.card_change]]\nafter_ms = 5\ntenant = \"t\"",
            "6:10: agent[0].card_change[0].tenant: tenant \"t\" is the card's tenant already (a change must change it)",
        ),
        (
            "[[agent.card_change]]\nafter_ms = 5\ntenant = \"a\"\n[[agent.card_change]]\nafter_ms = 5\ntenant = \"b\"",
            "7:12: agent[0].card_change[1].after_ms: after_ms must be greater than the previous one's",
        ),
        (
            "[[agent.card_change]]\nafter = 5\ntenant = \"a\"",
            "4:1: agent[0].card_change[0].after: unknown field `after`, expected `after_ms` or `tenant`",
        ),
    ];
    for (bad, want) in cases {
        let text = format!("[[agent]]\nname = \"a\"\n{bad}\n");
        let e = NetworkSpec::from_toml("net.toml", &text).unwrap_err();
        assert_eq!(e.to_string(), format!("net.toml:{want}"), "{bad}");
    }
    // `a2a-mock check` prints the same.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[[agent]]\nname = \"a\"\ntenant = \"\"\n").unwrap();
    let out = bin().arg("check").arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(&format!(
            "{}:3:10: agent[0].tenant: tenant must not be empty",
            bad.display()
        )),
        "{err}"
    );
}
