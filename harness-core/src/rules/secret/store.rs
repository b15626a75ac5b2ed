//! The bounded scan of the delegator's store directory ([`scan_store`], [`StoreBounds`]):
//! every file and entry name, without following links or blocking on a FIFO.

use super::*;

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
