//! Timestamp forms (`timestamp_style`): the agent's clock and the rewriting of every status
//! timestamp it writes in JSON into the scripted form. Every form is valid ProtoJSON /
//! RFC 3339 input (§5.6.1) and denotes the same instant: the clock stamps milliseconds, or
//! whole seconds when a form without a fraction can be written.

use crate::script::TimestampStyle;
use a2a_protocol::Timestamp;
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};
use time::{OffsetDateTime, UtcOffset};

/// The forms `rotate` cycles through, in order.
const ROTATION: [TimestampStyle; 5] = [
    TimestampStyle::Millis,
    TimestampStyle::Seconds,
    TimestampStyle::Micros,
    TimestampStyle::Nanos,
    TimestampStyle::Offset,
];

/// The UTC offset of the `offset` form: not a whole hour, so a parser that reads only hours
/// of an offset is caught too.
const OFFSET: (i8, i8) = (5, 30);

/// One agent's clock and timestamp writer.
pub(crate) struct Clock {
    style: TimestampStyle,
    /// Timestamps written so far (the position in [`ROTATION`]).
    written: AtomicU64,
}

impl Clock {
    pub(crate) fn new(style: TimestampStyle) -> Self {
        Clock {
            style,
            written: AtomicU64::new(0),
        }
    }

    /// Now, as the agent stamps statuses: milliseconds, or whole seconds when the style can
    /// write a timestamp without a fraction (so that form loses nothing).
    pub(crate) fn now(&self) -> Timestamp {
        let t = Timestamp::now();
        match self.style {
            TimestampStyle::Seconds | TimestampStyle::Rotate => {
                Timestamp(t.0.replace_nanosecond(0).unwrap_or(t.0))
            }
            _ => t,
        }
    }

    /// Rewrite every status timestamp in an outgoing JSON payload (a JSON-RPC envelope, a
    /// bare result or a push body) into the scripted form; parts, metadata and data values
    /// are left alone. Nothing changes with the default style.
    pub(crate) fn restyle(&self, v: &mut Value) {
        if self.style == TimestampStyle::Millis {
            return;
        }
        status_timestamps(v, &mut |ts| {
            let Some(t) = ts.as_str().and_then(|s| Timestamp::parse(s).ok()) else {
                return;
            };
            *ts = Value::String(format(&t, self.next_form()));
        });
    }

    fn next_form(&self) -> TimestampStyle {
        match self.style {
            TimestampStyle::Rotate => {
                let n = self.written.fetch_add(1, Ordering::Relaxed);
                ROTATION[(n % ROTATION.len() as u64) as usize]
            }
            s => s,
        }
    }
}

/// Call `f` on the `timestamp` of every `status` object, skipping parts, metadata and data.
fn status_timestamps(v: &mut Value, f: &mut impl FnMut(&mut Value)) {
    match v {
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                match k.as_str() {
                    "parts" | "metadata" | "data" => {}
                    "status" => {
                        if let Some(ts) = x.get_mut("timestamp") {
                            f(ts);
                        }
                        status_timestamps(x, f);
                    }
                    _ => status_timestamps(x, f),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| status_timestamps(x, f)),
        _ => {}
    }
}

/// A timestamp in one form (`rotate` writes milliseconds here: the clock picks the form).
pub(crate) fn format(t: &Timestamp, form: TimestampStyle) -> String {
    let d = t.0.to_offset(UtcOffset::UTC);
    let ms = d.millisecond();
    match form {
        TimestampStyle::Millis | TimestampStyle::Rotate => t.to_rfc3339(),
        TimestampStyle::Seconds => format!("{}Z", date_time(d)),
        TimestampStyle::Micros => format!("{}.{ms:03}000Z", date_time(d)),
        TimestampStyle::Nanos => format!("{}.{ms:03}000000Z", date_time(d)),
        TimestampStyle::Offset => {
            let (h, m) = OFFSET;
            let off = UtcOffset::from_hms(h, m, 0).unwrap_or(UtcOffset::UTC);
            let local = d.to_offset(off);
            format!("{}.{ms:03}+{h:02}:{m:02}", date_time(local))
        }
    }
}

/// `YYYY-MM-DDTHH:MM:SS`.
fn date_time(d: OffsetDateTime) -> String {
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        d.year(),
        u8::from(d.month()),
        d.day(),
        d.hour(),
        d.minute(),
        d.second()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_form_is_valid_rfc3339_of_the_same_instant() {
        let t = Timestamp::parse("2026-03-20T23:59:01.123Z").unwrap();
        let want = [
            (TimestampStyle::Millis, "2026-03-20T23:59:01.123Z"),
            (TimestampStyle::Seconds, "2026-03-20T23:59:01Z"),
            (TimestampStyle::Micros, "2026-03-20T23:59:01.123000Z"),
            (TimestampStyle::Nanos, "2026-03-20T23:59:01.123000000Z"),
            (TimestampStyle::Offset, "2026-03-21T05:29:01.123+05:30"),
        ];
        for (form, text) in want {
            assert_eq!(format(&t, form), text, "{form:?}");
            let back = Timestamp::parse(text).unwrap();
            if form == TimestampStyle::Seconds {
                assert_eq!(back.0, t.0.replace_millisecond(0).unwrap());
            } else {
                assert_eq!(back, t, "{form:?}");
            }
        }
    }

    #[test]
    fn seconds_and_rotate_clocks_stamp_whole_seconds() {
        for style in [TimestampStyle::Seconds, TimestampStyle::Rotate] {
            assert_eq!(Clock::new(style).now().0.nanosecond(), 0);
        }
    }

    #[test]
    fn only_status_timestamps_are_rewritten_and_rotate_cycles() {
        let c = Clock::new(TimestampStyle::Rotate);
        let ts = "2026-03-20T10:00:01.000Z";
        let mut v = json!({"result": {"tasks": [
            {"status": {"timestamp": ts, "message": {"parts": [{"data": {"status": {"timestamp": ts}}}]}}},
            {"status": {"timestamp": ts}},
            {"status": {"timestamp": ts}},
            {"status": {"timestamp": ts}},
            {"status": {"timestamp": ts}},
            {"status": {"timestamp": ts}, "metadata": {"status": {"timestamp": ts}}},
        ]}});
        c.restyle(&mut v);
        let got: Vec<&str> = (0..6)
            .map(|i| {
                v["result"]["tasks"][i]["status"]["timestamp"]
                    .as_str()
                    .unwrap()
            })
            .collect();
        assert_eq!(
            got,
            [
                ts,
                "2026-03-20T10:00:01Z",
                "2026-03-20T10:00:01.000000Z",
                "2026-03-20T10:00:01.000000000Z",
                "2026-03-20T15:30:01.000+05:30",
                ts,
            ]
        );
        assert_eq!(
            v.pointer("/result/tasks/0/status/message/parts/0/data/status/timestamp"),
            Some(&json!(ts)),
            "data parts are the agent's content, not its timestamps"
        );
        assert_eq!(
            v.pointer("/result/tasks/5/metadata/status/timestamp"),
            Some(&json!(ts))
        );
        let mut same = json!({"status": {"timestamp": ts}});
        Clock::new(TimestampStyle::Millis).restyle(&mut same);
        assert_eq!(same["status"]["timestamp"], ts);
    }
}
