//! Strategies for messages, parts, tasks and streaming events.

use super::*;

pub(crate) fn part_content() -> impl Strategy<Value = PartContent> {
    prop_oneof![
        text().prop_map(PartContent::Text),
        vec(any::<u8>(), 0..24).prop_map(PartContent::Raw),
        url().prop_map(PartContent::Url),
        json_value().prop_map(PartContent::Data),
    ]
}

pub(crate) fn part() -> impl Strategy<Value = Part> {
    (part_content(), of(metadata()), of(text()), of(media_type())).prop_map(
        |(content, metadata, filename, media_type)| Part {
            content,
            metadata,
            filename,
            media_type,
        },
    )
}

pub(crate) fn message_with(role: impl Strategy<Value = Role>) -> impl Strategy<Value = Message> {
    (
        ident(),
        of(ident()),
        of(ident()),
        role,
        vec(part(), 1..4),
        of(metadata()),
        vec(url(), 0..2),
        vec(ident(), 0..3),
    )
        .prop_map(
            |(
                message_id,
                context_id,
                task_id,
                role,
                parts,
                metadata,
                extensions,
                reference_task_ids,
            )| Message {
                message_id,
                context_id,
                task_id,
                role,
                parts,
                metadata,
                extensions,
                reference_task_ids,
            },
        )
}

pub(crate) fn message() -> impl Strategy<Value = Message> {
    message_with(valid_role())
}

// ---------------------------------------------------------------------------
// Task and events
// ---------------------------------------------------------------------------

pub(crate) fn task_status() -> impl Strategy<Value = TaskStatus> {
    (valid_state(), of(message()), of(timestamp())).prop_map(|(state, message, timestamp)| {
        TaskStatus {
            state,
            message,
            timestamp,
        }
    })
}

pub(crate) fn artifact() -> impl Strategy<Value = Artifact> {
    (
        ident(),
        of(text()),
        of(text()),
        vec(part(), 1..3),
        of(metadata()),
        vec(url(), 0..2),
    )
        .prop_map(
            |(artifact_id, name, description, parts, metadata, extensions)| Artifact {
                artifact_id,
                name,
                description,
                parts,
                metadata,
                extensions,
            },
        )
}

pub(crate) fn task() -> BoxedStrategy<Task> {
    (
        ident(),
        prop_oneof![Just(String::new()), ident()],
        task_status(),
        vec(artifact(), 0..3),
        vec(message(), 0..3),
        of(metadata()),
    )
        .prop_map(
            |(id, context_id, status, artifacts, history, metadata)| Task {
                id,
                context_id,
                status,
                artifacts,
                history,
                metadata,
            },
        )
        .boxed()
}

pub(crate) fn status_update() -> impl Strategy<Value = TaskStatusUpdateEvent> {
    (ident(), ident(), task_status(), of(metadata())).prop_map(
        |(task_id, context_id, status, metadata)| TaskStatusUpdateEvent {
            task_id,
            context_id,
            status,
            metadata,
        },
    )
}

pub(crate) fn artifact_update() -> impl Strategy<Value = TaskArtifactUpdateEvent> {
    (
        ident(),
        ident(),
        artifact(),
        any::<bool>(),
        any::<bool>(),
        of(metadata()),
    )
        .prop_map(
            |(task_id, context_id, artifact, append, last_chunk, metadata)| {
                TaskArtifactUpdateEvent {
                    task_id,
                    context_id,
                    artifact,
                    append,
                    last_chunk,
                    metadata,
                }
            },
        )
}

pub(crate) fn send_message_response() -> impl Strategy<Value = SendMessageResponse> {
    prop_oneof![
        task().prop_map(SendMessageResponse::Task),
        message().prop_map(SendMessageResponse::Message),
    ]
}

pub(crate) fn stream_response() -> BoxedStrategy<StreamResponse> {
    prop_oneof![
        task().prop_map(StreamResponse::Task),
        message().prop_map(StreamResponse::Message),
        status_update().prop_map(StreamResponse::StatusUpdate),
        artifact_update().prop_map(StreamResponse::ArtifactUpdate),
    ]
    .boxed()
}
