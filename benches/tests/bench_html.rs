//! `bench.html` as a reader sees it, loaded in headless Chromium: one throughput plot per
//! workload family (sizes, parallel, scale) with a series per side, every coordinate finite,
//! each legend beside its plot area (never over it) and inside its own box, x tick labels that
//! do not run into each other, every point inside the plot area, the RSS plots, and a page no
//! wider than the window.
//!
//! Needs Debian's `chromium` (`scripts/setup-chromium.sh` installs it; `scripts/test.sh` runs
//! that). Without it the test fails saying how to install it.

use a2a_benches::report::{BenchReport, Side, WorkloadResult};
use a2a_benches::run::RunSample;
use a2a_benches::{SCHEMA_VERSION, Workload};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// How long Chromium may take to load and dump the page.
const CHROMIUM_BOUND: Duration = Duration::from_secs(90);
/// The browser window's width; the page must fit it.
const WINDOW_WIDTH: u64 = 1280;

fn chromium() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .flat_map(|d| [d.join("chromium"), d.join("chromium-browser")])
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "chromium is not installed, and this test needs it to load bench.html: run \
                 `bash scripts/setup-chromium.sh` (or `apt-get install -y chromium` as root)"
            )
        })
}

/// The page's DOM after load, as headless Chromium dumps it; bounded by [`CHROMIUM_BOUND`].
fn dump_dom(page: &Path, profile: &Path) -> String {
    let child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            &format!("--window-size={WINDOW_WIDTH},900"),
            "--virtual-time-budget=5000",
            &format!("--user-data-dir={}", profile.display()),
            "--dump-dom",
        ])
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(CHROMIUM_BOUND) {
        Ok(out) => {
            let out = out.expect("chromium runs");
            let dom = String::from_utf8_lossy(&out.stdout).into_owned();
            assert!(
                !dom.is_empty(),
                "chromium dumped no DOM (exit {:?}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
            dom
        }
        Err(_) => {
            // The chromium process this test started, by its id.
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!("chromium did not dump the page within {CHROMIUM_BOUND:?}");
        }
    }
}

/// Measures every plot once the page has laid out, into `body[data-probe]`.
const PROBE: &str = r#"<script>
window.addEventListener("load", () => {
  const box = el => { const r = el.getBoundingClientRect(); return {l: r.left, r: r.right, t: r.top, b: r.bottom}; };
  const overlaps = (a, b) => !(a.l >= b.r || a.r <= b.l || a.t >= b.b || a.b <= b.t);
  const plots = [...document.querySelectorAll("svg.plot")].map(svg => {
    const area = box(svg.querySelector("rect.plot-area"));
    const legend = box(svg.querySelector("g.legend"));
    const legendBox = box(svg.querySelector("rect.legend-box"));
    const xt = [...svg.querySelectorAll("text.xtick")].map(box).sort((a, b) => a.l - b.l);
    const yt = [...svg.querySelectorAll("text.ytick")].map(box).sort((a, b) => a.t - b.t);
    const pts = [...svg.querySelectorAll("g.series g.point")].map(box);
    return {
      id: svg.dataset.plot,
      legend_over_area: overlaps(legend, area),
      legend_in_its_box: legend.l >= legendBox.l - 0.5 && legend.r <= legendBox.r + 0.5 && legend.t >= legendBox.t - 0.5 && legend.b <= legendBox.b + 0.5,
      xticks: [...svg.querySelectorAll("text.xtick")].map(t => t.textContent),
      yticks: [...svg.querySelectorAll("text.ytick")].map(t => t.textContent),
      xticks_collide: xt.some((b, i) => i > 0 && b.l < xt[i - 1].r),
      yticks_collide: yt.some((b, i) => i > 0 && b.t < yt[i - 1].b),
      points_inside: pts.every(p => p.l >= area.l - 8 && p.r <= area.r + 8 && p.t >= area.t - 8 && p.b <= area.b + 8),
      series: [...svg.querySelectorAll("g.series")].map(g => ({
        name: g.dataset.series,
        points: g.querySelectorAll("g.point").length,
        lines: g.querySelectorAll("polyline").length,
      })),
    };
  });
  document.body.setAttribute("data-probe", JSON.stringify({plots, width: document.documentElement.scrollWidth}));
});
</script>"#;

fn workload(name: &str, size: &str, part: &str, parallel: u32) -> Workload {
    Workload::from_toml(
        Path::new("w.toml"),
        &format!(
            "name = \"{name}\"\nartifact_bytes = \"{size}\"\npart = \"{part}\"\nparallel = {parallel}\n"
        ),
    )
    .unwrap()
}

fn samples(mb: &[f64], rss: bool) -> Vec<RunSample> {
    mb.iter()
        .map(|m| RunSample {
            verified: true,
            mb_s: *m,
            rss_series: if rss {
                (0..50)
                    .map(|i| a2a_benches::procfs::Sample {
                        t_ms: i * 25,
                        delegator_rss_kib: 16_000 + i * 100,
                        mock_rss_kib: 60_000 + i * 300,
                    })
                    .collect()
            } else {
                Vec::new()
            },
            ..RunSample::default()
        })
        .collect()
}

/// A report of nine workloads (three families and one outside them), two SDK baselines, one
/// of them failed on one workload.
fn report() -> BenchReport {
    let rows: [(&str, &str, &str, u32, f64); 9] = [
        ("stream-64mib-text", "64MiB", "text", 1, 1.0),
        ("stream-256mib-text", "256MiB", "text", 1, 1.05),
        ("stream-4gib-text", "4GiB", "text", 1, 0.9),
        ("stream-64mib-raw", "64MiB", "raw", 1, 0.8),
        ("parallel-8x16mib", "16MiB", "text", 8, 1.2),
        ("parallel-64x4mib", "4MiB", "text", 64, 1.3),
        ("scale-1000", "4KiB", "text", 1000, 0.01),
        ("scale-10000", "4KiB", "text", 10000, 0.008),
        ("poll-16mib-text", "16MiB", "text", 1, 0.3),
    ];
    let results = rows
        .iter()
        .map(|&(name, size, part, parallel, k)| {
            let w = workload(name, size, part, parallel);
            let ceiling = samples(&[900.0 * k, 1000.0 * k, 950.0 * k], false);
            let delegator = samples(&[380.0 * k, 400.0 * k, 420.0 * k], true);
            let mut js = Side::new("js-sdk", samples(&[60.0 * k], false));
            if name == "stream-64mib-raw" {
                // Failed verification: no point for it.
                js = Side::new(
                    "js-sdk",
                    vec![RunSample {
                        verified: false,
                        failures: vec!["x: artifacts differ from the source's".into()],
                        ..RunSample::default()
                    }],
                );
            }
            let baselines = vec![Side::new("python-sdk", samples(&[19.0 * k], false)), js];
            WorkloadResult::new(w, ceiling, delegator, baselines)
        })
        .collect();
    BenchReport {
        schema_version: SCHEMA_VERSION,
        started_at: "2026-01-01T00:00:00Z".into(),
        command: "a2a-harness bench".into(),
        delegator: "a2a-delegator drive".into(),
        quick: false,
        cores: 2,
        kernel: "test".into(),
        results,
    }
}

/// Every numeric geometry attribute in the SVG parts of `dom`, with what it was.
fn svg_numbers(dom: &str) -> Vec<(String, String)> {
    const ATTRS: [&str; 12] = [
        "x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "width", "height", "points",
    ];
    let mut out = Vec::new();
    let mut rest = dom;
    while let Some(i) = rest.find("<svg") {
        let end = rest[i..].find("</svg>").map_or(rest.len(), |j| i + j);
        let svg = &rest[i..end];
        for a in ATTRS {
            for q in ['"', '\''] {
                let pat = format!(" {a}={q}");
                let mut s = svg;
                while let Some(k) = s.find(&pat) {
                    let v = &s[k + pat.len()..];
                    let close = v.find(q).unwrap_or(v.len());
                    out.push((a.to_string(), v[..close].to_string()));
                    s = &v[close..];
                }
            }
        }
        rest = &rest[end..];
    }
    out
}

#[test]
fn bench_html_plots_render_one_per_family_with_legends_beside_the_data() {
    let _ = chromium();
    let dir = tempfile::tempdir().unwrap();
    let html = a2a_benches::report::html(&report());
    let page = dir.path().join("bench.html");
    std::fs::write(&page, html.replace("</body>", &format!("{PROBE}</body>"))).unwrap();
    // To look at it: BENCH_HTML_KEEP=/tmp/bench.html (then chromium --screenshot).
    if let Some(keep) = std::env::var_os("BENCH_HTML_KEEP") {
        std::fs::copy(&page, keep).unwrap();
    }
    let dom = dump_dom(&page, &dir.path().join("profile"));

    // No NaN or infinity anywhere in the geometry.
    let numbers = svg_numbers(&dom);
    assert!(numbers.len() > 200, "{} numbers", numbers.len());
    for (attr, v) in &numbers {
        for n in v.split([' ', ',']).filter(|n| !n.is_empty()) {
            let x: f64 = n
                .parse()
                .unwrap_or_else(|_| panic!("{attr}='{v}': {n:?} is not a number"));
            assert!(x.is_finite(), "{attr}='{v}'");
        }
    }

    let start = dom.find("data-probe=\"").expect("the probe ran") + "data-probe=\"".len();
    let end = start + dom[start..].find('"').unwrap();
    let probe: Value = serde_json::from_str(
        &dom[start..end]
            .replace("&quot;", "\"")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&"),
    )
    .unwrap();
    let plots = probe["plots"].as_array().unwrap();
    let ids: Vec<&str> = plots.iter().map(|p| p["id"].as_str().unwrap()).collect();
    assert_eq!(
        &ids[..3],
        [
            "throughput-sizes",
            "throughput-parallel",
            "throughput-scale"
        ],
        "{ids:?}"
    );
    assert_eq!(
        ids.iter().filter(|i| i.starts_with("rss-")).count(),
        9,
        "an RSS plot per workload: {ids:?}"
    );
    for p in plots {
        let id = p["id"].as_str().unwrap();
        assert_eq!(
            p["legend_over_area"], false,
            "{id}: the legend covers the data"
        );
        assert_eq!(
            p["legend_in_its_box"], true,
            "{id}: the legend overflows its box"
        );
        assert_eq!(p["xticks_collide"], false, "{id}: {}", p["xticks"]);
        assert_eq!(p["yticks_collide"], false, "{id}: {}", p["yticks"]);
        assert_eq!(
            p["points_inside"], true,
            "{id}: a point outside the plot area"
        );
        assert!(
            p["xticks"].as_array().unwrap().len() >= 2,
            "{id}: {}",
            p["xticks"]
        );
        assert!(
            p["yticks"].as_array().unwrap().len() >= 2,
            "{id}: {}",
            p["yticks"]
        );
    }
    let series = |id: &str| -> Vec<(String, u64, u64)> {
        plots.iter().find(|p| p["id"] == id).unwrap()["series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["name"].as_str().unwrap().to_string(),
                    s["points"].as_u64().unwrap(),
                    s["lines"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    // Sizes: four stream-* workloads; text joined by a line, raw a lone point; js-sdk failed
    // raw, so it has three points.
    assert_eq!(
        series("throughput-sizes"),
        [
            ("ceiling".into(), 4, 1),
            ("delegator".into(), 4, 1),
            ("python-sdk".into(), 4, 1),
            ("js-sdk".into(), 3, 1),
        ]
    );
    assert_eq!(series("throughput-parallel")[1], ("delegator".into(), 2, 1));
    assert_eq!(series("throughput-scale")[1], ("delegator".into(), 2, 1));
    // Log axes at readable values: the sizes in binary units, the counts as plotted.
    let ticks = |id: &str, axis: &str| -> Vec<String> {
        plots.iter().find(|p| p["id"] == id).unwrap()[axis]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        ticks("throughput-sizes", "xticks"),
        ["64 MiB", "256 MiB", "1 GiB", "4 GiB"]
    );
    assert_eq!(ticks("throughput-parallel", "xticks"), ["8", "64"]);
    assert_eq!(ticks("throughput-scale", "xticks"), ["1000", "10000"]);
    assert!(
        ticks("throughput-sizes", "yticks").contains(&"100".to_string()),
        "MB/s from 15 to 1050 on a log axis: {:?}",
        ticks("throughput-sizes", "yticks")
    );
    // The baselines have their own table; a failed one says so, its other cells empty.
    assert!(dom.contains("<h2>Baselines</h2>"));
    assert!(
        dom.contains("<td>stream-64mib-raw</td><td>js-sdk</td><td>FAILED: x: artifacts differ from the source's</td><td>-</td>"),
        "the failed baseline's row"
    );
    let width = probe["width"].as_u64().unwrap();
    assert!(width <= WINDOW_WIDTH, "the page is {width} px wide");
}
