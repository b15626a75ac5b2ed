//! Names an agent chooses (DLG-UNTRUSTED-02): artifact ids, artifact names and part filenames
//! never decide where the delegator writes.
//!
//! How the harness observes a write outside the store: every hostile name a catalog case gives
//! (`../` runs, absolute paths, NUL bytes, very long names) carries the trap marker
//! [`TRAP_MARKER`]. A delegator that lets such a name decide a path creates an entry whose name
//! holds the marker somewhere above its store directory (or, for an absolute name, at the root
//! or in the temporary directory). After the delegator stopped, and before the store is
//! removed, the harness lists each ancestor directory of the store and the temporary directory
//! (not recursively) for entries holding the marker that were modified since the case began
//! ([`trap_hits`]); any such entry is a write outside the store. The reported artifact paths
//! (`done.artifacts[].path`, the snapshot records' `artifacts[].path`) must lie under the store
//! directory as well.

use super::evidence::*;
use super::registry::{Check, fail};
use a2a_driver_contract::FromDelegator;
use a2a_mock_agents::Event;
use serde_json::Value;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The marker every hostile agent-chosen name of a case carries, so that a file or directory
/// such a name created outside the store can be found by name.
pub const TRAP_MARKER: &str = "a2a-trap";

/// At most this many entries of one directory are looked at (a huge `/tmp` stays cheap).
const MAX_ENTRIES_PER_DIR: usize = 20_000;

/// Entries holding [`TRAP_MARKER`] in their name, modified at or after `since` (less two
/// seconds of clock slack), in the ancestors of `store` and in the temporary directory: what
/// agent-chosen names created outside the store during the case. Links are not followed.
pub fn trap_hits(store: &Path, since: SystemTime) -> Vec<PathBuf> {
    let since = since.checked_sub(Duration::from_secs(2)).unwrap_or(since);
    let mut dirs: Vec<PathBuf> = store.ancestors().skip(1).map(Path::to_path_buf).collect();
    let tmp = std::env::temp_dir();
    if !dirs.contains(&tmp) {
        dirs.push(tmp);
    }
    let mut hits = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.take(MAX_ENTRIES_PER_DIR).flatten() {
            if !e.file_name().to_string_lossy().contains(TRAP_MARKER) {
                continue;
            }
            let fresh = std::fs::symlink_metadata(e.path())
                .and_then(|m| m.modified())
                .is_ok_and(|t| t >= since);
            if fresh {
                hits.push(e.path());
            }
        }
    }
    hits.sort();
    hits.dedup();
    hits
}

/// A name that could steer a file path: a path separator, a `..`, a leading dot, a NUL or
/// other control character, or more than 200 bytes.
fn hostile(name: &str) -> bool {
    name.contains(['/', '\\'])
        || name.contains("..")
        || name.starts_with('.')
        || name.chars().any(char::is_control)
        || name.len() > 200
}

/// The names `agent`'s script chooses for artifacts (`artifact_id`, `name`) and parts
/// (`filename`), in every step.
fn scripted_names(ev: &Evidence, agent: &str) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(o) => {
                for (k, x) in o {
                    if matches!(k.as_str(), "artifact_id" | "name" | "filename")
                        && let Some(s) = x.as_str()
                    {
                        out.push(s.to_string());
                    }
                    walk(x, out);
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Some(a) = agent_spec(ev, agent) {
        for r in &a.rules {
            if let Ok(steps) = serde_json::to_value(&r.steps) {
                walk(&steps, &mut out);
            }
        }
    }
    out
}

/// `p` made absolute (against the current directory, as the harness reads reported files) and
/// with `.` and `..` resolved lexically.
fn normalized(p: &Path) -> PathBuf {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    };
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// True when `path` lies under `store`: lexically, and (when both exist) once links are
/// resolved.
fn inside(path: &str, store: &Path) -> bool {
    let p = Path::new(path);
    if !normalized(p).starts_with(normalized(store)) {
        return false;
    }
    match (std::fs::canonicalize(p), std::fs::canonicalize(store)) {
        (Ok(p), Ok(s)) => p.starts_with(s),
        _ => true,
    }
}

/// DLG-UNTRUSTED-02: no reported artifact path (in a `done` or a snapshot record) lies outside
/// the store directory, and no entry carrying the trap marker appeared outside it
/// ([`trap_hits`]). The situation: an agent that scripts hostile names (see [`hostile`]) for
/// artifacts or parts delivered an artifact of a task it created for a delegation.
pub(super) fn agent_names_never_steer_writes(ev: &Evidence) -> Check {
    if let Some(hit) = ev.trap_hits.first() {
        return fail(
            format!(
                "nothing written outside the store directory {} (agent-chosen names carry \"{TRAP_MARKER}\")",
                ev.store_dir.display()
            ),
            format!(
                "{} created outside it{}",
                hit.display(),
                match ev.trap_hits.len() {
                    1 => String::new(),
                    n => format!(" (and {} more)", n - 1),
                }
            ),
            vec![],
        );
    }
    let mut reported: Vec<(String, String)> = Vec::new();
    for o in ev.outcomes.values() {
        if let FromDelegator::Done(d) = o {
            for a in &d.artifacts {
                reported.push((format!("{}'s done", d.id), a.path.clone()));
            }
        }
    }
    for r in snapshot_records(ev) {
        for a in r.artifacts() {
            if let Some(p) = a.get("path").and_then(Value::as_str) {
                reported.push((
                    format!("the snapshot record of {}", r.id().unwrap_or("?")),
                    p.to_string(),
                ));
            }
        }
    }
    for (whose, path) in &reported {
        if !inside(path, ev.store_dir) {
            return fail(
                format!(
                    "every artifact file under the store directory {}",
                    ev.store_dir.display()
                ),
                format!("{whose} reports the file \"{path}\""),
                vec![],
            );
        }
    }
    // The situation: hostile names reached the delegator in an artifact of its task.
    let mut any = false;
    for d in &ev.scenario.delegations {
        for (task, agent) in tasks_of(ev, &d.id) {
            if !scripted_names(ev, &agent).iter().any(|n| hostile(n)) {
                continue;
            }
            let first_chunk = ev.journal.iter().find_map(|e| match &e.event {
                Event::ArtifactChunk { task_id, .. } if *task_id == task => Some(e.seq),
                _ => None,
            });
            if first_chunk.is_some_and(|c| {
                delivered_between(ev.journal, &task, c.saturating_sub(1), u64::MAX).is_some()
            }) {
                any = true;
            }
        }
    }
    Check::held_if_seen(any)
}

#[cfg(test)]
mod tests {
    use super::super::registry::Check;
    use super::*;
    use crate::rules::test_support::*;
    use serde_json::json;

    /// A completed delegation whose agent named its artifact `../../a2a-trap-id`.
    fn hostile_case() -> Case {
        let mut c = good("");
        c.script(
            "a",
            json!({"steps": [
                {"do": "artifact", "artifact_id": "../../a2a-trap-id", "name": "/a2a-trap-abs",
                 "parts": [{"text": "x", "filename": "../../../a2a-trap-file"}]},
                {"do": "state", "state": "TASK_STATE_COMPLETED"},
            ]}),
        );
        // The artifact's chunk, delivered by the poll that follows it in `good`.
        let at =
            c.j.entries
                .iter()
                .position(|e| matches!(e.event, Event::ArtifactSent { .. }))
                .unwrap_or(0);
        c.j.entries.insert(
            at,
            a2a_mock_agents::Entry {
                seq: 0,
                at_us: 0,
                agent: "a".into(),
                event: Event::ArtifactChunk {
                    task_id: "t1".into(),
                    artifact_id: "../../a2a-trap-id".into(),
                    append: false,
                    last_chunk: true,
                    bytes: 10,
                },
            },
        );
        for (i, e) in c.j.entries.iter_mut().enumerate() {
            e.seq = i as u64 + 1;
        }
        c
    }

    #[test]
    fn untrusted_02_a_safe_delegator_passes_and_escapes_fail() {
        let c = hostile_case();
        assert_eq!(c.check(checker("DLG-UNTRUSTED-02")), Check::Pass);
        // A trap entry above the store.
        let mut c = hostile_case();
        c.trap_hits.push("/work/a2a-trap-id".into());
        assert!(fails(c.check(checker("DLG-UNTRUSTED-02"))));
        // A reported path outside the store, lexically.
        let mut c = hostile_case();
        if let Some(FromDelegator::Done(d)) = c.outcomes.get_mut("d1") {
            d.artifacts[0].path = "/store/artifacts/../../a2a-trap-id".into();
        }
        assert!(fails(c.check(checker("DLG-UNTRUSTED-02"))));
        // The same in a snapshot record.
        let mut c = hostile_case();
        c.snapshot =
            Some(json!({"records": [{"id": "d1", "artifacts": [{"path": "/elsewhere/x"}]}]}));
        assert!(fails(c.check(checker("DLG-UNTRUSTED-02"))));
        // A path with `..` that stays inside is fine: a delegator may lay out its store freely.
        let mut c = hostile_case();
        if let Some(FromDelegator::Done(d)) = c.outcomes.get_mut("d1") {
            d.artifacts[0].path = "/store/artifacts/d1/../d1/a2a-trap-id-3f2a".into();
        }
        assert_eq!(c.check(checker("DLG-UNTRUSTED-02")), Check::Pass);
    }

    #[test]
    fn untrusted_02_without_hostile_names_nothing_is_judged() {
        let c = good("");
        assert_eq!(c.check(checker("DLG-UNTRUSTED-02")), Check::NotApplicable);
        // Refusing the artifact (FAILED, nothing reported) is no escape either.
        let mut c = hostile_case();
        c.done("d1", "FAILED", json!([]));
        assert_eq!(c.check(checker("DLG-UNTRUSTED-02")), Check::Pass);
    }

    #[test]
    fn hostile_names() {
        for n in [
            "../x",
            "/etc/x",
            "a\\b",
            "a\0b",
            ".hidden",
            &"x".repeat(300),
        ] {
            assert!(hostile(n), "{n:?}");
        }
        assert!(!hostile("artifact-1"));
        assert!(!hostile("report.v2.json"));
    }

    #[test]
    fn trap_hits_finds_fresh_marked_entries_above_the_store_only() {
        let root = tempfile::tempdir().expect("temp dir");
        let store = root.path().join("run").join("case");
        std::fs::create_dir_all(&store).expect("store");
        let before = SystemTime::now();
        std::fs::write(store.join("a2a-trap-inside"), b"x").expect("inside");
        std::fs::write(root.path().join("run").join("a2a-trap-above"), b"x").expect("above");
        std::fs::write(root.path().join("run").join("unrelated"), b"x").expect("unrelated");
        let hits = trap_hits(&store, before);
        assert_eq!(hits, vec![root.path().join("run").join("a2a-trap-above")]);
        // An entry older than the case (a previous run's) is not this case's doing.
        let later = SystemTime::now() + Duration::from_secs(60);
        assert!(trap_hits(&store, later).is_empty());
    }
}
