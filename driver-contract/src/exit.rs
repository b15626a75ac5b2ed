//! The exit codes of `a2a-harness` ([`HarnessExitCode`]).

use std::fmt;

/// The exit status of an `a2a-harness` process. Scripts and CI can rely on these values; no
/// other status is used (a process killed by a signal has none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum HarnessExitCode {
    /// 0: the command succeeded; for `run`, every case passed its MUST rules (no case is FAIL,
    /// XPASS or UNKNOWN; NON-STRICT, XFAIL and UNSUPPORTED do not fail the run).
    Success = 0,
    /// 1: `run` finished and wrote its reports, but at least one case failed
    /// (`totals.failed > 0` in `index.json`).
    Failure = 1,
    /// 2: bad usage or configuration, nothing judged: an unknown flag or subcommand (clap),
    /// an unreadable catalog, a delegator command that cannot be split or whose program does
    /// not exist, an unknown case or rule id, reports that cannot be written.
    Usage = 2,
}

impl HarnessExitCode {
    /// Every exit code.
    pub const ALL: [HarnessExitCode; 3] = [
        HarnessExitCode::Success,
        HarnessExitCode::Failure,
        HarnessExitCode::Usage,
    ];

    /// The numeric status.
    pub const fn code(self) -> i32 {
        self as i32
    }

    /// The exit code with this numeric status.
    pub const fn from_code(code: i32) -> Option<HarnessExitCode> {
        match code {
            0 => Some(HarnessExitCode::Success),
            1 => Some(HarnessExitCode::Failure),
            2 => Some(HarnessExitCode::Usage),
            _ => None,
        }
    }

    /// The status of a finished `run` with this many failed cases.
    pub const fn for_run(failed: u64) -> HarnessExitCode {
        if failed > 0 {
            HarnessExitCode::Failure
        } else {
            HarnessExitCode::Success
        }
    }
}

impl From<HarnessExitCode> for std::process::ExitCode {
    fn from(c: HarnessExitCode) -> Self {
        std::process::ExitCode::from(c as u8)
    }
}

impl fmt::Display for HarnessExitCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for c in HarnessExitCode::ALL {
            assert_eq!(HarnessExitCode::from_code(c.code()), Some(c));
        }
        assert_eq!(HarnessExitCode::from_code(3), None);
        assert_eq!(HarnessExitCode::for_run(0), HarnessExitCode::Success);
        assert_eq!(HarnessExitCode::for_run(2).code(), 1);
        assert_eq!(HarnessExitCode::Usage.to_string(), "2");
    }
}
