//! Messages and their parts: [`Message`], [`Part`], [`PartContent`] (reference §3.1, §3.2).

use crate::de::nullable;
use crate::enums::Role;
use base64::Engine;
use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::fmt;

/// A free-form JSON object (`google.protobuf.Struct`).
pub type Metadata = Map<String, Value>;

/// One unit of communication between client and agent.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Message {
    /// Sender-created identifier; required and non-empty.
    #[serde(deserialize_with = "nullable")]
    #[serde(alias = "message_id")]
    pub message_id: String,
    /// The conversation this message belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(alias = "context_id")]
    pub context_id: Option<String>,
    /// The task this message continues, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(alias = "task_id")]
    pub task_id: Option<String>,
    /// Who sent it.
    #[serde(deserialize_with = "nullable")]
    pub role: Role,
    /// The content; at least one part is required.
    #[serde(deserialize_with = "nullable")]
    pub parts: Vec<Part>,
    /// Free-form metadata.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// URIs of extensions present in or contributing to this message.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "nullable")]
    pub extensions: Vec<String>,
    /// Related earlier tasks (refinements list the task they refine).
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "nullable")]
    #[serde(alias = "reference_task_ids")]
    pub reference_task_ids: Vec<String>,
}

impl Message {
    /// A user message with one text part.
    pub fn user_text(message_id: impl Into<String>, text: impl Into<String>) -> Self {
        Message {
            message_id: message_id.into(),
            role: Role::User,
            parts: vec![Part::text(text)],
            ..Default::default()
        }
    }

    /// An agent message with one text part.
    pub fn agent_text(message_id: impl Into<String>, text: impl Into<String>) -> Self {
        Message {
            message_id: message_id.into(),
            role: Role::Agent,
            parts: vec![Part::text(text)],
            ..Default::default()
        }
    }

    /// The concatenated text of all text parts (data, not instructions).
    pub fn text(&self) -> String {
        let mut out = String::new();
        for p in &self.parts {
            if let PartContent::Text(t) = &p.content {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(t);
            }
        }
        out
    }
}

/// The content of a [`Part`]: exactly one of `text`, `raw`, `url` or `data` (proto `oneof content`).
#[derive(Debug, Clone, PartialEq)]
pub enum PartContent {
    /// Plain text.
    Text(String),
    /// Inline bytes (base64 on the wire).
    Raw(Vec<u8>),
    /// A reference to content elsewhere.
    Url(String),
    /// Structured data: any JSON value.
    Data(Value),
}

impl Default for PartContent {
    fn default() -> Self {
        PartContent::Text(String::new())
    }
}

/// A piece of content with optional `mediaType`, `filename` and `metadata`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Part {
    /// Which content this part carries.
    pub content: PartContent,
    /// Free-form metadata.
    pub metadata: Option<Metadata>,
    /// A file name hint such as `report.pdf`.
    pub filename: Option<String>,
    /// The media type such as `text/plain`.
    pub media_type: Option<String>,
}

impl Part {
    /// A text part.
    pub fn text(t: impl Into<String>) -> Self {
        Part {
            content: PartContent::Text(t.into()),
            ..Default::default()
        }
    }

    /// An inline-bytes part.
    pub fn raw(bytes: impl Into<Vec<u8>>) -> Self {
        Part {
            content: PartContent::Raw(bytes.into()),
            ..Default::default()
        }
    }

    /// A by-reference part.
    pub fn url(u: impl Into<String>) -> Self {
        Part {
            content: PartContent::Url(u.into()),
            ..Default::default()
        }
    }

    /// A structured-data part.
    pub fn data(v: Value) -> Self {
        Part {
            content: PartContent::Data(v),
            ..Default::default()
        }
    }

    /// Set the media type.
    pub fn with_media_type(mut self, m: impl Into<String>) -> Self {
        self.media_type = Some(m.into());
        self
    }

    /// Set the file name.
    pub fn with_filename(mut self, f: impl Into<String>) -> Self {
        self.filename = Some(f.into());
        self
    }

    /// The bytes this part contributes to an artifact: UTF-8 of text, decoded raw bytes, the
    /// canonical JSON of data. A `url` part contributes nothing inline (it is fetched).
    pub fn inline_bytes(&self) -> Option<std::borrow::Cow<'_, [u8]>> {
        use std::borrow::Cow;
        match &self.content {
            PartContent::Text(t) => Some(Cow::Borrowed(t.as_bytes())),
            PartContent::Raw(b) => Some(Cow::Borrowed(b.as_slice())),
            PartContent::Data(v) => serde_json::to_vec(v).ok().map(Cow::Owned),
            PartContent::Url(_) => None,
        }
    }
}

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        match &self.content {
            PartContent::Text(t) => m.serialize_entry("text", t)?,
            PartContent::Raw(b) => {
                m.serialize_entry("raw", &base64::engine::general_purpose::STANDARD.encode(b))?
            }
            PartContent::Url(u) => m.serialize_entry("url", u)?,
            PartContent::Data(v) => m.serialize_entry("data", v)?,
        }
        if let Some(md) = &self.metadata {
            m.serialize_entry("metadata", md)?;
        }
        if let Some(f) = &self.filename {
            m.serialize_entry("filename", f)?;
        }
        if let Some(t) = &self.media_type {
            m.serialize_entry("mediaType", t)?;
        }
        m.end()
    }
}

/// Decode base64 leniently: standard or URL-safe alphabet, padded or not (ProtoJSON `bytes`).
pub fn decode_base64_lenient(s: &str) -> Result<Vec<u8>, base64::DecodeError> {
    use base64::engine::DecodePaddingMode;
    use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
    const CFG: GeneralPurposeConfig =
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
    const STD: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::STANDARD, CFG);
    const URL: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::URL_SAFE, CFG);
    // No pre-scan for `-`/`_`: the standard alphabet first (the common case), the URL-safe one
    // only when that fails. A string mixing both alphabets is invalid either way.
    match STD.decode(s) {
        Ok(v) => Ok(v),
        Err(e) => URL.decode(s).map_err(|_| e),
    }
}

/// A string field borrowed from the input when it has no escapes (always the case for base64),
/// so decoding a `raw` part does not copy its text first.
pub(crate) struct StrField<'de>(pub(crate) std::borrow::Cow<'de, str>);

impl<'de> Deserialize<'de> for StrField<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = StrField<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(StrField(std::borrow::Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(StrField(std::borrow::Cow::Owned(s.to_owned())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Self::Value, E> {
                Ok(StrField(std::borrow::Cow::Owned(s)))
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Part;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a Part object with one of text, raw, url or data")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Part, A::Error> {
                let mut content: Option<PartContent> = None;
                let mut part = Part::default();
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    // The first content key wins; conformance reports any second one.
                    let c = match key.as_ref() {
                        "text" => map.next_value::<Option<String>>()?.map(PartContent::Text),
                        "raw" => match map.next_value::<Option<StrField<'de>>>()? {
                            Some(s) => {
                                Some(PartContent::Raw(decode_base64_lenient(&s.0).map_err(
                                    |e| de::Error::custom(format!("raw: invalid base64: {e}")),
                                )?))
                            }
                            None => None,
                        },
                        "url" => map.next_value::<Option<String>>()?.map(PartContent::Url),
                        "data" => Some(PartContent::Data(map.next_value::<Value>()?)),
                        "metadata" => {
                            part.metadata = map.next_value()?;
                            None
                        }
                        "filename" => {
                            part.filename = map.next_value()?;
                            None
                        }
                        "mediaType" | "media_type" => {
                            part.media_type = map.next_value()?;
                            None
                        }
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                            None
                        }
                    };
                    if content.is_none() {
                        content = c;
                    }
                }
                part.content = content
                    .ok_or_else(|| de::Error::custom("part has none of text, raw, url or data"))?;
                Ok(part)
            }
        }
        d.deserialize_map(V)
    }
}
