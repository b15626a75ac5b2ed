//! Deterministic artifact content: bytes generated from a seed, so the expected length and sha256
//! of every artifact are known without storing it.

use sha2::{Digest, Sha256};

/// Hex sha256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Mix several values into one seed (FNV-1a over their bytes), so each artifact has its own stream.
pub fn derive_seed(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in *p {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A deterministic byte stream, seekable: byte `i` depends only on the seed and `i`, so any
/// chunk of an artifact can be regenerated (for `GetTask`) without storing it.
///
/// Made to cost next to nothing per byte: a table of [`TABLE`] random bytes is drawn from the
/// seed once (SplitMix64), then every block of [`BLOCK`] bytes is a copy of the table from an
/// offset drawn from the seed and the block number. Text content is one of 32 printable ASCII
/// characters (`]` to `|`): valid UTF-8 wherever it is split and JSON-safe (no quote,
/// backslash or control character), so a JSON string of it needs no escaping.
pub struct ContentStream {
    seed: u64,
    table: Vec<u8>,
    pos: u64,
}

const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
/// Keeps five bits of each byte.
const TEXT_MASK: u64 = 0x1F1F_1F1F_1F1F_1F1F;
/// `]` (0x5D) in every byte: with five random bits added, `]` to `|` (0x7C), never a carry.
const TEXT_BASE: u64 = 0x5D5D_5D5D_5D5D_5D5D;
/// Bytes copied from one table offset.
pub const BLOCK: usize = 4096;
/// Random bytes drawn per stream (a block may start anywhere in the first `TABLE - BLOCK`).
pub const TABLE: usize = 64 * 1024;

/// SplitMix64 of `seed` and `i`.
#[inline(always)]
fn mix(seed: u64, i: u64) -> u64 {
    let mut z = seed.wrapping_add(i.wrapping_add(1).wrapping_mul(GAMMA));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl ContentStream {
    /// A stream for this seed; `text` selects printable, JSON-safe ASCII.
    pub fn new(seed: u64, text: bool) -> Self {
        let mut table = vec![0u8; TABLE];
        for (i, w) in table.chunks_exact_mut(8).enumerate() {
            let z = mix(seed, i as u64);
            let z = if text { (z & TEXT_MASK) + TEXT_BASE } else { z };
            w.copy_from_slice(&z.to_le_bytes());
        }
        ContentStream {
            seed: mix(seed, u64::MAX),
            table,
            pos: 0,
        }
    }

    /// Fill `buf` with the bytes from `offset` on.
    pub fn fill_at(&self, offset: u64, buf: &mut [u8]) {
        let mut off = offset;
        let mut i = 0;
        while i < buf.len() {
            let block = off / BLOCK as u64;
            let within = (off % BLOCK as u64) as usize;
            let start = (mix(self.seed, block) % (TABLE - BLOCK) as u64) as usize + within;
            let n = (BLOCK - within).min(buf.len() - i);
            buf[i..i + n].copy_from_slice(&self.table[start..start + n]);
            i += n;
            off += n as u64;
        }
    }

    /// Append the next `n` bytes to `out` (written once: no zero-fill first).
    pub fn extend(&mut self, out: &mut bytes::BytesMut, n: usize) {
        out.reserve(n);
        let end = self.pos + n as u64;
        while self.pos < end {
            let within = (self.pos % BLOCK as u64) as usize;
            let start = (mix(self.seed, self.pos / BLOCK as u64) % (TABLE - BLOCK) as u64) as usize
                + within;
            let k = (BLOCK - within).min((end - self.pos) as usize);
            out.extend_from_slice(&self.table[start..start + k]);
            self.pos += k as u64;
        }
    }

    /// Fill `buf` with the next bytes. The output does not depend on how reads are split.
    pub fn fill(&mut self, buf: &mut [u8]) {
        self.fill_at(self.pos, buf);
        self.pos += buf.len() as u64;
    }

    /// The next `n` bytes.
    #[cfg(test)]
    pub fn take(&mut self, n: usize) -> Vec<u8> {
        let mut v = vec![0u8; n];
        self.fill(&mut v);
        v
    }
}

/// Length and sha256 of the first `len` bytes of a stream, computed without storing them.
pub fn expected(seed: u64, text: bool, len: u64) -> (u64, String) {
    let mut s = ContentStream::new(seed, text);
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut left = len;
    while left > 0 {
        let n = left.min(buf.len() as u64) as usize;
        s.fill(&mut buf[..n]);
        h.update(&buf[..n]);
        left -= n as u64;
    }
    (len, hex::encode(h.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_deterministic_and_split_independent() {
        let mut a = ContentStream::new(7, true);
        let whole = a.take(1000);
        let mut b = ContentStream::new(7, true);
        let mut parts = b.take(10);
        parts.extend(b.take(3));
        parts.extend(b.take(987));
        assert_eq!(whole, parts);
        assert!(std::str::from_utf8(&parts).is_ok());
        assert!(
            parts
                .iter()
                .all(|b| (b']'..=b'|').contains(b) && *b != b'\\')
        );
        let mut at = vec![0u8; 5000];
        let c = ContentStream::new(7, true);
        c.fill_at(13, &mut at[..21]);
        assert_eq!(at[..21], whole[13..34]);
        let long = ContentStream::new(7, true).take(3 * BLOCK);
        c.fill_at(BLOCK as u64 - 7, &mut at);
        assert_eq!(at[..], long[BLOCK - 7..BLOCK - 7 + 5000]);
        let mut s = ContentStream::new(7, true);
        let mut out = bytes::BytesMut::new();
        s.extend(&mut out, 10);
        s.extend(&mut out, 2 * BLOCK);
        s.extend(&mut out, BLOCK - 10);
        assert_eq!(out[..], long[..]);
        assert_eq!(expected(7, true, 1000).1, sha256_hex(&whole));
    }
}
