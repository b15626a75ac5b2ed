//! What the delegator wrote, kept for the secret scan (DLG-SECRET-01): every byte of its stdout
//! and stderr in each process life, spooled as the reader tasks read them to unnamed temporary
//! files (outside its store; at most [`OUTPUT_MAX_BYTES`] per stream and life, the rest
//! counted), then scanned with its snapshot records and its store directory when the case is
//! judged ([`scan_everything`]).

use crate::delegator_process::{OutputStream, OutputTap};
use crate::rules::secret::{
    Needles, OUTPUT_MAX_BYTES, Place, Secret, SecretScan, StoreBounds, StoreScan, scan_snapshot,
    scan_store,
};
use serde_json::Value;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// One output stream of one process life, spooled.
#[derive(Default)]
struct Spool {
    file: Option<std::fs::File>,
    /// Bytes in the file.
    kept: u64,
    /// Bytes past the bound (or after a write error), not kept.
    dropped: u64,
    /// Why the spool could not be created or written.
    error: Option<String>,
}

impl Spool {
    fn new() -> Spool {
        match tempfile::tempfile() {
            Ok(f) => Spool {
                file: Some(f),
                ..Spool::default()
            },
            Err(e) => Spool {
                error: Some(format!("no temporary file: {e}")),
                ..Spool::default()
            },
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        let room = OUTPUT_MAX_BYTES.saturating_sub(self.kept);
        let take = (bytes.len() as u64).min(room) as usize;
        let mut kept = 0;
        if take > 0
            && let Some(f) = &mut self.file
        {
            match f.write_all(&bytes[..take]) {
                Ok(()) => kept = take,
                Err(e) => {
                    self.error = Some(format!("spool write failed: {e}"));
                    self.file = None;
                }
            }
        }
        self.kept += kept as u64;
        self.dropped += (bytes.len() - kept) as u64;
    }
}

/// A spool read from its start (positioned reads: the writer's offset is left alone).
struct SpoolReader<'a> {
    file: &'a std::fs::File,
    at: u64,
}

impl std::io::Read for SpoolReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read_at(buf, self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

/// The two streams of one process life.
#[derive(Default)]
struct Life {
    stdout: Mutex<Spool>,
    stderr: Mutex<Spool>,
}

/// The output of every process life of a case.
#[derive(Default)]
pub(super) struct OutputCapture {
    lives: Vec<Arc<Life>>,
}

impl OutputCapture {
    /// The tap for a new process life (the first process, or the one restarted after a kill).
    pub(super) fn new_life(&mut self) -> OutputTap {
        let life = Arc::new(Life {
            stdout: Mutex::new(Spool::new()),
            stderr: Mutex::new(Spool::new()),
        });
        self.lives.push(life.clone());
        Arc::new(move |stream, bytes| {
            let spool = match stream {
                OutputStream::Stdout => &life.stdout,
                OutputStream::Stderr => &life.stderr,
            };
            spool.lock().unwrap_or_else(|p| p.into_inner()).write(bytes);
        })
    }

    /// Scan every life's stdout and stderr.
    fn scan(&self, needles: &Needles, scan: &mut SecretScan) {
        let mut totals = [0u64; 2];
        for (i, life) in self.lives.iter().enumerate() {
            let n = i as u32 + 1;
            for (k, name, spool, place) in [
                (
                    0,
                    "stdout",
                    &life.stdout,
                    Place::Stdout { life: n, line: 0 },
                ),
                (
                    1,
                    "stderr",
                    &life.stderr,
                    Place::Stderr { life: n, line: 0 },
                ),
            ] {
                let spool = spool.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(e) = &spool.error {
                    scan.limits.push(format!("{name} of process life {n}: {e}"));
                }
                if spool.dropped > 0 {
                    scan.limits.push(format!(
                        "{name} of process life {n}: {} bytes past the first {} MiB not scanned",
                        spool.dropped,
                        OUTPUT_MAX_BYTES >> 20
                    ));
                }
                let Some(file) = &spool.file else { continue };
                let mut r = SpoolReader { file, at: 0 };
                match needles.scan_reader(&place, &mut r, spool.kept) {
                    Ok((found, read, _)) => {
                        totals[k] += read;
                        scan.add(found);
                    }
                    Err(e) => scan
                        .limits
                        .push(format!("{name} of process life {n} not read back: {e}")),
                }
            }
        }
        scan.covered.push(format!(
            "stdout {} bytes and stderr {} bytes in {} process lives",
            totals[0],
            totals[1],
            self.lives.len()
        ));
    }
}

/// The store's scan findings, what it covered and what it did not, into `scan`.
fn add_store(scan: &mut SecretScan, s: StoreScan, at_kill: bool) {
    let when = if at_kill {
        " as the killed process left it"
    } else {
        ""
    };
    scan.covered
        .push(format!("store{when}: {} files, {} bytes", s.files, s.bytes));
    scan.limits.extend(
        s.limits
            .into_iter()
            .map(|l| format!("{l}{}", if at_kill { " (at the kill)" } else { "" })),
    );
    if at_kill {
        scan.add_kill_findings(s.findings);
    } else {
        scan.add(s.findings);
    }
}

/// The store directory scanned for `secrets` right after a kill (the secrets known then).
pub(super) fn scan_store_at_kill(secrets: &[Secret], store: &Path) -> StoreScan {
    scan_store(&Needles::new(secrets), store, true, StoreBounds::DEFAULT)
}

/// DLG-SECRET-01's evidence: `secrets` searched for in every process life's stdout and stderr,
/// the last snapshot's records and the store directory (as the last process left it; plus what
/// a scan right after a kill found, `at_kill`). Blocking: it reads files.
pub(super) fn scan_everything(
    capture: &OutputCapture,
    secrets: &[Secret],
    snapshot: Option<&[Value]>,
    store: &Path,
    at_kill: Option<StoreScan>,
) -> SecretScan {
    let needles = Needles::new(secrets);
    let mut scan = SecretScan {
        secrets: needles.searched(),
        skipped_short: needles.skipped_short,
        ..SecretScan::default()
    };
    if needles.is_empty() {
        return scan;
    }
    capture.scan(&needles, &mut scan);
    if let Some(records) = snapshot {
        scan_snapshot(&needles, records, &mut scan);
    }
    add_store(
        &mut scan,
        scan_store(&needles, store, false, StoreBounds::DEFAULT),
        false,
    );
    if let Some(k) = at_kill {
        add_store(&mut scan, k, true);
    }
    scan.scanned = true;
    scan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::secret::{Part, SecretKind};

    fn secret(value: &str) -> Secret {
        Secret {
            kind: SecretKind::ScopedCredential,
            value: value.into(),
            origin: "the credential given for d1".into(),
            witness: None,
        }
    }

    #[test]
    fn every_life_and_stream_is_scanned_and_places_named() {
        let mut c = OutputCapture::default();
        let first = c.new_life();
        first(OutputStream::Stdout, b"{\"type\":\"init_ok\"}\nhalf a sec");
        first(OutputStream::Stdout, b"ret-value-1 there\n");
        let second = c.new_life();
        second(OutputStream::Stderr, b"warn\nlogged secret-value-1\n");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("db"), b"..secret-value-1..").unwrap();
        let snapshot = vec![serde_json::json!({"note": "secret-value-1"})];
        let at_kill = scan_store_at_kill(&[secret("Bearer secret-value-1")], dir.path());
        std::fs::write(dir.path().join("db"), b"clean now").unwrap();
        let scan = scan_everything(
            &c,
            &[secret("Bearer secret-value-1")],
            Some(&snapshot),
            dir.path(),
            Some(at_kill),
        );
        let places: Vec<(String, u64)> = scan
            .findings
            .iter()
            .map(|f| (f.place.to_string(), f.offset))
            .collect();
        assert_eq!(
            places,
            vec![
                ("stdout line 2 (process life 1)".to_string(), 26),
                ("stderr line 2 (process life 2)".to_string(), 12),
                ("snapshot_ok record 1".to_string(), 9),
                (
                    "store file \"db\" (as the killed process left it)".to_string(),
                    2
                ),
            ]
        );
        assert!(scan.findings.iter().all(|f| f.part == Part::Token));
        assert!(scan.scanned);
        assert!(scan.limits.is_empty(), "{:?}", scan.limits);
        assert!(
            scan.covered[0].contains("in 2 process lives"),
            "{:?}",
            scan.covered
        );
    }

    #[test]
    fn output_past_the_bound_is_counted_not_kept() {
        let mut s = Spool::new();
        s.kept = OUTPUT_MAX_BYTES - 3;
        s.write(b"abcdef");
        assert_eq!((s.kept, s.dropped), (OUTPUT_MAX_BYTES, 3));
        let mut c = OutputCapture::default();
        let tap = c.new_life();
        tap(OutputStream::Stdout, b"x");
        c.lives[0].stdout.lock().unwrap().dropped = 5;
        let scan = scan_everything(
            &c,
            &[secret("long enough")],
            None,
            Path::new("/nonexistent"),
            None,
        );
        assert!(
            scan.limits[0].contains("stdout of process life 1: 5 bytes past the first 64 MiB"),
            "{:?}",
            scan.limits
        );
        // Nothing to search for: nothing scanned.
        let scan = scan_everything(
            &c,
            &[secret("short")],
            None,
            Path::new("/nonexistent"),
            None,
        );
        assert!(!scan.scanned);
        assert_eq!(scan.skipped_short, 1);
    }
}
