//! The HTML report of a failing run, loaded in headless Chromium: the failing case, its broken
//! rule and its witness (in the journal excerpt and in the sequence diagram) are visible on load,
//! without a click, the A2A client compatibility line is shown with a row per requirement linked
//! to its cases, and the page is no wider than the window.
//!
//! Needs Debian's `chromium` (`scripts/setup-chromium.sh` installs it; `scripts/test.sh` runs
//! that). Without it the test fails saying how to install it.

use crate::report_support;

use a2a_harness_core::runner::Verdict;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// How long Chromium may take to load and dump the page.
const CHROMIUM_BOUND: Duration = Duration::from_secs(90);
/// The browser window's width; the report must fit it.
const WINDOW_WIDTH: u64 = 1280;

fn chromium() -> PathBuf {
    ["chromium", "chromium-browser"]
        .iter()
        .find_map(|c| which::which(c).ok())
        .unwrap_or_else(|| {
            panic!(
                "chromium is not installed, and this test needs it to load the HTML report: run \
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
            "--allow-file-access-from-files",
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

fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// A script measuring, on load, whether the given elements are rendered and visible.
fn probe(case: &str, rule: &str, seq: u64) -> String {
    let case = serde_json::to_string(&format!("case-{case}")).unwrap();
    let rule = serde_json::to_string(rule).unwrap();
    format!(
        r##"<script>
window.addEventListener("load", () => {{
  const vis = el => {{
    if (!el) return "missing";
    const r = el.getBoundingClientRect();
    const shown = (el.checkVisibility ? el.checkVisibility({{visibilityProperty: true, opacityProperty: true}}) : true);
    return shown && r.width > 0 && r.height > 0 ? "visible" : "hidden";
  }};
  const c = document.getElementById({case});
  const q = sel => c ? c.querySelector(sel) : null;
  const out = {{
    case: vis(c),
    open: c ? c.open : null,
    rule: vis(q(`.rule[data-rule=${{JSON.stringify({rule})}}]`)),
    witness_row: vis(q(`tr.witness[data-seq="{seq}"]`)),
    witness_arrow: vis(q(`svg g.witness[data-seq="{seq}"]`)),
    rules_broken: vis(document.querySelector(`#rules-broken tr[data-rule=${{JSON.stringify({rule})}}]`)),
    stderr_or_messages: vis(q("pre.messages") || q("pre.stderr")),
    first_failure_before_passes: (() => {{
      const all = [...document.querySelectorAll("details.case")];
      const i = all.findIndex(d => d.dataset.verdict === "PASS");
      const j = all.findIndex(d => d.dataset.verdict === "FAIL");
      return j >= 0 && (i < 0 || j < i);
    }})(),
    passes_collapsed: [...document.querySelectorAll('details.case[data-verdict="PASS"]')].every(d => !d.open),
    compat_line: vis(document.querySelector('#compatibility summary')),
    compat_rows: document.querySelectorAll('#compatibility tr.requirement').length,
    compat_links: [...document.querySelectorAll('#compatibility a[href^="#case-"]')].every(a => document.getElementById(decodeURIComponent(a.getAttribute("href").slice(1)))),
    compat_linked: document.querySelectorAll('#compatibility a[href^="#case-"]').length,
    width: document.documentElement.scrollWidth,
  }};
  document.body.setAttribute("data-probe", JSON.stringify(out));
}});
</script>"##
    )
}

#[test]
fn a_failing_runs_report_shows_the_case_its_rule_and_witness_without_interaction() {
    let _ = chromium();
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report");
    let ids: Vec<&str> = report_support::FAILING
        .iter()
        .chain(report_support::PASSING)
        .copied()
        .collect();
    let results = report_support::write_failing_run(&ids, &report);
    let failing = results
        .iter()
        .find(|r| r.verdict == Verdict::Fail)
        .expect("a failing case");
    let broken = failing
        .rules
        .iter()
        .find(|v| v.verdict == Verdict::Fail && !v.witnesses.is_empty())
        .expect("a broken rule with a witness");
    let seq = broken.witnesses[0].seq;

    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    let probed = html.replace(
        "</body>",
        &format!("{}</body>", probe(&failing.id, &broken.id, seq)),
    );
    assert_ne!(probed, html, "index.html ends its body");
    let page = report.join("probe.html");
    std::fs::write(&page, probed).unwrap();
    let dom = dump_dom(&page, &dir.path().join("profile"));

    let attr = dom
        .split("data-probe=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or_else(|| {
            panic!(
                "the probe did not run; DOM begins {}",
                &dom[..dom.len().min(500)]
            )
        });
    let seen: Value = serde_json::from_str(&unescape(attr)).unwrap();
    let what = format!(
        "case {} rule {} witness #{seq}: {seen:#}",
        failing.id, broken.id
    );
    for key in [
        "case",
        "rule",
        "witness_row",
        "witness_arrow",
        "rules_broken",
        "stderr_or_messages",
    ] {
        assert_eq!(seen[key], "visible", "{key} not visible on load: {what}");
    }
    assert_eq!(seen["open"], true, "{what}");
    assert_eq!(seen["first_failure_before_passes"], true, "{what}");
    assert_eq!(seen["passes_collapsed"], true, "{what}");
    // The A2A client compatibility: its line on load, every requirement a row, each case it
    // names a link to that case's block.
    assert_eq!(seen["compat_line"], "visible", "{what}");
    assert_eq!(seen["compat_rows"], 68, "{what}");
    assert_eq!(seen["compat_links"], true, "{what}");
    assert!(seen["compat_linked"].as_u64().unwrap_or(0) > 0, "{what}");
    let width = seen["width"].as_u64().unwrap_or(u64::MAX);
    assert!(width <= WINDOW_WIDTH, "the page is {width} px wide: {what}");

    // The full journal is one click away, its witness highlighted and anchored.
    let journal =
        std::fs::read_to_string(report.join("journals").join(format!("{}.html", failing.id)))
            .unwrap();
    assert!(journal.contains(&format!("<tr id=\"seq-{seq}\" class=\"witness\"")));
    assert!(html.contains(&format!("href=\"journals/{}.html\"", failing.id)));
}
