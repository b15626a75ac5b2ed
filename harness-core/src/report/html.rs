//! `index.html` and `journals/<case>.html`: the run as evidence.
//!
//! The page opens with the rules broken and the A2A client compatibility (every client
//! requirement of the specification with its status, linked to the cases that judged it), then
//! the failing cases expanded (`<details open>`):
//! per case its broken rules with level, requirement, expected and observed, a sequence diagram
//! of the traffic between delegator and agents, the witness journal entries highlighted in a
//! window of their neighbours, the delegator's driver messages and the tail of its stderr. The
//! other cases follow collapsed. Every case's full journal is a separate page, one click away.
//! Inline content is capped per case (with a note saying so), so the page stays small.

use super::compatibility::{compatibility_line, compatibility_note, evidence_text};
use super::sequence::{Row, excerpt, sequence_svg};
use super::text::{
    cap, clip, entry_json, entry_what, esc, href, known_failing_note, non_passing, stderr_tail,
};
use crate::runner::{CaseResult, Verdict};
use a2a_driver_contract::report::{Compatibility, Coverage, RunIndex};
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// Journal entries drawn in a failing case's inline sequence diagram.
const INLINE_DIAGRAM: usize = 60;
/// Journal entries in a failing case's inline journal excerpt.
const INLINE_ROWS: usize = 40;
/// Entries either side of a witness in the inline excerpt.
const INLINE_WINDOW: usize = 3;
/// Characters of one journal entry's JSON inline.
const INLINE_ENTRY: usize = 700;
/// The last driver messages shown inline, and characters of each.
const INLINE_MESSAGES: usize = 30;
const INLINE_MESSAGE: usize = 400;
/// Case ids listed per broken rule before "and N more".
const RULE_CASES: usize = 20;
/// Journal entries drawn in a journal page's diagram; rows of its table; characters of one
/// entry there. The case JSON holds the journal whole.
const PAGE_DIAGRAM: usize = 200;
const PAGE_ROWS: usize = 500;
const PAGE_ENTRY: usize = 800;

const STYLE: &str = "body{font-family:sans-serif;margin:1.5em auto;max-width:1200px;padding:0 1em;color:#222}\
pre,code{white-space:pre-wrap;overflow-wrap:anywhere;font-size:12px}\
pre{background:#f6f6f6;padding:.5em;margin:.3em 0}\
table{border-collapse:collapse;width:100%;table-layout:fixed}\
td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px;vertical-align:top;text-align:left;overflow-wrap:anywhere}\
.PASS{background:#dfd}.FAIL,.UNKNOWN,.XPASS{background:#fdd}.NON-STRICT,.XFAIL{background:#ffd}.UNSUPPORTED,.NOT.EXERCISED,.NOT.TESTED{background:#eee}\
.badge{padding:0 .4em;border-radius:3px;font-weight:bold;font-size:12px}\
details.case{border:1px solid #ccc;border-radius:4px;margin:.6em 0;padding:.3em .6em}\
details.case>summary{cursor:pointer;overflow-wrap:anywhere}\
.rule{border-left:4px solid #c00;padding:.2em .6em;margin:.5em 0;overflow-wrap:anywhere}\
.rule.NON-STRICT{border-color:#cc0}.rule.UNKNOWN{border-color:#888}\
.rule dl{margin:.2em 0;display:grid;grid-template-columns:6em 1fr;gap:.1em .5em}.rule dd{margin:0}\
tr.witness{background:#fdd;outline:2px solid #c00}tr.witness td{font-weight:bold}\
tr.gap td{color:#777;font-style:italic;text-align:center}\
.banner{background:#c00;color:#fff;padding:.6em;font-weight:bold;border-radius:4px}\
.note{color:#555;font-style:italic}\
svg.seq{display:block;margin:.5em 0;border:1px solid #eee}";

fn head(title: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>{}</title><style>{STYLE}</style></head><body>",
        esc(title)
    )
}

fn badge(v: Verdict) -> String {
    format!("<span class=\"badge {0}\">{0}</span>", v.label())
}

/// Whether a case is shown expanded among the failures: it fails the run.
fn is_failure(r: &CaseResult) -> bool {
    r.verdict.fails_run()
}

/// Where a case's verdict puts it in the page: failures, then NON-STRICT, XFAIL, the rest, PASS.
fn rank(v: Verdict) -> u8 {
    match v {
        Verdict::Fail | Verdict::Unknown | Verdict::XPass => 0,
        Verdict::NonStrict => 1,
        Verdict::XFail => 2,
        Verdict::Unsupported | Verdict::NotExercised => 3,
        Verdict::Pass => 4,
    }
}

/// `index.html` of a report.
pub fn html(index: &RunIndex, results: &[CaseResult]) -> String {
    let t = &index.totals;
    let mut s = head("a2a-harness report");
    let _ = write!(s, "<header><h1>a2a-harness report</h1>");
    if index.run.incomplete {
        let _ = write!(
            s,
            "<p class=\"banner\" id=\"incomplete\">INCOMPLETE: the run was interrupted; this report holds only the {} cases that finished.</p>",
            results.len()
        );
    }
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    for r in results {
        *counts.entry(r.verdict.label()).or_default() += 1;
    }
    let _ = write!(
        s,
        "<p>Delegator <code>{}</code>, seed {}, wall time {:.1} s, host {}</p><p id=\"totals\"><b>{} passed, {} failed, {} skipped</b> ({})</p></header>",
        esc(&index.run.delegator),
        index.run.seed,
        index.run.wall_ms as f64 / 1000.0,
        esc(&index.run.hostname),
        t.passed,
        t.failed,
        t.skipped,
        counts
            .iter()
            .map(|(v, n)| format!("{n} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    );

    let _ = write!(
        s,
        "<section id=\"rules-broken\"><h2>Rules broken ({})</h2>",
        index.rules_broken.len()
    );
    if index.rules_broken.is_empty() {
        s.push_str("<p>No rule broken.</p>");
    } else {
        s.push_str("<table><colgroup><col style=\"width:9em\"><col style=\"width:5em\"><col style=\"width:24%\"><col><col style=\"width:34%\"></colgroup><tr><th>rule</th><th>level</th><th>failing cases</th><th>requirement</th><th>first evidence</th></tr>");
        for b in &index.rules_broken {
            let links: Vec<String> = b
                .cases
                .iter()
                .take(RULE_CASES)
                .map(|c| format!("<a href=\"#case-{0}\">{0}</a>", esc(c)))
                .collect();
            let more = b.cases.len().saturating_sub(RULE_CASES);
            let _ = write!(
                s,
                "<tr class=\"broken\" data-rule=\"{0}\"><td><b>{0}</b></td><td>{1}</td><td>{2}: {3}{4}</td><td>{5}</td><td><code>{6}</code></td></tr>",
                esc(&b.id),
                b.level,
                b.cases.len(),
                links.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                },
                esc(&b.requirement),
                esc(&b.first_evidence)
            );
        }
        s.push_str("</table>");
    }
    s.push_str("</section>");
    if let Some(c) = &index.compatibility {
        s.push_str(&compatibility_section(c, results));
    }

    let mut order: Vec<(usize, &CaseResult)> = results.iter().enumerate().collect();
    order.sort_by_key(|(i, r)| (rank(r.verdict), *i));
    let failures = results.iter().filter(|r| is_failure(r)).count();
    let _ = write!(s, "<section id=\"failures\"><h2>Failures ({failures})</h2>");
    if failures == 0 {
        s.push_str("<p>No case failed.</p>");
    }
    let mut others = false;
    for (uid, r) in &order {
        if !is_failure(r) && !others {
            others = true;
            s.push_str("</section><section id=\"cases\"><h2>Other cases</h2>");
        }
        s.push_str(&case_block(r, *uid));
    }
    s.push_str("</section>");

    let not_tested = index
        .rules
        .iter()
        .filter(|r| r.status == Coverage::NotTested)
        .count();
    let _ = write!(
        s,
        "<section id=\"coverage\"><details><summary><h2 style=\"display:inline\">Rule coverage</h2> ({} rules, {not_tested} NOT TESTED)</summary><table><colgroup><col style=\"width:9em\"><col style=\"width:5em\"><col style=\"width:8em\"><col style=\"width:8em\"><col></colgroup><tr><th>rule</th><th>level</th><th>catalog cases</th><th>evaluated in this run</th><th>requirement</th></tr>",
        index.rules.len()
    );
    for r in &index.rules {
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&r.id),
            r.level,
            if r.status == Coverage::NotTested {
                "NOT TESTED".to_string()
            } else {
                r.cases.to_string()
            },
            r.evaluated,
            esc(&r.requirement)
        );
    }
    s.push_str("</table></details></section></body></html>");
    s
}

/// The A2A client compatibility: the closing line, then every requirement with its status, its
/// rules, links to the cases that judged them (those of this report) and the first evidence or
/// the reason it has no verdict. Open when a requirement FAILs.
fn compatibility_section(c: &Compatibility, results: &[CaseResult]) -> String {
    let ids: BTreeSet<&str> = results.iter().map(|r| r.id.as_str()).collect();
    let failing = c.levels.iter().any(|t| t.fail > 0);
    let mut s = format!(
        "<section id=\"compatibility\"><details{}><summary><h2 style=\"display:inline\">A2A client compatibility</h2> <b>{}</b></summary><p>The delegator as an A2A 1.0 client: a verdict per client requirement of {} from the rule verdicts of every case. {}. Every requirement with its coverage: <code>{}</code>.</p><table><colgroup><col style=\"width:4em\"><col style=\"width:5em\"><col style=\"width:8em\"><col style=\"width:8em\"><col><col style=\"width:11em\"><col style=\"width:16%\"><col style=\"width:26%\"></colgroup><tr><th>req</th><th>level</th><th>§</th><th>status</th><th>requirement</th><th>rules</th><th>cases</th><th>evidence</th></tr>",
        if failing { " open" } else { "" },
        esc(&compatibility_line(c)),
        esc(&c.spec),
        esc(&compatibility_note(c)),
        esc(&c.doc)
    );
    for v in &c.requirements {
        let links: Vec<String> = v
            .cases
            .iter()
            .take(RULE_CASES)
            .map(|id| {
                if ids.contains(id.as_str()) {
                    format!("<a href=\"#case-{0}\">{0}</a>", esc(id))
                } else {
                    esc(id)
                }
            })
            .collect();
        let more = v.cases.len().saturating_sub(RULE_CASES);
        let _ = write!(
            s,
            "<tr class=\"requirement\" id=\"req-{0}\" data-status=\"{3}\"><td><b>{0}</b></td><td>{1}</td><td>{2}<br><small>{4}</small></td><td><span class=\"badge {3}\">{3}</span></td><td>{5}</td><td>{6}</td><td>{7}{8}</td><td><code>{9}</code></td></tr>",
            esc(&v.id),
            v.level,
            esc(&v.section),
            v.status,
            esc(&v.keyword),
            esc(&v.requirement),
            esc(&v.rules.join(", ")),
            links.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            },
            esc(&evidence_text(v))
        );
    }
    s.push_str("</table></details></section>");
    s
}

/// The witnesses of a case, by journal seq.
fn witness_seqs(r: &CaseResult) -> BTreeSet<u64> {
    r.rules
        .iter()
        .flat_map(|v| v.witnesses.iter().map(|w| w.seq))
        .collect()
}

/// One case: failing cases expanded with their evidence, the others collapsed and brief.
fn case_block(r: &CaseResult, uid: usize) -> String {
    let failing = is_failure(r);
    let detailed = failing || r.verdict != Verdict::Pass;
    let mut s = String::new();
    let _ = write!(
        s,
        "<details class=\"case\" id=\"case-{0}\" data-verdict=\"{1}\"{2}><summary>{3} <b>{0}</b> {4} <small>{5} ms</small></summary>",
        esc(&r.id),
        r.verdict.label(),
        if failing { " open" } else { "" },
        badge(r.verdict),
        esc(&r.title),
        r.duration_ms
    );
    if let Some(n) = known_failing_note(r.verdict) {
        let _ = write!(
            s,
            "<p class=\"known\"><b>{}</b>: {}</p>",
            r.verdict.label(),
            esc(n)
        );
    }
    for v in non_passing(r) {
        let requirement = crate::invariants::describe(&v.id).map_or("", |(_, r)| r);
        let _ = write!(
            s,
            "<div class=\"rule {0}\" data-rule=\"{1}\">{2} <b>{1}</b> ({3}) {4}<dl><dt>expected</dt><dd>{5}</dd><dt>observed</dt><dd>{6}</dd>",
            v.verdict.label(),
            esc(&v.id),
            badge(v.verdict),
            v.level,
            esc(requirement),
            esc(v.expected.as_deref().unwrap_or("-")),
            esc(v.observed.as_deref().unwrap_or("-"))
        );
        if !v.witnesses.is_empty() {
            let seqs: Vec<String> = v
                .witnesses
                .iter()
                .map(|w| format!("#{} {} {}", w.seq, w.agent, entry_what(w)))
                .collect();
            let _ = write!(s, "<dt>witnesses</dt><dd>{}</dd>", esc(&seqs.join("; ")));
        }
        s.push_str("</dl></div>");
    }
    let passed = r
        .rules
        .iter()
        .filter(|v| v.verdict == Verdict::Pass)
        .count();
    if passed > 0 {
        let _ = write!(s, "<p>{passed} rules held.</p>");
    }
    if !r.notes.is_empty() {
        s.push_str("<ul class=\"notes\">");
        for n in &r.notes {
            let _ = write!(s, "<li>{}</li>", esc(n));
        }
        s.push_str("</ul>");
    }
    let _ = write!(s, "<pre class=\"repro\">{}</pre>", esc(&r.repro));
    if detailed {
        let witnesses = witness_seqs(r);
        if !r.journal.is_empty() {
            s.push_str(&sequence_svg(&r.journal, &witnesses, INLINE_DIAGRAM, uid));
            s.push_str(&journal_excerpt(r, &witnesses));
        }
        if !r.messages.is_empty() {
            let from = r.messages.len().saturating_sub(INLINE_MESSAGES);
            let lines: Vec<String> = r.messages[from..]
                .iter()
                .map(|m| clip(&m.to_string(), INLINE_MESSAGE))
                .collect();
            let _ = write!(
                s,
                "<h4>Driver messages from the delegator{}</h4><pre class=\"messages\">{}</pre>",
                if from > 0 {
                    format!(" (the last {INLINE_MESSAGES} of {})", r.messages.len())
                } else {
                    String::new()
                },
                esc(&lines.join("\n"))
            );
        }
        if !r.stderr.trim().is_empty() {
            let (tail, skipped) = stderr_tail(&r.stderr);
            let _ = write!(
                s,
                "<h4>Delegator stderr{}</h4><pre class=\"stderr\">{}</pre>",
                if skipped > 0 {
                    format!(" (last lines; {skipped} earlier left out)")
                } else {
                    String::new()
                },
                esc(&tail)
            );
        }
    }
    let _ = write!(
        s,
        "<p><a href=\"{}\">full journal ({} entries)</a> · <a href=\"{}\">case JSON</a></p></details>",
        esc(&href("journals", &r.id, "html")),
        r.journal.len(),
        esc(&href("cases", &r.id, "json"))
    );
    s
}

/// The journal around a case's witnesses (or its beginning), witnesses highlighted.
fn journal_excerpt(r: &CaseResult, witnesses: &BTreeSet<u64>) -> String {
    let rows = excerpt(&r.journal, witnesses, INLINE_ROWS, INLINE_WINDOW);
    let mut s = format!(
        "<h4>Journal{}</h4><table class=\"journal\"><colgroup><col style=\"width:4em\"><col style=\"width:9em\"><col style=\"width:13em\"><col></colgroup><tr><th>#</th><th>agent</th><th>what</th><th>entry</th></tr>",
        if witnesses.is_empty() {
            ""
        } else {
            " around the witnesses"
        }
    );
    for row in rows {
        match row {
            Row::Gap(n) => {
                let _ = write!(
                    s,
                    "<tr class=\"gap\"><td colspan=\"4\">⋯ {n} entr{} not shown here (see the full journal) ⋯</td></tr>",
                    if n == 1 { "y" } else { "ies" }
                );
            }
            Row::Entry(e) => {
                let _ = write!(
                    s,
                    "<tr{} data-seq=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
                    if witnesses.contains(&e.seq) {
                        " class=\"witness\""
                    } else {
                        ""
                    },
                    e.seq,
                    e.seq,
                    esc(&e.agent),
                    esc(&entry_what(e)),
                    esc(&entry_json(e, INLINE_ENTRY))
                );
            }
        }
    }
    s.push_str("</table>");
    s
}

/// `journals/<case>.html`: the case's whole journal (each entry capped, the case JSON holding
/// it whole) with its sequence diagram, witnesses highlighted and anchored as `#seq-N`.
pub fn journal_page(r: &CaseResult) -> String {
    let witnesses = witness_seqs(r);
    let mut s = head(&format!("journal of {}", r.id));
    let _ = write!(
        s,
        "<p><a href=\"../index.html#case-{0}\">← back to the report</a></p><h1>{1} <code>{0}</code></h1><p>{2}</p><p>{3} journal entries; {4} witnesses highlighted. Entries longer than {PAGE_ENTRY} characters and entries past the first {PAGE_ROWS} are cut here; <a href=\"../{5}\">the case JSON</a> holds them whole.</p>",
        esc(&r.id),
        badge(r.verdict),
        esc(&r.title),
        r.journal.len(),
        witnesses.len(),
        esc(&href("cases", &r.id, "json"))
    );
    s.push_str(&sequence_svg(&r.journal, &witnesses, PAGE_DIAGRAM, 0));
    s.push_str("<table class=\"journal\"><colgroup><col style=\"width:4em\"><col style=\"width:7em\"><col style=\"width:9em\"><col style=\"width:13em\"><col></colgroup><tr><th>#</th><th>at (µs)</th><th>agent</th><th>what</th><th>entry</th></tr>");
    for e in r.journal.iter().take(PAGE_ROWS) {
        let (json, cut) = cap(
            &serde_json::to_string(&e.event).unwrap_or_default(),
            PAGE_ENTRY,
        );
        let _ = write!(
            s,
            "<tr id=\"seq-{0}\"{1}><td>{0}</td><td>{2}</td><td>{3}</td><td>{4}</td><td><code>{5}</code>{6}</td></tr>",
            e.seq,
            if witnesses.contains(&e.seq) {
                " class=\"witness\""
            } else {
                ""
            },
            e.at_us,
            esc(&e.agent),
            esc(&entry_what(e)),
            esc(&json),
            if cut {
                " <span class=\"note\">(cut)</span>"
            } else {
                ""
            }
        );
    }
    s.push_str("</table>");
    if r.journal.len() > PAGE_ROWS {
        let _ = write!(
            s,
            "<p class=\"note\">{} later entries are not shown here: <a href=\"../{}\">the case JSON</a> holds them.</p>",
            r.journal.len() - PAGE_ROWS,
            esc(&href("cases", &r.id, "json"))
        );
    }
    s.push_str("</body></html>");
    s
}
