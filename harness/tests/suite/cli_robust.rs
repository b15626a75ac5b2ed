//! Robustness of the CLI: a closed pipe ends quietly, Ctrl-C writes a partial report marked
//! incomplete and removes the temporary directories, `serve --journal` writes the journal.

use crate::common;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Wait for the child, at most `bound`; killed and failed past it.
fn wait_bounded(child: Child, bound: Duration) -> std::process::ExitStatus {
    let pid = Pid::from_raw(child.id() as i32);
    let (tx, rx) = mpsc::channel();
    let mut child = child;
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    match rx.recv_timeout(bound) {
        Ok(status) => status.unwrap(),
        Err(_) => {
            let _ = kill(pid, Signal::SIGKILL);
            panic!("the child did not end within {bound:?}");
        }
    }
}

/// The lines of a stream, on a channel.
fn lines(r: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(r).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                return;
            }
        }
    });
    rx
}

/// The first line received that satisfies `want`, within `bound`.
fn first(rx: &mpsc::Receiver<String>, bound: Duration, want: impl Fn(&str) -> bool) -> String {
    let until = Instant::now() + bound;
    loop {
        match rx.recv_timeout(until.saturating_duration_since(Instant::now())) {
            Ok(l) if want(&l) => return l,
            Ok(_) => {}
            Err(e) => panic!("no such line within {bound:?}: {e}"),
        }
    }
}

#[test]
fn a_closed_pipe_ends_quietly_with_success() {
    for args in [
        &["rules"][..],
        &["list"][..],
        &["explain", "DLG-SEND-02"][..],
        &["explain", "states.completed"][..],
    ] {
        // The reading end is closed before the harness writes a byte.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let mut child = Command::new(common::harness())
            .args(args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = wait_bounded(child, Duration::from_secs(30));
        assert_eq!(status.code(), Some(0), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?}: {err}");
    }
}

#[test]
fn ctrl_c_writes_a_partial_report_marked_incomplete_and_removes_temporary_directories() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let delegator = format!("{} drive", common::delegator().display());
    let mut child = Command::new(common::harness())
        .current_dir(common::root())
        .env("TMPDIR", tmp.path())
        .args([
            "run",
            "--case",
            "states.*",
            "--jobs",
            "1",
            "--delegator",
            &delegator,
            "--out",
        ])
        .arg(out.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = lines(child.stderr.take().unwrap());
    let stdout = lines(child.stdout.take().unwrap());
    // Without a terminal each finished case is one line on stderr.
    first(&stderr, Duration::from_secs(60), |l| {
        l.contains("] states.")
    });
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let status = wait_bounded(child, Duration::from_secs(30));
    // The pipe is closed now: every line is in.
    let said: Vec<String> = stdout.iter().collect();
    assert_eq!(status.code(), Some(130), "{said:?}");
    assert!(
        said.iter().any(|l| l.starts_with("interrupted: ")),
        "{said:?}"
    );
    let index: Value =
        serde_json::from_slice(&std::fs::read(out.path().join("index.json")).unwrap()).unwrap();
    assert_eq!(index["run"]["incomplete"], true, "{index}");
    let ran = index["cases"].as_array().unwrap().len();
    let all = Command::new(common::harness())
        .current_dir(common::root())
        .args(["list", "--case", "states.*"])
        .output()
        .unwrap()
        .stdout
        .lines()
        .count();
    assert!(
        ran >= 1 && ran < all,
        "{ran} of {all} cases in the partial report"
    );
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

#[test]
fn serve_writes_its_journal_on_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.jsonl");
    let mut child = Command::new(common::harness())
        .args(["serve", "states.completed", "--journal"])
        .arg(&journal)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = lines(child.stdout.take().unwrap());
    let agent = first(&stdout, Duration::from_secs(30), |l| l.contains('\t'));
    first(&stdout, Duration::from_secs(30), |l| {
        l.starts_with("serving case")
    });
    // One request to the agent, so that the journal has something to say.
    let url = agent.split('\t').nth(1).unwrap();
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_once('/').unwrap();
    let mut conn = std::net::TcpStream::connect(host).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        conn,
        "GET /{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    conn.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let status = wait_bounded(child, Duration::from_secs(30));
    assert_eq!(status.code(), Some(0));
    let text = std::fs::read_to_string(&journal).unwrap();
    assert!(!text.is_empty(), "empty journal");
    for l in text.lines() {
        let e: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
        assert!(e.get("seq").is_some(), "{l}");
    }
}
