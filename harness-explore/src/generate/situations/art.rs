//! Artifact situations (DLG-ART-*): chunking, references, bounds, rejections, protocol errors.

use super::*;

/// An agent and a delegation that will be streamed (the chunk-level rules judge streams).
pub(super) fn streamed_pair(
    d: &mut Draft,
    role: &str,
    base: &str,
    what: &str,
) -> (usize, Delegation) {
    let skill = d.skill(base);
    let a = d.agent(role, &skill);
    d.agents[a].streaming = true;
    let mut del = d.delegation(&skill, what);
    del.streaming_preferred = true;
    (a, del)
}

pub(super) fn chunked(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let (a, mut del) = streamed_pair(d, "reporter", "report", "Write the regional reports");
    let w = work(rng, Shapes::MultiChunk);
    completing(d, a, &del, &w);
    expect(&mut del, &[Outcome::Completed]);
    d.delegations.push(del);
    d.list(&["DLG-STATE-02"]);
    d.titles.push("chunked artifacts".into());
}

pub(super) fn omit_last_chunk(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("report");
    let a = d.agent("unfinished", &skill);
    d.agents[a].rules.push(rule(vec![
        state("WORKING"),
        shape(
            artifacts(
                rng.random_range(1..=2),
                rng.random_range(2..=4),
                rng.random_range(64..=300),
            ),
            |_, _, _, o, _| *o = true,
        ),
        state("COMPLETED"),
    ]));
    let mut del = d.delegation(&skill, "Write the report without last chunks");
    del.streaming_preferred = rng.random_bool(0.7);
    expect(&mut del, &[Outcome::Completed]);
    d.delegations.push(del);
    d.list(&["DLG-ART-04", "DLG-STATE-02"]);
    d.titles.push("chunks never marked lastChunk".into());
}

pub(super) fn by_reference(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("export");
    let a = d.agent("storage", &skill);
    let bytes = rng.random_range(1_000..=300_000u64);
    d.agents[a].rules.push(rule(vec![
        ScriptStep::ArtifactUrl {
            bytes,
            media_type: None,
            target: Default::default(),
        },
        state("COMPLETED"),
    ]));
    let mut del = d.delegation(&skill, "Export the dataset");
    del.streaming_preferred = rng.random_bool(0.5);
    if rng.random_bool(0.4) {
        del.max_size_bytes = bytes / rng.random_range(2..=8);
        // Rejected: the delegation fails, or completes without it.
        expect(&mut del, &[Outcome::Failed, Outcome::Completed]);
        d.list(&["DLG-ART-03", "DLG-ART-06"]);
        d.titles.push("a url artifact over the size bound".into());
    } else {
        expect(&mut del, &[Outcome::Completed]);
        d.list(&["DLG-ART-03", "DLG-ART-04"]);
        d.titles.push("a url artifact".into());
    }
    d.delegations.push(del);
}

/// A url part a delegator must not fetch (A2A §14.1.1): another scheme, the trap on 127.0.0.9,
/// a redirect to it, userinfo. The delegation fails, or completes without that artifact.
pub(super) fn forbidden_url(d: &mut Draft, rng: &mut ChaCha8Rng) {
    use a2a_mock_agents::UrlTarget;
    const TARGETS: [UrlTarget; 6] = [
        UrlTarget::Trap,
        UrlTarget::RedirectToTrap,
        UrlTarget::Userinfo,
        UrlTarget::File,
        UrlTarget::Ftp,
        UrlTarget::Data,
    ];
    let target = TARGETS[rng.random_range(0..TARGETS.len())];
    let skill = d.skill("mirror");
    let a = d.agent("mirror", &skill);
    d.agents[a].rules.push(rule(vec![
        ScriptStep::ArtifactUrl {
            bytes: 1000,
            media_type: None,
            target,
        },
        state("COMPLETED"),
    ]));
    let mut del = d.delegation(&skill, "Mirror the dataset");
    del.streaming_preferred = rng.random_bool(0.5);
    expect(&mut del, &[Outcome::Failed, Outcome::Completed]);
    d.list(&["DLG-URL-01"]);
    d.titles.push(format!(
        "a url part not to fetch ({})",
        target.forbidden_because().unwrap_or_default()
    ));
    d.delegations.push(del);
}

pub(super) fn oversize_stream(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let (a, mut del) = streamed_pair(d, "flood", "dump", "Dump the logs");
    let chunks = rng.random_range(10..=40u32);
    let bytes = rng.random_range(2_048..=8_192usize);
    let total = u64::from(chunks) * bytes as u64;
    del.max_size_bytes = total / rng.random_range(2..=4);
    d.agents[a]
        .rules
        .push(rule(vec![artifacts(1, chunks, bytes), state("COMPLETED")]));
    expect(&mut del, &[Outcome::Failed, Outcome::Completed]);
    d.delegations.push(del);
    d.list(&["DLG-ART-06", "DLG-OBS-03"]);
    d.titles
        .push("a streamed artifact over the size bound".into());
}

pub(super) fn wrong_media_type(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let odd = pick(
        rng,
        &["application/x-msdownload", "image/png", "application/zip"],
    );
    let skill = d.skill("summarize");
    let a = d.agent("sloppy", &skill);
    d.agents[a].skills[0].output_modes = vec!["text/plain".into(), odd.into()];
    d.agents[a].rules.push(rule(vec![
        shape(
            artifacts(1, rng.random_range(1..=2), rng.random_range(50..=300)),
            |c, _, m, _, _| {
                *c = ContentKind::Raw;
                *m = Some(odd.to_string());
            },
        ),
        state("COMPLETED"),
    ]));
    let mut del = d.delegation(&skill, "Summarize as plain text");
    del.mime_types = vec!["text/plain".into()];
    del.streaming_preferred = rng.random_bool(0.7);
    expect(&mut del, &[Outcome::Failed, Outcome::Completed]);
    d.delegations.push(del);
    d.list(&["DLG-ART-05"]);
    d.titles.push(format!("an artifact of type {odd}"));
}

pub(super) fn schema_violation(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let skill = d.skill("clause-extraction");
    let a = d.agent("legal", &skill);
    let bad = pick_value(
        rng,
        vec![
            json!({ "clauses": [{ "type": "governing-law", "text": "" }] }),
            json!({ "clauses": [{ "type": "governing-law" }] }),
            json!({ "items": [] }),
            json!({ "clauses": "none" }),
        ],
    );
    d.agents[a].rules.push(rule(vec![
        ScriptStep::DataArtifact {
            data: bad,
            media_type: None,
        },
        state("COMPLETED"),
    ]));
    let mut del = d.delegation(&skill, "Extract the clauses strictly");
    del.mime_types = vec!["application/json".into()];
    del.schema = Some(json!({
        "type": "object",
        "required": ["clauses"],
        "properties": { "clauses": { "type": "array", "items": {
            "type": "object", "required": ["type", "text"],
            "properties": { "text": { "type": "string", "minLength": 1 } } } } }
    }));
    del.streaming_preferred = rng.random_bool(0.7);
    expect(&mut del, &[Outcome::Failed, Outcome::Completed]);
    d.delegations.push(del);
    d.list(&["DLG-ART-07"]);
    d.titles
        .push("a data artifact that violates the schema".into());
}

/// One of `items`, drawn uniformly (`items` is a non-empty constant list).
pub(super) fn pick_value(
    rng: &mut ChaCha8Rng,
    mut items: Vec<serde_json::Value>,
) -> serde_json::Value {
    let i = rng.random_range(0..items.len());
    items.swap_remove(i)
}

pub(super) fn protocol_error(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let (a, mut del) = streamed_pair(d, "buggy", "report", "Write the buggy report");
    let variant = rng.random_range(0..4);
    let mut steps = vec![state("WORKING")];
    let title = match variant {
        0 => {
            steps.push(ScriptStep::AppendUnknown);
            "an append to an unknown artifact"
        }
        1 => {
            steps.push(artifacts(1, rng.random_range(1..=2), 200));
            steps.push(ScriptStep::RawSse {
                data: "{not json".into(),
            });
            steps.push(artifacts(1, 1, 200));
            "an event that is not JSON"
        }
        2 => {
            steps.push(ScriptStep::RawEvent {
                result: json!({ "artifactUpdate": { "taskId": "someone-else", "contextId": "elsewhere",
                    "artifact": { "artifactId": "stolen", "parts": [{ "text": "not yours" }] }, "lastChunk": true } }),
            });
            steps.push(wait(100));
            steps.push(artifacts(1, 1, 100));
            "an event for a foreign task"
        }
        _ => {
            steps.push(artifacts(1, 1, 64));
            steps.push(state("COMPLETED"));
            steps.push(ScriptStep::RawEvent {
                result: json!({ "artifactUpdate": { "taskId": "late", "contextId": "late",
                    "artifact": { "artifactId": "artifact-9", "parts": [{ "text": "late chunk" }] } } }),
            });
            "a chunk after the final state"
        }
    };
    if variant < 3 {
        steps.push(state("COMPLETED"));
        d.list(&["DLG-OBS-03"]);
    }
    d.agents[a].rules.push(rule(steps));
    // Failed visibly, or the problem reported and the result recovered from a fresh snapshot.
    expect(&mut del, &[Outcome::Failed, Outcome::Completed]);
    d.delegations.push(del);
    d.list(&["DLG-ART-09"]);
    d.titles.push(title.into());
}

/// The allowance over the baseline memory of a large-stream case: the catalog's
/// (`artifacts.large-stream-memory`), wide enough for allocator and buffer noise.
const LARGE_STREAM_ALLOWANCE_MIB: u64 = 16;

/// A streamed artifact of 32 to 40 MiB, twice the memory allowance or more: written out as it
/// arrives, the process group's peak stays within the allowance; buffered, it would not
/// (DLG-ART-10). The case has the delegator to itself, so nothing else it holds counts.
pub(super) fn large_stream(d: &mut Draft, rng: &mut ChaCha8Rng) {
    let (a, mut del) = streamed_pair(d, "bulk", "export", "Export the archive as one stream");
    let chunk_bytes = 64 * 1024;
    let chunks = rng.random_range(512..=640u32);
    d.agents[a].rules.push(rule(vec![
        shape(artifacts(1, chunks, chunk_bytes), |c, _, _, _, _| {
            *c = ContentKind::Raw
        }),
        state("COMPLETED"),
    ]));
    del.max_size_bytes = 100 * 1024 * 1024;
    expect(&mut del, &[Outcome::Completed]);
    d.delegations.push(del);
    d.memory_bound_mib = Some(LARGE_STREAM_ALLOWANCE_MIB);
    d.alone = true;
    d.needs_ms(60_000);
    d.list(&["DLG-ART-10", "DLG-ART-04"]);
    d.titles.push(format!(
        "a {} MiB streamed artifact within a {LARGE_STREAM_ALLOWANCE_MIB} MiB memory allowance",
        (u64::from(chunks) * chunk_bytes as u64) >> 20
    ));
}
