//! Where a secret was found ([`Place`], [`Finding`]) and the scan of one case ([`SecretScan`]),
//! with the snapshot records' scan.

use super::*;

/// Where something the delegator wrote was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// Its stdout in process life `life` (1: the first process; 2: the one restarted after a
    /// kill), at line `line` (1-based; 0 until known).
    Stdout {
        /// Process life.
        life: u32,
        /// Line.
        line: u64,
    },
    /// Its stderr in process life `life`, at line `line`.
    Stderr {
        /// Process life.
        life: u32,
        /// Line.
        line: u64,
    },
    /// Record `record` (1-based) of its last `snapshot_ok`, offsets in the record's compact
    /// JSON.
    Snapshot {
        /// Record number.
        record: usize,
    },
    /// A file under its store directory (`path` relative to it, masked); `at_kill`: as the
    /// killed process left it (a crash case), else as the last process left it.
    StoreFile {
        /// Relative path.
        path: String,
        /// Read right after the kill.
        at_kill: bool,
    },
    /// The name of an entry under its store directory.
    StoreName {
        /// Relative path.
        path: String,
        /// Read right after the kill.
        at_kill: bool,
    },
}

impl Place {
    pub(super) fn at_line(&self, line: u64) -> Place {
        match self {
            Place::Stdout { life, .. } => Place::Stdout { life: *life, line },
            Place::Stderr { life, .. } => Place::Stderr { life: *life, line },
            other => other.clone(),
        }
    }
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kill = |k: bool| {
            if k {
                " (as the killed process left it)"
            } else {
                ""
            }
        };
        match self {
            Place::Stdout { life, line } => write!(f, "stdout line {line} (process life {life})"),
            Place::Stderr { life, line } => write!(f, "stderr line {line} (process life {life})"),
            Place::Snapshot { record } => write!(f, "snapshot_ok record {record}"),
            Place::StoreFile { path, at_kill } => {
                write!(f, "store file {path:?}{}", kill(*at_kill))
            }
            Place::StoreName { path, at_kill } => {
                write!(f, "the name of store entry {path:?}{}", kill(*at_kill))
            }
        }
    }
}

/// One plaintext occurrence of a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The kind of secret.
    pub kind: SecretKind,
    /// Where the secret came from (never the secret).
    pub origin: String,
    /// The journal sequence that shows the secret, if any.
    pub witness: Option<u64>,
    /// Whole, or its token part.
    pub part: Part,
    /// Where it was found.
    pub place: Place,
    /// Byte offset in the place (stream, file, or record JSON).
    pub offset: u64,
    /// Further occurrences in the same place not kept ([`MAX_FINDINGS`]).
    pub more: u64,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({}){} in {} at byte {}",
            self.kind.describe(),
            self.origin,
            match self.part {
                Part::Whole => "",
                Part::Token => ", its token after the scheme word,",
            },
            self.place,
            self.offset
        )
    }
}

/// What the secret scan of a case found and covered: the evidence of DLG-SECRET-01.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SecretScan {
    /// True once anything was scanned with at least one secret to search for.
    pub scanned: bool,
    /// Secrets searched for.
    pub secrets: usize,
    /// Secrets not searched for: shorter than [`MIN_SECRET_BYTES`].
    pub skipped_short: usize,
    /// The occurrences found, the first [`MAX_FINDINGS`].
    pub findings: Vec<Finding>,
    /// Occurrences past [`MAX_FINDINGS`].
    pub findings_dropped: u64,
    /// What was scanned, in words (`stdout 12345 bytes in 2 process lives`, …).
    pub covered: Vec<String>,
    /// What was not scanned: past a bound, unreadable, not a regular file.
    pub limits: Vec<String>,
}

impl SecretScan {
    /// Add findings, keeping the first [`MAX_FINDINGS`] and counting the rest.
    pub fn add(&mut self, found: Vec<Finding>) {
        for f in found {
            self.findings_dropped += f.more;
            if self.findings.len() < MAX_FINDINGS {
                self.findings.push(f);
            } else {
                self.findings_dropped += 1;
            }
        }
    }

    /// Add the findings of the store as the killed process left it, unless the same occurrence
    /// was found again at the end.
    pub fn add_kill_findings(&mut self, found: Vec<Finding>) {
        let again = |f: &Finding| {
            self.findings.iter().any(|g| {
                g.offset == f.offset
                    && g.origin == f.origin
                    && g.part == f.part
                    && match (&g.place, &f.place) {
                        (Place::StoreFile { path: a, .. }, Place::StoreFile { path: b, .. })
                        | (Place::StoreName { path: a, .. }, Place::StoreName { path: b, .. }) => {
                            a == b
                        }
                        _ => false,
                    }
            })
        };
        let fresh: Vec<Finding> = found.into_iter().filter(|f| !again(f)).collect();
        self.add(fresh);
    }
}

/// Scan the `snapshot_ok` records (each as its compact JSON).
pub fn scan_snapshot(needles: &Needles, records: &[Value], scan: &mut SecretScan) {
    let mut bytes = 0;
    for (i, r) in records.iter().enumerate() {
        let json = serde_json::to_vec(r).unwrap_or_default();
        bytes += json.len();
        scan.add(needles.scan_bytes(&Place::Snapshot { record: i + 1 }, &json));
    }
    scan.covered.push(format!(
        "snapshot_ok: {} records ({bytes} bytes of JSON)",
        records.len()
    ));
}
