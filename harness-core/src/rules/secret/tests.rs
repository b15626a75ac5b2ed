//! Tests of DLG-SECRET-01 and its scan: secrets found wherever they are written, split across
//! reads, masked in every finding; correct delegators pass.

use super::*;
use crate::rules::test_support::*;
use serde_json::json;

const PUSH: &str = "0123456789abcdef0123456789abcdef";
const SCOPED: &str = "Bearer scoped-bank-task-7";

pub(super) fn secrets() -> Vec<Secret> {
    let mut j = J::new();
    j.send(
        "a",
        "m1",
        "do the thing",
        json!({"configuration": {"taskPushNotificationConfig": {"url": "http://127.0.0.1:1/w",
            "token": PUSH, "authentication": {"scheme": "Bearer", "credentials": PUSH}}}}),
    );
    known_secrets(
        CRED_LONG,
        &[],
        &[
            ("d1".into(), EscalationKind::Auth, SCOPED.into()),
            (
                "d1".into(),
                EscalationKind::Input,
                "an answer, not a secret".into(),
            ),
        ],
        &j.entries,
    )
}

const CRED_LONG: &str = "Bearer delegator-own-secret";

#[test]
fn the_secrets_are_the_own_credential_scoped_credentials_and_push_tokens() {
    let s = secrets();
    let kinds: Vec<(SecretKind, &str)> = s.iter().map(|s| (s.kind, s.value.as_str())).collect();
    assert_eq!(
        kinds,
        vec![
            (SecretKind::OwnCredential, CRED_LONG),
            (SecretKind::ScopedCredential, SCOPED),
            (SecretKind::PushToken, PUSH),
        ]
    );
    assert_eq!(s[2].witness, Some(1));
    // A push-config call (1.0 flattened, and 0.3 named) and agent credentials count too.
    let mut j = J::new();
    j.rpc(
        "a",
        "CreateTaskPushNotificationConfig",
        json!({"taskId": "t1", "url": "http://x", "token": "token-of-create-call"}),
        &[],
    );
    j.rpc(
        "old",
        "tasks/pushNotificationConfig/set",
        json!({"taskId": "t1", "pushNotificationConfig": {"url": "http://x",
            "authentication": {"schemes": ["Bearer"], "credentials": "credentials-of-0.3"}}}),
        &[],
    );
    let s = known_secrets(
        "x",
        &[("http://a/card".into(), "Bearer agent-cred-1".into())],
        &[],
        &j.entries,
    );
    let values: Vec<&str> = s.iter().map(|s| s.value.as_str()).collect();
    assert_eq!(
        values,
        vec![
            "x",
            "Bearer agent-cred-1",
            "token-of-create-call",
            "credentials-of-0.3"
        ]
    );
    assert_eq!(s[1].kind, SecretKind::AgentCredential);
    // Short secrets are not searched for.
    let n = Needles::new(&s);
    assert_eq!((n.skipped_short, n.searched()), (1, 3));
}

fn scan_of(place: Place, bytes: &[u8]) -> Vec<Finding> {
    Needles::new(&secrets()).scan_bytes(&place, bytes)
}

pub(super) fn stdout() -> Place {
    Place::Stdout { life: 1, line: 0 }
}

#[test]
fn a_secret_is_found_with_its_line_and_offset_and_reported_without_it() {
    let text = format!("{{\"type\":\"state\"}}\nlog: token={PUSH} ok\n");
    let f = scan_of(stdout(), text.as_bytes());
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].kind, SecretKind::PushToken);
    assert_eq!(f[0].place, Place::Stdout { life: 1, line: 2 });
    assert_eq!(f[0].offset, text.find(PUSH).unwrap() as u64);
    let shown = f[0].to_string();
    assert!(!shown.contains(PUSH), "{shown}");
    assert!(shown.contains("stdout line 2 (process life 1)"), "{shown}");
    assert!(shown.contains("journal seq 1"), "{shown}");
}

#[test]
fn the_token_part_alone_is_found_and_a_whole_value_once() {
    let text = "Authorization: <hidden>; token scoped-bank-task-7 end";
    let f = scan_of(Place::Stderr { life: 2, line: 0 }, text.as_bytes());
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(
        (f[0].kind, f[0].part, f[0].offset),
        (
            SecretKind::ScopedCredential,
            Part::Token,
            text.find("scoped-bank").unwrap() as u64
        )
    );
    assert!(f[0].to_string().contains("its token after the scheme word"));
    // The whole value is one finding, not two (its token part is inside it).
    let text = format!("x {SCOPED} y");
    let f = scan_of(stdout(), text.as_bytes());
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!((f[0].part, f[0].offset), (Part::Whole, 2));
}

#[test]
fn a_secret_split_across_reads_is_found_once() {
    let n = Needles::new(&secrets());
    let text = format!(
        "{}\n{}{PUSH}{}",
        "a".repeat(100),
        "b".repeat(CHUNK - 120),
        "c".repeat(50)
    );
    let at = text.find(PUSH).unwrap() as u64;
    // Every split point through the secret, and reads of odd sizes.
    for cut in (at as usize - 2)..(at as usize + PUSH.len() + 2) {
        let mut s = Scanner::new(&n);
        s.feed(&text.as_bytes()[..cut]);
        s.feed(&text.as_bytes()[cut..]);
        let f = s.findings(&stdout());
        assert_eq!(f.len(), 1, "cut {cut}: {f:?}");
        assert_eq!(
            (f[0].offset, &f[0].place),
            (at, &Place::Stdout { life: 1, line: 2 })
        );
    }
    let mut s = Scanner::new(&n);
    for piece in text.as_bytes().chunks(7) {
        s.feed(piece);
    }
    let f = s.findings(&stdout());
    assert_eq!((f.len(), f[0].offset), (1, at));
    // Through a reader whose reads end inside the secret.
    let mut r = std::io::Cursor::new(text.clone().into_bytes());
    let (f, read, cut) = n.scan_reader(&stdout(), &mut r, u64::MAX).unwrap();
    assert_eq!(
        (f.len(), f[0].offset, read, cut),
        (1, at, text.len() as u64, false)
    );
    // A bound below the secret stops before it, and says so.
    let mut r = std::io::Cursor::new(text.clone().into_bytes());
    let (f, read, cut) = n.scan_reader(&stdout(), &mut r, at).unwrap();
    assert_eq!((f.len(), read, cut), (0, at, true));
}

#[test]
fn a_secret_in_a_snapshot_record_is_found_in_that_record() {
    let n = Needles::new(&secrets());
    let records = vec![
        json!({"id": "d0", "push_token_sha256": ["ab"]}),
        json!({"id": "d1", "dlq": {"request": {"headers": {"authorization": SCOPED}}}}),
    ];
    let mut scan = SecretScan::default();
    scan_snapshot(&n, &records, &mut scan);
    assert_eq!(scan.findings.len(), 1, "{:?}", scan.findings);
    let json = serde_json::to_string(&records[1]).unwrap();
    assert_eq!(scan.findings[0].place, Place::Snapshot { record: 2 });
    assert_eq!(scan.findings[0].offset, json.find(SCOPED).unwrap() as u64);
    assert_eq!(scan.findings[0].kind, SecretKind::ScopedCredential);
}

#[test]
fn a_secret_in_a_store_file_is_found_with_its_relative_path_and_offset() {
    let n = Needles::new(&secrets());
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("artifacts/d1")).unwrap();
    std::fs::write(dir.path().join("a.db"), b"no secret here").unwrap();
    let mut big = vec![b'x'; CHUNK + 5];
    big.splice(CHUNK - 4..CHUNK - 4, CRED_LONG.bytes());
    std::fs::write(dir.path().join("artifacts/d1/blob"), &big).unwrap();
    // A file named after a secret: the name is reported, masked.
    std::fs::write(dir.path().join(format!("push-{PUSH}.log")), b"").unwrap();
    // A FIFO is not opened (it would block), a link not followed.
    nix::unistd::mkfifo(&dir.path().join("fifo"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", dir.path().join("link")).unwrap();
    let s = scan_store(&n, dir.path(), false, StoreBounds::DEFAULT);
    let shown: Vec<String> = s.findings.iter().map(|f| f.to_string()).collect();
    assert_eq!(s.findings.len(), 2, "{shown:?}");
    // Entries in name order, depth first: the root's names before the subdirectories.
    assert_eq!(
        s.findings[0].place,
        Place::StoreName {
            path: "push-<secret>.log".into(),
            at_kill: false
        }
    );
    assert_eq!(s.findings[0].kind, SecretKind::PushToken);
    assert_eq!(s.findings[0].offset, 5);
    assert_eq!(
        s.findings[1].place,
        Place::StoreFile {
            path: "artifacts/d1/blob".into(),
            at_kill: false
        }
    );
    // Across the boundary of two reads.
    assert_eq!(s.findings[1].offset, (CHUNK - 4) as u64);
    assert_eq!(s.findings[1].kind, SecretKind::OwnCredential);
    for t in &shown {
        assert!(
            !t.contains(PUSH) && !t.contains("delegator-own-secret"),
            "{t}"
        );
    }
    assert_eq!(s.files, 3);
    assert!(
        s.limits
            .iter()
            .any(|l| l.contains("\"fifo\"") && l.contains("not a regular file"))
    );
    assert!(s.limits.iter().any(|l| l.contains("\"link\"")));
}

#[test]
fn a_store_past_its_bounds_is_scanned_up_to_them_and_says_so() {
    let n = Needles::new(&secrets());
    let dir = tempfile::tempdir().unwrap();
    for i in 0..3 {
        std::fs::write(dir.path().join(format!("f{i}")), b"xxxx").unwrap();
    }
    std::fs::create_dir_all(dir.path().join("g/h")).unwrap();
    std::fs::write(dir.path().join("g/h/deep"), PUSH).unwrap();
    let all = scan_store(&n, dir.path(), true, StoreBounds::DEFAULT);
    assert_eq!((all.files, all.bytes, all.findings.len()), (4, 44, 1));
    assert!(all.limits.is_empty(), "{:?}", all.limits);
    let bytes = StoreBounds {
        bytes: 6,
        ..StoreBounds::DEFAULT
    };
    let s = scan_store(&n, dir.path(), true, bytes);
    assert_eq!((s.files, s.bytes), (2, 6));
    assert!(
        s.limits[0].contains("\"f1\" read only up to the scan's bound of 6 bytes"),
        "{:?}",
        s.limits
    );
    let files = StoreBounds {
        files: 2,
        ..StoreBounds::DEFAULT
    };
    let s = scan_store(&n, dir.path(), true, files);
    assert_eq!(s.files, 2);
    assert!(s.limits[0].contains("past the first 2"), "{:?}", s.limits);
    let depth = StoreBounds {
        depth: 1,
        ..StoreBounds::DEFAULT
    };
    let s = scan_store(&n, dir.path(), true, depth);
    assert!(s.findings.is_empty());
    assert!(
        s.limits[0].contains("\"g/h\" deeper than 1 levels"),
        "{:?}",
        s.limits
    );
}

fn judged(scan: SecretScan) -> Check {
    let mut c = good("");
    c.secrets = scan;
    c.check(checker("DLG-SECRET-01"))
}

#[test]
fn a_plaintext_secret_fails_the_rule_naming_place_offset_and_witness() {
    let mut scan = SecretScan {
        scanned: true,
        secrets: 3,
        ..Default::default()
    };
    scan.add(scan_of(
        Place::Stderr { life: 1, line: 0 },
        format!("x {PUSH}").as_bytes(),
    ));
    let Check::Fail {
        observed,
        witnesses,
        ..
    } = judged(scan)
    else {
        panic!("a leak fails");
    };
    assert!(observed.contains("a push token"), "{observed}");
    assert!(
        observed.contains("stderr line 1 (process life 1) at byte 2"),
        "{observed}"
    );
    assert!(!observed.contains(PUSH), "{observed}");
    assert_eq!(witnesses, vec![1]);
}

#[test]
fn a_delegator_that_keeps_only_a_hash_of_a_push_token_passes() {
    use sha2::Digest;
    let n = Needles::new(&secrets());
    let hash = format!("{:x}", sha2::Sha256::digest(PUSH.as_bytes()));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("store.json"),
        format!("{{\"push_token_sha256\":[\"{hash}\"]}}"),
    )
    .unwrap();
    let mut scan = SecretScan {
        scanned: true,
        ..Default::default()
    };
    scan.add(scan_store(&n, dir.path(), false, StoreBounds::DEFAULT).findings);
    scan_snapshot(
        &n,
        &[json!({"id": "d1", "push_token_sha256": [hash]})],
        &mut scan,
    );
    scan.add(n.scan_bytes(&stdout(), b"{\"type\":\"init_ok\"}\n"));
    assert_eq!(judged(scan), Check::Pass);
}

#[test]
fn nothing_scanned_or_no_work_done_is_not_applicable() {
    assert_eq!(judged(SecretScan::default()), Check::NotApplicable);
    let mut c = Case::new(&delegation(""));
    c.secrets = SecretScan {
        scanned: true,
        ..Default::default()
    };
    assert_eq!(c.check(checker("DLG-SECRET-01")), Check::NotApplicable);
    // A refusal, with nothing sent, is work done: judged.
    c.done("d1", "REFUSED", json!([]));
    assert_eq!(c.check(checker("DLG-SECRET-01")), Check::Pass);
}

#[test]
fn the_killed_process_store_adds_only_what_the_end_did_not_find_again() {
    let found = |at_kill, offset| Finding {
        kind: SecretKind::PushToken,
        origin: "o".into(),
        witness: None,
        part: Part::Whole,
        place: Place::StoreFile {
            path: "db-wal".into(),
            at_kill,
        },
        offset,
        more: 0,
    };
    let mut scan = SecretScan::default();
    scan.add(vec![found(false, 10)]);
    scan.add_kill_findings(vec![found(true, 10), found(true, 99)]);
    assert_eq!(scan.findings, vec![found(false, 10), found(true, 99)]);
    assert!(
        found(true, 99)
            .to_string()
            .contains("as the killed process left it")
    );
}

#[test]
fn masking_hides_every_form_of_a_secret() {
    let n = Needles::new(&secrets());
    assert_eq!(
        n.mask(&format!("a {SCOPED} b scoped-bank-task-7 {PUSH}")),
        "a <secret> b <secret> <secret>"
    );
}
