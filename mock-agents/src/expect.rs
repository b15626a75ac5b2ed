//! Expectations on rules, in the style of wiremock's `expect`: [`Times`] says how many requests a
//! rule must match; [`crate::Network::verify`] (and dropping the network) compares them with what
//! each rule matched and reports the difference as a [`VerifyError`].

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::ops::{Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};

/// How many requests a rule must match: an exact count or a range.
///
/// Built from a count or a Rust range (`2`, `1..`, `2..=4`, `..3`); in TOML a count or the same
/// range syntax as a string (`expect = 2`, `expect = "1.."`).
///
/// ```
/// use a2a_mock_agents::Times;
/// assert!(Times::from(1..).contains(5));
/// assert!(!Times::from(2).contains(1));
/// assert_eq!("2..=4".parse::<Times>().unwrap(), Times::from(2..=4));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Times {
    min: u64,
    /// Inclusive upper bound; `None`: unbounded.
    max: Option<u64>,
}

impl Times {
    /// Exactly `n` requests.
    pub fn exactly(n: u64) -> Times {
        Times {
            min: n,
            max: Some(n),
        }
    }

    /// Does `n` matched requests satisfy the expectation?
    pub fn contains(&self, n: u64) -> bool {
        n >= self.min && self.max.is_none_or(|m| n <= m)
    }
}

impl fmt::Display for Times {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.min, self.max) {
            (a, Some(b)) if a == b => write!(f, "{a}"),
            (0, None) => write!(f, "any number"),
            (a, None) => write!(f, "{a}.."),
            (0, Some(b)) => write!(f, "..={b}"),
            (a, Some(b)) => write!(f, "{a}..={b}"),
        }
    }
}

impl From<u64> for Times {
    fn from(n: u64) -> Times {
        Times::exactly(n)
    }
}

impl From<Range<u64>> for Times {
    /// `a..b` (empty ranges become impossible expectations: `b - 1 < a`).
    fn from(r: Range<u64>) -> Times {
        Times {
            min: r.start,
            max: Some(r.end.saturating_sub(1)),
        }
    }
}

impl From<RangeInclusive<u64>> for Times {
    fn from(r: RangeInclusive<u64>) -> Times {
        Times {
            min: *r.start(),
            max: Some(*r.end()),
        }
    }
}

impl From<RangeFrom<u64>> for Times {
    fn from(r: RangeFrom<u64>) -> Times {
        Times {
            min: r.start,
            max: None,
        }
    }
}

impl From<RangeTo<u64>> for Times {
    fn from(r: RangeTo<u64>) -> Times {
        Times {
            min: 0,
            max: Some(r.end.saturating_sub(1)),
        }
    }
}

impl From<RangeToInclusive<u64>> for Times {
    fn from(r: RangeToInclusive<u64>) -> Times {
        Times {
            min: 0,
            max: Some(r.end),
        }
    }
}

impl From<RangeFull> for Times {
    fn from(_: RangeFull) -> Times {
        Times { min: 0, max: None }
    }
}

/// A count or range that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a count or a range such as 2, \"1..\", \"2..=4\", \"..3\"")]
pub struct TimesParseError(String);

impl std::str::FromStr for Times {
    type Err = TimesParseError;

    fn from_str(s: &str) -> Result<Times, TimesParseError> {
        let bad = || TimesParseError(s.to_string());
        let num = |t: &str| t.trim().parse::<u64>().map_err(|_| bad());
        let t = s.trim();
        let Some((a, b)) = t.split_once("..") else {
            return num(t).map(Times::exactly);
        };
        let min = if a.trim().is_empty() { 0 } else { num(a)? };
        let max = match b.strip_prefix('=') {
            Some(b) => Some(num(b)?),
            None if b.trim().is_empty() => None,
            None => Some(num(b)?.checked_sub(1).ok_or_else(bad)?),
        };
        if max.is_some_and(|m| m < min) {
            return Err(bad());
        }
        Ok(Times { min, max })
    }
}

impl Serialize for Times {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.max {
            Some(m) if m == self.min => s.serialize_u64(m),
            _ => s.serialize_str(&self.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for Times {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Times, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Times;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a count or a range string such as \"1..\"")
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Times, E> {
                Ok(Times::exactly(n))
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Times, E> {
                u64::try_from(n)
                    .map(Times::exactly)
                    .map_err(|_| E::custom(format!("a count must not be negative, got {n}")))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Times, E> {
                s.parse().map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// An expected number of matched requests: a count, or a range such as `"1.."` or `"2..=4"`.
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
pub(crate) enum TimesSchema {
    /// An exact count.
    Count(u64),
    /// A range such as `"1.."`.
    Range(String),
}

/// One rule with an expectation, as [`crate::Network::verify`] found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleCount {
    /// The agent.
    pub agent: String,
    /// The rule's index in the agent's script.
    pub rule: usize,
    /// The rule's name, or a description of its matcher.
    pub name: String,
    /// What was expected.
    pub expected: Times,
    /// How many requests the rule matched.
    pub matched: u64,
}

impl RuleCount {
    /// Did the rule match as many requests as expected?
    pub fn ok(&self) -> bool {
        self.expected.contains(self.matched)
    }
}

/// Some rules matched a different number of requests than they expected. Its text is the
/// expected-vs-matched report of every rule with an expectation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct VerifyError {
    /// Every rule with an expectation, satisfied or not, in agent and rule order.
    pub rules: Vec<RuleCount>,
}

impl VerifyError {
    /// The rules whose expectation failed.
    pub fn failed(&self) -> impl Iterator<Item = &RuleCount> {
        self.rules.iter().filter(|r| !r.ok())
    }
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "mock expectations not met: {} of {} rules matched a different number of requests",
            self.failed().count(),
            self.rules.len()
        )?;
        for r in &self.rules {
            writeln!(
                f,
                "  {} agent {:?} rule[{}] {}: expected {}, matched {}",
                if r.ok() { "ok  " } else { "FAIL" },
                r.agent,
                r.rule,
                r.name,
                r.expected,
                r.matched
            )?;
        }
        Ok(())
    }
}
