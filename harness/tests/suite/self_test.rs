//! Self-test: the checks can fail. The reference delegator built with the `planted-bugs` feature
//! takes `--bug NAME`; each bug breaks one behaviour of the seeds. Each bug runs every case of the
//! catalog whose reference run reaches the bug's site (`drive --trace-bug-sites`: elsewhere the
//! bug cannot change the run), and the rules that fail must be exactly the ones the bug breaks
//! (its core), plus only the listed consequences that follow from it on the wire (its side
//! effects).

use crate::common;

use a2a_harness_core::catalog::load_catalog;
use a2a_harness_core::run::{Job, run_jobs};
use a2a_harness_core::runner::{RunSettings, Verdict};
use a2a_harness_core::scenario::Scenario;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// (bug, rules it must break, rules it may also break as a consequence)
const TABLE: &[(&str, &[&str], &[&str])] = &[
    (
        "random-message-id-on-retry",
        &["DLG-SEND-02", "DLG-RETRY-03", "DLG-REC-05"],
        // A recovery resend under a new messageId makes a second task and leaves the first
        // unreconciled, so recovery cases may also fail REC-03 and OBS-02 (timing of the kill).
        // The tasks its fresh ids create are left unwatched: DLG-OBS-01 is broken too.
        &[
            "DLG-REC-02",
            "DLG-RETRY-02",
            "DLG-RETRY-01",
            "DLG-REC-03",
            "DLG-OBS-02",
            "DLG-OBS-01",
        ],
    ),
    (
        "blocking-send",
        &["DLG-SEND-03"],
        // A blocking send in flight when the delegator is killed leaves an unknown outcome behind:
        // exactly what the seed warns about, so recovery cases may fail too.
        &[
            "DLG-OBS-04",
            "DLG-OBS-05",
            "DLG-OBS-01",
            "DLG-REC-01",
            "DLG-REC-02",
            "DLG-REC-03",
        ],
    ),
    ("assume-task", &["DLG-SEND-05"], &["DLG-OBS-01"]),
    (
        "message-terminal-task",
        &["DLG-STATE-05"],
        // A refinement sent to a task that earlier asked a question reads, on the wire, as a
        // second answer to it that came from no held data (bindings.rest-opaque-ids).
        &[
            "DLG-INPUT-01",
            "DLG-INPUT-02",
            "DLG-INPUT-03",
            "DLG-OBS-01",
            "DLG-STATE-06",
        ],
    ),
    ("guess-inputs", &["DLG-INPUT-03"], &["DLG-OBS-01"]),
    (
        "forward-own-credential",
        &["DLG-AUTH-01"],
        // Its own credential answers an auth round no escalation asked for (DLG-AUTH-03), and
        // with no auth escalation there is no explanation to judge (DLG-AUTH-04 UNKNOWN). In
        // recovery.crash-during-auth-round that answer reaches the agent before any escalation
        // (the kill misses its point) and the task fails on it: the restarted process reports
        // FAILED where COMPLETED was due (DLG-REC-01, DLG-REC-03 judge the outcome too).
        &[
            "DLG-AUTH-02",
            "DLG-AUTH-03",
            "DLG-AUTH-04",
            "DLG-INPUT-03",
            "DLG-OBS-01",
            "DLG-REC-01",
            "DLG-REC-03",
        ],
    ),
    (
        "no-limit-checks",
        &["DLG-LIMIT-01", "DLG-LIMIT-07", "DLG-LIMIT-09"],
        &["DLG-OBS-01"],
    ),
    // The committed file is wrong and honestly reported: the assembly rules, not DLG-ART-04.
    (
        "ignore-append",
        &["DLG-ART-01", "DLG-ART-02"],
        &[
            "DLG-ART-06",
            "DLG-ART-09",
            "DLG-OBS-01",
            "DLG-OBS-03",
            "DLG-REC-06",
        ],
    ),
    // The file and the report disagree as well (the report names the last chunk only):
    // DLG-ART-04 is broken too, by the file the harness hashes.
    (
        "keep-last-chunk-only",
        &["DLG-ART-01", "DLG-ART-02"],
        // DLG-ART-04 judges a multi-chunk artifact through ART-01/02; it fails too only where the
        // reported file and the report disagree, which depends on how the writer lays files out.
        &["DLG-REC-06", "DLG-ART-06", "DLG-OBS-01", "DLG-ART-04"],
    ),
    (
        "no-local-deadline",
        &["DLG-LIMIT-03"],
        &["DLG-LIMIT-04", "DLG-OBS-01"],
    ),
    // The file is right, the report is not: DLG-ART-04 alone.
    // What it reports after rejecting an event that lacks REQUIRED fields is not the task's
    // artifacts either (DLG-ART-09).
    ("misreport-sha256", &["DLG-ART-04"], &["DLG-ART-09"]),
    (
        "no-recovery",
        &["DLG-REC-01", "DLG-REC-02", "DLG-REC-03", "DLG-SEND-01"],
        // A task that fails while it is down: never read again, so neither its final status
        // message (DLG-STATE-03) nor what it committed is judged right. A task the agent forgot
        // while it was down (recovery.purged-while-down) is never read, so the delegation is
        // never marked LOST (DLG-REC-04). A send the agent dropped unprocessed before the kill
        // (recovery.crash-before-first-send) is never sent again: no task, so DLG-REC-05 has
        // nothing to count (UNKNOWN).
        &[
            "DLG-INPUT-01",
            "DLG-OBS-01",
            "DLG-OBS-02",
            "DLG-OBS-03",
            "DLG-REC-04",
            "DLG-REC-05",
            "DLG-REC-06",
            "DLG-STATE-03",
        ],
    ),
    // A task event or GetTask answer without its status reads as an unknown state, on which it
    // exits (hostile.missing-fields-*).
    (
        "ignore-unknown-state",
        &["DLG-STATE-04"],
        &["DLG-OBS-01", "DLG-OBS-03", "DLG-ART-04", "DLG-ART-09"],
    ),
    ("no-input-cap", &["DLG-INPUT-04"], &["DLG-OBS-01"]),
    // Push tokens and scoped credentials in a debug log under the store: the secret scan.
    ("persist-secrets", &["DLG-SECRET-01"], &[]),
    // Polling at the first interval through the long quiet stretches of states.slow-progress
    // and cards.no-optional-capabilities (and a recovery case's).
    ("constant-poll-interval", &["DLG-OBS-05"], &[]),
    // A constant pause at the base: retries.backoff-grows, ten backoffs per delegation.
    ("fixed-retry-backoff", &["DLG-RETRY-02"], &[]),
    // Url parts fetched whatever their scheme, origin or userinfo, redirects followed anywhere:
    // the trap on 127.0.0.9 sees the delegator (security.url-trap, -redirect, -fan-out, and the
    // ftp: url of -scheme), the blob is fetched with userinfo (security.url-userinfo), and the
    // data: and file: urls are read and reported (security.url-inline-schemes). The fetched
    // bytes are then committed as a result no completed task delivered by an allowed url (OBS-03).
    ("fetch-any-url", &["DLG-URL-01"], &["DLG-OBS-03"]),
    // Every card is used: the altered, expired-key and untrusted-key cards (security.sign-*)
    // get the work, and the unsigned card where signatures are required (SHOULD).
    // Where the bad card's agent comes first it takes the work, so the good card's situation
    // (DLG-SIGN-01) never arises in those cases: UNKNOWN.
    (
        "skip-card-signature",
        &["DLG-SIGN-02", "DLG-SIGN-03"],
        &["DLG-SIGN-01"],
    ),
    // Default-valued members kept in the payload: a good card served with them is refused
    // (security.sign-good, and the honest fallbacks), so the delegation fails.
    ("canonicalise-wrong", &["DLG-SIGN-01"], &["DLG-STATE-02"]),
    // TLS (security.tls-*): plain-HTTP cases never see these bugs.
    ("accept-any-certificate", &["DLG-TLS-01"], &[]),
    ("https-downgrade", &["DLG-TLS-02"], &[]),
    ("tls12-only", &["DLG-TLS-03"], &[]),
];

/// The slowest case (a 32 MiB stream) shows nothing about these bugs that faster cases do not.
/// Variants (`[[variant]]`) are left out too: each replays its case's script in another
/// situation, so the case as written already provokes what a bug breaks there, and every bug
/// times every variant would double the test's time.
const SKIP: &[&str] = &["artifacts.large-stream-memory"];

/// Bugs whose core rule judges timing (how gaps between polls or resends grow). Load can only
/// stretch gaps, and with the whole table running six cases at once a few stretched gaps can
/// hide a constant schedule; so the cases that list their core rule run again afterwards, two at
/// a time, and the bug counts as caught when either run breaks it.
const TIMING_BUGS: &[&str] = &["constant-poll-interval", "fixed-retry-backoff"];

/// The planted bugs whose site each case's run reaches, from one run of the catalog against the
/// reference delegator with no bug planted (`drive --trace-bug-sites`, see
/// `a2a_delegator::bugs::site_trace`). Every behaviour a bug changes is asked of `Bugs::has` where
/// the behaviour would differ, so a bug whose site a case never reaches runs that case exactly as
/// the reference does: running it there again shows nothing. (A path that only load would take,
/// a retry after a slow answer say, is left out with its case; the bug's core rule is still
/// proved in the cases that reach it.)
fn reached_sites(
    rt: &tokio::runtime::Runtime,
    delegator: &Path,
    catalog: &[Scenario],
    work: &Path,
) -> Vec<BTreeSet<String>> {
    let traces: Vec<PathBuf> = (0..catalog.len())
        .map(|i| work.join("sites").join(format!("{i}.txt")))
        .collect();
    let jobs = catalog
        .iter()
        .zip(&traces)
        .enumerate()
        .map(|(i, (s, trace))| Job {
            scenario: s.clone(),
            settings: RunSettings {
                delegator: format!(
                    "{} drive --trace-bug-sites {}",
                    delegator.display(),
                    trace.display()
                ),
                seed: 1,
                work_dir: work.join("reference").join(i.to_string()),
                binding: None,
                tls: false,
            },
            label: None,
        })
        .collect();
    std::fs::create_dir_all(work.join("sites")).unwrap();
    let results = rt.block_on(run_jobs(jobs, 8, |_| {}));
    for r in &results {
        assert!(
            !r.notes.iter().any(|n| n.contains("harness error")),
            "the reference run of {}: {:?}",
            r.id,
            r.notes
        );
    }
    traces
        .iter()
        .map(|t| {
            std::fs::read_to_string(t)
                .unwrap_or_default()
                .lines()
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

#[test]
fn every_planted_bug_is_caught_by_the_rule_it_breaks() {
    let delegator = common::delegator();
    let catalog: Vec<_> = load_catalog(&common::root().join("scenarios"))
        .expect("catalog loads")
        .into_iter()
        .filter(|s| !SKIP.contains(&s.id.as_str()) && s.variant_of.is_none())
        .collect();
    let work = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let reached = reached_sites(&rt, &delegator, &catalog, work.path());
    let mut jobs = Vec::new();
    let mut bugs = Vec::new();
    let mut problems = Vec::new();
    for (bug, _, _) in TABLE {
        let cases: Vec<usize> = (0..catalog.len())
            .filter(|&i| reached[i].contains(*bug))
            .collect();
        eprintln!("--bug {bug}: {} cases reach its site", cases.len());
        if cases.is_empty() {
            problems.push(format!(
                "--bug {bug}: no case of the catalog reaches its site, so none can show it"
            ));
        }
        for i in cases {
            bugs.push(*bug);
            jobs.push(Job {
                scenario: catalog[i].clone(),
                settings: RunSettings {
                    delegator: format!("{} drive --bug {bug}", delegator.display()),
                    seed: 1,
                    work_dir: work.path().join(bug).join(i.to_string()),
                    binding: None,
                    tls: false,
                },
                label: None,
            });
        }
    }
    // Some bugged cases sit idle until their time bound (a delegator that never recovers, or
    // never gives up at its deadline, is judged when the case's 30 s are over), so run more at
    // once than cores: a case of the catalog uses about 0.1 CPU-s in 0.7 s of wall time. Not
    // many more: the suite runs a CPU-bound SDK adapter beside this test, and 16 at once starved
    // its start past the 10 s `init` bound. The timing bugs' core rule is judged again two at a
    // time below.
    let mut results = rt.block_on(run_jobs(jobs, 8, |_| {}));
    let mut quiet = Vec::new();
    for (bug, core, _) in TABLE.iter().filter(|(b, _, _)| TIMING_BUGS.contains(b)) {
        for (i, s) in catalog.iter().enumerate() {
            if reached[i].contains(*bug) && s.rules.iter().any(|r| core.contains(&r.as_str())) {
                bugs.push(*bug);
                quiet.push(Job {
                    scenario: s.clone(),
                    settings: RunSettings {
                        delegator: format!("{} drive --bug {bug}", delegator.display()),
                        seed: 1,
                        work_dir: work.path().join(format!("{bug}-quiet")).join(i.to_string()),
                        binding: None,
                        tls: false,
                    },
                    label: None,
                });
            }
        }
    }
    results.extend(rt.block_on(run_jobs(quiet, 2, |_| {})));
    let mut failed: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (bug, result) in bugs.into_iter().zip(&results) {
        let entry = failed.entry(bug).or_default();
        for v in &result.rules {
            if matches!(
                v.verdict,
                Verdict::Fail | Verdict::NonStrict | Verdict::Unknown
            ) {
                entry.insert(v.id.clone());
            }
        }
        assert!(
            !result.notes.iter().any(|n| n.contains("init refused")),
            "the delegator refused --bug {bug}: build it with `--features planted-bugs` (scripts/test.sh does): {:?}",
            result.notes
        );
        assert!(
            !result.notes.iter().any(|n| n.contains("harness error")),
            "--bug {bug}: {}: {:?}",
            result.id,
            result.notes
        );
    }
    for (bug, core, side) in TABLE {
        let got = failed.get(bug).cloned().unwrap_or_default();
        for c in *core {
            if !got.contains(*c) {
                problems.push(format!("--bug {bug}: {c} did not fail (failed: {got:?})"));
            }
        }
        for g in &got {
            if !core.contains(&g.as_str()) && !side.contains(&g.as_str()) {
                problems.push(format!("--bug {bug}: unexpected failure of {g}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
