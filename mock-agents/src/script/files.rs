//! Part contents kept in files beside a script (`text_file`, `raw_file`, `data_file` of a
//! [`PartSpec`]): read when the script loads, each error naming the script, the line and the
//! field.

use super::load::{Seg, locate, path_text};
use super::{Base64Bytes, NetworkSpec, PartSpec, ScriptError, ScriptStep};
use std::path::{Component, Path};

/// Whether a part file's path is one a script may name: relative, no `..`, not empty.
fn check_relative(p: &str) -> Result<(), String> {
    let path = Path::new(p);
    if p.is_empty() {
        return Err("the path is empty".into());
    }
    if path
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(format!(
            "{p:?}: a part file is named relative to the script's directory, without `..` (it stays beside the script)"
        ));
    }
    Ok(())
}

/// Replace the part's `*_file` by the content read; `Err` says why (the path included).
fn resolve_one(
    part: &mut PartSpec,
    read: &mut dyn FnMut(&str) -> Result<Vec<u8>, String>,
) -> Result<(), (&'static str, String)> {
    let Some((field, rel)) = part.file_ref() else {
        return Ok(());
    };
    let rel = rel.to_string();
    check_relative(&rel).map_err(|m| (field, m))?;
    let bytes = read(&rel).map_err(|m| (field, format!("{rel}: {m}")))?;
    match field {
        "text_file" => {
            let t = String::from_utf8(bytes).map_err(|e| {
                (
                    field,
                    format!(
                        "{rel}: not UTF-8 at byte {} (a text part is UTF-8; use raw_file for bytes)",
                        e.utf8_error().valid_up_to()
                    ),
                )
            })?;
            part.text_file = None;
            part.text = Some(t);
        }
        "raw_file" => {
            part.raw_file = None;
            part.raw_base64 = Some(Base64Bytes(bytes));
        }
        _ => {
            let v: serde_json::Value = serde_json::from_slice(&bytes)
                .map_err(|e| (field, format!("{rel}: not one JSON value: {e}")))?;
            part.data_file = None;
            part.data = Some(v);
        }
    }
    Ok(())
}

impl NetworkSpec {
    /// Whether any part names a file (`text_file`, `raw_file`, `data_file`).
    pub fn has_part_files(&self) -> bool {
        self.agents.iter().any(|a| {
            a.rules.iter().any(|r| {
                r.steps
                    .iter()
                    .any(|s| step_parts(s).iter().any(|p| p.file_ref().is_some()))
            })
        })
    }

    /// Read every part file (`text_file`, `raw_file`, `data_file`) through `read` (given the
    /// path as written, relative to the script's directory) and put its content in the part.
    ///
    /// `file` and `text` are the script's name and TOML text, `prefix` the keys above the
    /// network in that text (`["network"]` in a scenario, none in a script): an error names the
    /// file, the line and column of the field, the field's path and the part file.
    pub fn resolve_part_files(
        &mut self,
        file: &str,
        text: &str,
        prefix: &[&str],
        read: &mut dyn FnMut(&str) -> Result<Vec<u8>, String>,
    ) -> Result<(), ScriptError> {
        for (ai, a) in self.agents.iter_mut().enumerate() {
            for (ri, r) in a.rules.iter_mut().enumerate() {
                for (si, s) in r.steps.iter_mut().enumerate() {
                    for (mut at, part) in step_parts_mut(s) {
                        if let Err((field, message)) = resolve_one(part, read) {
                            let mut path: Vec<Seg> =
                                prefix.iter().map(|k| Seg::Key(k.to_string())).collect();
                            path.extend([
                                Seg::Key("agent".into()),
                                Seg::Index(ai),
                                Seg::Key("rule".into()),
                                Seg::Index(ri),
                                Seg::Key("steps".into()),
                                Seg::Index(si),
                            ]);
                            path.append(&mut at);
                            path.push(Seg::Key(field.into()));
                            let (line, column) = locate(text, &path);
                            return Err(ScriptError::Parse {
                                file: file.to_string(),
                                line,
                                column,
                                message: format!("{}: {message}", path_text(&path)),
                            });
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// The parts of a step.
fn step_parts(s: &ScriptStep) -> Vec<&PartSpec> {
    match s {
        ScriptStep::Reply { parts, .. } | ScriptStep::State { parts, .. } => parts.iter().collect(),
        ScriptStep::Artifact { parts, chunks, .. } => {
            parts.iter().chain(chunks.iter().flatten()).collect()
        }
        _ => Vec::new(),
    }
}

/// The parts of a step with their path below the step (`parts[i]`, `chunks[c][i]`).
fn step_parts_mut(s: &mut ScriptStep) -> Vec<(Vec<Seg>, &mut PartSpec)> {
    let mut out = Vec::new();
    match s {
        ScriptStep::Reply { parts, .. } | ScriptStep::State { parts, .. } => {
            for (i, p) in parts.iter_mut().enumerate() {
                out.push((vec![Seg::Key("parts".into()), Seg::Index(i)], p));
            }
        }
        ScriptStep::Artifact { parts, chunks, .. } => {
            for (i, p) in parts.iter_mut().enumerate() {
                out.push((vec![Seg::Key("parts".into()), Seg::Index(i)], p));
            }
            for (c, list) in chunks.iter_mut().enumerate() {
                for (i, p) in list.iter_mut().enumerate() {
                    out.push((
                        vec![Seg::Key("chunks".into()), Seg::Index(c), Seg::Index(i)],
                        p,
                    ));
                }
            }
        }
        _ => {}
    }
    out
}

/// A reader of part files on disk, relative to `dir` (a script's directory).
pub fn read_beside(dir: &Path) -> impl FnMut(&str) -> Result<Vec<u8>, String> + '_ {
    move |rel| std::fs::read(dir.join(rel)).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = "[[agent]]\nname = \"a\"\n[[agent.rule]]\nsteps = [\n  { do = \"artifact\", chunks = [[{ text = \"x\" }], [{ raw_file = \"c.d/1.bin\" }]] },\n]\n";

    #[test]
    fn part_files_are_read_and_a_missing_one_is_named_with_line_and_field() {
        let mut spec = NetworkSpec::from_toml("s.toml", SCRIPT).unwrap();
        assert!(spec.has_part_files());
        let mut ok = |p: &str| {
            assert_eq!(p, "c.d/1.bin");
            Ok(vec![0xe2, 0x82])
        };
        spec.resolve_part_files("s.toml", SCRIPT, &[], &mut ok)
            .unwrap();
        assert!(!spec.has_part_files());
        match &spec.agents[0].rules[0].steps[0] {
            ScriptStep::Artifact { chunks, .. } => {
                assert_eq!(chunks[1][0].raw_base64, Some(Base64Bytes(vec![0xe2, 0x82])));
            }
            other => panic!("{other:?}"),
        }
        let mut spec = NetworkSpec::from_toml("s.toml", SCRIPT).unwrap();
        let mut missing = |_: &str| Err("No such file or directory".to_string());
        let err = spec
            .resolve_part_files("s.toml", SCRIPT, &[], &mut missing)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "s.toml:5:64: agent[0].rule[0].steps[0].chunks[1][0].raw_file: c.d/1.bin: No such file or directory"
        );
    }

    #[test]
    fn part_files_stay_beside_the_script_and_text_must_be_utf8() {
        for (part, says) in [
            ("raw_file = \"../x.bin\"", "without `..`"),
            ("raw_file = \"/etc/passwd\"", "without `..`"),
            ("text_file = \"t.txt\"", "not UTF-8 at byte 1"),
            ("data_file = \"t.txt\"", "not one JSON value"),
        ] {
            let text = SCRIPT.replace("raw_file = \"c.d/1.bin\"", part);
            let mut spec = NetworkSpec::from_toml("s.toml", &text).unwrap();
            let mut read = |_: &str| Ok(vec![b'a', 0xff]);
            let err = spec
                .resolve_part_files("s.toml", &text, &[], &mut read)
                .unwrap_err()
                .to_string();
            assert!(err.contains(says), "{part}: {err}");
            assert!(err.starts_with("s.toml:5:"), "{err}");
        }
    }
}
