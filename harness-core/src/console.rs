//! What `a2a-harness run` prints: a progress bar at a terminal (elapsed time, ETA, failures so
//! far, the case running longest once it is slow; slow cases are listed as they end), one line
//! per case otherwise, each failure as it happens (its rules, notes, the tail of
//! the delegator's stderr and the repro line), and the closing counts and A2A client line.
//!
//! Colours go to a terminal only: the streams are [`anstream`] streams, which strip styles when
//! the output is not a terminal or `NO_COLOR` is set (and keep them with `CLICOLOR_FORCE`).
//! Rendering is separate from writing so that the text is testable.

use crate::catalog::{CaseGlob, known_failing_matches};
use crate::runner::{CaseResult, Verdict};
use anstyle::{AnsiColor, Style};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

/// Lines of the delegator's stderr shown under a failure.
pub const STDERR_TAIL_LINES: usize = 10;
/// A case that took at least this long is named as slow.
pub const SLOW: Duration = Duration::from_secs(10);

/// The style of a verdict label.
fn style(v: Verdict) -> Style {
    let c = match v {
        Verdict::Pass => AnsiColor::Green,
        Verdict::Fail => AnsiColor::Red,
        Verdict::XPass | Verdict::Unknown => AnsiColor::Magenta,
        Verdict::XFail | Verdict::NonStrict => AnsiColor::Yellow,
        Verdict::Unsupported | Verdict::NotExercised => AnsiColor::Cyan,
    };
    Style::new().fg_color(Some(c.into())).bold()
}

/// A verdict label, styled (the stream strips the style where colour is off).
fn label(v: Verdict) -> String {
    let s = style(v);
    format!("{s}{:<11}{s:#}", v.label())
}

fn dim(text: &str) -> String {
    let s = Style::new().dimmed();
    format!("{s}{text}{s:#}")
}

/// A duration as `1.2s`.
pub fn secs(ms: u64) -> String {
    format!("{:.1}s", ms as f64 / 1000.0)
}

/// The last `n` non-empty lines of `text`.
pub fn tail(text: &str, n: usize) -> Vec<&str> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .collect();
    lines[lines.len().saturating_sub(n)..].to_vec()
}

/// The one-line record of a finished case: `PASS        [  1.2s] states.completed`, with
/// `SLOW` appended when it took at least [`SLOW`].
pub fn case_line(r: &CaseResult) -> String {
    let slow = if Duration::from_millis(r.duration_ms) >= SLOW {
        format!(" {}", dim("(slow)"))
    } else {
        String::new()
    };
    format!(
        "{} [{:>6}] {}{slow}",
        label(r.verdict),
        secs(r.duration_ms),
        r.id
    )
}

/// The block printed when a case fails the run (FAIL, UNKNOWN, XPASS) as it finishes, or the
/// one line of any other verdict. An XPASS names the known-failing entry to remove.
pub fn case_block(r: &CaseResult, known: &[CaseGlob], known_file: Option<&Path>) -> String {
    let mut s = case_line(r);
    s.push('\n');
    if r.verdict == Verdict::XPass {
        let entries: Vec<&str> = known
            .iter()
            .filter(|k| known_failing_matches(k, &r.id))
            .map(CaseGlob::as_str)
            .collect();
        let _ = writeln!(
            s,
            "  hint: it passed but is listed as known-failing ({}{}): remove the entry",
            entries.join(", "),
            known_file
                .map(|f| format!(" in {}", f.display()))
                .unwrap_or_default()
        );
    }
    if !matches!(r.verdict, Verdict::Fail | Verdict::Unknown) {
        return s;
    }
    for v in r.broken_rules() {
        let _ = writeln!(
            s,
            "  {} {}: expected {}; observed {}",
            v.verdict.label(),
            v.id,
            v.expected.as_deref().unwrap_or("-"),
            v.observed.as_deref().unwrap_or("-")
        );
    }
    for n in r.notes.iter().filter(|n| !n.starts_with("crash injected")) {
        let _ = writeln!(s, "  note: {n}");
    }
    let t = tail(&r.stderr, STDERR_TAIL_LINES);
    if !t.is_empty() {
        let _ = writeln!(s, "  delegator stderr (last {} lines):", t.len());
        for l in t {
            let _ = writeln!(s, "  {} {l}", dim("|"));
        }
    }
    let _ = writeln!(s, "  repro: {}", r.repro);
    s
}

/// Verdict counts for the closing line: each verdict on its own (XFAIL and NON-STRICT are not
/// passes; UNSUPPORTED and NOT EXERCISED are skipped).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// PASS.
    pub passed: usize,
    /// FAIL.
    pub failed: usize,
    /// NON-STRICT (a SHOULD broken).
    pub non_strict: usize,
    /// XFAIL (failed, listed as known-failing).
    pub xfail: usize,
    /// XPASS (passed, listed as known-failing: fails the run).
    pub xpass: usize,
    /// UNKNOWN (fails the run).
    pub unknown: usize,
    /// UNSUPPORTED or NOT EXERCISED.
    pub skipped: usize,
}

impl Counts {
    /// Count `results`.
    pub fn of<'a>(results: impl IntoIterator<Item = &'a CaseResult>) -> Counts {
        let mut c = Counts::default();
        for r in results {
            c.add(r.verdict);
        }
        c
    }

    /// Count one verdict.
    pub fn add(&mut self, v: Verdict) {
        match v {
            Verdict::Pass => self.passed += 1,
            Verdict::Fail => self.failed += 1,
            Verdict::NonStrict => self.non_strict += 1,
            Verdict::XFail => self.xfail += 1,
            Verdict::XPass => self.xpass += 1,
            Verdict::Unknown => self.unknown += 1,
            Verdict::Unsupported | Verdict::NotExercised => self.skipped += 1,
        }
    }

    /// Results that fail the run (FAIL, XPASS, UNKNOWN).
    pub fn failing(&self) -> usize {
        self.failed + self.xpass + self.unknown
    }

    /// `N passed, N failed, N non-strict, N xfail, N xpass, N unknown, N skipped`.
    pub fn line(&self) -> String {
        format!(
            "{} passed, {} failed, {} non-strict, {} xfail, {} xpass, {} unknown, {} skipped",
            self.passed,
            self.failed,
            self.non_strict,
            self.xfail,
            self.xpass,
            self.unknown,
            self.skipped
        )
    }
}

/// What the progress bar's message says: failures so far and a case running slow.
#[derive(Debug, Default)]
struct Tally {
    counts: Counts,
    slow: Option<(String, Duration)>,
}

impl Tally {
    fn message(&self) -> String {
        let mut m = format!("{} failing", self.counts.failing());
        if let Some((id, d)) = &self.slow
            && *d >= SLOW
        {
            let _ = write!(m, " · running {id} for {}", secs(d.as_millis() as u64));
        }
        m
    }
}

/// The live console of a run: the bar (or one line per case), failures as they happen.
pub struct Live {
    bar: indicatif::ProgressBar,
    tally: Tally,
    known: Vec<CaseGlob>,
    known_file: Option<std::path::PathBuf>,
}

impl Live {
    /// A console for `total` results; the bar is drawn only when stderr is a terminal.
    pub fn new(total: u64, known: Vec<CaseGlob>, known_file: Option<std::path::PathBuf>) -> Live {
        use std::io::IsTerminal;
        let bar = indicatif::ProgressBar::new(total);
        if !std::io::stderr().is_terminal() {
            bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        }
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{elapsed_precise} {bar:30} {pos}/{len} ETA {eta} {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar.enable_steady_tick(Duration::from_millis(500));
        Live {
            bar,
            tally: Tally::default(),
            known,
            known_file,
        }
    }

    /// A case finished: count it, print its block (failures in full) above the bar, or its
    /// line on stderr when there is no bar. Write errors (a closed pipe) are ignored here; the
    /// closing lines report them.
    pub fn finished(&mut self, r: &CaseResult) {
        self.tally.counts.add(r.verdict);
        let loud = r.verdict.fails_run() || matches!(r.verdict, Verdict::XFail);
        let slow = Duration::from_millis(r.duration_ms) >= SLOW;
        if loud {
            let block = case_block(r, &self.known, self.known_file.as_deref());
            self.bar.suspend(|| {
                let _ = anstream::stdout().write_all(block.as_bytes());
            });
        } else if self.bar.is_hidden() || slow {
            let line = case_line(r);
            self.bar.suspend(|| {
                let _ = writeln!(anstream::stderr(), "{line}");
            });
        }
        self.bar.set_message(self.tally.message());
        self.bar.inc(1);
    }

    /// Name the case running longest on the bar once it has run [`SLOW`] or more.
    pub fn tick(&mut self, longest: Option<(String, Duration)>) {
        self.tally.slow = longest;
        self.bar.set_message(self.tally.message());
    }

    /// Remove the bar.
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}

/// The closing lines of a run: a recap of what failed, known-failing entries that matched
/// nothing, the report directory, per-binding counts, the counts, and last the A2A client line
/// (`A2A client: MUST a/b SHOULD c/d MAY e/f`: PASS requirements over all of each level) with
/// the rows not passed and why.
pub fn closing(
    results: &[CaseResult],
    stale: &[&CaseGlob],
    known_file: Option<&Path>,
    out: &Path,
    bindings: &[a2a_protocol::Binding],
    interrupted: Option<usize>,
) -> String {
    let mut s = String::new();
    let failing: Vec<&CaseResult> = results.iter().filter(|r| r.verdict.fails_run()).collect();
    if !failing.is_empty() {
        let _ = writeln!(s, "failing:");
        for r in failing {
            let _ = writeln!(s, "  {} {}", label(r.verdict), r.id);
        }
    }
    for k in stale {
        let _ = writeln!(
            s,
            "note: known-failing entry {:?}{} matches no selected case: remove it if it is stale",
            k.as_str(),
            known_file
                .map(|f| format!(" ({})", f.display()))
                .unwrap_or_default()
        );
    }
    if let Some(left) = interrupted {
        let _ = writeln!(
            s,
            "interrupted: {left} results not run; the report is partial (marked incomplete)"
        );
    }
    s.push_str(&crate::report::rules_broken_text(
        &crate::report::rules_broken(results),
    ));
    let _ = writeln!(s, "reports: {}", out.display());
    for b in bindings {
        let c = Counts::of(results.iter().filter(|r| r.binding == Some(*b)));
        let _ = writeln!(s, "{b}: {}", c.line());
    }
    let _ = writeln!(s, "{}", Counts::of(results).line());
    let compatibility = crate::report::compatibility(results);
    let _ = writeln!(s, "{}", crate::report::compatibility_line(&compatibility));
    let _ = writeln!(s, "{}", crate::report::compatibility_note(&compatibility));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::RuleVerdict;

    fn result(id: &str, verdict: Verdict, ms: u64) -> CaseResult {
        let s = crate::catalog::parse_case(
            Path::new("t.toml"),
            &format!(
                "id = \"{id}\"\ntitle = \"t\"\nrules = [\"DLG-STATE-01\"]\n[network]\n[[network.agent]]\nname = \"a\"\n"
            ),
        )
        .unwrap();
        let cfg = crate::runner::RunSettings {
            delegator: "my-delegator --driver".into(),
            seed: 7,
            work_dir: "/nowhere".into(),
            binding: None,
            tls: false,
        };
        let mut r = CaseResult::harness_failure(&s, &cfg, "n".into());
        r.notes.clear();
        r.verdict = verdict;
        r.duration_ms = ms;
        r
    }

    fn plain(s: &str) -> String {
        anstream::adapter::strip_str(s).to_string()
    }

    #[test]
    fn a_failure_shows_rules_notes_stderr_tail_and_repro() {
        let mut r = result("states.completed", Verdict::Fail, 1234);
        r.rules.push(RuleVerdict {
            id: "DLG-STATE-01".into(),
            level: crate::rules::Level::Must,
            verdict: Verdict::Fail,
            expected: Some("COMPLETED".into()),
            observed: Some("FAILED".into()),
            witnesses: vec![],
        });
        r.notes.push("contract: state before init_ok".into());
        r.stderr = (1..=14).map(|i| format!("line {i}\n")).collect();
        insta::assert_snapshot!(plain(&case_block(&r, &[], None)));
    }

    #[test]
    fn an_xpass_names_the_entry_to_remove_and_slow_cases_are_marked() {
        let r = result("states.rejected", Verdict::XPass, 12_500);
        let known = vec![CaseGlob::new("states.*").unwrap()];
        insta::assert_snapshot!(plain(&case_block(&r, &known, Some(Path::new("known.txt")))));
    }

    #[test]
    fn the_closing_line_counts_each_verdict_apart() {
        let results = vec![
            result("a", Verdict::Pass, 1),
            result("b", Verdict::Fail, 1),
            result("c", Verdict::NonStrict, 1),
            result("d", Verdict::XFail, 1),
            result("e", Verdict::XPass, 1),
            result("f", Verdict::Unknown, 1),
            result("g", Verdict::Unsupported, 1),
            result("h", Verdict::Pass, 1),
        ];
        let known = [CaseGlob::new("gone.*").unwrap()];
        let stale: Vec<&CaseGlob> = known.iter().collect();
        insta::assert_snapshot!(plain(&closing(
            &results,
            &stale,
            Some(Path::new("known.txt")),
            Path::new("reports/x"),
            &[],
            None
        )));
        let c = Counts::of(&results);
        assert_eq!((c.passed, c.failed, c.failing()), (2, 1, 3));
    }

    #[test]
    fn the_bar_names_failures_so_far_and_a_case_running_slow() {
        let mut t = Tally::default();
        t.counts.add(Verdict::Fail);
        t.counts.add(Verdict::XFail);
        t.slow = Some(("a.quick".into(), Duration::from_secs(2)));
        assert_eq!(t.message(), "1 failing");
        t.slow = Some(("a.slow".into(), Duration::from_millis(12_300)));
        assert_eq!(t.message(), "1 failing · running a.slow for 12.3s");
    }

    #[test]
    fn colour_is_stripped_from_plain_text_only() {
        let l = label(Verdict::Fail);
        assert!(l.contains("\u{1b}["), "styled: {l:?}");
        assert_eq!(plain(&l).trim_end(), "FAIL");
    }
}
