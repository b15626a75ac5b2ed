//! The streaming hot path end to end: a large artifact of 64 KiB chunks, mixing text parts (with
//! characters JSON must escape), `raw` parts in every base64 form (standard and URL-safe, padded
//! and unpadded) and `data` parts, interleaved with a second artifact and an unknown task state,
//! reassembled byte-exact over JSON-RPC, HTTP+JSON and gRPC. The file on disk and the reported
//! sha256 and length are checked; nothing here asserts on timing.
//!
//! The chunks are hand-made events (`raw_event`), so they must carry the task's id and context
//! id (REQUIRED fields: an event without them is rejected). The mock derives ids from the seed,
//! the agent's name and the task's number, so a probe network with the same seed and agent name
//! tells them before the real script is written.

use crate::support;

use a2a_delegator::engine::EngineConfig;
use a2a_delegator::store::DelegationState;
use a2a_mock_agents::{Network, Step};
use a2a_protocol::{Binding, TaskState};
use base64::Engine;
use serde_json::{Value, json};
use support::{EngineRun, agent, card, scripted};

const SELF_URL: &str = "http://127.0.0.1:1/delegator";
const CHUNK: usize = 64 * 1024;

/// The ids of the first task agent `a` creates (seed 1, `binding`): from a probe run.
async fn first_task_ids(binding: Binding) -> (String, String) {
    let net: Network = scripted(
        agent("a").bindings([binding]).streaming(true),
        vec![Step::state(TaskState::Completed).into()],
    )
    .await;
    let mut h = EngineRun::start(|dir| {
        EngineConfig::new(dir, SELF_URL)
            .agents(vec![card(&net, "a")])
            .options(support::fast_options())
    })
    .await;
    let o = h.run(support::request("probe")).await;
    net.shutdown().await;
    (
        o.task_id.expect("probe task"),
        o.context_id.expect("probe context"),
    )
}

fn chunk_event(
    ids: &(String, String),
    id: &str,
    part: Value,
    append: bool,
    last: bool,
) -> a2a_mock_agents::ScriptStep {
    Step::raw_event(
        json!({"artifactUpdate": {"taskId": ids.0, "contextId": ids.1,
        "append": append, "lastChunk": last,
        "artifact": {"artifactId": id, "name": id, "parts": [part]}}}),
    )
}

/// The steps and the bytes each artifact must end up with.
fn script(ids: &(String, String)) -> (Vec<a2a_mock_agents::ScriptStep>, Vec<u8>, Vec<u8>) {
    let b64 = [
        base64::engine::general_purpose::STANDARD,
        base64::engine::general_purpose::STANDARD_NO_PAD,
        base64::engine::general_purpose::URL_SAFE,
        base64::engine::general_purpose::URL_SAFE_NO_PAD,
    ];
    let mut steps = vec![Step::state(TaskState::Working).into()];
    let mut big = Vec::new();
    let mut small = Vec::new();
    for i in 0..48usize {
        let part = match i % 3 {
            0 => {
                let unit = format!("line {i} \"q\" \\ tab\t é 😀\n");
                let text: String = unit.repeat(CHUNK / unit.len() + 1);
                big.extend_from_slice(text.as_bytes());
                json!({"text": text})
            }
            1 => {
                // Lengths that need padding (not a multiple of 3) and bytes that hit `+/` / `-_`.
                let bytes: Vec<u8> = (0..CHUNK + i % 3 + 1)
                    .map(|k| (k * 7 + i) as u8 | 0xf8)
                    .collect();
                big.extend_from_slice(&bytes);
                json!({"raw": b64[(i / 3) % 4].encode(&bytes), "mediaType": "application/octet-stream"})
            }
            _ => {
                let v = json!({"i": i, "s": "x".repeat(1000)});
                big.extend_from_slice(serde_json::to_string(&v).unwrap().as_bytes());
                json!({"data": v})
            }
        };
        steps.push(chunk_event(ids, "big", part, i > 0, i == 47));
        if i % 16 == 5 {
            // Interleaved: a second artifact, and a status update with an unknown state.
            let t = format!("small {i};");
            let first = small.is_empty();
            small.extend_from_slice(t.as_bytes());
            steps.push(chunk_event(ids, "small", json!({"text": t}), !first, false));
            steps.push(Step::unknown_state("TASK_STATE_PAUSED"));
        }
    }
    steps.push(Step::state(TaskState::Completed).into());
    (steps, big, small)
}

async fn run_over(binding: Binding) {
    let ids = first_task_ids(binding).await;
    let (steps, big, small) = script(&ids);
    let net: Network = scripted(agent("a").bindings([binding]).streaming(true), steps).await;
    let mut h = EngineRun::start(|dir| {
        EngineConfig::new(dir, SELF_URL)
            .agents(vec![card(&net, "a")])
            .options(support::fast_options())
    })
    .await;
    let mut r = support::request(&format!("hot-{binding}"));
    r.artifact_spec.mime_types = vec!["*/*".into()];
    r.artifact_spec.max_size_bytes = 64 * 1024 * 1024;
    let o = h.run(r).await;
    assert_eq!(o.state, DelegationState::Completed, "{binding}: {o:?}");
    assert_eq!(
        o.task_id.as_ref(),
        Some(&ids.0),
        "{binding}: the probe's ids"
    );
    assert_eq!(o.reason.as_deref(), Some("the task completed"), "{binding}");
    assert_eq!(o.artifacts.len(), 2, "{binding}: {o:?}");
    for (id, want) in [("big", &big), ("small", &small)] {
        let a = o
            .artifacts
            .iter()
            .find(|a| a.artifact_id == id)
            .unwrap_or_else(|| panic!("{binding}: no artifact {id}"));
        assert_eq!(a.bytes, want.len() as u64, "{binding} {id}");
        assert_eq!(a.sha256, support::sha(want), "{binding} {id}");
        let on_disk = std::fs::read(&a.path).unwrap();
        assert!(on_disk == *want, "{binding} {id}: file differs");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_mixed_artifact_is_byte_exact_over_jsonrpc() {
    run_over(Binding::JsonRpc).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_mixed_artifact_is_byte_exact_over_rest() {
    run_over(Binding::Rest).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_mixed_artifact_is_byte_exact_over_grpc() {
    run_over(Binding::Grpc).await;
}
