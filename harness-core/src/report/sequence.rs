//! The sequence diagram of a case as inline SVG: a lifeline for the delegator and one per agent,
//! an arrow per request (delegator → agent), response and SSE event (agent → delegator, events
//! dashed), a note per other journal event; witness entries in red on a tinted band. A long
//! journal is shown as windows around the witnesses (or its beginning), the gaps marked.

use super::text::{clip, entry_json, entry_what, esc};
use a2a_mock_agents::{Entry, Event};
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// The delegator's lifeline label.
const DELEGATOR: &str = "delegator";
/// Entries shown either side of a witness when the journal is cut to windows.
const WINDOW: usize = 6;
const COL: usize = 190;
const MARGIN: usize = 20;
const HEAD: usize = 46;
const ROW: usize = 22;
/// Characters of an arrow label.
const LABEL: usize = 30;
/// Characters of the JSON shown as an arrow's tooltip.
const TOOLTIP: usize = 240;

/// One row of a journal excerpt.
pub(super) enum Row<'a> {
    /// A journal entry.
    Entry(&'a Entry),
    /// This many journal entries are not shown here.
    Gap(usize),
}

/// Which entries of a journal to show: everything when it has at most `max` entries; else
/// windows of `window` entries either side of each witness (or the first `max` entries when there
/// is none), at most `max` in all, with gaps between them.
pub(super) fn excerpt<'a>(
    journal: &'a [Entry],
    witnesses: &BTreeSet<u64>,
    max: usize,
    window: usize,
) -> Vec<Row<'a>> {
    if journal.len() <= max {
        return journal.iter().map(Row::Entry).collect();
    }
    let mut keep = vec![false; journal.len()];
    let mut kept = 0;
    let centres: Vec<usize> = journal
        .iter()
        .enumerate()
        .filter(|(_, e)| witnesses.contains(&e.seq))
        .map(|(i, _)| i)
        .collect();
    if centres.is_empty() {
        for k in keep.iter_mut().take(max) {
            *k = true;
        }
    } else {
        'outer: for c in centres {
            for k in keep
                .iter_mut()
                .take((c + window + 1).min(journal.len()))
                .skip(c.saturating_sub(window))
            {
                if kept >= max {
                    break 'outer;
                }
                if !*k {
                    *k = true;
                    kept += 1;
                }
            }
        }
    }
    let mut out = Vec::new();
    let mut gap = 0;
    for (e, k) in journal.iter().zip(keep) {
        if k {
            if gap > 0 {
                out.push(Row::Gap(gap));
                gap = 0;
            }
            out.push(Row::Entry(e));
        } else {
            gap += 1;
        }
    }
    if gap > 0 {
        out.push(Row::Gap(gap));
    }
    out
}

/// The parties of a journal: the delegator, then every agent in order of first appearance.
fn parties(journal: &[Entry]) -> Vec<&str> {
    let mut p = vec![DELEGATOR];
    for e in journal {
        if !p.contains(&e.agent.as_str()) {
            p.push(&e.agent);
        }
    }
    p
}

/// The inline SVG sequence diagram of `journal`, witnesses (by seq) highlighted, at most `max`
/// entries drawn. `uid` makes the SVG's element ids unique within the page.
pub fn sequence_svg(
    journal: &[Entry],
    witnesses: &BTreeSet<u64>,
    max: usize,
    uid: usize,
) -> String {
    let parties = parties(journal);
    let x = |name: &str| {
        let i = parties.iter().position(|p| *p == name).unwrap_or(0);
        MARGIN + COL / 2 + i * COL
    };
    let rows = excerpt(journal, witnesses, max, WINDOW);
    let width = MARGIN * 2 + COL * parties.len();
    let height = HEAD + ROW * rows.len() + ROW;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"seq\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" role=\"img\" aria-label=\"sequence diagram\" style=\"max-width:100%;height:auto\" font-family=\"sans-serif\" font-size=\"11\">\
<defs><marker id=\"ah{uid}\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0L10,5L0,10z\" fill=\"#555\"/></marker>\
<marker id=\"aw{uid}\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0L10,5L0,10z\" fill=\"#c00\"/></marker></defs>"
    );
    for p in &parties {
        let px = x(p);
        let _ = write!(
            s,
            "<rect x=\"{}\" y=\"6\" width=\"{}\" height=\"24\" rx=\"4\" fill=\"#eef\" stroke=\"#99a\"/><text x=\"{px}\" y=\"22\" text-anchor=\"middle\" font-weight=\"bold\">{}</text><line x1=\"{px}\" y1=\"30\" x2=\"{px}\" y2=\"{}\" stroke=\"#bbb\" stroke-dasharray=\"2,3\"/>",
            px - COL / 2 + 10,
            COL - 20,
            esc(&clip(p, 26)),
            height - 4
        );
    }
    for (k, row) in rows.iter().enumerate() {
        let y = HEAD + k * ROW + ROW / 2;
        match row {
            Row::Gap(n) => {
                let _ = write!(
                    s,
                    "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#777\" font-style=\"italic\">⋯ {n} journal entr{} not drawn ⋯</text>",
                    width / 2,
                    y + 4,
                    if *n == 1 { "y" } else { "ies" }
                );
            }
            Row::Entry(e) => {
                let witness = witnesses.contains(&e.seq);
                if witness {
                    let _ = write!(
                        s,
                        "<rect class=\"witness-band\" x=\"0\" y=\"{}\" width=\"{width}\" height=\"{ROW}\" fill=\"#fdd\"/>",
                        y - ROW / 2
                    );
                }
                let (color, marker, weight) = if witness {
                    ("#c00", format!("aw{uid}"), "bold")
                } else {
                    ("#555", format!("ah{uid}"), "normal")
                };
                let label = esc(&clip(&format!("#{} {}", e.seq, entry_what(e)), LABEL));
                let tip = esc(&entry_json(e, TOOLTIP));
                let class = if witness { " class=\"witness\"" } else { "" };
                let ax = x(&e.agent);
                let dx = x(DELEGATOR);
                let arrow = match &e.event {
                    Event::Request { .. } => Some((dx, ax, "")),
                    Event::Response { .. } => Some((ax, dx, "")),
                    Event::SseEvent { .. } => Some((ax, dx, " stroke-dasharray=\"5,3\"")),
                    _ => None,
                };
                match arrow {
                    Some((x1, x2, dash)) => {
                        let _ = write!(
                            s,
                            "<g{class} data-seq=\"{}\"><title>{tip}</title><line x1=\"{x1}\" y1=\"{y}\" x2=\"{x2}\" y2=\"{y}\" stroke=\"{color}\" stroke-width=\"{}\"{dash} marker-end=\"url(#{marker})\"/><text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{color}\" font-weight=\"{weight}\">{label}</text></g>",
                            e.seq,
                            if witness { 2 } else { 1 },
                            (x1 + x2) / 2,
                            y - 3
                        );
                    }
                    None => {
                        let _ = write!(
                            s,
                            "<g{class} data-seq=\"{}\"><title>{tip}</title><circle cx=\"{ax}\" cy=\"{y}\" r=\"3\" fill=\"{color}\"/><text x=\"{}\" y=\"{}\" fill=\"{color}\" font-style=\"italic\" font-weight=\"{weight}\">{label}</text></g>",
                            e.seq,
                            ax + 6,
                            y + 4
                        );
                    }
                }
            }
        }
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(seq: u64, agent: &str, event: serde_json::Value) -> Entry {
        let mut v = event;
        v["seq"] = json!(seq);
        v["at_us"] = json!(seq * 10);
        v["agent"] = json!(agent);
        serde_json::from_value(v).unwrap()
    }

    fn request(seq: u64, agent: &str) -> Entry {
        entry(
            seq,
            agent,
            json!({"event": "request", "req": seq, "http_method": "POST", "path": "/", "method": "SendMessage", "headers": {}}),
        )
    }

    #[test]
    fn a_long_journal_is_drawn_around_its_witnesses_with_the_gaps_marked() {
        let journal: Vec<Entry> = (1..=200).map(|i| request(i, "a")).collect();
        let witnesses = BTreeSet::from([100]);
        let r = excerpt(&journal, &witnesses, 40, WINDOW);
        let drawn: Vec<u64> = r
            .iter()
            .filter_map(|r| match r {
                Row::Entry(e) => Some(e.seq),
                Row::Gap(_) => None,
            })
            .collect();
        assert_eq!(drawn, (94..=106).collect::<Vec<_>>());
        assert!(matches!(r.first(), Some(Row::Gap(93))));
        assert!(matches!(r.last(), Some(Row::Gap(94))));
        let svg = sequence_svg(&journal, &witnesses, 40, 7);
        assert_eq!(svg.matches("class=\"witness\"").count(), 1);
        assert!(svg.contains("data-seq=\"100\""));
        assert!(svg.contains("93 journal entries not drawn"));
        assert!(svg.contains("marker id=\"aw7\""));
    }

    #[test]
    fn every_party_gets_a_lifeline_and_each_message_its_direction() {
        let journal = vec![
            request(1, "alpha"),
            entry(
                2,
                "alpha",
                json!({"event": "response", "req": 1, "status": 200, "body": {}}),
            ),
            request(3, "beta"),
        ];
        let svg = sequence_svg(&journal, &BTreeSet::new(), 100, 0);
        for p in ["delegator", "alpha", "beta"] {
            assert!(svg.contains(&format!(">{p}</text>")), "{p}");
        }
        // delegator at x=115, alpha at 305: the request goes right, the response left.
        assert!(svg.contains("x1=\"115\" y1=\"57\" x2=\"305\""), "{svg}");
        assert!(svg.contains("x1=\"305\" y1=\"79\" x2=\"115\""), "{svg}");
        assert!(!svg.contains("class=\"witness\""));
    }
}
