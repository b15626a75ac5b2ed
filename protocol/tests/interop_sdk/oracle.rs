//! Running the SDK oracle, the Rust type of each object type, and the normalisation that makes the two sides' JSON comparable.

use super::*;

pub(crate) fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("protocol/ has a parent directory")
        .to_path_buf()
}

/// `<repo>/.venv/bin/python`, or a panic that says how to create it.
pub(crate) fn venv_python() -> PathBuf {
    let python = repo_root().join(".venv").join("bin").join("python");
    if !python.exists() {
        panic!("{SETUP_HINT} (no {})", python.display());
    }
    python
}

/// Run `interop/sdk_oracle.py <cmd>` with `input` (if any) as JSON on stdin; return its JSON.
pub(crate) fn oracle(cmd: &str, input: Option<&Value>) -> Value {
    let python = venv_python();
    let script = repo_root().join("interop").join("sdk_oracle.py");
    assert!(script.exists(), "missing {}", script.display());
    let mut child = Command::new(&python)
        .arg(&script)
        .arg(cmd)
        .current_dir(repo_root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{SETUP_HINT}: cannot run {}: {e}", python.display()));

    let input = input.map(|v| serde_json::to_vec(v).expect("serialise oracle input"));
    let mut stdin = child.stdin.take().expect("piped stdin");
    let writer = thread::spawn(move || {
        if let Some(bytes) = input {
            // A write error means the child exited early; its status and stderr say why.
            let _ = stdin.write_all(&bytes);
        }
        // Dropping stdin closes it, so the oracle sees EOF.
    });
    let mut stdout = child.stdout.take().expect("piped stdout");
    let out_reader = thread::spawn(move || {
        let mut buf = Vec::new();
        stdout.read_to_end(&mut buf).map(|_| buf)
    });
    let mut stderr = child.stderr.take().expect("piped stderr");
    let err_reader = thread::spawn(move || {
        let mut buf = Vec::new();
        stderr.read_to_end(&mut buf).map(|_| buf)
    });

    let deadline = Instant::now() + ORACLE_TIMEOUT;
    let status = loop {
        match child.try_wait().expect("wait for the oracle") {
            Some(status) => break status,
            None if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("sdk_oracle.py {cmd} did not finish within {ORACLE_TIMEOUT:?}");
            }
            None => thread::sleep(Duration::from_millis(20)),
        }
    };
    writer.join().expect("stdin writer thread");
    let out = out_reader
        .join()
        .expect("stdout reader")
        .expect("read stdout");
    let err = err_reader
        .join()
        .expect("stderr reader")
        .expect("read stderr");
    let err = String::from_utf8_lossy(&err);
    if !status.success() {
        let hint = if err.contains("cannot import a2a-sdk") {
            format!("\n{SETUP_HINT}")
        } else {
            String::new()
        };
        panic!("sdk_oracle.py {cmd} failed ({status}):\n{err}{hint}");
    }
    serde_json::from_slice(&out).unwrap_or_else(|e| {
        panic!(
            "sdk_oracle.py {cmd} printed non-JSON ({e}):\n{}\nstderr:\n{err}",
            String::from_utf8_lossy(&out)
        )
    })
}

// ---------------------------------------------------------------------------------------------
// Names and types
// ---------------------------------------------------------------------------------------------

/// Decode `v` leniently into the Rust type of `T` and serialise it again.
pub(crate) fn via<T: DeserializeOwned + Serialize>(v: &Value) -> Result<Value, String> {
    let decoded: T = decode_value(v).map_err(|e| format!("decode: {e}"))?;
    serde_json::to_value(&decoded).map_err(|e| format!("encode: {e}"))
}

/// Decode `v` as the Rust type of `t` and re-encode it. The match is exhaustive, so a new
/// [`ObjectType`] cannot be added without choosing its Rust type here.
pub(crate) fn reencode(t: ObjectType, v: &Value) -> Result<Value, String> {
    match t {
        O::Message => via::<Message>(v),
        O::Part => via::<Part>(v),
        O::Task => via::<Task>(v),
        O::TaskStatus => via::<TaskStatus>(v),
        O::Artifact => via::<Artifact>(v),
        O::TaskStatusUpdateEvent => via::<TaskStatusUpdateEvent>(v),
        O::TaskArtifactUpdateEvent => via::<TaskArtifactUpdateEvent>(v),
        O::SendMessageRequest => via::<SendMessageRequest>(v),
        O::SendMessageConfiguration => via::<SendMessageConfiguration>(v),
        O::SendMessageResponse => via::<SendMessageResponse>(v),
        O::StreamResponse => via::<StreamResponse>(v),
        O::GetTaskRequest => via::<GetTaskRequest>(v),
        O::ListTasksRequest => via::<ListTasksRequest>(v),
        O::ListTasksResponse => via::<ListTasksResponse>(v),
        O::CancelTaskRequest => via::<CancelTaskRequest>(v),
        O::SubscribeToTaskRequest => via::<SubscribeToTaskRequest>(v),
        O::TaskPushNotificationConfig => via::<TaskPushNotificationConfig>(v),
        O::AuthenticationInfo => via::<AuthenticationInfo>(v),
        O::GetTaskPushNotificationConfigRequest => via::<GetTaskPushNotificationConfigRequest>(v),
        O::DeleteTaskPushNotificationConfigRequest => {
            via::<DeleteTaskPushNotificationConfigRequest>(v)
        }
        O::ListTaskPushNotificationConfigsRequest => {
            via::<ListTaskPushNotificationConfigsRequest>(v)
        }
        O::ListTaskPushNotificationConfigsResponse => {
            via::<ListTaskPushNotificationConfigsResponse>(v)
        }
        O::GetExtendedAgentCardRequest => via::<GetExtendedAgentCardRequest>(v),
        O::AgentCard => via::<AgentCard>(v),
        O::AgentInterface => via::<AgentInterface>(v),
        O::AgentProvider => via::<AgentProvider>(v),
        O::AgentCapabilities => via::<AgentCapabilities>(v),
        O::AgentExtension => via::<AgentExtension>(v),
        O::AgentSkill => via::<AgentSkill>(v),
        O::AgentCardSignature => via::<AgentCardSignature>(v),
        O::SecurityRequirement => via::<SecurityRequirement>(v),
        O::StringList => via::<StringList>(v),
        O::SecurityScheme => via::<SecurityScheme>(v),
        O::ApiKeySecurityScheme => via::<ApiKeySecurityScheme>(v),
        O::HttpAuthSecurityScheme => via::<HttpAuthSecurityScheme>(v),
        O::OAuth2SecurityScheme => via::<OAuth2SecurityScheme>(v),
        O::OpenIdConnectSecurityScheme => via::<OpenIdConnectSecurityScheme>(v),
        O::MutualTlsSecurityScheme => via::<MutualTlsSecurityScheme>(v),
        O::OAuthFlows => via::<OAuthFlows>(v),
        O::AuthorizationCodeOAuthFlow => via::<AuthorizationCodeOAuthFlow>(v),
        O::ClientCredentialsOAuthFlow => via::<ClientCredentialsOAuthFlow>(v),
        O::DeviceCodeOAuthFlow => via::<DeviceCodeOAuthFlow>(v),
        O::ImplicitOAuthFlow => via::<ImplicitOAuthFlow>(v),
        O::PasswordOAuthFlow => via::<PasswordOAuthFlow>(v),
    }
}

// ---------------------------------------------------------------------------------------------
// Normalisation
// ---------------------------------------------------------------------------------------------

/// Rewrite the two legitimate representation differences between the sides, and nothing else.
///
/// 1. Timestamp fractions. protobuf's `Timestamp` JSON printer emits 0, 3, 6 or 9 fraction
///    digits, whichever is shortest and exact (`10:00:01Z` for a whole second), while this crate
///    always emits exactly 3 (`10:00:01.000Z`, the millisecond precision that spec §5.6.1
///    recommends, reference §2). Both denote the same instant, so every
///    `google.protobuf.Timestamp` field (`TaskStatus.timestamp`,
///    `ListTasksRequest.statusTimestampAfter`; no other 1.0 field is a Timestamp) is rewritten to
///    this crate's form on both sides. A string that does not parse is left as it is, so the
///    comparison still fails on it. (A free-form metadata key of the same name would be rewritten
///    too; the test data has none.)
/// 2. Integral doubles. Numbers inside `google.protobuf.Struct`/`Value` (metadata, `Part.data`)
///    are doubles in protobuf, so `2.0` and `2` are the same value; the oracle prints integral
///    doubles as integers while `serde_json` keeps `2.0` if that is what was built. Every integral
///    float below 2^53 in magnitude becomes an integer. (`int32` fields are Rust integers, so this
///    cannot hide a float where an integer belongs.)
pub(crate) fn normalise(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| {
                    let x = match (k.as_str(), x) {
                        ("timestamp" | "statusTimestampAfter", Value::String(s)) => {
                            Timestamp::parse(s)
                                .map(|t| Value::String(t.to_rfc3339()))
                                .unwrap_or_else(|_| x.clone())
                        }
                        _ => normalise(x),
                    };
                    (k.clone(), x)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(normalise).collect()),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 => {
                json!(f as i64)
            }
            _ => v.clone(),
        },
        _ => v.clone(),
    }
}

/// The JSON paths at which `a` and `b` differ, each with both values.
pub(crate) fn diff(a: &Value, b: &Value, path: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let p = format!("{path}.{k}");
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(w)) => diff(u, w, &p, out),
                    (u, w) => out.push(format!("{p}: {} vs {}", show(u), show(w))),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (u, w)) in x.iter().zip(y).enumerate() {
                diff(u, w, &format!("{path}[{i}]"), out);
            }
        }
        _ if a != b => out.push(format!("{path}: {a} vs {b}")),
        _ => {}
    }
}

pub(crate) fn show(v: Option<&Value>) -> String {
    v.map_or_else(|| "(absent)".to_string(), Value::to_string)
}

/// A readable account of how `left` differs from `right`.
pub(crate) fn differences(
    left_name: &str,
    left: &Value,
    right_name: &str,
    right: &Value,
) -> String {
    let mut out = Vec::new();
    diff(left, right, "$", &mut out);
    format!(
        "    ({left_name} vs {right_name})\n    {}",
        out.join("\n    ")
    )
}
