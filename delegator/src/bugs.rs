//! Planted bugs for the harness's self-test: each one changes exactly one behaviour so the harness
//! can prove that the rule guarding it fails.
//!
//! They can be switched on only in a binary built with the cargo feature `planted-bugs`
//! (`a2a-delegator drive --bug NAME`); in a normal build [`Bugs::has`] is always false and the
//! `--bug` option does not exist.
//!
//! [`CrashPoint`]s are the crash tests' fault injection, under the same feature: a named point
//! where the process aborts when the environment variable [`CrashPoint::ENV`] names it.

/// One planted bug.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Bug {
    /// Retries of a send get a fresh random `messageId` (breaks DLG-SEND-02, DLG-RETRY-03).
    RandomMessageIdOnRetry,
    /// Sends omit `returnImmediately` (breaks DLG-SEND-03).
    BlockingSend,
    /// A `Message` reply is treated as a broken task reply (breaks DLG-SEND-05).
    AssumeTask,
    /// A refinement is sent as a message to the old (terminal) task (breaks DLG-STATE-05/06).
    MessageTerminalTask,
    /// Unanswerable input questions get a guessed answer instead of an escalation (DLG-INPUT-03).
    GuessInputs,
    /// AUTH_REQUIRED is answered with the delegator's own credential (DLG-AUTH-01).
    ForwardOwnCredential,
    /// Deadline, depth and loop checks are skipped (DLG-LIMIT-01/07/09).
    NoLimitChecks,
    /// The `append` flag is ignored: every chunk replaces the artifact (DLG-ART-01).
    IgnoreAppend,
    /// A `lastChunk` chunk replaces everything before it (DLG-ART-02).
    KeepLastChunkOnly,
    /// No CancelTask at the local deadline (DLG-LIMIT-03).
    NoLocalDeadline,
    /// The reported sha256 is not that of the bytes received (DLG-ART-04).
    MisreportSha256,
    /// Open delegations are not resumed after a restart (DLG-REC-01).
    NoRecovery,
    /// The process exits on TASK_STATE_UNSPECIFIED (DLG-STATE-04).
    IgnoreUnknownState,
    /// Input rounds are not capped (DLG-INPUT-04).
    NoInputCap,
    /// Push tokens and scoped credentials are written in plaintext to a debug log under the
    /// store directory (DLG-SECRET-01).
    PersistSecrets,
    /// Polling never slows down: every `GetTask` waits the first polling interval (DLG-OBS-05).
    ConstantPollInterval,
    /// Every retry of a failed call waits the base backoff, no growth and no jitter (a
    /// `Retry-After` is still honoured) (DLG-RETRY-02).
    FixedRetryBackoff,
    /// Url parts are fetched whatever their scheme, origin or userinfo, and redirects are
    /// followed anywhere; other schemes are opened as a general url opener would (`data:`
    /// decoded, `file:` read, `ftp:` connected to) (DLG-URL-01).
    FetchAnyUrl,
    /// Agent card signatures are never checked: every card is used (DLG-SIGN-02, DLG-SIGN-03).
    SkipCardSignature,
    /// Card signatures are checked over the card with its default-valued members kept (no
    /// §8.4.1 default removal), so a good card served with them is refused (DLG-SIGN-01).
    CanonicaliseWrong,
    /// Every agent certificate is accepted, whoever issued it, expired or for another host
    /// (DLG-TLS-01).
    AcceptAnyCertificate,
    /// An agent whose card came over HTTPS is called at its plain `http://` interface
    /// (DLG-TLS-02).
    HttpsDowngrade,
    /// Only TLS 1.2 is offered (DLG-TLS-03).
    Tls12Only,
}

impl Bug {
    /// Every bug.
    pub const ALL: &'static [Bug] = &[
        Bug::RandomMessageIdOnRetry,
        Bug::BlockingSend,
        Bug::AssumeTask,
        Bug::MessageTerminalTask,
        Bug::GuessInputs,
        Bug::ForwardOwnCredential,
        Bug::NoLimitChecks,
        Bug::IgnoreAppend,
        Bug::KeepLastChunkOnly,
        Bug::NoLocalDeadline,
        Bug::MisreportSha256,
        Bug::NoRecovery,
        Bug::IgnoreUnknownState,
        Bug::NoInputCap,
        Bug::PersistSecrets,
        Bug::ConstantPollInterval,
        Bug::FixedRetryBackoff,
        Bug::FetchAnyUrl,
        Bug::SkipCardSignature,
        Bug::CanonicaliseWrong,
        Bug::AcceptAnyCertificate,
        Bug::HttpsDowngrade,
        Bug::Tls12Only,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Bug::RandomMessageIdOnRetry => "random-message-id-on-retry",
            Bug::BlockingSend => "blocking-send",
            Bug::AssumeTask => "assume-task",
            Bug::MessageTerminalTask => "message-terminal-task",
            Bug::GuessInputs => "guess-inputs",
            Bug::ForwardOwnCredential => "forward-own-credential",
            Bug::NoLimitChecks => "no-limit-checks",
            Bug::IgnoreAppend => "ignore-append",
            Bug::KeepLastChunkOnly => "keep-last-chunk-only",
            Bug::NoLocalDeadline => "no-local-deadline",
            Bug::MisreportSha256 => "misreport-sha256",
            Bug::NoRecovery => "no-recovery",
            Bug::IgnoreUnknownState => "ignore-unknown-state",
            Bug::NoInputCap => "no-input-cap",
            Bug::PersistSecrets => "persist-secrets",
            Bug::ConstantPollInterval => "constant-poll-interval",
            Bug::FixedRetryBackoff => "fixed-retry-backoff",
            Bug::FetchAnyUrl => "fetch-any-url",
            Bug::SkipCardSignature => "skip-card-signature",
            Bug::CanonicaliseWrong => "canonicalise-wrong",
            Bug::AcceptAnyCertificate => "accept-any-certificate",
            Bug::HttpsDowngrade => "https-downgrade",
            Bug::Tls12Only => "tls12-only",
        }
    }

    /// The bug with this name.
    pub fn parse(name: &str) -> Option<Bug> {
        Bug::ALL.iter().copied().find(|b| b.name() == name)
    }

    fn bit(self) -> u32 {
        1 << (Bug::ALL.iter().position(|b| *b == self).unwrap_or(31) as u32)
    }
}

/// The set of planted bugs in force (empty unless built with `planted-bugs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Bugs(u32);

impl Bugs {
    /// No bugs.
    pub fn none() -> Self {
        Bugs(0)
    }

    /// Plant `bug` (only effective with the `planted-bugs` feature).
    pub fn with(self, bug: Bug) -> Self {
        Bugs(self.0 | bug.bit())
    }

    /// True when `bug` is planted (always false without the `planted-bugs` feature).
    ///
    /// Every place whose behaviour a bug changes asks this, and asks it only where the behaviour
    /// would differ (after the conditions that make the bug matter), so that the `site_trace`
    /// of a run without bugs tells which bugs that run could have shown.
    #[inline]
    pub fn has(self, bug: Bug) -> bool {
        #[cfg(feature = "planted-bugs")]
        site_trace::reached(bug);
        cfg!(feature = "planted-bugs") && self.0 & bug.bit() != 0
    }
}

/// Which planted bugs' sites a run reached (feature `planted-bugs` only).
///
/// `a2a-delegator drive --trace-bug-sites FILE` appends to `FILE` the name of each bug the first
/// time the process asks [`Bugs::has`] about it, planted or not. A bug whose site a run never
/// reaches cannot change that run: the harness's self-test runs each bug only in the cases whose
/// reference run reached its site.
#[cfg(feature = "planted-bugs")]
pub mod site_trace {
    use super::Bug;
    use std::io::Write;
    use std::path::PathBuf;
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU32, Ordering};

    static FILE: OnceLock<PathBuf> = OnceLock::new();
    static REACHED: AtomicU32 = AtomicU32::new(0);

    /// Append reached sites to `path` from now on (the first call wins).
    pub fn write_to(path: PathBuf) {
        let _ = FILE.set(path);
    }

    pub(super) fn reached(bug: Bug) {
        let bit = bug.bit();
        if REACHED.fetch_or(bit, Ordering::Relaxed) & bit != 0 {
            return;
        }
        let Some(path) = FILE.get() else { return };
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| writeln!(f, "{}", bug.name()));
        if let Err(e) = written {
            eprintln!("--trace-bug-sites {}: {e}", path.display());
        }
    }
}

/// A point where a test build aborts the process, to prove what survives a crash there.
///
/// Armed by the environment variable [`CrashPoint::ENV`] holding the point's
/// [name](CrashPoint::name), and only in a binary built with the feature `planted-bugs`; in a
/// normal build [`CrashPoint::hit`] does nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CrashPoint {
    /// Right after a final record was saved, before its `done` is handed to the writer.
    AfterFinalSave,
    /// Right after a `done` line was written and flushed, before it is marked reported.
    AfterDoneWritten,
}

impl CrashPoint {
    /// The environment variable that arms a crash point.
    pub const ENV: &'static str = "A2A_DELEGATOR_CRASH_AT";

    /// Every crash point.
    pub const ALL: &'static [CrashPoint] =
        &[CrashPoint::AfterFinalSave, CrashPoint::AfterDoneWritten];

    /// The name [`CrashPoint::ENV`] holds to arm it.
    pub fn name(self) -> &'static str {
        match self {
            CrashPoint::AfterFinalSave => "after-final-save",
            CrashPoint::AfterDoneWritten => "after-done-written",
        }
    }

    /// The crash point with this name.
    pub fn parse(name: &str) -> Option<CrashPoint> {
        CrashPoint::ALL.iter().copied().find(|p| p.name() == name)
    }

    /// True when this point is armed (always false without the `planted-bugs` feature).
    pub fn armed(self) -> bool {
        cfg!(feature = "planted-bugs")
            && std::env::var(Self::ENV).is_ok_and(|v| CrashPoint::parse(v.trim()) == Some(self))
    }

    /// Abort the process at once (no unwinding, no flush) when this point is armed.
    pub fn hit(self, delegation_id: &str) {
        if self.armed() {
            eprintln!(
                "crash point {} armed: aborting at delegation {delegation_id:?}",
                self.name()
            );
            std::process::abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for b in Bug::ALL {
            assert_eq!(Bug::parse(b.name()), Some(*b));
        }
        assert_eq!(Bug::ALL.len(), 23);
        assert_eq!(Bug::parse("nope"), None);
    }

    #[test]
    fn planted_only_with_the_feature() {
        let b = Bugs::none().with(Bug::BlockingSend);
        assert_eq!(b.has(Bug::BlockingSend), cfg!(feature = "planted-bugs"));
        assert!(!b.has(Bug::NoRecovery));
    }

    #[test]
    fn crash_point_names_round_trip() {
        for p in CrashPoint::ALL {
            assert_eq!(CrashPoint::parse(p.name()), Some(*p));
        }
        assert_eq!(CrashPoint::parse("nope"), None);
    }
}
