//! Deterministic artifact content: bytes generated from a seed, so the expected length and sha256
//! of every artifact are known without storing it.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
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

/// A deterministic byte stream. Text content is printable ASCII so it is valid UTF-8 anywhere it
/// is split.
pub struct ContentStream {
    rng: ChaCha8Rng,
    text: bool,
    block: [u8; 64],
    pos: usize,
}

const ALPHABET: &[u8; 64] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \n";

impl ContentStream {
    /// A stream for this seed; `text` selects printable ASCII.
    pub fn new(seed: u64, text: bool) -> Self {
        ContentStream {
            rng: ChaCha8Rng::seed_from_u64(seed),
            text,
            block: [0; 64],
            pos: 64,
        }
    }

    /// Fill `buf` with the next bytes. The output does not depend on how reads are split: bytes
    /// come from whole 64-byte blocks of the generator.
    pub fn fill(&mut self, buf: &mut [u8]) {
        let mut off = 0;
        while off < buf.len() {
            if self.pos == 64 {
                self.rng.fill_bytes(&mut self.block);
                if self.text {
                    for b in self.block.iter_mut() {
                        *b = ALPHABET[(*b & 63) as usize];
                    }
                }
                self.pos = 0;
            }
            let n = (64 - self.pos).min(buf.len() - off);
            buf[off..off + n].copy_from_slice(&self.block[self.pos..self.pos + n]);
            self.pos += n;
            off += n;
        }
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
        assert_eq!(expected(7, true, 1000).1, sha256_hex(&whole));
    }
}
