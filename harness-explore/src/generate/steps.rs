//! Script steps and the random "work" a task does before it ends: states with small delays,
//! artifacts of every chunking (one chunk, many, interleaved, raw bytes, hand-made append and
//! replace sequences, data), and what each shape lets a case claim to exercise.

use a2a_mock_agents::script::{ContentKind, ScriptStep};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde_json::json;

/// One of `items`, drawn uniformly (`items` is a non-empty constant list).
pub(super) fn pick<T: Copy>(rng: &mut ChaCha8Rng, items: &[T]) -> T {
    items[rng.random_range(0..items.len())]
}

/// Move the task to `TASK_STATE_<name>`.
pub(super) fn state(name: &str) -> ScriptStep {
    state_full(name, None, 0)
}

/// Move the task to `TASK_STATE_<name>` after `delay_ms`, with an optional status message.
pub(super) fn state_full(name: &str, message: Option<&str>, delay_ms: u64) -> ScriptStep {
    ScriptStep::State {
        state: format!("TASK_STATE_{name}"),
        message: message.map(str::to_string),
        parts: Vec::new(),
        delay_ms,
    }
}

/// Wait.
pub(super) fn wait(ms: u64) -> ScriptStep {
    ScriptStep::Wait { ms }
}

/// Generated artifacts with the given shape; everything else at its default.
pub(super) fn artifacts(count: u32, chunks: u32, chunk_bytes: usize) -> ScriptStep {
    ScriptStep::Artifacts {
        count,
        chunks,
        chunk_bytes,
        content: ContentKind::Text,
        text: None,
        interleave: false,
        media_type: None,
        omit_last_chunk: false,
        delay_ms: 0,
    }
}

/// Set fields of an `artifacts` step (no-op on other steps).
pub(super) fn shape(
    mut step: ScriptStep,
    f: impl FnOnce(&mut ContentKind, &mut bool, &mut Option<String>, &mut bool, &mut u64),
) -> ScriptStep {
    if let ScriptStep::Artifacts {
        content,
        interleave,
        media_type,
        omit_last_chunk,
        delay_ms,
        ..
    } = &mut step
    {
        f(content, interleave, media_type, omit_last_chunk, delay_ms);
    }
    step
}

/// A hand-made chunk.
fn chunk(artifact_id: &str, text: &str, append: bool, last_chunk: bool) -> ScriptStep {
    ScriptStep::Chunk {
        artifact_id: artifact_id.to_string(),
        text: text.to_string(),
        append,
        last_chunk,
    }
}

const WORDS: &[&str] = &[
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
    "kilo", "lima",
];

fn words(rng: &mut ChaCha8Rng, n: usize) -> String {
    (0..n)
        .map(|_| pick(rng, WORDS))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What a task's work delivers, so that a situation lists only rules it exercises.
#[derive(Debug, Clone, Default)]
pub(super) struct Work {
    /// The steps before the final state.
    pub steps: Vec<ScriptStep>,
    /// A WORKING state is reported.
    pub working: bool,
    /// At least one artifact is delivered.
    pub artifacts: bool,
    /// Some artifact is delivered in more than one chunk (append and lastChunk in play).
    pub multi_chunk: bool,
    /// Delivers only `text/plain` parts (generated text or hand-made chunks).
    pub text_only: bool,
}

/// Which artifact shapes a work may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shapes {
    /// Anything, artifacts optional.
    Any,
    /// At least one artifact, of any shape.
    SomeArtifact,
    /// At least one artifact in several chunks.
    MultiChunk,
    /// Text artifacts only (for a delegation that accepts `text/plain` only), maybe none.
    TextOnly,
}

/// Random work before the final state.
pub(super) fn work(rng: &mut ChaCha8Rng, shapes: Shapes) -> Work {
    let mut w = Work {
        text_only: true,
        ..Work::default()
    };
    if rng.random_bool(0.75) {
        w.working = true;
        w.steps
            .push(state_full("WORKING", None, rng.random_range(0..=40)));
    }
    let choices: &[u8] = match shapes {
        Shapes::Any => &[0, 1, 2, 3, 4, 5, 6, 2, 5],
        Shapes::SomeArtifact => &[1, 2, 3, 4, 5, 6, 2, 5],
        Shapes::MultiChunk => &[2, 3, 4, 5, 5],
        Shapes::TextOnly => &[0, 1, 2, 3, 5, 5],
    };
    match pick(rng, choices) {
        0 => {}
        1 => {
            w.steps.push(artifacts(1, 1, rng.random_range(16..=2000)));
            w.artifacts = true;
        }
        2 => {
            let step = artifacts(
                rng.random_range(1..=2),
                rng.random_range(2..=6),
                rng.random_range(16..=1500),
            );
            let delay = pick(rng, &[0, 0, 5, 20]);
            w.steps.push(shape(step, |_, _, _, _, d| *d = delay));
            w.artifacts = true;
            w.multi_chunk = true;
        }
        3 => {
            let step = artifacts(
                rng.random_range(2..=3),
                rng.random_range(2..=4),
                rng.random_range(50..=600),
            );
            w.steps.push(shape(step, |_, i, _, _, _| *i = true));
            w.artifacts = true;
            w.multi_chunk = true;
        }
        4 => {
            let step = artifacts(1, rng.random_range(2..=5), rng.random_range(256..=4096));
            w.steps.push(shape(step, |c, _, m, _, _| {
                *c = ContentKind::Raw;
                *m = Some("application/octet-stream".into());
            }));
            w.artifacts = true;
            w.multi_chunk = true;
            w.text_only = false;
        }
        5 => {
            w.steps.extend(hand_made_chunks(rng));
            w.artifacts = true;
            w.multi_chunk = true;
        }
        _ => {
            let n = rng.random_range(1..=5);
            let items: Vec<_> = (0..n)
                .map(|i| json!({ "item": i, "label": words(rng, 2) }))
                .collect();
            w.steps.push(ScriptStep::DataArtifact {
                data: json!({ "items": items }),
                media_type: None,
            });
            w.artifacts = true;
            w.text_only = false;
        }
    }
    if rng.random_bool(0.3) {
        w.steps.push(wait(rng.random_range(10..=60)));
    }
    w
}

/// Hand-made chunk sequences exercising `append` and `lastChunk`: a plain run of appends, a
/// replacement in the middle (a chunk without `append` restarts the artifact), and two
/// artifacts whose chunks alternate.
pub(super) fn hand_made_chunks(rng: &mut ChaCha8Rng) -> Vec<ScriptStep> {
    let a = format!("part-{}", rng.random_range(1..=99));
    let mut steps = vec![chunk(&a, &words(rng, 3), false, false)];
    match rng.random_range(0..3) {
        0 => {
            for _ in 0..rng.random_range(1..=4) {
                steps.push(chunk(&a, &format!(" {}", words(rng, 2)), true, false));
            }
            steps.push(chunk(&a, " end", true, true));
        }
        1 => {
            steps.push(chunk(&a, &format!(" {}", words(rng, 2)), true, false));
            steps.push(chunk(&a, &words(rng, 4), false, false));
            steps.push(chunk(&a, &format!(" {}", words(rng, 2)), true, true));
        }
        _ => {
            let b = format!("{a}-b");
            steps.push(chunk(&b, &words(rng, 2), false, false));
            steps.push(chunk(&a, &format!(" {}", words(rng, 2)), true, false));
            steps.push(chunk(&b, &format!(" {}", words(rng, 2)), true, true));
            steps.push(chunk(&a, " end", true, true));
        }
    }
    steps
}
