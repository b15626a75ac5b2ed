//! Server-sent events (SSE) codec for the A2A streaming methods
//! (`SendStreamingMessage`, `SubscribeToTask`).
//!
//! A2A 1.0 streams are `text/event-stream` bodies in which every event carries one
//! `data:` payload holding a complete JSON-RPC response; comment lines (`:`) are
//! keep-alives and the stream ends when the server closes the response (there is
//! no sentinel event). This module provides:
//!
//! * [`SseDecoder`], an incremental decoder following the WHATWG
//!   "interpreting an event stream" rules. Bytes may be fed split at arbitrary
//!   positions (even inside a UTF-8 sequence or between the CR and LF of a
//!   CRLF); the decoded events do not depend on where the splits fall. Memory is
//!   bounded by a per-event byte limit whatever the input.
//! * [`SseDecoder::feed_bytes`], the same decoder over shared [`Bytes`] producing
//!   [`SseEventBytes`]: an event whose one `data:` line lies inside one received chunk is a
//!   slice of that chunk (no copy), and a data line split across chunks is assembled once,
//!   in the line buffer, which then becomes the event's data (one copy, no second one).
//! * [`encode_event`] and [`encode_comment`], which append well-formed frames to a
//!   byte buffer.
//!
//! Decoding rules: lines end in LF, CRLF or a lone CR; a UTF-8 byte order mark at
//! the very start of the stream is skipped; a line `field: value` has at most one
//! space stripped after the colon; a line without a colon is a field with an empty
//! value; a line starting with `:` is a comment; `data` values are joined with
//! `\n`; a blank line dispatches the event if at least one `data` line was seen
//! (otherwise it just resets the event type and `retry`); an `id` containing NUL is
//! ignored; `retry` is accepted only if it consists of ASCII digits; unknown fields
//! are ignored. Unlike a browser, which substitutes U+FFFD, a line that is not valid
//! UTF-8 is an error ([`SseError::InvalidUtf8`]).
//!
//! # Example
//!
//! ```
//! use a2a_protocol::sse::{SseDecoder, SseError, encode_comment, encode_event};
//!
//! let mut wire = Vec::new();
//! encode_comment(&mut wire, "ping");
//! encode_event(&mut wire, None, r#"{"jsonrpc":"2.0","id":"r-1","result":{}}"#);
//! encode_event(&mut wire, Some("error"), "line one\nline two");
//!
//! let mut decoder = SseDecoder::default();
//! let mut events = Vec::new();
//! for chunk in wire.chunks(5) {
//!     decoder.feed(chunk, &mut events)?;
//! }
//! assert!(!decoder.finish()?, "the stream ended between events");
//! assert_eq!(decoder.comments_seen(), 1);
//! assert_eq!(events.len(), 2);
//! assert_eq!(events[0].event, None);
//! assert_eq!(events[0].data, r#"{"jsonrpc":"2.0","id":"r-1","result":{}}"#);
//! assert_eq!(events[1].event.as_deref(), Some("error"));
//! assert_eq!(events[1].data, "line one\nline two");
//! # Ok::<(), SseError>(())
//! ```

use bytes::Bytes;
use std::mem;

/// One decoded server-sent event.
///
/// `event` and `data` belong to this event only. `id` follows the WHATWG
/// "last event ID" semantics: an `id:` field persists for all later events of the
/// stream until another `id:` field replaces it, so `id` is the value a client
/// would send as `Last-Event-ID` when reconnecting after this event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// Event type from the last `event:` field of this event; `None` when there was
    /// none or it was empty (the SSE default type, `message`).
    pub event: Option<String>,
    /// The values of all `data:` lines of this event, joined with `\n`.
    pub data: String,
    /// The stream's last event ID at the time this event was dispatched; `None` if
    /// no `id:` field was seen yet or the last one was empty.
    pub id: Option<String>,
    /// Reconnection time in milliseconds from the last valid `retry:` field of this
    /// event (one consisting only of ASCII digits that fits in a `u64`).
    pub retry: Option<u64>,
}

/// One decoded server-sent event whose data shares the received bytes
/// ([`SseDecoder::feed_bytes`]). Same fields and semantics as [`SseEvent`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEventBytes {
    /// Event type, as [`SseEvent::event`].
    pub event: Option<String>,
    /// The values of all `data:` lines joined with `\n`: valid UTF-8 (every line was
    /// checked), a slice of the received chunk when the event had one `data:` line inside
    /// one chunk.
    pub data: Bytes,
    /// Last event ID, as [`SseEvent::id`].
    pub id: Option<String>,
    /// Reconnection time, as [`SseEvent::retry`].
    pub retry: Option<u64>,
}

impl SseEventBytes {
    /// The same event with its data as a `String` (a copy).
    pub fn into_event(self) -> SseEvent {
        SseEvent {
            event: self.event,
            data: String::from_utf8_lossy(&self.data).into_owned(),
            id: self.id,
            retry: self.retry,
        }
    }
}

/// The data of the event being decoded, held where it already is when possible.
#[derive(Debug, Clone, Default)]
enum EventData {
    /// No `data:` line yet.
    #[default]
    Empty,
    /// One `data:` line, a slice of the received chunk.
    Shared(Bytes),
    /// One `data:` line assembled in the line buffer, taken over: the value starts at `start`.
    Line { buf: Vec<u8>, start: usize },
    /// Several `data:` lines joined with `\n` (or one copied out of a borrowed chunk).
    Joined(String),
}

impl EventData {
    fn bytes(&self) -> &[u8] {
        match self {
            EventData::Empty => &[],
            EventData::Shared(b) => b,
            EventData::Line { buf, start } => &buf[*start..],
            EventData::Joined(s) => s.as_bytes(),
        }
    }

    fn len(&self) -> usize {
        self.bytes().len()
    }

    /// Appends a further `data:` value (joined with `\n`).
    fn join(&mut self, value: &str) {
        let mut joined = match mem::take(self) {
            EventData::Joined(s) => s,
            other => String::from_utf8_lossy(other.bytes()).into_owned(),
        };
        joined.push('\n');
        joined.push_str(value);
        *self = EventData::Joined(joined);
    }
}

/// Where dispatched events go: strings ([`SseEvent`]) or shared bytes ([`SseEventBytes`]).
trait EventSink {
    fn emit(
        &mut self,
        event: Option<String>,
        data: EventData,
        id: Option<String>,
        retry: Option<u64>,
    );
}

impl EventSink for Vec<SseEvent> {
    fn emit(
        &mut self,
        event: Option<String>,
        data: EventData,
        id: Option<String>,
        retry: Option<u64>,
    ) {
        let data = match data {
            EventData::Empty => String::new(),
            EventData::Joined(s) => s,
            EventData::Line { mut buf, start } => {
                buf.drain(..start);
                String::from_utf8(buf)
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
            }
            EventData::Shared(b) => String::from_utf8_lossy(&b).into_owned(),
        };
        self.push(SseEvent {
            event,
            data,
            id,
            retry,
        });
    }
}

impl EventSink for Vec<SseEventBytes> {
    fn emit(
        &mut self,
        event: Option<String>,
        data: EventData,
        id: Option<String>,
        retry: Option<u64>,
    ) {
        let data = match data {
            EventData::Empty => Bytes::new(),
            EventData::Shared(b) => b,
            EventData::Line { buf, start } => Bytes::from(buf).slice(start..),
            EventData::Joined(s) => Bytes::from(s),
        };
        self.push(SseEventBytes {
            event,
            data,
            id,
            retry,
        });
    }
}

/// `part` (a subslice of `whole`) as a slice of the shared buffer; a copy if it is not one.
fn sub_bytes(whole: &Bytes, part: &[u8]) -> Bytes {
    let base = whole.as_ptr() as usize;
    let at = (part.as_ptr() as usize).wrapping_sub(base);
    if part.is_empty() {
        Bytes::new()
    } else if at <= whole.len() && part.len() <= whole.len() - at {
        whole.slice(at..at + part.len())
    } else {
        Bytes::copy_from_slice(part)
    }
}

/// A line to process: inside the received chunk, or assembled in the line buffer (which
/// `process_line` may take over as the event's data).
enum Line<'a> {
    Chunk(&'a [u8]),
    Buffered(Vec<u8>),
}

/// A fatal decoding error. After returning one, an [`SseDecoder`] is poisoned.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
pub enum SseError {
    /// The current event (the bytes of its field lines so far, including the line
    /// still being received) exceeded the decoder's `max_event_bytes`.
    #[error("SSE event exceeds the limit of {limit} bytes")]
    EventTooLarge {
        /// The configured limit (`max_event_bytes`).
        limit: usize,
    },
    /// A line is not valid UTF-8.
    #[error("SSE line {line} is not valid UTF-8")]
    InvalidUtf8 {
        /// Line number, counted from 1 across the whole stream.
        line: u64,
    },
}

/// The UTF-8 byte order mark, skipped once at the start of the stream.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];
/// `SseDecoder::bom` value once the start-of-stream BOM question is settled.
const BOM_DONE: u8 = 3;

/// Incremental, allocation-frugal SSE decoder.
///
/// Feed it the body bytes as they arrive with [`feed`](Self::feed) and call
/// [`finish`](Self::finish) when the response ends. Complete lines that lie wholly
/// inside one chunk are parsed in place; only a line split across chunks is
/// buffered, and each byte is scanned for line terminators exactly once. Buffers
/// are reused between events, so the steady state allocates only the strings of
/// the events it returns.
///
/// Memory is bounded: for the current event, the bytes of its complete field lines
/// plus the pending partial line may not exceed `max_event_bytes`. Exceeding it
/// returns [`SseError::EventTooLarge`] as soon as the pending bytes cross the limit
/// (a line without a terminator is never buffered beyond the limit). Comment lines
/// are not counted once complete, but a pending comment line is.
///
/// ```
/// use a2a_protocol::sse::{SseDecoder, SseError};
///
/// let mut decoder = SseDecoder::new(1024);
/// let mut events = Vec::new();
/// decoder.feed(b"data: {\"a\":", &mut events)?;
/// decoder.feed(b"1}\r", &mut events)?;
/// decoder.feed(b"\n\r\n", &mut events)?;
/// assert_eq!(events.len(), 1);
/// assert_eq!(events[0].data, "{\"a\":1}");
///
/// // A huge line without a newline fails once it crosses the limit.
/// let err = decoder.feed(&[b'x'; 2000], &mut events).unwrap_err();
/// assert_eq!(err, SseError::EventTooLarge { limit: 1024 });
/// # Ok::<(), SseError>(())
/// ```
#[derive(Debug, Clone)]
pub struct SseDecoder {
    max_event_bytes: usize,
    /// Pending partial line (never contains a line terminator).
    line: Vec<u8>,
    /// Bytes of the complete field lines of the current event.
    block_bytes: usize,
    /// Event type buffer.
    event_type: String,
    /// Data of the current event (values joined with `\n`, no trailing newline).
    data: EventData,
    /// Length of the last data line taken over from the line buffer: the capacity reserved
    /// for the next buffered line, so that assembling a large line does not grow (and copy)
    /// the buffer step by step.
    line_hint: usize,
    /// Whether the current event has at least one `data` line.
    data_seen: bool,
    /// Last event ID buffer (persists across events).
    last_id: String,
    /// `retry` of the current event.
    retry: Option<u64>,
    /// Number of lines completed so far.
    line_no: u64,
    /// 0..=2: BOM bytes matched and held at stream start; `BOM_DONE`: settled.
    bom: u8,
    /// The previous chunk ended in CR: a leading LF of the next chunk belongs to it.
    skip_lf: bool,
    comments: u64,
    error: Option<SseError>,
}

impl Default for SseDecoder {
    /// A decoder with [`SseDecoder::DEFAULT_MAX_EVENT_BYTES`].
    fn default() -> Self {
        Self::new(Self::DEFAULT_MAX_EVENT_BYTES)
    }
}

impl SseDecoder {
    /// Default per-event limit: 16 MiB.
    pub const DEFAULT_MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

    /// Creates a decoder for one stream, limiting each event (and any single line)
    /// to `max_event_bytes`. Allocates nothing until bytes arrive.
    pub fn new(max_event_bytes: usize) -> Self {
        Self {
            max_event_bytes,
            line: Vec::new(),
            block_bytes: 0,
            event_type: String::new(),
            data: EventData::Empty,
            line_hint: 0,
            data_seen: false,
            last_id: String::new(),
            retry: None,
            line_no: 0,
            bom: 0,
            skip_lf: false,
            comments: 0,
            error: None,
        }
    }

    /// Feed bytes split anywhere; every complete event is pushed to `out`. After an
    /// error the decoder is poisoned: further calls return the same error.
    ///
    /// Events completed before the error was detected (including earlier ones in
    /// the same chunk) are still pushed to `out`. The result for a given byte
    /// stream does not depend on how it is split into chunks; empty chunks are
    /// allowed.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if let Some(err) = &self.error {
            return Err(err.clone());
        }
        let result = self.feed_inner(chunk, None, out);
        if let Err(err) = &result {
            self.poison(err.clone());
        }
        result
    }

    /// [`feed`](Self::feed) for a chunk held in shared [`Bytes`]: the events are the same,
    /// with their data as [`Bytes`]. An event with one `data:` line that lies inside `chunk`
    /// is a slice of it (no copy); a line split across chunks is assembled once in the line
    /// buffer, which is then handed over as the data (no second copy). Errors and
    /// poisoning as for `feed`; the two may be mixed on one stream.
    pub fn feed_bytes(
        &mut self,
        chunk: &Bytes,
        out: &mut Vec<SseEventBytes>,
    ) -> Result<(), SseError> {
        if let Some(err) = &self.error {
            return Err(err.clone());
        }
        let result = self.feed_inner(chunk, Some(chunk), out);
        if let Err(err) = &result {
            self.poison(err.clone());
        }
        result
    }

    /// End of stream: a pending event with data that was not terminated by a blank
    /// line is discarded per the SSE spec; return whether incomplete bytes were
    /// pending (`Ok(true)` = truncated mid-event) so callers can report "stream
    /// reset mid-event".
    ///
    /// "Incomplete bytes" means an unterminated partial line (including a partial
    /// byte order mark) or complete field lines of an event not yet closed by a
    /// blank line (even one without `data`). Comment lines alone do not count, so a
    /// stream ending right after a keep-alive returns `Ok(false)`. A poisoned decoder
    /// returns its error. Afterwards the decoder holds no pending state; bytes fed
    /// later start a new event (line numbers, the last event ID and the comment
    /// count carry over).
    pub fn finish(&mut self) -> Result<bool, SseError> {
        if let Some(err) = &self.error {
            return Err(err.clone());
        }
        let held_bom = self.bom > 0 && self.bom < BOM_DONE;
        let truncated = !self.line.is_empty() || self.block_bytes > 0 || held_bom;
        if self.bom > 0 {
            self.bom = BOM_DONE;
        }
        self.line.clear();
        self.skip_lf = false;
        self.reset_event();
        Ok(truncated)
    }

    /// Count of `:` comment lines (keep-alives) seen so far.
    pub fn comments_seen(&self) -> u64 {
        self.comments
    }

    /// Bytes currently buffered for the event in progress: the pending partial line
    /// plus the accumulated data and event type. Never exceeds `max_event_bytes`
    /// (the last event ID, kept separately, is also at most `max_event_bytes`).
    /// Zero after an error.
    pub fn buffered_bytes(&self) -> usize {
        self.line.len() + self.data.len() + self.event_type.len()
    }

    fn feed_inner(
        &mut self,
        mut chunk: &[u8],
        shared: Option<&Bytes>,
        out: &mut impl EventSink,
    ) -> Result<(), SseError> {
        if self.bom < BOM_DONE {
            chunk = self.strip_bom(chunk);
        }
        if self.skip_lf {
            match chunk.first() {
                None => return Ok(()),
                Some(b'\n') => chunk = &chunk[1..],
                Some(_) => {}
            }
            self.skip_lf = false;
        }
        while let Some(pos) = find_eol(chunk) {
            let content = &chunk[..pos];
            let terminator = if chunk[pos] == b'\n' {
                1
            } else {
                match chunk.get(pos + 1) {
                    Some(b'\n') => 2,
                    Some(_) => 1,
                    None => {
                        self.skip_lf = true;
                        1
                    }
                }
            };
            chunk = &chunk[pos + terminator..];
            if self.line.is_empty() {
                self.process_line(Line::Chunk(content), shared, out)?;
            } else {
                self.check_size(self.line.len() + content.len())?;
                let mut line = mem::take(&mut self.line);
                line.extend_from_slice(content);
                if let Some(mut kept) = self.process_line(Line::Buffered(line), shared, out)? {
                    kept.clear();
                    self.line = kept;
                }
            }
        }
        if !chunk.is_empty() {
            self.check_size(self.line.len() + chunk.len())?;
            if self.line.capacity() == 0 {
                let hint = self.line_hint.min(self.max_event_bytes);
                self.line.reserve(hint.max(chunk.len()));
            }
            self.line.extend_from_slice(chunk);
        }
        Ok(())
    }

    /// Consumes (a part of) the start-of-stream BOM. If the stream turns out not to
    /// start with a BOM, the held prefix bytes become the start of the first line.
    fn strip_bom<'a>(&mut self, mut chunk: &'a [u8]) -> &'a [u8] {
        while self.bom < BOM_DONE {
            let Some(&byte) = chunk.first() else {
                return chunk;
            };
            if byte == BOM[usize::from(self.bom)] {
                self.bom += 1;
                chunk = &chunk[1..];
            } else {
                // The held bytes (a BOM prefix) contain no line terminator; the size
                // check happens when the byte that diverged is processed.
                self.line.extend_from_slice(&BOM[..usize::from(self.bom)]);
                self.bom = BOM_DONE;
            }
        }
        chunk
    }

    #[inline]
    fn check_size(&self, line_len: usize) -> Result<(), SseError> {
        if self.block_bytes.saturating_add(line_len) > self.max_event_bytes {
            Err(SseError::EventTooLarge {
                limit: self.max_event_bytes,
            })
        } else {
            Ok(())
        }
    }

    /// Processes one complete line. A buffered line is handed back for reuse unless it
    /// became the event's data.
    fn process_line(
        &mut self,
        line: Line<'_>,
        shared: Option<&Bytes>,
        out: &mut impl EventSink,
    ) -> Result<Option<Vec<u8>>, SseError> {
        self.line_no += 1;
        let bytes: &[u8] = match &line {
            Line::Chunk(b) => b,
            Line::Buffered(v) => v,
        };
        if bytes.is_empty() {
            self.dispatch(out);
            return Ok(match line {
                Line::Buffered(v) => Some(v),
                Line::Chunk(_) => None,
            });
        }
        self.check_size(bytes.len())?;
        let Ok(text) = std::str::from_utf8(bytes) else {
            return Err(SseError::InvalidUtf8 { line: self.line_no });
        };
        let (field, value) = match text.find(':') {
            Some(0) => {
                self.comments += 1;
                return Ok(match line {
                    Line::Buffered(v) => Some(v),
                    Line::Chunk(_) => None,
                });
            }
            Some(colon) => {
                let value = &text[colon + 1..];
                (&text[..colon], value.strip_prefix(' ').unwrap_or(value))
            }
            None => (text, ""),
        };
        self.block_bytes += text.len();
        match field {
            "data" => {
                if self.data_seen {
                    self.data.join(value);
                } else {
                    self.data_seen = true;
                    let start = text.len() - value.len();
                    self.data = match (line, shared) {
                        (Line::Buffered(buf), _) => {
                            self.line_hint = buf.len();
                            EventData::Line { buf, start }
                        }
                        (Line::Chunk(b), Some(whole)) => {
                            EventData::Shared(sub_bytes(whole, &b[start..]))
                        }
                        // Checked UTF-8 above (a suffix at a char boundary): never lossy.
                        (Line::Chunk(b), None) => {
                            EventData::Joined(String::from_utf8_lossy(&b[start..]).into_owned())
                        }
                    };
                    return Ok(None);
                }
            }
            "event" => {
                self.event_type.clear();
                self.event_type.push_str(value);
            }
            "id" if !value.contains('\0') => {
                self.last_id.clear();
                self.last_id.push_str(value);
            }
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                // Too many digits for a u64: ignored like any invalid value.
                self.retry = value.parse().ok().or(self.retry);
            }
            _ => {}
        }
        Ok(match line {
            Line::Buffered(v) => Some(v),
            Line::Chunk(_) => None,
        })
    }

    fn dispatch(&mut self, out: &mut impl EventSink) {
        if self.data_seen {
            let event = if self.event_type.is_empty() {
                None
            } else {
                Some(mem::take(&mut self.event_type))
            };
            let id = if self.last_id.is_empty() {
                None
            } else {
                Some(self.last_id.clone())
            };
            // Hands the data over where it is: no copy.
            out.emit(event, mem::take(&mut self.data), id, self.retry);
        }
        self.reset_event();
    }

    fn reset_event(&mut self) {
        self.event_type.clear();
        self.data = EventData::Empty;
        self.data_seen = false;
        self.retry = None;
        self.block_bytes = 0;
    }

    fn poison(&mut self, err: SseError) {
        self.error = Some(err);
        self.line = Vec::new();
        self.event_type = String::new();
        self.data = EventData::Empty;
        self.last_id = String::new();
        self.data_seen = false;
        self.retry = None;
        self.block_bytes = 0;
    }
}

/// Index of the first CR or LF in `hay` (`memchr2`: SIMD where the CPU has it).
#[inline]
fn find_eol(hay: &[u8]) -> Option<usize> {
    memchr::memchr2(b'\n', b'\r', hay)
}

/// Appends `text` split into lines (on CRLF, CR or LF), each line written as
/// `prefix` + line + `\n`.
fn write_lines(out: &mut Vec<u8>, prefix: &[u8], text: &str) {
    let mut rest = text.as_bytes();
    loop {
        out.extend_from_slice(prefix);
        match find_eol(rest) {
            Some(pos) => {
                out.extend_from_slice(&rest[..pos]);
                out.push(b'\n');
                let crlf = rest[pos] == b'\r' && rest.get(pos + 1) == Some(&b'\n');
                rest = &rest[pos + if crlf { 2 } else { 1 }..];
            }
            None => {
                out.extend_from_slice(rest);
                out.push(b'\n');
                return;
            }
        }
    }
}

/// Encode one event: optional `event:` line, data split on '\n' into multiple
/// `data:` lines, terminated by a blank line. Appends to `out` (no allocation
/// beyond out's growth).
///
/// Every line is written as `field: value` with LF endings, so values that start
/// with a space survive decoding. SSE cannot carry a CR inside data: a CRLF or lone
/// CR in `data` is also treated as a line break and therefore decodes as `\n`.
/// `event` of `None` or `Some("")` writes no `event:` line (both decode as `None`);
/// an event name must not contain CR or LF (checked by a debug assertion).
///
/// ```
/// let mut out = Vec::new();
/// a2a_protocol::sse::encode_event(&mut out, Some("error"), "a\nb");
/// assert_eq!(out, b"event: error\ndata: a\ndata: b\n\n");
/// ```
pub fn encode_event(out: &mut Vec<u8>, event: Option<&str>, data: &str) {
    let event = event.filter(|name| !name.is_empty());
    out.reserve(data.len() + event.map_or(0, |name| name.len() + 8) + 8);
    if let Some(name) = event {
        debug_assert!(
            !name.contains(['\r', '\n']),
            "SSE event name contains a line break: {name:?}"
        );
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(name.as_bytes());
        out.push(b'\n');
    }
    write_lines(out, b"data: ", data);
    out.push(b'\n');
}

/// Encode a comment line (keep-alive) `: text\n\n`.
///
/// Multi-line `text` becomes one comment line per line. The trailing blank line
/// does not dispatch anything when written between events. Empty `text` writes
/// `:\n\n`.
///
/// ```
/// let mut out = Vec::new();
/// a2a_protocol::sse::encode_comment(&mut out, "ping");
/// assert_eq!(out, b": ping\n\n");
/// ```
pub fn encode_comment(out: &mut Vec<u8>, text: &str) {
    if text.is_empty() {
        out.extend_from_slice(b":\n\n");
        return;
    }
    out.reserve(text.len() + 4);
    write_lines(out, b": ", text);
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::find_eol;

    fn naive(hay: &[u8]) -> Option<usize> {
        hay.iter().position(|&b| b == b'\n' || b == b'\r')
    }

    #[test]
    fn find_eol_matches_naive_scan() {
        let alphabet = [b'a', b'\n', b'\r', 0x0B, 0x0C, 0x0E, 0x8A, 0x8D, 0x00, 0xFF];
        // Deterministic pseudo-random haystacks of every length up to 40.
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for len in 0..40 {
            for _ in 0..200 {
                let hay: Vec<u8> = (0..len)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        // Mostly filler so matches land at varied depths.
                        let r = (state % 64) as usize;
                        if r < alphabet.len() {
                            alphabet[r]
                        } else {
                            b'x'
                        }
                    })
                    .collect();
                assert_eq!(find_eol(&hay), naive(&hay), "{hay:?}");
            }
        }
    }
}
