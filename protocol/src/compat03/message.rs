//! Messages and parts.

use serde_json::{Map, Value};

use super::errors::*;
use super::helpers::*;

pub(super) fn message_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    expect_kind(src, path, "message")?;
    rebuild(src, path, |k, val, p| {
        Ok(match k {
            "kind" => Field::Drop,
            "role" => Field::Set(role_value(val, p, true)?),
            "parts" => Field::Set(map_array(val, p, part_to_v1)?),
            _ => Field::Keep,
        })
    })
    .map(Value::Object)
}

pub(super) fn message_to_v03(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let out = rebuild(src, path, |k, val, p| {
        Ok(match k {
            "kind" => Field::Drop,
            "role" => Field::Set(role_value(val, p, false)?),
            "parts" => Field::Set(map_array(val, p, part_to_v03)?),
            _ => Field::Keep,
        })
    })?;
    Ok(with_kind(out, "message"))
}

pub(super) fn part_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let kind_path = key_path(path, "kind");
    let kind = match get(src, "kind") {
        Some(k) => str_at(k, &kind_path)?,
        None if present(src, "file") => "file",
        None if present(src, "text") => "text",
        None if present(src, "data") => "data",
        // Already a 1.0 file part: nothing to rename.
        None if present(src, "raw") || present(src, "url") => return copy_object(v, path),
        None => {
            return Err(err(
                path,
                AdaptErrorKind::NoContent("kind, text, file, data"),
            ));
        }
    };
    match kind {
        "text" | "data" => {
            if !present(src, kind) {
                return Err(err(&key_path(path, kind), AdaptErrorKind::Missing));
            }
            rebuild(src, path, |k, _, _| {
                Ok(if k == "kind" {
                    Field::Drop
                } else {
                    Field::Keep
                })
            })
            .map(Value::Object)
        }
        "file" => {
            let file_path = key_path(path, "file");
            let file = get(src, "file").ok_or_else(|| err(&file_path, AdaptErrorKind::Missing))?;
            let file = obj(file, &file_path)?;
            let mut out = rebuild(src, path, |k, _, _| {
                Ok(match k {
                    "kind" | "file" => Field::Drop,
                    _ => Field::Keep,
                })
            })?;
            match (get(file, "bytes"), get(file, "uri")) {
                (Some(_), Some(_)) => {
                    return Err(err(
                        &file_path,
                        AdaptErrorKind::Ambiguous("bytes, uri".into()),
                    ));
                }
                (None, None) => {
                    return Err(err(&file_path, AdaptErrorKind::NoContent("bytes, uri")));
                }
                _ => {}
            }
            let file_fields = rebuild(file, &file_path, |k, val, _| {
                Ok(match k {
                    "bytes" => Field::Rename("raw", val.clone()),
                    "uri" => Field::Rename("url", val.clone()),
                    "mimeType" => Field::Rename("mediaType", val.clone()),
                    "name" => Field::Rename("filename", val.clone()),
                    _ => Field::Keep,
                })
            })?;
            for (k, val) in file_fields {
                if matches!(k.as_str(), "raw" | "url" | "mediaType" | "filename") {
                    out.insert(k, val);
                } else {
                    // Unknown keys inside `file` have no 1.0 home except the part itself.
                    out.entry(k).or_insert(val);
                }
            }
            Ok(Value::Object(out))
        }
        other => Err(err(
            &kind_path,
            AdaptErrorKind::UnknownKind(other.to_owned()),
        )),
    }
}

pub(super) const PART_CONTENT: [&str; 4] = ["text", "raw", "url", "data"];

pub(super) fn part_to_v03(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let contents: Vec<&str> = PART_CONTENT
        .iter()
        .copied()
        .filter(|k| present(src, k))
        .collect();
    let content = match contents.as_slice() {
        [one] => *one,
        [] => return Err(err(path, AdaptErrorKind::NoContent("text, raw, url, data"))),
        many => return Err(err(path, AdaptErrorKind::Ambiguous(many.join(", ")))),
    };
    let mut out = rebuild(src, path, |k, _, _| {
        Ok(match k {
            "kind" | "text" | "raw" | "url" | "data" | "mediaType" | "filename" => Field::Drop,
            _ => Field::Keep,
        })
    })?;
    let value = get(src, content).cloned().unwrap_or(Value::Null);
    let kind = match content {
        "text" => {
            out.insert("text".into(), value);
            "text"
        }
        "data" => {
            let data = if value.is_object() {
                value
            } else {
                let mut wrap = Map::new();
                wrap.insert("value".into(), value);
                Value::Object(wrap)
            };
            out.insert("data".into(), data);
            "data"
        }
        _ => {
            let mut file = Map::new();
            let key = if content == "raw" { "bytes" } else { "uri" };
            file.insert(key.into(), value);
            if let Some(m) = get(src, "mediaType") {
                file.insert("mimeType".into(), m.clone());
            }
            if let Some(n) = get(src, "filename") {
                file.insert("name".into(), n.clone());
            }
            out.insert("file".into(), Value::Object(file));
            "file"
        }
    };
    Ok(with_kind(out, kind))
}
