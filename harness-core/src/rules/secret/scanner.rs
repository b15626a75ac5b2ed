//! The streaming search ([`Needles`], [`Scanner`]): `memchr::memmem` finders over a window
//! that carries the last `longest secret - 1` bytes of the previous read.

use super::*;

/// Bytes read at a time.
pub(super) const CHUNK: usize = 64 * 1024;

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
