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
//!
//! Files: `secrets` (what is searched for), `scanner` (the streaming search),
//! `scan` (places, findings, the scan of a case), `store` (the bounded walk of the store
//! directory); the rule itself is here.

mod scan;
mod scanner;
mod secrets;
mod store;
#[cfg(test)]
mod tests;

pub use scan::*;
pub use scanner::*;
pub use secrets::*;
pub use store::*;

use super::evidence::{Evidence, requests};
use super::registry::{Check, fail};
use a2a_driver_contract::EscalationKind;
use a2a_mock_agents::{Entry, Event};
use memchr::memmem;
use serde_json::Value;
use std::io::Read;
use std::path::Path;

/// Bytes of one output stream (stdout or stderr) of one process life kept for the scan.
pub const OUTPUT_MAX_BYTES: u64 = 64 * 1024 * 1024;
/// Findings kept per case; later ones are counted.
pub const MAX_FINDINGS: usize = 50;

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
