//! Results: `bench.json` (typed, versioned), `bench.md`, `bench.html` (inline SVG plots), the
//! console table and `--compare`.

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
    /// `ceiling`, `delegator`, `python-sdk` or `reference`.
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
    )
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// One plotted series: name, colour, (x, y) points.
type Series<'a> = (&'a str, &'a str, Vec<(f64, f64)>);

/// A scatter/line plot as inline SVG: series of (x, y) points.
fn svg_plot(title: &str, xlabel: &str, ylabel: &str, series: &[Series<'_>]) -> String {
    let (w, h, l, b) = (640.0, 320.0, 60.0, 40.0);
    let pts = series.iter().flat_map(|s| s.2.iter());
    let xmax = pts.clone().map(|p| p.0).fold(0.0, f64::max).max(1e-9);
    let ymax = pts.map(|p| p.1).fold(0.0, f64::max).max(1e-9) * 1.1;
    let sx = |x: f64| l + x / xmax * (w - l - 20.0);
    let sy = |y: f64| h - b - y / ymax * (h - b - 30.0);
    let mut o = format!(
        "<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}' style='font:12px sans-serif'><text x='{}' y='16' text-anchor='middle' font-weight='bold'>{}</text><line x1='{l}' y1='{}' x2='{}' y2='{}' stroke='black'/><line x1='{l}' y1='30' x2='{l}' y2='{}' stroke='black'/><text x='{}' y='{}' text-anchor='middle'>{}</text><text x='12' y='{}' transform='rotate(-90 12 {})' text-anchor='middle'>{}</text><text x='{}' y='{}'>{}</text><text x='{}' y='{}' text-anchor='end'>{}</text>",
        w / 2.0,
        esc(title),
        h - b,
        w - 20.0,
        h - b,
        h - b,
        w / 2.0,
        h - 6.0,
        esc(xlabel),
        h / 2.0,
        h / 2.0,
        esc(ylabel),
        l - 4.0,
        h - b + 14.0,
        "0",
        w - 20.0,
        h - b + 14.0,
        f1(xmax),
    );
    let _ = write!(
        o,
        "<text x='{}' y='34' text-anchor='end'>{}</text>",
        l - 4.0,
        f1(ymax)
    );
    for (i, (name, color, p)) in series.iter().enumerate() {
        let mut p = p.clone();
        p.sort_by(|a, b| a.0.total_cmp(&b.0));
        let path: Vec<String> = p
            .iter()
            .map(|(x, y)| format!("{:.1},{:.1}", sx(*x), sy(*y)))
            .collect();
        let _ = write!(
            o,
            "<polyline fill='none' stroke='{color}' stroke-width='2' points='{}'/>",
            path.join(" ")
        );
        for (x, y) in &p {
            let _ = write!(
                o,
                "<circle cx='{:.1}' cy='{:.1}' r='3' fill='{color}'/>",
                sx(*x),
                sy(*y)
            );
        }
        let _ = write!(
            o,
            "<text x='{}' y='{}' fill='{color}'>{}</text>",
            l + 10.0,
            44.0 + 14.0 * i as f64,
            esc(name)
        );
    }
    o.push_str("</svg>");
    o
}

/// `bench.html`: the table and plots (throughput vs artifact size, vs parallel streams; RSS
/// over time of the largest workload).
pub fn html(r: &BenchReport) -> String {
    let single: Vec<&WorkloadResult> = r
        .results
        .iter()
        .filter(|w| w.workload.parallel == 1)
        .collect();
    let by_size = |f: fn(&WorkloadResult) -> f64| -> Vec<(f64, f64)> {
        single
            .iter()
            .map(|w| (w.workload.total_bytes() as f64 / 1048576.0, f(w)))
            .collect()
    };
    let size_plot = svg_plot(
        "Throughput vs artifact size (1 delegation)",
        "artifact MiB",
        "MB/s",
        &[
            (
                "ceiling",
                "#888",
                by_size(|w| w.ceiling.figures.mb_s.median),
            ),
            (
                "delegator",
                "#c33",
                by_size(|w| w.delegator.figures.mb_s.median),
            ),
        ],
    );
    let by_par = |f: fn(&WorkloadResult) -> f64| -> Vec<(f64, f64)> {
        r.results
            .iter()
            .map(|w| (f64::from(w.workload.parallel), f(w)))
            .collect()
    };
    let par_plot = svg_plot(
        "Throughput vs parallel delegations",
        "parallel delegations",
        "MB/s (aggregate)",
        &[
            ("ceiling", "#888", by_par(|w| w.ceiling.figures.mb_s.median)),
            (
                "delegator",
                "#c33",
                by_par(|w| w.delegator.figures.mb_s.median),
            ),
        ],
    );
    let mut rss_plots = String::new();
    for w in &r.results {
        let Some(s) = w
            .delegator
            .samples
            .iter()
            .find(|s| !s.rss_series.is_empty())
        else {
            continue;
        };
        let step = (s.rss_series.len() / 400).max(1);
        let pts = |f: fn(&crate::procfs::Sample) -> u64| -> Vec<(f64, f64)> {
            s.rss_series
                .iter()
                .step_by(step)
                .map(|p| (p.t_ms as f64 / 1000.0, f(p) as f64 / 1024.0))
                .collect()
        };
        rss_plots.push_str(&svg_plot(
            &format!("RSS over time: {}", w.workload.name),
            "s",
            "MiB",
            &[
                ("delegator group", "#c33", pts(|p| p.delegator_rss_kib)),
                ("mock (bench process)", "#36c", pts(|p| p.mock_rss_kib)),
            ],
        ));
    }
    let mut rows = String::new();
    for line in table(r)
        .lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|---"))
    {
        rows.push_str("<tr>");
        for c in line.trim_matches('|').split(" | ") {
            let _ = write!(rows, "<td>{}</td>", esc(c.trim()));
        }
        rows.push_str("</tr>\n");
    }
    format!(
        "<!doctype html><html><head><meta charset='utf-8'><title>a2a-harness bench</title><style>body{{font-family:sans-serif;margin:2em}}td{{border:1px solid #ccc;padding:2px 6px}}table{{border-collapse:collapse}}</style></head><body><h1>a2a-harness bench</h1><p>{} · <code>{}</code> · delegator <code>{}</code> · {} cores</p><table>{}</table><h2>Plots</h2>{}{}{}</body></html>\n",
        esc(&r.started_at),
        esc(&r.command),
        esc(&r.delegator),
        r.cores,
        rows,
        size_plot,
        par_plot,
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
