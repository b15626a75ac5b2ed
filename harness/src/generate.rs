//! PLACEHOLDER generator (explore branch only): the real one (issue 14 item 1) replaces this
//! file at merge with the same interface. This one picks a built-in catalog case by seed
//! (among the cases of the topic's rule family) and varies its network seed, so that explore
//! can be built and tested against the planted bugs before the real generator lands.

use crate::scenario::Scenario;
use std::fmt;
use std::str::FromStr;

/// A rule family explore can aim at (`--topic`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Topic {
    /// DLG-SEND-*.
    Send,
    /// DLG-WIRE-*.
    Wire,
    /// DLG-ROUTE-*.
    Route,
    /// DLG-STATE-*.
    State,
    /// DLG-INPUT-*.
    Input,
    /// DLG-AUTH-* and DLG-UNTRUSTED-*.
    Auth,
    /// DLG-LIMIT-*.
    Limit,
    /// DLG-OBS-*.
    Obs,
    /// DLG-ART-*.
    Art,
    /// DLG-RETRY-*.
    Retry,
    /// DLG-REC-*.
    Rec,
}

impl Topic {
    /// Every topic.
    pub const ALL: [Topic; 11] = [
        Topic::Send,
        Topic::Wire,
        Topic::Route,
        Topic::State,
        Topic::Input,
        Topic::Auth,
        Topic::Limit,
        Topic::Obs,
        Topic::Art,
        Topic::Retry,
        Topic::Rec,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Topic::Send => "send",
            Topic::Wire => "wire",
            Topic::Route => "route",
            Topic::State => "state",
            Topic::Input => "input",
            Topic::Auth => "auth",
            Topic::Limit => "limit",
            Topic::Obs => "obs",
            Topic::Art => "art",
            Topic::Retry => "retry",
            Topic::Rec => "rec",
        }
    }

    fn prefixes(self) -> &'static [&'static str] {
        match self {
            Topic::Auth => &["DLG-AUTH-", "DLG-UNTRUSTED-"],
            Topic::Send => &["DLG-SEND-"],
            Topic::Wire => &["DLG-WIRE-"],
            Topic::Route => &["DLG-ROUTE-"],
            Topic::State => &["DLG-STATE-"],
            Topic::Input => &["DLG-INPUT-"],
            Topic::Limit => &["DLG-LIMIT-"],
            Topic::Obs => &["DLG-OBS-"],
            Topic::Art => &["DLG-ART-"],
            Topic::Retry => &["DLG-RETRY-"],
            Topic::Rec => &["DLG-REC-"],
        }
    }
}

impl fmt::Display for Topic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A `--topic` that names no family.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown topic {0:?}: expected one of send, wire, route, state, input, auth, limit, obs, art, retry, rec"
)]
pub struct UnknownTopic(pub String);

impl FromStr for Topic {
    type Err = UnknownTopic;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Topic::ALL
            .into_iter()
            .find(|t| t.name() == s.trim().to_ascii_lowercase())
            .ok_or_else(|| UnknownTopic(s.to_string()))
    }
}

/// A scenario from `seed` (same seed, same scenario): a built-in case of the topic's family
/// (of any family without one; the memory case is left out, it is slow), picked by seed, with
/// its network seed varied by the seed. Its id is `explore.<case id>.<seed>`.
pub fn generate(seed: u64, topic: Option<Topic>) -> Scenario {
    let cases: Vec<Scenario> = crate::catalog::builtin_catalog()
        .unwrap_or_default()
        .into_iter()
        .filter(|s| s.memory_bound_mib.is_none())
        .filter(|s| {
            topic.is_none_or(|t| {
                s.rules
                    .iter()
                    .any(|r| t.prefixes().iter().any(|p| r.starts_with(p)))
            })
        })
        .collect();
    let mixed = splitmix(seed);
    let Some(pick) = cases.get((mixed % cases.len().max(1) as u64) as usize) else {
        return fallback(seed);
    };
    let mut s = pick.clone();
    s.id = format!("explore.{}.{seed}", s.id);
    s.network.seed ^= mixed;
    s
}

/// A one-agent case, should the catalog be empty.
fn fallback(seed: u64) -> Scenario {
    let text = format!(
        "id = \"explore.fallback.{seed}\"\ntitle = \"t\"\nrules = [\"DLG-SEND-02\"]\n[network]\n[[network.agent]]\nname = \"a\"\n[[network.agent.skill]]\nid = \"s\"\n[[delegate]]\nid = \"d1\"\ncapability = \"s\"\ntext = \"do it\"\n"
    );
    Scenario::from_toml(std::path::Path::new("generated.toml"), &text)
        .unwrap_or_else(|e| unreachable!("the fallback case is well-formed: {e}"))
}

fn splitmix(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
