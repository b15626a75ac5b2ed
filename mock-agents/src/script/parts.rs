//! Literal parts in scripts ([`PartSpec`]): text, raw bytes (a UTF-8 literal or base64), an
//! external url or a data value, with `filename`, `mediaType` and `metadata`.

use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One literal part: exactly one of `text`, `raw`, `raw_base64`, `url`, `data`, `text_file`,
/// `raw_file`, `data_file`, plus optional `filename`, `media_type` and `metadata` (checked when
/// the script loads).
///
/// The `*_file` fields name a file beside the script (a path relative to the script's
/// directory, such as `case.d/artifact-1.chunk-1.part-1.bin`; no `..`, not absolute) whose
/// bytes are the part's content: UTF-8 text, raw bytes, or one JSON value. They are read when
/// the script loads ([`crate::NetworkSpec::resolve_part_files`]) and become `text`,
/// `raw_base64` or `data`; `scenario from-journal` writes them for recorded bytes too long to
/// sit in the TOML.
///
/// ```toml
/// parts = [
///   { text = "Generated text content" },
///   { raw = "tck", filename = "output.txt", media_type = "text/plain" },
///   { raw_base64 = "iVBORw0KGgo=", filename = "in.png", media_type = "image/png" },
///   { url = "https://example.com/output.txt", filename = "output.txt" },
///   { data = { key = "value", count = 42 }, metadata = { source = "script" } },
/// ]
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PartSpec {
    /// A `text` part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A `raw` part whose bytes are this UTF-8 text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// A `raw` part whose bytes are this base64 (standard alphabet; padding optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_base64: Option<Base64Bytes>,
    /// A `url` part (a file by reference).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// A `data` part holding this value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// A `text` part whose text is this file's content (UTF-8), relative to the script.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_file: Option<String>,
    /// A `raw` part whose bytes are this file's content, relative to the script.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_file: Option<String>,
    /// A `data` part whose value is this file's content (one JSON value), relative to the
    /// script.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_file: Option<String>,
    /// The part's `filename`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// The part's `mediaType`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// The part's `metadata`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

impl PartSpec {
    /// A text part.
    pub fn text(t: &str) -> Self {
        PartSpec {
            text: Some(t.into()),
            ..Default::default()
        }
    }

    /// A raw part with these bytes.
    pub fn raw(bytes: impl Into<Vec<u8>>) -> Self {
        PartSpec {
            raw_base64: Some(Base64Bytes(bytes.into())),
            ..Default::default()
        }
    }

    /// A url part.
    pub fn url(u: &str) -> Self {
        PartSpec {
            url: Some(u.into()),
            ..Default::default()
        }
    }

    /// A data part.
    pub fn data(v: Value) -> Self {
        PartSpec {
            data: Some(v),
            ..Default::default()
        }
    }

    /// Set `filename`.
    pub fn filename(mut self, f: &str) -> Self {
        self.filename = Some(f.into());
        self
    }

    /// Set `mediaType`.
    pub fn media_type(mut self, m: &str) -> Self {
        self.media_type = Some(m.into());
        self
    }

    /// Add a `metadata` entry.
    pub fn metadata(mut self, key: &str, value: Value) -> Self {
        self.metadata
            .get_or_insert_with(Map::new)
            .insert(key.into(), value);
        self
    }

    /// The `*_file` field set, if any: (field name, path).
    pub fn file_ref(&self) -> Option<(&'static str, &str)> {
        [
            ("text_file", &self.text_file),
            ("raw_file", &self.raw_file),
            ("data_file", &self.data_file),
        ]
        .into_iter()
        .find_map(|(k, v)| v.as_deref().map(|p| (k, p)))
    }

    /// How many content fields are set (a valid part has exactly one).
    pub(crate) fn contents(&self) -> usize {
        [
            self.text.is_some(),
            self.raw.is_some(),
            self.raw_base64.is_some(),
            self.url.is_some(),
            self.data.is_some(),
            self.text_file.is_some(),
            self.raw_file.is_some(),
            self.data_file.is_some(),
        ]
        .iter()
        .filter(|b| **b)
        .count()
    }

    /// The protocol part. A part with no content (which validation rejects) becomes an empty
    /// text part; with several, the first in field order wins; a `*_file` not resolved
    /// ([`crate::NetworkSpec::resolve_part_files`]) becomes a text part naming the file.
    pub(crate) fn to_part(&self) -> a2a_protocol::Part {
        let mut p = if let Some(t) = &self.text {
            a2a_protocol::Part::text(t.clone())
        } else if let Some(r) = &self.raw {
            a2a_protocol::Part::raw(r.as_bytes().to_vec())
        } else if let Some(b) = &self.raw_base64 {
            a2a_protocol::Part::raw(b.0.clone())
        } else if let Some(u) = &self.url {
            a2a_protocol::Part::url(u.clone())
        } else if let Some(d) = &self.data {
            a2a_protocol::Part::data(d.clone())
        } else if let Some(f) = self
            .text_file
            .as_ref()
            .or(self.raw_file.as_ref())
            .or(self.data_file.as_ref())
        {
            a2a_protocol::Part::text(format!("<unresolved part file {f}>"))
        } else {
            a2a_protocol::Part::text(String::new())
        };
        p.filename = self.filename.clone();
        p.media_type = self.media_type.clone();
        p.metadata = self.metadata.clone();
        p
    }
}

/// Bytes written in a script as base64 (decoded, and so checked, when the script loads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Base64Bytes(pub Vec<u8>);

impl Serialize for Base64Bytes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(&self.0))
    }
}

impl<'de> Deserialize<'de> for Base64Bytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        base64::engine::general_purpose::STANDARD_NO_PAD
            .decode(s.trim_end_matches('='))
            .map(Base64Bytes)
            .map_err(|e| serde::de::Error::custom(format!("invalid base64: {e}")))
    }
}

impl schemars::JsonSchema for Base64Bytes {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Base64Bytes".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "contentEncoding": "base64"})
    }
}
