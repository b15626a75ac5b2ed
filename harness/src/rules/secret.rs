//! Secrets at rest and in logs (DLG-SECRET-01, spec §13.4): no secret the delegator holds
//! appears in plaintext in what it writes.
//!
//! - The secrets ([`SecretKind`], [`known_secrets`]): the delegator's own credential
//!   (`init.credential`), each scoped credential the harness gave in a `credential` message, each
//!   push token the delegator gave an agent (the journal's push configs: `token` and
//!   `authentication.credentials`, in a send's configuration or a push-config call; the journal
//!   holds every binding's params JSON-RPC shaped) and each credential of `init.agent_credentials`.
//!   A `Scheme token` credential is searched for whole and for its token part. Secrets shorter
//!   than [`MIN_SECRET_BYTES`] are not searched for (they would match by chance).
//! - The places ([`Place`]): every byte of the delegator's stdout and stderr in each process life
//!   (as read, protocol lines or not), each `snapshot_ok` record (dead-letter records included),
//!   and every file under its store directory (and the names of its entries), read before the
//!   store is removed and, in a crash case, also as the killed process left it.
//! - The scan ([`Scanner`]) streams: `memchr::memmem` finders over a window that carries the
//!   last `longest secret - 1` bytes of the previous read, so a secret split across reads is
//!   found once. It is bounded ([`STORE_MAX_FILES`], [`STORE_MAX_BYTES`], [`OUTPUT_MAX_BYTES`],
//!   [`MAX_FINDINGS`]): what lies past a bound is not scanned and the scan says so
//!   ([`SecretScan::limits`]).
//!
//! A finding names the kind of secret, where it came from, the place and the byte offset, never
//! the secret: every text of a finding is masked ([`Needles::mask`]).

use super::evidence::{Evidence, requests};
use super::registry::{Check, fail};
use a2a_driver_contract::EscalationKind;
use a2a_mock_agents::{Entry, Event};
use memchr::memmem;
use serde_json::Value;
use std::io::Read;
use std::path::Path;

/// Secrets shorter than this are not searched for: a short value matches by chance.
pub const MIN_SECRET_BYTES: usize = 8;
/// Entries (files and directories) of the store directory looked at, at most, per scan.
pub const STORE_MAX_FILES: usize = 10_000;
/// Bytes of store files read, at most, per scan.
pub const STORE_MAX_BYTES: u64 = 256 * 1024 * 1024;
/// Directory depth under the store followed, at most.
pub const STORE_MAX_DEPTH: usize = 32;

/// The bounds of one store scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreBounds {
    /// Entries looked at.
    pub files: usize,
    /// Bytes read.
    pub bytes: u64,
    /// Directory depth followed.
    pub depth: usize,
}

impl StoreBounds {
    /// [`STORE_MAX_FILES`], [`STORE_MAX_BYTES`], [`STORE_MAX_DEPTH`].
    pub const DEFAULT: StoreBounds = StoreBounds {
        files: STORE_MAX_FILES,
        bytes: STORE_MAX_BYTES,
        depth: STORE_MAX_DEPTH,
    };
}
/// Bytes of one output stream (stdout or stderr) of one process life kept for the scan.
pub const OUTPUT_MAX_BYTES: u64 = 64 * 1024 * 1024;
/// Findings kept per case; later ones are counted.
pub const MAX_FINDINGS: usize = 50;
/// Bytes read at a time.
const CHUNK: usize = 64 * 1024;

/// What a secret is to the delegator. The one list of secret kinds: a new kind is a variant
/// here and a source in [`known_secrets`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SecretKind {
    /// Its own credential (`init.credential`).
    OwnCredential,
    /// A credential scoped to an agent and task (a `credential` message).
    ScopedCredential,
    /// A push token it gave an agent (a push config's `token` or `authentication.credentials`).
    PushToken,
    /// A credential for an agent's security scheme (`init.agent_credentials`).
    AgentCredential,
}

impl SecretKind {
    /// The kind in words.
    pub fn describe(self) -> &'static str {
        match self {
            SecretKind::OwnCredential => "its own credential",
            SecretKind::ScopedCredential => "a scoped credential",
            SecretKind::PushToken => "a push token",
            SecretKind::AgentCredential => "an agent credential",
        }
    }
}

/// One secret the delegator holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Secret {
    /// What it is.
    pub kind: SecretKind,
    /// The value.
    pub value: String,
    /// Where it came from, in words that do not hold it (`init.credential`, `the credential
    /// given for d1`, `the push config sent to a (journal seq 12)`).
    pub origin: String,
    /// The journal sequence that shows it (a push config's request), if any.
    pub witness: Option<u64>,
}

/// Every secret the delegator holds in a case: its own credential, the agent credentials
/// (card URL, credential) it was given, the scoped credentials the harness gave (`given`, kind
/// `auth`) and the push tokens of the push configs it sent (`journal`). Each value once (the
/// first source wins).
pub fn known_secrets(
    own_credential: &str,
    agent_credentials: &[(String, String)],
    given: &[(String, EscalationKind, String)],
    journal: &[Entry],
) -> Vec<Secret> {
    let mut out: Vec<Secret> = Vec::new();
    let mut add = |kind, value: &str, origin: String, witness| {
        if !value.is_empty() && !out.iter().any(|s| s.value == value) {
            out.push(Secret {
                kind,
                value: value.to_string(),
                origin,
                witness,
            });
        }
    };
    add(
        SecretKind::OwnCredential,
        own_credential,
        "init.credential".into(),
        None,
    );
    for (card, cred) in agent_credentials {
        add(
            SecretKind::AgentCredential,
            cred,
            format!("init.agent_credentials for {card}"),
            None,
        );
    }
    for (id, kind, value) in given {
        if *kind == EscalationKind::Auth {
            add(
                SecretKind::ScopedCredential,
                value,
                format!("the credential given for {id}"),
                None,
            );
        }
    }
    for e in journal {
        let Event::Request {
            method: Some(m),
            params,
            ..
        } = &e.event
        else {
            continue;
        };
        for token in push_tokens(m, params) {
            add(
                SecretKind::PushToken,
                token,
                format!(
                    "the push config sent to {} (journal seq {})",
                    e.agent, e.seq
                ),
                Some(e.seq),
            );
        }
    }
    out
}

/// The push tokens in a request's params (JSON-RPC shaped, 1.0 or 0.3 names): the `token` and
/// `authentication.credentials` of the push config in a send's configuration or of a
/// push-config call.
fn push_tokens<'a>(method: &str, params: &'a Value) -> Vec<&'a str> {
    super::push::push_configs(method, params)
        .into_iter()
        .flat_map(super::push::config_tokens)
        .collect()
}

/// Which part of a secret was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The whole value.
    Whole,
    /// The token after the scheme word of a `Scheme token` credential.
    Token,
}

/// The token part of a `Scheme token` value: what follows the scheme word and its spaces.
fn token_part(value: &str) -> Option<&str> {
    let (scheme, rest) = value.split_once(' ')?;
    let scheme_ok = scheme
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._~+/".contains(c));
    let token = rest.trim();
    (scheme_ok && !token.is_empty() && !token.contains(' ')).then_some(token)
}

struct Needle {
    secret: usize,
    part: Part,
    finder: memmem::Finder<'static>,
}

/// The byte strings searched for: each secret whole and, for `Scheme token` credentials, its
/// token part; none shorter than [`MIN_SECRET_BYTES`].
pub struct Needles {
    secrets: Vec<Secret>,
    needles: Vec<Needle>,
    longest: usize,
    /// Secrets with nothing long enough to search for.
    pub skipped_short: usize,
}

impl Needles {
    /// The needles of `secrets`.
    pub fn new(secrets: &[Secret]) -> Needles {
        let mut needles = Vec::new();
        let mut skipped_short = 0;
        for (i, s) in secrets.iter().enumerate() {
            let mut any = false;
            let forms = std::iter::once((Part::Whole, s.value.as_str()))
                .chain(token_part(&s.value).map(|t| (Part::Token, t)));
            for (part, text) in forms {
                if text.len() >= MIN_SECRET_BYTES {
                    any = true;
                    needles.push(Needle {
                        secret: i,
                        part,
                        finder: memmem::Finder::new(text.as_bytes()).into_owned(),
                    });
                }
            }
            if !any {
                skipped_short += 1;
            }
        }
        let longest = needles
            .iter()
            .map(|n| n.finder.needle().len())
            .max()
            .unwrap_or(0);
        Needles {
            secrets: secrets.to_vec(),
            needles,
            longest,
            skipped_short,
        }
    }

    /// True when there is nothing to search for.
    pub fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }

    /// The secrets searched for (at least one needle each).
    pub fn searched(&self) -> usize {
        self.secrets.len() - self.skipped_short
    }

    /// `text` with every occurrence of a needle replaced by `<secret>` (for text that goes into
    /// a report: a store path, a finding).
    pub fn mask(&self, text: &str) -> String {
        let mut t = text.to_string();
        // Longest first: a whole value before its token part.
        let mut order: Vec<&Needle> = self.needles.iter().collect();
        order.sort_by_key(|n| std::cmp::Reverse(n.finder.needle().len()));
        for n in order {
            if let Ok(s) = std::str::from_utf8(n.finder.needle())
                && t.contains(s)
            {
                t = t.replace(s, "<secret>");
            }
        }
        t
    }

    /// Scan all of `bytes` as `place`.
    pub fn scan_bytes(&self, place: &Place, bytes: &[u8]) -> Vec<Finding> {
        let mut s = Scanner::new(self);
        for c in bytes.chunks(CHUNK) {
            s.feed(c);
        }
        s.findings(place)
    }

    /// Scan `r` to its end as `place`, reading at most `max` bytes. Returns the findings, the
    /// bytes read and whether the bound stopped the read.
    pub fn scan_reader(
        &self,
        place: &Place,
        r: &mut impl Read,
        max: u64,
    ) -> std::io::Result<(Vec<Finding>, u64, bool)> {
        let mut s = Scanner::new(self);
        let mut buf = vec![0u8; CHUNK];
        let mut read = 0u64;
        loop {
            let want = (max - read).min(CHUNK as u64) as usize;
            if want == 0 {
                // At the bound: one more byte says whether anything was left unread.
                let more = r.read(&mut buf[..1])? > 0;
                return Ok((s.findings(place), read, more));
            }
            let n = match r.read(&mut buf[..want]) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if n == 0 {
                return Ok((s.findings(place), read, false));
            }
            s.feed(&buf[..n]);
            read += n as u64;
        }
    }
}

/// A hit of the streaming scan, before it is tied to its place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Hit {
    needle: usize,
    offset: u64,
    line: u64,
}

/// A streaming scan of one place: fed in pieces of any size, it finds every needle, including
/// one split across pieces, and counts lines (1-based) for the places that have them.
pub struct Scanner<'n> {
    needles: &'n Needles,
    /// The tail of what was fed, kept because a needle may continue in the next piece.
    carry: Vec<u8>,
    /// Stream offset of `carry[0]`.
    carry_at: u64,
    /// Newlines before `carry_at`.
    newlines: u64,
    hits: Vec<Hit>,
    /// Hits past [`MAX_FINDINGS`], counted.
    dropped: u64,
}

impl<'n> Scanner<'n> {
    /// A scanner at the start of a stream.
    pub fn new(needles: &'n Needles) -> Self {
        Scanner {
            needles,
            carry: Vec::new(),
            carry_at: 0,
            newlines: 0,
            hits: Vec::new(),
            dropped: 0,
        }
    }

    /// The next piece of the stream.
    pub fn feed(&mut self, piece: &[u8]) {
        if self.needles.longest == 0 || piece.is_empty() {
            return;
        }
        let mut window = std::mem::take(&mut self.carry);
        let old = window.len();
        window.extend_from_slice(piece);
        for (i, n) in self.needles.needles.iter().enumerate() {
            let len = n.finder.needle().len();
            for at in n.finder.find_iter(&window) {
                // A match within the carried bytes alone was found with the previous piece.
                if at + len <= old {
                    continue;
                }
                if self.hits.len() >= MAX_FINDINGS {
                    self.dropped += 1;
                    continue;
                }
                let line =
                    self.newlines + memchr::memchr_iter(b'\n', &window[..at]).count() as u64 + 1;
                self.hits.push(Hit {
                    needle: i,
                    offset: self.carry_at + at as u64,
                    line,
                });
            }
        }
        let keep = (self.needles.longest - 1).min(window.len());
        let cut = window.len() - keep;
        self.newlines += memchr::memchr_iter(b'\n', &window[..cut]).count() as u64;
        self.carry_at += cut as u64;
        self.carry = window.split_off(cut);
    }

    /// What was found, as findings at `place` (a token part found inside its whole value is
    /// not reported again), in stream order.
    pub fn findings(self, place: &Place) -> Vec<Finding> {
        let ns = &self.needles.needles;
        let mut hits = self.hits.clone();
        hits.sort_by_key(|h| (h.offset, h.needle));
        let inside_whole = |h: &Hit| {
            let n = &ns[h.needle];
            n.part == Part::Token
                && hits.iter().any(|w| {
                    let wn = &ns[w.needle];
                    wn.secret == n.secret
                        && wn.part == Part::Whole
                        && w.offset <= h.offset
                        && h.offset + n.finder.needle().len() as u64
                            <= w.offset + wn.finder.needle().len() as u64
                })
        };
        let mut out: Vec<Finding> = hits
            .iter()
            .filter(|h| !inside_whole(h))
            .map(|h| {
                let n = &ns[h.needle];
                let s = &self.needles.secrets[n.secret];
                Finding {
                    kind: s.kind,
                    origin: self.needles.mask(&s.origin),
                    witness: s.witness,
                    part: n.part,
                    place: place.at_line(h.line),
                    offset: h.offset,
                    more: 0,
                }
            })
            .collect();
        if let Some(last) = out.last_mut() {
            last.more = self.dropped;
        }
        out
    }
}

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
    fn at_line(&self, line: u64) -> Place {
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

/// The findings of a store scan and what it covered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoreScan {
    /// Occurrences found.
    pub findings: Vec<Finding>,
    /// Files read.
    pub files: usize,
    /// Bytes read.
    pub bytes: u64,
    /// What was not read.
    pub limits: Vec<String>,
}

/// Scan every regular file under `dir` (and the name of every entry), streaming, within
/// `bounds` ([`StoreBounds::DEFAULT`]). Symbolic links are not followed and special files
/// (FIFOs, sockets, devices) not opened. `at_kill` marks the scan taken right after a kill.
pub fn scan_store(needles: &Needles, dir: &Path, at_kill: bool, bounds: StoreBounds) -> StoreScan {
    let mut out = StoreScan::default();
    if needles.is_empty() || !dir.is_dir() {
        return out;
    }
    let mut entries = 0usize;
    // Depth-first, each directory's entries in name order (deterministic).
    let mut stack: Vec<(std::path::PathBuf, usize)> = vec![(dir.to_path_buf(), 0)];
    let masked = |p: &Path| {
        let rel = p.strip_prefix(dir).unwrap_or(p);
        needles.mask(&rel.to_string_lossy())
    };
    while let Some((d, depth)) = stack.pop() {
        let mut names: Vec<std::path::PathBuf> = match std::fs::read_dir(&d) {
            Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).collect(),
            Err(e) => {
                out.limits
                    .push(format!("store directory {:?} not read: {e}", masked(&d)));
                continue;
            }
        };
        names.sort();
        // Popped in reverse: push the last name first.
        let mut subdirs = Vec::new();
        for p in names {
            entries += 1;
            if entries > bounds.files {
                out.limits.push(format!(
                    "store entries past the first {} not scanned",
                    bounds.files
                ));
                return out;
            }
            let rel = p.strip_prefix(dir).unwrap_or(&p).to_path_buf();
            let rel_text = rel.to_string_lossy().into_owned();
            let name_place = Place::StoreName {
                path: needles.mask(&rel_text),
                at_kill,
            };
            out.findings
                .extend(needles.scan_bytes(&name_place, rel.as_os_str().as_encoded_bytes()));
            let meta = match std::fs::symlink_metadata(&p) {
                Ok(m) => m,
                Err(e) => {
                    out.limits
                        .push(format!("store entry {:?} not read: {e}", masked(&p)));
                    continue;
                }
            };
            let ft = meta.file_type();
            if ft.is_dir() {
                if depth + 1 > bounds.depth {
                    out.limits.push(format!(
                        "store directory {:?} deeper than {} levels not scanned",
                        masked(&p),
                        bounds.depth
                    ));
                } else {
                    subdirs.push((p, depth + 1));
                }
                continue;
            }
            if !ft.is_file() {
                out.limits.push(format!(
                    "store entry {:?} not read: not a regular file (links are not followed)",
                    masked(&p)
                ));
                continue;
            }
            let left = bounds.bytes.saturating_sub(out.bytes);
            if left == 0 {
                out.limits.push(format!(
                    "store files past the first {} bytes not scanned (from {:?} on)",
                    bounds.bytes,
                    masked(&p)
                ));
                return out;
            }
            let place = Place::StoreFile {
                path: needles.mask(&rel_text),
                at_kill,
            };
            match open_regular(&p) {
                Ok(mut f) => match needles.scan_reader(&place, &mut f, left) {
                    Ok((found, read, cut)) => {
                        out.files += 1;
                        out.bytes += read;
                        out.findings.extend(found);
                        if cut {
                            out.limits.push(format!(
                                "store file {:?} read only up to the scan's bound of {} bytes",
                                masked(&p),
                                bounds.bytes
                            ));
                            return out;
                        }
                    }
                    Err(e) => out
                        .limits
                        .push(format!("store file {:?} not fully read: {e}", masked(&p))),
                },
                Err(e) => out
                    .limits
                    .push(format!("store file {:?} not read: {e}", masked(&p))),
            }
        }
        stack.extend(subdirs.into_iter().rev());
    }
    out
}

/// Open a regular file without following a link and without blocking on a FIFO put in its
/// place.
fn open_regular(p: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((nix::fcntl::OFlag::O_NOFOLLOW | nix::fcntl::OFlag::O_NONBLOCK).bits())
        .open(p)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok(f)
}

/// DLG-SECRET-01: no secret the delegator holds appears in plaintext in what it writes.
pub(super) fn no_secret_in_plaintext(ev: &Evidence) -> Check {
    let scan = ev.secrets;
    if !scan.findings.is_empty() {
        let mut shown: Vec<String> = scan
            .findings
            .iter()
            .take(5)
            .map(|f| f.to_string())
            .collect();
        let more = (scan.findings.len() - shown.len()) as u64 + scan.findings_dropped;
        if more > 0 {
            shown.push(format!("and {more} more"));
        }
        let mut witnesses: Vec<u64> = scan.findings.iter().filter_map(|f| f.witness).collect();
        witnesses.sort_unstable();
        witnesses.dedup();
        return fail(
            "no secret the delegator holds (its own credential, a scoped credential, a push \
             token) in plaintext in its driver messages, stderr, snapshot records or store files",
            format!("found in plaintext: {}", shown.join("; ")),
            witnesses,
        );
    }
    // The situation: it did work while holding its secrets (sent a request, or reported an
    // outcome, such as a refusal). A delegator that did neither did nothing to judge.
    if !scan.scanned || (requests(ev.journal).is_empty() && ev.outcomes.is_empty()) {
        return Check::NotApplicable;
    }
    Check::Pass
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_support::*;
    use serde_json::json;

    const PUSH: &str = "0123456789abcdef0123456789abcdef";
    const SCOPED: &str = "Bearer scoped-bank-task-7";

    fn secrets() -> Vec<Secret> {
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

    fn stdout() -> Place {
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
}
