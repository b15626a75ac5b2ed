//! `junit.xml` of a run with a FAIL, a PASS, an XFAIL and an XPASS validates against the strict
//! Ant JUnit schema (`tests/data/ant-junit.xsd`) with `xmllint`, and stops validating when a test
//! case loses its `classname`. Needs `xmllint` (Debian `libxml2-utils`, installed by
//! `scripts/setup-chromium.sh`); without it the test fails saying how to install it.

use crate::common;
use crate::report_support;

use a2a_harness_core::catalog::CaseGlob;
use a2a_harness_core::runner::{Verdict, apply_known_failing};
use std::path::Path;
use std::process::Command;

fn xmllint(xml: &Path) -> (bool, String) {
    let bin = which::which("xmllint").unwrap_or_else(|_| {
        panic!(
            "xmllint is not installed, and this test needs it to validate junit.xml: run \
             `bash scripts/setup-chromium.sh` (or `apt-get install -y libxml2-utils` as root)"
        )
    });
    let out = Command::new(bin)
        .arg("--noout")
        .arg("--schema")
        .arg(common::root().join("harness/tests/data/ant-junit.xsd"))
        .arg(xml)
        .output()
        .expect("xmllint runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn junit_is_valid_ant_junit_and_says_what_each_verdict_means() {
    let work = tempfile::tempdir().unwrap();
    let delegator = report_support::bugged_delegator();
    let [fail, xfail, pass, xpass] = [
        report_support::FAILING[0],
        report_support::FAILING[1],
        report_support::PASSING[0],
        report_support::PASSING[1],
    ];
    let mut results =
        report_support::run_lists(&[&[fail, xfail, pass, xpass]], &delegator, work.path())
            .pop()
            .unwrap();
    apply_known_failing(
        &mut results,
        &[CaseGlob::new(xfail).unwrap(), CaseGlob::new(xpass).unwrap()],
    );
    let verdicts: Vec<Verdict> = results.iter().map(|r| r.verdict).collect();
    assert_eq!(
        verdicts,
        [Verdict::Fail, Verdict::XFail, Verdict::Pass, Verdict::XPass]
    );
    let dir = work.path().join("report");
    a2a_harness_core::report::write_all(
        &dir,
        &a2a_harness_core::report::ReportRun {
            delegator: &delegator,
            seed: 1,
            wall_ms: 2500,
            incomplete: true,
        },
        &report_support::catalog(),
        &results,
    )
    .unwrap();
    let path = dir.join("junit.xml");
    let (ok, why) = xmllint(&path);
    assert!(ok, "junit.xml does not validate: {why}");

    let xml = std::fs::read_to_string(&path).unwrap();
    let case = |id: &str| {
        let start = xml
            .find(&format!("<testcase name=\"{id}\""))
            .unwrap_or_else(|| panic!("no testcase {id} in {xml}"));
        let end = xml[start..]
            .find("</testcase>")
            .map_or(xml.len(), |e| start + e);
        xml[start..end].to_string()
    };
    assert!(xml.contains(" timestamp=\"") && xml.contains(" hostname=\""));
    assert!(xml.contains("tests=\"4\"") && xml.contains("failures=\"2\""));
    assert!(xml.contains("skipped=\"1\""), "XFAIL is skipped: {xml}");
    assert!(xml.contains("<property name=\"incomplete\" value=\"true\"/>"));
    let f = case(fail);
    assert!(f.contains("classname=\"a2a.artifacts\""), "{f}");
    assert!(
        f.contains("<failure message=\"FAIL DLG-ART-01: expected"),
        "{f}"
    );
    assert!(
        f.contains("type=\"FAIL\"") && f.contains("witness #"),
        "{f}"
    );
    let x = case(xfail);
    assert!(x.contains("<skipped message=\"XFAIL: "), "{x}");
    let xp = case(xpass);
    assert!(
        xp.contains("<failure message=\"XPASS: ")
            && xp.contains("remove it from the known-failing file"),
        "{xp}"
    );
    if !results[0].stderr.trim().is_empty() {
        assert!(
            f.contains("<system-err>"),
            "the delegator's stderr tail: {f}"
        );
    }

    // A strict consumer rejects a test case without a classname: so does the check.
    let first = xml.find(" classname=\"").unwrap();
    let end = first + 1 + xml[first + 1..].find('"').unwrap();
    let end = end + 1 + xml[end + 1..].find('"').unwrap();
    let broken = format!("{}{}", &xml[..first], &xml[end + 1..]);
    let bad = dir.join("no-classname.xml");
    std::fs::write(&bad, broken).unwrap();
    let (ok, why) = xmllint(&bad);
    assert!(!ok, "a testcase without classname validated");
    assert!(why.contains("classname"), "{why}");
}
