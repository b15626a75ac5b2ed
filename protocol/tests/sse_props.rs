//! Property and example tests for the SSE codec (`a2a_protocol::sse`).

use a2a_protocol::sse::{
    SseDecoder, SseError, SseEvent, SseEventBytes, encode_comment, encode_event,
};
use bytes::Bytes;
use proptest::prelude::*;
use proptest::sample::Index;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// Everything observable about decoding one stream.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Outcome {
    events: Vec<SseEvent>,
    /// The first error from `feed`, else the result of `finish`.
    end: Result<bool, SseError>,
    comments: u64,
}

/// Decodes `chunks` with the given limit, checking the memory bound and the
/// poisoning contract along the way, and that the shared-bytes path
/// ([`SseDecoder::feed_bytes`]) decodes exactly the same events.
fn decode<'a>(chunks: impl IntoIterator<Item = &'a [u8]>, limit: usize) -> Outcome {
    let chunks: Vec<&[u8]> = chunks.into_iter().collect();
    let outcome = decode_str(chunks.iter().copied(), limit);
    assert_eq!(
        decode_shared(&chunks, limit),
        outcome,
        "feed_bytes differs from feed"
    );
    outcome
}

/// [`decode`] through `feed_bytes`, every chunk in its own shared buffer.
fn decode_shared(chunks: &[&[u8]], limit: usize) -> Outcome {
    let mut decoder = SseDecoder::new(limit);
    let mut events: Vec<SseEventBytes> = Vec::new();
    let mut end = None;
    for chunk in chunks {
        let result = decoder.feed_bytes(&Bytes::copy_from_slice(chunk), &mut events);
        assert!(decoder.buffered_bytes() <= limit);
        if let Err(err) = result {
            end = Some(Err(err));
            break;
        }
    }
    let end = end.unwrap_or_else(|| decoder.finish());
    Outcome {
        events: events.into_iter().map(SseEventBytes::into_event).collect(),
        end,
        comments: decoder.comments_seen(),
    }
}

fn decode_str<'a>(chunks: impl IntoIterator<Item = &'a [u8]>, limit: usize) -> Outcome {
    let mut decoder = SseDecoder::new(limit);
    let mut events = Vec::new();
    for chunk in chunks {
        let result = decoder.feed(chunk, &mut events);
        assert!(
            decoder.buffered_bytes() <= limit,
            "buffered {} > limit {limit}",
            decoder.buffered_bytes()
        );
        if let Err(err) = result {
            // Poisoned: every later call repeats the error and adds nothing.
            let before = events.len();
            assert_eq!(decoder.feed(b"data: x\n\n", &mut events), Err(err.clone()));
            assert_eq!(decoder.finish(), Err(err.clone()));
            assert_eq!(events.len(), before);
            return Outcome {
                events,
                end: Err(err),
                comments: decoder.comments_seen(),
            };
        }
    }
    let end = decoder.finish();
    Outcome {
        events,
        end,
        comments: decoder.comments_seen(),
    }
}

fn decode_all(bytes: &[u8]) -> Outcome {
    decode([bytes], SseDecoder::DEFAULT_MAX_EVENT_BYTES)
}

/// Splits `bytes` at the given cut points (duplicates give empty chunks).
fn split_at_cuts<'a>(bytes: &'a [u8], cuts: &[Index]) -> Vec<&'a [u8]> {
    let mut points: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
    points.sort_unstable();
    let mut chunks = Vec::with_capacity(points.len() + 1);
    let mut start = 0;
    for p in points {
        chunks.push(&bytes[start..p]);
        start = p;
    }
    chunks.push(&bytes[start..]);
    chunks
}

fn event(name: Option<&str>, data: &str, id: Option<&str>, retry: Option<u64>) -> SseEvent {
    SseEvent {
        event: name.map(str::to_owned),
        data: data.to_owned(),
        id: id.map(str::to_owned),
        retry,
    }
}

fn data_event(data: &str) -> SseEvent {
    event(None, data, None, None)
}

// ---------------------------------------------------------------------------
// Stream model: logical lines with known meaning, rendered with random endings
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
enum Ending {
    Lf,
    CrLf,
    Cr,
}

impl Ending {
    fn bytes(self) -> &'static [u8] {
        match self {
            Ending::Lf => b"\n",
            Ending::CrLf => b"\r\n",
            Ending::Cr => b"\r",
        }
    }
}

#[derive(Debug, Clone)]
enum Line {
    Blank,
    /// `data: v`, `data:v` (space = false) or, for an empty value, bare `data`.
    Data {
        value: String,
        space: bool,
        bare: bool,
    },
    Event(String),
    Id(String),
    Retry(String),
    Unknown {
        name: String,
        value: Option<String>,
    },
    Comment(String),
}

impl Line {
    fn text(&self) -> String {
        match self {
            Line::Blank => String::new(),
            Line::Data { value, bare, .. } if *bare && value.is_empty() => "data".into(),
            Line::Data { value, space, .. } => {
                format!("data:{}{value}", if *space { " " } else { "" })
            }
            Line::Event(v) => format!("event: {v}"),
            Line::Id(v) => format!("id: {v}"),
            Line::Retry(v) => format!("retry: {v}"),
            Line::Unknown { name, value: None } => name.clone(),
            Line::Unknown {
                name,
                value: Some(v),
            } => format!("{name}: {v}"),
            Line::Comment(t) => format!(":{t}"),
        }
    }
}

#[derive(Debug, Clone)]
struct Stream {
    bom: bool,
    lines: Vec<(Line, Ending)>,
    /// A final line cut off before its terminator.
    tail: Option<Line>,
}

impl Stream {
    fn render(&self) -> Vec<u8> {
        let mut out = Vec::new();
        if self.bom {
            out.extend_from_slice("\u{FEFF}".as_bytes());
        }
        let mut prev_cr = false;
        for (line, ending) in &self.lines {
            let text = line.text();
            let mut ending = *ending;
            // CR followed by an empty line ended by LF would read as one CRLF.
            if prev_cr && text.is_empty() && matches!(ending, Ending::Lf) {
                ending = Ending::CrLf;
            }
            out.extend_from_slice(text.as_bytes());
            out.extend_from_slice(ending.bytes());
            prev_cr = matches!(ending, Ending::Cr);
        }
        if let Some(tail) = &self.tail {
            out.extend_from_slice(tail.text().as_bytes());
        }
        out
    }

    /// The WHATWG interpretation of the logical lines, independent of bytes.
    fn expected(&self) -> Outcome {
        let mut events = Vec::new();
        let mut data: Option<String> = None;
        let mut event_type = String::new();
        let mut last_id = String::new();
        let mut retry = None;
        let mut fields_pending = false;
        let mut comments = 0;
        // The unterminated tail is never processed as a line.
        for (line, _) in &self.lines {
            match line {
                Line::Blank => {
                    if let Some(d) = data.take() {
                        events.push(SseEvent {
                            event: (!event_type.is_empty()).then(|| event_type.clone()),
                            data: d,
                            id: (!last_id.is_empty()).then(|| last_id.clone()),
                            retry,
                        });
                    }
                    event_type.clear();
                    retry = None;
                    fields_pending = false;
                    continue;
                }
                Line::Comment(_) => {
                    comments += 1;
                    continue;
                }
                Line::Data { value, space, .. } => {
                    let v = if *space {
                        value.as_str()
                    } else {
                        value.strip_prefix(' ').unwrap_or(value)
                    };
                    match &mut data {
                        Some(d) => {
                            d.push('\n');
                            d.push_str(v);
                        }
                        None => data = Some(v.to_owned()),
                    }
                }
                Line::Event(v) => event_type = v.clone(),
                Line::Id(v) => {
                    if !v.contains('\0') {
                        last_id = v.clone();
                    }
                }
                Line::Retry(v) => {
                    if !v.is_empty()
                        && v.bytes().all(|b| b.is_ascii_digit())
                        && let Ok(ms) = v.parse()
                    {
                        retry = Some(ms);
                    }
                }
                Line::Unknown { .. } => {}
            }
            fields_pending = true;
        }
        Outcome {
            events,
            end: Ok(fields_pending || self.tail.is_some()),
            comments,
        }
    }
}

fn value_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-zA-Z0-9{}\":,. ]{0,12}",
        1 => "[^\r\n]{0,8}",
    ]
}

fn field_line() -> impl Strategy<Value = Line> {
    prop_oneof![
        6 => (value_strategy(), any::<bool>(), any::<bool>())
            .prop_map(|(value, space, bare)| Line::Data { value, space, bare }),
        1 => "[a-z ]{0,6}".prop_map(Line::Event),
        1 => prop_oneof!["[a-z0-9 ]{0,5}", "[a-z]{0,2}\0[a-z]{0,2}"].prop_map(Line::Id),
        1 => prop_oneof![
            "[0-9]{1,6}",
            "[0-9]{0,3}[a-z +-]{1,2}[0-9]{0,2}",
            Just(String::new()),
            Just("99999999999999999999999".to_owned()),
        ]
        .prop_map(Line::Retry),
        1 => (
            "[a-zA-Z]{1,6}".prop_filter("known field", |n| {
                !matches!(n.as_str(), "data" | "event" | "id" | "retry")
            }),
            proptest::option::of("[a-z ]{0,6}"),
        )
            .prop_map(|(name, value)| Line::Unknown { name, value }),
        2 => "[^\r\n]{0,10}".prop_map(Line::Comment),
    ]
}

fn ending() -> impl Strategy<Value = Ending> {
    prop_oneof![Just(Ending::Lf), Just(Ending::CrLf), Just(Ending::Cr)]
}

fn stream_strategy() -> impl Strategy<Value = Stream> {
    let line = prop_oneof![
        2 => Just(Line::Blank),
        5 => field_line(),
    ];
    (
        any::<bool>(),
        prop::collection::vec((line, ending()), 0..40),
        proptest::option::weighted(0.2, field_line()),
    )
        .prop_map(|(bom, lines, tail)| Stream { bom, lines, tail })
}

fn cuts() -> impl Strategy<Value = Vec<Index>> {
    prop::collection::vec(any::<Index>(), 0..24)
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The decoder agrees with the line model, and its output does not depend on
    /// where the bytes are split (random cuts, empty chunks, 1-byte chunks).
    #[test]
    fn decoding_is_split_invariant(stream in stream_strategy(), cuts in cuts()) {
        let bytes = stream.render();
        let whole = decode_all(&bytes);
        prop_assert_eq!(&whole, &stream.expected());
        let limit = SseDecoder::DEFAULT_MAX_EVENT_BYTES;
        prop_assert_eq!(&decode(split_at_cuts(&bytes, &cuts), limit), &whole);
        prop_assert_eq!(&decode(bytes.chunks(1), limit), &whole);
    }

    /// Whatever `encode_event` / `encode_comment` write decodes back to the same
    /// events (CR and CRLF in data normalise to LF), for any chunking.
    #[test]
    fn encode_decode_round_trip(
        items in prop::collection::vec(
            prop_oneof![
                4 => (proptest::option::of("[a-z_. -]{0,10}"), "(\\PC|[\r\n\t ]){0,40}")
                    .prop_map(|(name, data)| (name, Some(data))),
                1 => "[a-z \n]{0,10}".prop_map(|text| (Some(text), None)),
            ],
            0..12,
        ),
        cuts in cuts(),
    ) {
        let mut wire = Vec::new();
        let mut expected = Vec::new();
        let mut comment_lines = 0;
        for (name, data) in &items {
            match data {
                Some(data) => {
                    encode_event(&mut wire, name.as_deref(), data);
                    expected.push(SseEvent {
                        event: name.clone().filter(|n| !n.is_empty()),
                        data: data.replace("\r\n", "\n").replace('\r', "\n"),
                        id: None,
                        retry: None,
                    });
                }
                None => {
                    let text = name.as_deref().unwrap_or_default();
                    encode_comment(&mut wire, text);
                    comment_lines += text.split('\n').count() as u64;
                }
            }
        }
        let expected = Outcome { events: expected, end: Ok(false), comments: comment_lines };
        let limit = SseDecoder::DEFAULT_MAX_EVENT_BYTES;
        prop_assert_eq!(&decode([wire.as_slice()], limit), &expected);
        prop_assert_eq!(&decode(split_at_cuts(&wire, &cuts), limit), &expected);
        prop_assert_eq!(&decode(wire.chunks(1), limit), &expected);
    }

    /// Arbitrary bytes never panic, never buffer more than the limit, never emit an
    /// event larger than the limit, and still decode independently of splits
    /// (including which error is reported).
    #[test]
    fn arbitrary_bytes_are_bounded_and_split_invariant(
        bytes in prop::collection::vec(
            prop_oneof![
                2 => any::<u8>(),
                3 => prop::sample::select(b"data: event:id\r\n\n:retry0\xEF\xBB\xBF".to_vec()),
            ],
            0..600,
        ),
        limit in 0usize..96,
        cuts in cuts(),
    ) {
        let whole = decode([bytes.as_slice()], limit);
        for e in &whole.events {
            prop_assert!(e.data.len() + e.event.as_ref().map_or(0, String::len) <= limit);
        }
        prop_assert_eq!(&decode(split_at_cuts(&bytes, &cuts), limit), &whole);
        prop_assert_eq!(&decode(bytes.chunks(1), limit), &whole);
    }
}

// ---------------------------------------------------------------------------
// Examples
// ---------------------------------------------------------------------------

/// The example stream of the A2A 1.0 reference, §1.4.
const REFERENCE_STREAM: &str = r#"data: {"jsonrpc":"2.0","id":"r-2","result":{"task":{"id":"t-2","contextId":"c-1","status":{"state":"TASK_STATE_SUBMITTED"}}}}

data: {"jsonrpc":"2.0","id":"r-2","result":{"statusUpdate":{"taskId":"t-2","contextId":"c-1","status":{"state":"TASK_STATE_WORKING","timestamp":"2026-03-20T10:00:01.000Z"}}}}

data: {"jsonrpc":"2.0","id":"r-2","result":{"artifactUpdate":{"taskId":"t-2","contextId":"c-1","artifact":{"artifactId":"a-1","name":"report","parts":[{"text":"Part one. "}]}}}}

data: {"jsonrpc":"2.0","id":"r-2","result":{"artifactUpdate":{"taskId":"t-2","contextId":"c-1","artifact":{"artifactId":"a-1","parts":[{"text":"Part two."}]},"append":true,"lastChunk":true}}}

data: {"jsonrpc":"2.0","id":"r-2","result":{"statusUpdate":{"taskId":"t-2","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-03-20T10:00:03.000Z"}}}}

"#;

fn check_reference_events(outcome: &Outcome) {
    assert_eq!(outcome.end, Ok(false));
    assert_eq!(outcome.events.len(), 5);
    let kinds: Vec<&str> = outcome
        .events
        .iter()
        .map(|e| {
            assert_eq!((&e.event, &e.id, e.retry), (&None, &None, None));
            let v: serde_json::Value = serde_json::from_str(&e.data).expect("data is JSON");
            assert_eq!(v["jsonrpc"], "2.0");
            assert_eq!(v["id"], "r-2");
            let result = v["result"].as_object().expect("result object");
            assert_eq!(result.len(), 1, "exactly one StreamResponse member");
            match result.keys().next().map(String::as_str) {
                Some("task") => "task",
                Some("statusUpdate") => "statusUpdate",
                Some("artifactUpdate") => "artifactUpdate",
                other => panic!("unexpected StreamResponse member {other:?}"),
            }
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "task",
            "statusUpdate",
            "artifactUpdate",
            "artifactUpdate",
            "statusUpdate"
        ]
    );
}

#[test]
fn reference_example_stream_decodes_to_five_json_events() {
    let bytes = REFERENCE_STREAM.as_bytes();
    let limit = SseDecoder::DEFAULT_MAX_EVENT_BYTES;
    check_reference_events(&decode([bytes], limit));
    check_reference_events(&decode(bytes.chunks(1), limit));
    check_reference_events(&decode(bytes.chunks(7), limit));
    check_reference_events(&decode(bytes.chunks(4096), limit));
}

#[test]
fn reference_example_with_crlf_bom_and_keep_alives() {
    let mut text = String::from("\u{FEFF}: hello\n");
    for block in REFERENCE_STREAM.split("\n\n").filter(|b| !b.is_empty()) {
        text.push_str(block);
        text.push_str("\r\n: ping\r\n\r\n");
    }
    let bytes = text.as_bytes();
    for size in [1, 2, 3, 5, 64, bytes.len()] {
        let outcome = decode(bytes.chunks(size), SseDecoder::DEFAULT_MAX_EVENT_BYTES);
        check_reference_events(&outcome);
        assert_eq!(outcome.comments, 6);
    }
}

#[test]
fn line_endings_and_cr_at_chunk_boundary() {
    let mut d = SseDecoder::default();
    let mut out = Vec::new();
    // CR ends a chunk and the LF arrives next: one line ending, not two.
    d.feed(b"data: a\r", &mut out).unwrap();
    d.feed(b"", &mut out).unwrap();
    d.feed(b"\ndata: b\r", &mut out).unwrap();
    assert!(out.is_empty());
    d.feed(b"\n\r", &mut out).unwrap();
    assert_eq!(out, [data_event("a\nb")]);
    // CR CR: two line endings, i.e. a blank line.
    d.feed(b"data: c\r", &mut out).unwrap();
    d.feed(b"\r", &mut out).unwrap();
    assert_eq!(out[1..], [data_event("c")]);
    // Lone CR, then LF LF.
    d.feed(b"data: d\rdata: e\n\n", &mut out).unwrap();
    assert_eq!(out[2..], [data_event("d\ne")]);
    assert_eq!(d.finish(), Ok(false));
}

#[test]
fn field_parsing_rules() {
    let input = "\u{FEFF}data:no-space\ndata:  two-spaces\ndata\ndata:\nevent: e1\n\
                 unknown: x\nDATA: ignored\nid: 7\nretry: 1500\n\n\
                 event: lost\nretry: 9\n\n\
                 id: a\0b\ndata: second\nretry: 12x\n\n\
                 id\ndata: third\n\n";
    let outcome = decode_all(input.as_bytes());
    assert_eq!(
        outcome.events,
        [
            event(
                Some("e1"),
                "no-space\n two-spaces\n\n",
                Some("7"),
                Some(1500)
            ),
            // `id` with NUL ignored, so the last event ID persists; bad retry ignored.
            event(None, "second", Some("7"), None),
            // A bare `id` resets the last event ID.
            event(None, "third", None, None),
        ]
    );
    assert_eq!(outcome.end, Ok(false));
}

#[test]
fn bom_only_skipped_at_stream_start() {
    let bom = "\u{FEFF}";
    // Split BOM at the start is skipped.
    let bytes = format!("{bom}data: x\n\n{bom}data: y\n\n");
    for size in [1, 2, 4] {
        let outcome = decode(bytes.as_bytes().chunks(size), 1 << 20);
        // The second BOM makes the field name "\u{FEFF}data", an unknown field.
        assert_eq!(outcome.events, [data_event("x")]);
    }
    // A partial BOM followed by something else is kept as line content.
    let outcome = decode_all(b"\xEF\xBBdata: x\n\n");
    assert_eq!(outcome.end, Err(SseError::InvalidUtf8 { line: 1 }));
}

#[test]
fn invalid_utf8_reports_line_number() {
    let bytes = b"data: ok\r\n\r\n: c\rdata: \xFF\xFE\n\n";
    for size in [1, 3, bytes.len()] {
        let outcome = decode(bytes.chunks(size), 1024);
        assert_eq!(outcome.events, [data_event("ok")]);
        assert_eq!(outcome.end, Err(SseError::InvalidUtf8 { line: 4 }));
    }
    // UTF-8 split across chunks is fine.
    let snowman = "data: \u{2603}\n\n".as_bytes();
    assert_eq!(
        decode(snowman.chunks(1), 1024).events,
        [data_event("\u{2603}")]
    );
}

#[test]
fn endless_line_fails_as_soon_as_limit_is_crossed() {
    const LIMIT: usize = 64 * 1024;
    let mut d = SseDecoder::new(LIMIT);
    let mut out = Vec::new();
    d.feed(b"data: ", &mut out).unwrap();
    let mut fed = 6;
    let chunk = [b'x'; 4096];
    let err = loop {
        match d.feed(&chunk, &mut out) {
            Ok(()) => {
                fed += chunk.len();
                assert!(d.buffered_bytes() <= LIMIT);
                assert!(fed <= LIMIT, "should have failed by now");
            }
            Err(err) => break err,
        }
    };
    assert_eq!(err, SseError::EventTooLarge { limit: LIMIT });
    assert!(fed + chunk.len() > LIMIT);
    assert_eq!(d.buffered_bytes(), 0);
    assert_eq!(d.feed(b"\n\n", &mut out), Err(err.clone()));
    assert_eq!(d.finish(), Err(err));
    assert!(out.is_empty());

    // Byte by byte: fails exactly on the byte that crosses the limit.
    let mut d = SseDecoder::new(100);
    for i in 1..=101 {
        let result = d.feed(b"x", &mut out);
        assert_eq!(result.is_err(), i == 101, "byte {i}");
    }

    // An endless comment line is bounded too.
    let mut d = SseDecoder::new(100);
    d.feed(b": keep", &mut out).unwrap();
    assert!(d.feed(&[b'a'; 200], &mut out).is_err());
}

#[test]
fn event_limit_counts_all_field_lines_of_an_event() {
    // 20 lines "data: 123456789" (15 bytes each) = 300 bytes in one event.
    let line = b"data: 123456789\n";
    let mut bytes = line.repeat(20);
    bytes.extend_from_slice(b"\n");
    assert_eq!(decode([bytes.as_slice()], 300).events.len(), 1);
    let outcome = decode(bytes.chunks(5), 299);
    assert_eq!(outcome.end, Err(SseError::EventTooLarge { limit: 299 }));
    // Separate events each within the limit are fine; comments do not accumulate.
    let mut many = Vec::new();
    for _ in 0..100 {
        many.extend_from_slice(b": keep-alive\ndata: 123456789\n\n");
    }
    let outcome = decode(many.chunks(9), 20);
    assert_eq!(outcome.events.len(), 100);
    assert_eq!(outcome.comments, 100);
    assert_eq!(outcome.end, Ok(false));
}

#[test]
fn large_event_within_default_limit() {
    let payload = "y".repeat(3 * 1024 * 1024);
    let mut wire = Vec::new();
    encode_event(&mut wire, None, &payload);
    let outcome = decode(wire.chunks(16 * 1024), SseDecoder::DEFAULT_MAX_EVENT_BYTES);
    assert_eq!(outcome.events.len(), 1);
    assert_eq!(outcome.events[0].data.len(), payload.len());
}

#[test]
fn finish_reports_truncation_mid_event() {
    let cases: &[(&[u8], bool, usize)] = &[
        (b"", false, 0),
        (b"data: a\n\n", false, 1),
        (b"data: a\n\n: ping\n", false, 1),
        (b"data: a\n\n: partial comm", true, 1),
        (b"data: a\n\ndata: {\"jsonrpc\":\"2.0\"}\n", true, 1),
        (b"data: a\n\ndata: {\"json", true, 1),
        (b"data: a\n\nevent: only-a-name\n", true, 1),
        (b"data: a\r", true, 0),
        (b"data: a\r\r", false, 1),
        (b"\xEF\xBB", true, 0),
        (b"\xEF\xBB\xBF", false, 0),
    ];
    for &(bytes, truncated, n_events) in cases {
        for size in [1, bytes.len().max(1)] {
            let outcome = decode(bytes.chunks(size), 1024);
            assert_eq!(
                outcome.end,
                Ok(truncated),
                "{:?}",
                String::from_utf8_lossy(bytes)
            );
            assert_eq!(outcome.events.len(), n_events, "{bytes:?}");
        }
    }
    // After finish nothing is pending any more.
    let mut d = SseDecoder::default();
    let mut out = Vec::new();
    d.feed(b"data: lost", &mut out).unwrap();
    assert_eq!(d.finish(), Ok(true));
    assert_eq!(d.finish(), Ok(false));
    assert!(out.is_empty());
}

#[test]
fn encoders_write_expected_bytes() {
    let mut out = Vec::new();
    encode_event(&mut out, None, "");
    encode_event(&mut out, Some(""), " lead");
    encode_event(&mut out, Some("error"), "a\r\nb\rc\n");
    encode_comment(&mut out, "");
    encode_comment(&mut out, "two\nlines");
    assert_eq!(
        String::from_utf8(out.clone()).unwrap(),
        "data: \n\ndata:  lead\n\nevent: error\ndata: a\ndata: b\ndata: c\ndata: \n\n\
         :\n\n: two\n: lines\n\n"
    );
    let outcome = decode_all(&out);
    assert_eq!(
        outcome.events,
        [
            data_event(""),
            data_event(" lead"),
            event(Some("error"), "a\nb\nc\n", None, None)
        ]
    );
    assert_eq!(outcome.comments, 3);
}

#[test]
fn feed_bytes_shares_the_chunk_and_assembles_split_lines_once() {
    let payload = "p".repeat(70_000);
    let mut wire = Vec::new();
    encode_event(&mut wire, None, &payload);
    encode_event(&mut wire, Some("x"), "two\nlines");
    // The whole stream in one chunk: the one-line event's data is a slice of it.
    let whole = Bytes::from(wire.clone());
    let mut d = SseDecoder::default();
    let mut events = Vec::new();
    d.feed_bytes(&whole, &mut events).unwrap();
    assert_eq!(events.len(), 2);
    assert_eq!(events[0].data, payload.as_bytes());
    assert!(whole.as_ptr_range().contains(&events[0].data.as_ptr()));
    assert_eq!(events[1].data, &b"two\nlines"[..]);
    assert_eq!(events[1].event.as_deref(), Some("x"));
    // Split into reads: the same events, the line assembled in the decoder's own buffer.
    let mut d = SseDecoder::default();
    let mut split = Vec::new();
    for read in wire.chunks(16 * 1024) {
        let read = Bytes::copy_from_slice(read);
        d.feed_bytes(&read, &mut split).unwrap();
    }
    assert!(!d.finish().unwrap());
    assert_eq!(split, events);
}
