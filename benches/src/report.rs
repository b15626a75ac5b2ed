//! Results: `bench.json` (typed, versioned), `bench.md`, `bench.html` (inline SVG plots), the
//! console table and `--compare`.

use crate::plot::{Axis, Marker, Plot, Point, Series, Unit};
use crate::run::RunSample;
use crate::workload::Workload;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// The version of the `bench.json` format.
pub const SCHEMA_VERSION: u32 = 1;

/// min / median / max of one figure over the repetitions.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct Spread {
    /// Smallest.
    pub min: f64,
    /// Median.
    pub median: f64,
    /// Largest.
    pub max: f64,
}

impl Spread {
    /// The spread of `v` (all zero when empty).
    pub fn of(v: impl IntoIterator<Item = f64>) -> Spread {
        let mut v: Vec<f64> = v.into_iter().collect();
        if v.is_empty() {
            return Spread::default();
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Spread {
            min: v[0],
            median,
            max: v[n - 1],
        }
    }
}

/// The figures of one side over the repetitions.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SideFigures {
    /// MB/s (10^6 bytes of artifact content per second).
    pub mb_s: Spread,
    /// Artifact chunk events per second.
    pub events_s: Spread,
    /// Time to first artifact byte, ms (see `RunSample::ttfb_ms`).
    pub ttfb_ms: Spread,
    /// End-to-end time, s.
    pub wall_s: Spread,
    /// Per-delegation latency p50, ms.
    pub latency_p50_ms: Spread,
    /// Per-delegation latency p99, ms.
    pub latency_p99_ms: Spread,
    /// Consumer CPU-s per GiB.
    pub cpu_s_per_gib: Spread,
    /// Consumer peak RSS, MiB.
    pub peak_rss_mib: Spread,
    /// Consumer peak open fds.
    pub peak_fds: Spread,
    /// Mock (this process) CPU seconds.
    pub mock_cpu_s: Spread,
    /// Mock peak RSS, MiB.
    pub mock_peak_rss_mib: Spread,
    /// Mock peak open fds.
    pub mock_peak_fds: Spread,
}

impl SideFigures {
    /// The figures of verified samples only.
    pub fn of(samples: &[RunSample]) -> SideFigures {
        let ok: Vec<&RunSample> = samples.iter().filter(|s| s.verified).collect();
        let f = |g: fn(&RunSample) -> f64| Spread::of(ok.iter().map(|s| g(s)));
        SideFigures {
            mb_s: f(|s| s.mb_s),
            events_s: f(|s| s.events_s),
            ttfb_ms: f(|s| s.ttfb_ms),
            wall_s: f(|s| s.wall_s),
            latency_p50_ms: f(|s| s.latency_p50_ms),
            latency_p99_ms: f(|s| s.latency_p99_ms),
            cpu_s_per_gib: f(|s| s.cpu_s_per_gib),
            peak_rss_mib: f(|s| s.peak_rss_mib),
            peak_fds: f(|s| s.peak_fds as f64),
            mock_cpu_s: f(|s| s.mock_cpu_s),
            mock_peak_rss_mib: f(|s| s.mock_peak_rss_mib),
            mock_peak_fds: f(|s| s.mock_peak_fds as f64),
        }
    }
}

/// One side of one workload: its samples and figures.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Side {
    /// `ceiling`, `delegator`, `python-sdk`, `js-sdk` or `reference`.
    pub name: String,
    /// Every repetition verified byte-exact.
    pub verified: bool,
    /// Figures over the verified repetitions.
    pub figures: SideFigures,
    /// Each repetition.
    pub samples: Vec<RunSample>,
}

impl Side {
    /// A side from its samples.
    pub fn new(name: &str, samples: Vec<RunSample>) -> Side {
        Side {
            name: name.to_string(),
            verified: !samples.is_empty() && samples.iter().all(|s| s.verified),
            figures: SideFigures::of(&samples),
            samples,
        }
    }
}

/// One workload's result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WorkloadResult {
    /// The workload as run (after `--quick`).
    pub workload: Workload,
    /// `ok` (the delegator verified in every repetition) or `FAILED`.
    pub verdict: String,
    /// The ceiling (raw reads).
    pub ceiling: Side,
    /// The delegator under test.
    pub delegator: Side,
    /// Baselines.
    #[serde(default)]
    pub baselines: Vec<Side>,
    /// Per repetition, delegator MB/s over the paired ceiling MB/s: spread.
    pub ratio_to_ceiling: Spread,
    /// Per baseline name: delegator median MB/s over the baseline's median.
    #[serde(default)]
    pub ratio_to_baselines: std::collections::BTreeMap<String, f64>,
}

impl WorkloadResult {
    /// Assemble a result.
    pub fn new(
        workload: Workload,
        ceiling: Vec<RunSample>,
        delegator: Vec<RunSample>,
        baselines: Vec<Side>,
    ) -> WorkloadResult {
        let ratio_to_ceiling = Spread::of(
            ceiling
                .iter()
                .zip(&delegator)
                .filter(|(c, d)| c.verified && d.verified && c.mb_s > 0.0)
                .map(|(c, d)| d.mb_s / c.mb_s),
        );
        let delegator = Side::new("delegator", delegator);
        let ratio_to_baselines = baselines
            .iter()
            .filter(|b| b.verified && b.figures.mb_s.median > 0.0)
            .map(|b| {
                (
                    b.name.clone(),
                    delegator.figures.mb_s.median / b.figures.mb_s.median,
                )
            })
            .collect();
        WorkloadResult {
            verdict: if delegator.verified { "ok" } else { "FAILED" }.into(),
            workload,
            ceiling: Side::new("ceiling", ceiling),
            delegator,
            baselines,
            ratio_to_ceiling,
            ratio_to_baselines,
        }
    }
}

/// The whole `bench.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BenchReport {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// When the run started (RFC 3339, UTC).
    pub started_at: String,
    /// The command line.
    pub command: String,
    /// The delegator command.
    pub delegator: String,
    /// `--quick`.
    pub quick: bool,
    /// Cores of the machine.
    pub cores: usize,
    /// `uname -r`-like kernel release, if known.
    pub kernel: String,
    /// Per workload.
    pub results: Vec<WorkloadResult>,
}

impl BenchReport {
    /// True when every workload's delegator runs verified.
    pub fn all_verified(&self) -> bool {
        self.results.iter().all(|r| r.delegator.verified)
    }
}

fn f1(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// The console / markdown table.
pub fn table(r: &BenchReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| workload | verdict | ceiling MB/s | delegator MB/s (min..max) | ratio | events/s | TTFB ms | p50/p99 ms | CPU-s/GiB | RSS MiB | fds | mock CPU-s | mock RSS MiB | baselines |"
    );
    let _ = writeln!(
        out,
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for w in &r.results {
        let d = &w.delegator.figures;
        let c = &w.ceiling.figures;
        let base: Vec<String> = w
            .baselines
            .iter()
            .map(|b| {
                if b.verified {
                    format!(
                        "{} {} MB/s, {} CPU-s/GiB (x{})",
                        b.name,
                        f1(b.figures.mb_s.median),
                        f1(b.figures.cpu_s_per_gib.median),
                        w.ratio_to_baselines
                            .get(&b.name)
                            .map_or("-".into(), |x| f1(*x))
                    )
                } else {
                    format!("{} FAILED", b.name)
                }
            })
            .collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} ({}..{}) | {} | {} | {} | {}/{} | {} | {} | {} | {} | {} | {} |",
            w.workload.name,
            w.verdict,
            if w.ceiling.verified {
                f1(c.mb_s.median)
            } else {
                "FAILED".into()
            },
            f1(d.mb_s.median),
            f1(d.mb_s.min),
            f1(d.mb_s.max),
            f1(w.ratio_to_ceiling.median),
            f1(d.events_s.median),
            f1(d.ttfb_ms.median),
            f1(d.latency_p50_ms.median),
            f1(d.latency_p99_ms.median),
            f1(d.cpu_s_per_gib.median),
            f1(d.peak_rss_mib.median),
            d.peak_fds.median,
            f1(d.mock_cpu_s.median),
            f1(d.mock_peak_rss_mib.median),
            if base.is_empty() {
                "-".into()
            } else {
                base.join("; ")
            },
        );
    }
    for w in r.results.iter().filter(|w| !w.delegator.verified) {
        for (i, s) in w.delegator.samples.iter().enumerate() {
            for f in &s.failures {
                let _ = writeln!(out, "\n- {} run {}: {}", w.workload.name, i + 1, f);
            }
        }
    }
    out
}

/// The baselines' own table (empty when none ran): per workload and baseline, its MB/s, its
/// share of the ceiling's, how many times faster the delegator is, its CPU per GiB and peak
/// RSS (its own process), its time to first byte and its latency.
pub fn baseline_table(r: &BenchReport) -> String {
    if r.results.iter().all(|w| w.baselines.is_empty()) {
        return String::new();
    }
    let mut out = String::from(
        "| workload | baseline | MB/s (min..max) | / ceiling | delegator x | CPU-s/GiB | RSS MiB | TTFB ms | p50/p99 ms |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for w in &r.results {
        for b in &w.baselines {
            let f = &b.figures;
            if !b.verified {
                let why = b
                    .samples
                    .iter()
                    .flat_map(|s| s.failures.first())
                    .next()
                    .map_or(String::new(), |f| format!(": {f}"));
                let _ = writeln!(
                    out,
                    "| {} | {} | FAILED{} | - | - | - | - | - | - |",
                    w.workload.name,
                    b.name,
                    why.replace('|', "/")
                );
                continue;
            }
            let c = w.ceiling.figures.mb_s.median;
            let _ = writeln!(
                out,
                "| {} | {} | {} ({}..{}) | {} | {} | {} | {} | {} | {}/{} |",
                w.workload.name,
                b.name,
                f1(f.mb_s.median),
                f1(f.mb_s.min),
                f1(f.mb_s.max),
                if w.ceiling.verified && c > 0.0 {
                    f1(f.mb_s.median / c)
                } else {
                    "-".into()
                },
                w.ratio_to_baselines
                    .get(&b.name)
                    .map_or("-".into(), |x| f1(*x)),
                f1(f.cpu_s_per_gib.median),
                f1(f.peak_rss_mib.median),
                f1(f.ttfb_ms.median),
                f1(f.latency_p50_ms.median),
                f1(f.latency_p99_ms.median),
            );
        }
    }
    out
}

/// `bench.md`.
pub fn markdown(r: &BenchReport) -> String {
    format!(
        "# a2a-harness bench\n\n- started: {}\n- command: `{}`\n- delegator: `{}`\n- machine: {} cores, kernel {}\n- quick: {}\n\nMB/s are 10^6 bytes of artifact content per second, medians over the repetitions; ratio is the delegator's MB/s over the ceiling's (raw reads of the same responses from the same source, run back to back), per repetition, median.\n\n{}",
        r.started_at,
        r.command,
        r.delegator,
        r.cores,
        r.kernel,
        r.quick,
        table(r)
    ) + &match baseline_table(r) {
        t if t.is_empty() => t,
        t => format!("\n## Baselines\n\n{t}"),
    }
}

/// A markdown table (its `|` lines) as an HTML table, the first row as headers; without the
/// last column when `drop_last`.
fn html_table(md: &str, drop_last: bool) -> String {
    let mut rows = String::from("<table>");
    for (i, line) in md
        .lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|---"))
        .enumerate()
    {
        rows.push_str("<tr>");
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").collect();
        let n = if drop_last {
            cells.len().saturating_sub(1)
        } else {
            cells.len()
        };
        let tag = if i == 0 { "th" } else { "td" };
        for c in &cells[..n] {
            let _ = write!(rows, "<{tag}>{}</{tag}>", esc(c.trim()));
        }
        rows.push_str("</tr>\n");
    }
    rows.push_str("</table>");
    rows
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The workload families plotted: each has its own throughput plot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    /// `stream-*`: one delegation, throughput against the artifact size.
    Sizes,
    /// `parallel-*`: throughput against the number of concurrent delegations.
    Parallel,
    /// `scale-*`: many small delegations, throughput against their number.
    Scale,
}

impl Family {
    const ALL: [Family; 3] = [Family::Sizes, Family::Parallel, Family::Scale];

    fn of(name: &str) -> Option<Family> {
        if name.starts_with("stream-") {
            Some(Family::Sizes)
        } else if name.starts_with("parallel-") {
            Some(Family::Parallel)
        } else if name.starts_with("scale-") {
            Some(Family::Scale)
        } else {
            None
        }
    }

    /// How this family's plot is drawn.
    fn axis(self) -> FamilyAxis {
        match self {
            Family::Sizes => FamilyAxis {
                id: "throughput-sizes",
                title: "Throughput vs artifact size (stream-*: one delegation)",
                label: "artifact bytes per delegation (log)",
                unit: Unit::Bytes,
                x: |w| w.delegation_bytes() as f64,
            },
            Family::Parallel => FamilyAxis {
                id: "throughput-parallel",
                title: "Throughput vs concurrent delegations (parallel-*)",
                label: "concurrent delegations (log)",
                unit: Unit::Count,
                x: |w| f64::from(w.parallel),
            },
            Family::Scale => FamilyAxis {
                id: "throughput-scale",
                title: "Throughput at scale (scale-*: many small delegations)",
                label: "concurrent delegations (log)",
                unit: Unit::Count,
                x: |w| f64::from(w.parallel),
            },
        }
    }
}

/// A family's plot: its id, title, x axis label and unit, and a workload's x.
struct FamilyAxis {
    id: &'static str,
    title: &'static str,
    label: &'static str,
    unit: Unit,
    x: fn(&Workload) -> f64,
}

/// Colour and marker of a side, the same in every plot.
fn side_style(name: &str, i: usize) -> (&'static str, Marker) {
    match name {
        "ceiling" => ("#6b6b6b", Marker::Square),
        "delegator" => ("#d62728", Marker::Circle),
        "python-sdk" => ("#1f77b4", Marker::Triangle),
        "js-sdk" => ("#e6850e", Marker::Diamond),
        "reference" => ("#9467bd", Marker::TriangleDown),
        _ => (
            ["#17becf", "#8c564b", "#bcbd22", "#e377c2"][i % 4],
            [Marker::TriangleDown, Marker::Diamond, Marker::Triangle][i % 3],
        ),
    }
}

/// The sides of a workload, in legend order: ceiling, delegator, each baseline.
fn sides(w: &WorkloadResult) -> Vec<&Side> {
    let mut v = vec![&w.ceiling, &w.delegator];
    v.extend(w.baselines.iter());
    v
}

/// A y axis for throughputs: logarithmic when they span a decade or more, else from zero.
fn throughput_axis(values: &[f64]) -> (Axis, String) {
    let pos: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0).collect();
    let lo = pos.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = pos.iter().copied().fold(0.0, f64::max);
    if hi / lo >= 10.0 {
        (Axis::log(&pos, Unit::Plain), "MB/s (log)".into())
    } else {
        (Axis::linear_from_zero(&pos, Unit::Plain), "MB/s".into())
    }
}

/// The throughput plot of one family, or `None` when no workload of it ran.
fn family_plot(r: &BenchReport, family: Family) -> Option<Plot> {
    let FamilyAxis {
        id,
        title,
        label: xlabel,
        unit,
        x: xof,
    } = family.axis();
    let members: Vec<&WorkloadResult> = r
        .results
        .iter()
        .filter(|w| Family::of(&w.workload.name) == Some(family))
        .collect();
    if members.is_empty() {
        return None;
    }
    // Lines join workloads of one part kind (text, raw, data): the variants.
    let mut variants: Vec<String> = Vec::new();
    for w in &members {
        let v = format!("{} parts", part_name(w.workload.part));
        if !variants.contains(&v) {
            variants.push(v);
        }
    }
    let mut names: Vec<String> = Vec::new();
    for w in &members {
        for s in sides(w) {
            if !names.contains(&s.name) {
                names.push(s.name.clone());
            }
        }
    }
    let mut ys = Vec::new();
    let series = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let (colour, marker) = side_style(name, i);
            let mut lines: Vec<(usize, Vec<Point>)> =
                (0..variants.len()).map(|v| (v, Vec::new())).collect();
            for w in &members {
                let Some(s) = sides(w).into_iter().find(|s| &s.name == name) else {
                    continue;
                };
                if !s.verified {
                    continue;
                }
                let m = &s.figures.mb_s;
                ys.extend([m.min, m.median, m.max]);
                let v = format!("{} parts", part_name(w.workload.part));
                let k = variants.iter().position(|x| *x == v).unwrap_or(0);
                lines[k].1.push(Point {
                    x: xof(&w.workload),
                    y: m.median,
                    spread: Some((m.min, m.max)),
                    title: format!(
                        "{}: {} {} MB/s (min {}, max {})",
                        w.workload.name,
                        name,
                        f1(m.median),
                        f1(m.min),
                        f1(m.max)
                    ),
                });
            }
            lines.retain(|l| !l.1.is_empty());
            Series {
                name: name.clone(),
                colour: colour.into(),
                marker,
                lines,
            }
        })
        .collect();
    let xs: Vec<f64> = members.iter().map(|w| xof(&w.workload)).collect();
    Some(Plot {
        id: id.into(),
        title: title.into(),
        x: (Axis::log(&xs, unit), xlabel.into()),
        y: throughput_axis(&ys),
        variants,
        series,
    })
}

fn part_name(p: crate::workload::PartKind) -> &'static str {
    match p {
        crate::workload::PartKind::Text => "text",
        crate::workload::PartKind::Raw => "raw",
        crate::workload::PartKind::Data => "data",
    }
}

/// The RSS-over-time plot of one workload (the delegator group and the mock, first sampled
/// repetition), or `None` without samples.
fn rss_plot(w: &WorkloadResult) -> Option<Plot> {
    let s = w
        .delegator
        .samples
        .iter()
        .find(|s| !s.rss_series.is_empty())?;
    let step = (s.rss_series.len() / 400).max(1);
    let pts = |f: fn(&crate::procfs::Sample) -> u64| -> Vec<Point> {
        s.rss_series
            .iter()
            .step_by(step)
            .map(|p| Point {
                x: p.t_ms as f64 / 1000.0,
                y: f(p) as f64 / 1024.0,
                spread: None,
                title: String::new(),
            })
            .collect()
    };
    let d = pts(|p| p.delegator_rss_kib);
    let m = pts(|p| p.mock_rss_kib);
    let xs: Vec<f64> = d.iter().map(|p| p.x).collect();
    let ys: Vec<f64> = d.iter().chain(&m).map(|p| p.y).collect();
    Some(Plot {
        id: format!("rss-{}", w.workload.name),
        title: format!("RSS over time: {}", w.workload.name),
        x: (Axis::linear_from_zero(&xs, Unit::Plain), "seconds".into()),
        y: (Axis::linear_from_zero(&ys, Unit::Plain), "MiB".into()),
        variants: Vec::new(),
        series: vec![
            Series {
                name: "delegator group".into(),
                colour: side_style("delegator", 0).0.into(),
                marker: Marker::None,
                lines: vec![(0, d)],
            },
            Series {
                name: "mock (bench process)".into(),
                colour: "#1f77b4".into(),
                marker: Marker::None,
                lines: vec![(0, m)],
            },
        ],
    })
}

/// `bench.html`: the table; one throughput plot per workload family (`stream-*` against the
/// artifact size, `parallel-*` and `scale-*` against the number of delegations; log axes, each
/// side a series with its own colour and marker, min..max whiskers); RSS over time per
/// workload.
pub fn html(r: &BenchReport) -> String {
    let mut throughput = String::new();
    for f in Family::ALL {
        if let Some(p) = family_plot(r, f) {
            throughput.push_str(&p.svg());
        }
    }
    if throughput.is_empty() {
        throughput.push_str("<p>No stream-*, parallel-* or scale-* workload ran.</p>");
    }
    let mut rss_plots = String::new();
    for w in &r.results {
        if let Some(p) = rss_plot(w) {
            rss_plots.push_str(&p.svg());
        }
    }
    // The baselines have their own table: the main one without its baselines column.
    let baselines = baseline_table(r);
    let mut tables = html_table(&table(r), !baselines.is_empty());
    if !baselines.is_empty() {
        tables.push_str("<h2>Baselines</h2>");
        tables.push_str(&html_table(&baselines, false));
    }
    format!(
        "<!doctype html><html><head><meta charset='utf-8'><title>a2a-harness bench</title><style>body{{font-family:sans-serif;margin:2em}}td,th{{border:1px solid #ccc;padding:2px 6px}}th{{background:#f4f4f4;font-weight:normal;text-align:left}}td:nth-child(-n+2){{white-space:nowrap}}table{{border-collapse:collapse}}svg.plot{{display:block;margin:1em 0}}</style></head><body><h1>a2a-harness bench</h1><p>{} · <code>{}</code> · delegator <code>{}</code> · {} cores</p>{}<h2>Throughput</h2><p>One plot per workload family; MB/s medians over the repetitions, whiskers min..max; a side that failed verification has no point. Hover a point for its workload.</p>{}<h2>Memory over time</h2><p>Resident memory sampled every 25 ms: the delegator's process group (summed) and the bench process (the in-process mock), first repetition.</p>{}</body></html>\n",
        esc(&r.started_at),
        esc(&r.command),
        esc(&r.delegator),
        r.cores,
        tables,
        throughput,
        rss_plots
    )
}

/// `--compare OLD.json`: per workload present in both, the ratio new/old of the delegator's
/// median MB/s, CPU-s/GiB and peak RSS, flagged when the new min..max spread does not overlap
/// the old one (a change beyond the measured noise).
pub fn compare(old: &BenchReport, new: &BenchReport) -> String {
    let mut out = String::from(
        "| workload | MB/s new/old | CPU-s/GiB new/old | RSS new/old | ratio-to-ceiling new/old | change |\n|---|---|---|---|---|---|\n",
    );
    for n in &new.results {
        let Some(o) = old
            .results
            .iter()
            .find(|o| o.workload.name == n.workload.name)
        else {
            let _ = writeln!(out, "| {} | (new) | | | | |", n.workload.name);
            continue;
        };
        let (nf, of) = (&n.delegator.figures, &o.delegator.figures);
        let ratio = |a: f64, b: f64| if b > 0.0 { f1(a / b) } else { "-".into() };
        // A relative epsilon: figures read back from JSON may differ in the last bit.
        let outside =
            |a: &Spread, b: &Spread| a.min > b.max * (1.0 + 1e-6) || a.max < b.min * (1.0 - 1e-6);
        let mut flags = Vec::new();
        if outside(&nf.mb_s, &of.mb_s) {
            flags.push(if nf.mb_s.median > of.mb_s.median {
                "FASTER"
            } else {
                "SLOWER"
            });
        }
        if outside(&nf.cpu_s_per_gib, &of.cpu_s_per_gib) {
            flags.push(if nf.cpu_s_per_gib.median < of.cpu_s_per_gib.median {
                "less CPU"
            } else {
                "MORE CPU"
            });
        }
        if outside(&nf.peak_rss_mib, &of.peak_rss_mib) {
            flags.push(if nf.peak_rss_mib.median < of.peak_rss_mib.median {
                "less memory"
            } else {
                "MORE MEMORY"
            });
        }
        if n.verdict != o.verdict {
            flags.push("VERDICT CHANGED");
        }
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            n.workload.name,
            ratio(nf.mb_s.median, of.mb_s.median),
            ratio(nf.cpu_s_per_gib.median, of.cpu_s_per_gib.median),
            ratio(nf.peak_rss_mib.median, of.peak_rss_mib.median),
            ratio(n.ratio_to_ceiling.median, o.ratio_to_ceiling.median),
            if flags.is_empty() {
                "within noise".to_string()
            } else {
                flags.join(", ")
            }
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spreads_are_min_median_max() {
        let s = Spread::of([3.0, 1.0, 2.0, 10.0]);
        assert_eq!((s.min, s.median, s.max), (1.0, 2.5, 10.0));
        assert_eq!(Spread::of(Vec::<f64>::new()), Spread::default());
    }

    fn report(mb: &[f64]) -> BenchReport {
        let w = Workload::from_toml(
            std::path::Path::new("w.toml"),
            "name = \"w\"\nartifact_bytes = 1024\n",
        )
        .unwrap();
        let samples = mb
            .iter()
            .map(|m| RunSample {
                verified: true,
                mb_s: *m,
                ..RunSample::default()
            })
            .collect::<Vec<_>>();
        BenchReport {
            schema_version: SCHEMA_VERSION,
            started_at: String::new(),
            command: String::new(),
            delegator: String::new(),
            quick: false,
            cores: 2,
            kernel: String::new(),
            results: vec![WorkloadResult::new(w, samples.clone(), samples, Vec::new())],
        }
    }

    #[test]
    fn compare_flags_only_changes_beyond_the_spread() {
        let old = report(&[100.0, 110.0, 120.0]);
        let same = report(&[105.0, 115.0, 118.0]);
        assert!(compare(&old, &same).contains("within noise"));
        let faster = report(&[130.0, 140.0, 150.0]);
        assert!(compare(&old, &faster).contains("FASTER"));
        let slower = report(&[50.0, 60.0, 70.0]);
        assert!(compare(&old, &slower).contains("SLOWER"));
    }
}
