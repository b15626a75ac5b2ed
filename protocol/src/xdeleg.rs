//! The `x-deleg` convention: deadline, budget, depth and call chain of a delegation.
//!
//! A2A 1.0 defines none of these (reference §7). This project's agents agree to carry them in
//! `SendMessageRequest.metadata["x-deleg"]` (reference §3.6) and to enforce the three rules of
//! the delegation seed: deadlines shrink by a safety margin at every hop, budgets split so the
//! children never get more than the parent's remainder, and depth and chain are checked so a
//! loop or a runaway chain becomes a fast, explainable `TASK_STATE_REJECTED`.
//!
//! A root delegator starts from [`XDeleg::root`] (depth 0, empty chain, never sent) and sends
//! [`XDeleg::child`] values; a receiving agent calls [`XDeleg::read`] and then
//! [`XDeleg::check_incoming`].
//!
//! ```
//! use a2a_protocol::xdeleg::{XDeleg, split_budget};
//! use time::macros::datetime;
//! use time::Duration;
//!
//! let now = datetime!(2026-03-20 10:00:00 UTC);
//! let root = XDeleg::root(datetime!(2026-03-20 10:10:00 UTC), 2.0);
//! let shares = split_budget(root.budget_usd, 3, 0.25);
//! let child = root.child(now, Duration::minutes(1), shares[0], "http://127.0.0.1:4100/")?;
//! assert_eq!(child.depth, 1);
//! assert_eq!(child.deadline, datetime!(2026-03-20 10:09:00 UTC));
//!
//! let mut metadata = serde_json::Map::new();
//! child.write(&mut metadata);
//! let received = XDeleg::read(&metadata).ok().flatten();
//! assert_eq!(received.as_ref(), Some(&child));
//! assert!(child.check_incoming(now, 3, "http://127.0.0.1:4200/").is_ok());
//! # Ok::<(), a2a_protocol::xdeleg::LimitViolation>(())
//! ```

use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Number, Value};
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime, UtcOffset};

/// The metadata key under which the convention travels (a local convention, not an A2A field).
pub const XDELEG_KEY: &str = "x-deleg";

/// Delegation limits carried with a request: the wire form is
/// `{"deadline": "…Z", "budget_usd": 2.0, "depth": 1, "chain": ["http://…/"]}`.
///
/// `deadline` is always held in UTC truncated to milliseconds (earlier, the safe direction), so
/// a value read back after [`XDeleg::write`] compares equal. `depth` counts the hops so far (the
/// first delegate receives 1) and `chain` lists the URLs of the delegators on the path, oldest
/// first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "serde_json::Value")]
pub struct XDeleg {
    /// Absolute deadline for the delegated work; serialized as RFC 3339 UTC with `Z` and
    /// millisecond precision.
    #[serde(serialize_with = "serialize_deadline")]
    pub deadline: OffsetDateTime,
    /// Budget in US dollars the receiver may spend, including on its own sub-delegations.
    pub budget_usd: f64,
    /// Number of delegation hops that led to this request (0 only for a root's own limits).
    pub depth: u32,
    /// URLs of the agents that delegated along the path, oldest first, for loop detection.
    pub chain: Vec<String>,
}

/// `x-deleg` is present in the metadata but malformed; the message names the field so it can be
/// returned to the sender as the rejection reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum XDelegError {
    /// `x-deleg` itself is not a JSON object.
    #[error("x-deleg: expected an object, found {found}")]
    NotAnObject {
        /// The JSON type found instead.
        found: &'static str,
    },
    /// A required field is absent or `null`.
    #[error("x-deleg.{field}: missing")]
    MissingField {
        /// The field name, e.g. `deadline`.
        field: String,
    },
    /// A field is present but invalid (wrong type, negative budget, non-RFC 3339 deadline…).
    #[error("x-deleg.{field}: {reason}")]
    InvalidField {
        /// The field name, e.g. `budget_usd` or `chain[2]`.
        field: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl XDelegError {
    /// The offending field relative to `x-deleg` (`""` when `x-deleg` itself is wrong), for
    /// callers that report it separately.
    pub fn field(&self) -> &str {
        match self {
            XDelegError::NotAnObject { .. } => "",
            XDelegError::MissingField { field } | XDelegError::InvalidField { field, .. } => field,
        }
    }
}

/// A delegation rule is violated; the `Display` text is meant to go verbatim into the status
/// message of a `TASK_STATE_REJECTED` task.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LimitViolation {
    /// The deadline (for a child: after subtracting the safety margin) is not after `now`.
    #[error(
        "delegation deadline {} has passed (now {})",
        format_deadline(*.deadline),
        format_deadline(*.now)
    )]
    DeadlinePassed {
        /// The deadline that was checked.
        deadline: OffsetDateTime,
        /// The time it was checked at.
        now: OffsetDateTime,
    },
    /// The request arrived after more hops than this agent accepts.
    #[error("delegation depth {depth} exceeds the limit of {limit}")]
    DepthExceeded {
        /// The depth received.
        depth: u32,
        /// The highest depth accepted.
        limit: u32,
    },
    /// This agent's own URL is already in the chain: the delegation would loop.
    #[error("delegation loop: {url} already appears in the x-deleg chain")]
    Loop {
        /// This agent's URL as configured (not normalised).
        url: String,
    },
    /// A child was asked for more budget than the parent has left.
    #[error("requested budget {requested} USD exceeds the remaining {remaining} USD")]
    BudgetExceeded {
        /// The budget asked for.
        requested: f64,
        /// The budget available.
        remaining: f64,
    },
    /// No budget is left at all.
    #[error("delegation budget is exhausted")]
    BudgetExhausted,
    /// A budget share that is negative or not a finite number.
    #[error("invalid budget share {requested} USD (must be a finite amount >= 0)")]
    InvalidBudget {
        /// The share asked for.
        requested: f64,
    },
}

impl XDeleg {
    /// The limits of a root delegator (depth 0, empty chain): the starting point for
    /// [`XDeleg::child`], never sent itself.
    pub fn root(deadline: OffsetDateTime, budget_usd: f64) -> XDeleg {
        XDeleg {
            deadline: normalise_deadline(deadline),
            budget_usd,
            depth: 0,
            chain: Vec::new(),
        }
    }

    /// Read `x-deleg` from request metadata: `Ok(None)` when the key is absent (or `null`), an
    /// error naming the field when it is present but malformed.
    ///
    /// All four fields are required. `deadline` must be RFC 3339; any offset is accepted and
    /// converted to UTC (then truncated to milliseconds). `budget_usd` must be a finite number
    /// ≥ 0, `depth` an integer in `u32` (written `2` or `2.0`: metadata is a protobuf `Struct`,
    /// whose numbers are doubles), `chain` an array of strings. Unknown extra fields are
    /// ignored for forward compatibility.
    pub fn read(metadata: &Map<String, Value>) -> Result<Option<XDeleg>, XDelegError> {
        match metadata.get(XDELEG_KEY) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => XDeleg::from_value(v).map(Some),
        }
    }

    /// Parse the value stored under `x-deleg` (what [`XDeleg::read`] does after the lookup);
    /// also used by the `Deserialize` impl, so both validate identically.
    pub fn from_value(v: &Value) -> Result<XDeleg, XDelegError> {
        let m = v.as_object().ok_or(XDelegError::NotAnObject {
            found: type_name(v),
        })?;
        let field = |name: &str| -> Result<&Value, XDelegError> {
            match m.get(name) {
                None | Some(Value::Null) => Err(XDelegError::MissingField {
                    field: name.to_owned(),
                }),
                Some(v) => Ok(v),
            }
        };
        let invalid = |name: &str, reason: String| XDelegError::InvalidField {
            field: name.to_owned(),
            reason,
        };

        let deadline_v = field("deadline")?;
        let text = deadline_v.as_str().ok_or_else(|| {
            invalid(
                "deadline",
                format!(
                    "expected an RFC 3339 string, found {}",
                    type_name(deadline_v)
                ),
            )
        })?;
        let deadline = OffsetDateTime::parse(text, &Rfc3339).map_err(|e| {
            invalid(
                "deadline",
                format!("not an RFC 3339 timestamp ({e}): {text:?}"),
            )
        })?;

        let budget_v = field("budget_usd")?;
        let budget_usd = budget_v.as_f64().ok_or_else(|| {
            invalid(
                "budget_usd",
                format!("expected a number, found {}", type_name(budget_v)),
            )
        })?;
        if !budget_usd.is_finite() || budget_usd < 0.0 {
            return Err(invalid(
                "budget_usd",
                format!("must be a finite amount >= 0, found {budget_v}"),
            ));
        }

        let depth_v = field("depth")?;
        let depth = depth_of(depth_v).ok_or_else(|| {
            invalid(
                "depth",
                format!(
                    "expected an integer between 0 and {}, found {depth_v}",
                    u32::MAX
                ),
            )
        })?;

        let chain_v = field("chain")?;
        let items = chain_v.as_array().ok_or_else(|| {
            invalid(
                "chain",
                format!("expected an array of URLs, found {}", type_name(chain_v)),
            )
        })?;
        let chain = items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                item.as_str().map(str::to_owned).ok_or_else(|| {
                    invalid(
                        &format!("chain[{i}]"),
                        format!("expected a string, found {}", type_name(item)),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;

        Ok(XDeleg {
            deadline: normalise_deadline(deadline),
            budget_usd,
            depth,
            chain,
        })
    }

    /// The wire form of these limits, exactly as [`XDeleg::write`] stores it and `Serialize`
    /// emits it.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert(
            "deadline".into(),
            Value::String(format_deadline(self.deadline)),
        );
        m.insert(
            "budget_usd".into(),
            Number::from_f64(self.budget_usd).map_or(Value::Null, Value::Number),
        );
        m.insert("depth".into(), Value::from(self.depth));
        m.insert(
            "chain".into(),
            Value::Array(self.chain.iter().cloned().map(Value::String).collect()),
        );
        Value::Object(m)
    }

    /// Store these limits under `x-deleg` in request metadata, replacing any previous value.
    pub fn write(&self, metadata: &mut Map<String, Value>) {
        metadata.insert(XDELEG_KEY.to_owned(), self.to_value());
    }

    /// Time left until the deadline, clamped at zero once it has passed, for timers and for
    /// reporting.
    pub fn remaining(&self, now: OffsetDateTime) -> Duration {
        let left = self.deadline - now;
        if left.is_negative() {
            Duration::ZERO
        } else {
            left
        }
    }

    /// Check an incoming request against the rules before starting any work.
    ///
    /// Checks, in this order: the deadline is after `now`; `own_url` is not already in the chain
    /// (URLs compared after [`normalize_url`]); `depth` is at most `max_depth`; some budget is
    /// left (`budget_usd > 0`, since the receiver may not spend anything otherwise).
    pub fn check_incoming(
        &self,
        now: OffsetDateTime,
        max_depth: u32,
        own_url: &str,
    ) -> Result<(), LimitViolation> {
        if self.deadline <= now {
            return Err(LimitViolation::DeadlinePassed {
                deadline: self.deadline,
                now,
            });
        }
        let own = normalize_url(own_url);
        if self.chain.iter().any(|u| normalize_url(u) == own) {
            return Err(LimitViolation::Loop {
                url: own_url.to_owned(),
            });
        }
        if self.depth > max_depth {
            return Err(LimitViolation::DepthExceeded {
                depth: self.depth,
                limit: max_depth,
            });
        }
        if self.budget_usd <= 0.0 {
            return Err(LimitViolation::BudgetExhausted);
        }
        Ok(())
    }

    /// The limits to send with a sub-delegation from the agent at `own_url`.
    ///
    /// The child's deadline is this deadline minus `margin` (a negative margin counts as zero, so
    /// deadlines never grow) and must stay after `now`; its budget is `budget_share`, which must
    /// be finite, ≥ 0 and at most this budget (and this budget must not be exhausted); its depth
    /// is one more; its chain is this chain plus `own_url`.
    pub fn child(
        &self,
        now: OffsetDateTime,
        margin: Duration,
        budget_share: f64,
        own_url: &str,
    ) -> Result<XDeleg, LimitViolation> {
        let margin = if margin.is_negative() {
            Duration::ZERO
        } else {
            margin
        };
        let deadline = normalise_deadline(
            self.deadline
                .checked_sub(margin)
                .unwrap_or(OffsetDateTime::UNIX_EPOCH),
        );
        if deadline <= now {
            return Err(LimitViolation::DeadlinePassed { deadline, now });
        }
        if !budget_share.is_finite() || budget_share < 0.0 {
            return Err(LimitViolation::InvalidBudget {
                requested: budget_share,
            });
        }
        if self.budget_usd <= 0.0 {
            return Err(LimitViolation::BudgetExhausted);
        }
        if budget_share > self.budget_usd {
            return Err(LimitViolation::BudgetExceeded {
                requested: budget_share,
                remaining: self.budget_usd,
            });
        }
        let mut chain = self.chain.clone();
        chain.push(own_url.to_owned());
        Ok(XDeleg {
            deadline,
            budget_usd: budget_share,
            depth: self.depth.saturating_add(1),
            chain,
        })
    }
}

impl TryFrom<Value> for XDeleg {
    type Error = XDelegError;

    fn try_from(v: Value) -> Result<Self, Self::Error> {
        XDeleg::from_value(&v)
    }
}

/// Split `remainder` dollars into `children` equal shares after keeping `reserve_fraction` of
/// it back (for retries), so the sum of child budgets never exceeds the parent's remainder.
///
/// Shares are whole micro-dollars, rounded down, and are reduced further if needed so that
/// `shares.iter().sum::<f64>() + remainder * reserve_fraction <= remainder` holds in `f64`
/// arithmetic too. `reserve_fraction` is clamped to `0..=1` (NaN counts as 0); a remainder that
/// is not a positive finite number gives all-zero shares; zero children give an empty vector.
///
/// ```
/// use a2a_protocol::xdeleg::split_budget;
/// assert_eq!(split_budget(2.0, 3, 0.25), vec![0.5, 0.5, 0.5]);
/// assert_eq!(split_budget(1.0, 3, 0.0), vec![0.333333; 3]);
/// ```
pub fn split_budget(remainder: f64, children: usize, reserve_fraction: f64) -> Vec<f64> {
    const MICROS: f64 = 1_000_000.0;
    if children == 0 {
        return Vec::new();
    }
    if !remainder.is_finite() || remainder <= 0.0 {
        return vec![0.0; children];
    }
    let reserve_fraction = if reserve_fraction.is_nan() {
        0.0
    } else {
        reserve_fraction.clamp(0.0, 1.0)
    };
    let reserve = remainder * reserve_fraction;
    // Float-to-int `as` saturates, so absurdly large remainders stay well defined.
    let distributable = ((remainder - reserve) * MICROS).floor().max(0.0) as u64;
    let mut per_child = distributable / children as u64;
    let mut step = 1u64;
    loop {
        let share = per_child as f64 / MICROS;
        let shares = vec![share; children];
        let total: f64 = shares.iter().sum();
        if per_child == 0 || total + reserve <= remainder {
            return shares;
        }
        per_child = per_child.saturating_sub(step);
        step = step.saturating_mul(2);
    }
}

/// Normalise a URL for chain comparison: scheme and host lowercased, default ports (`:80` for
/// http, `:443` for https) and trailing slashes of the path removed, surrounding whitespace
/// trimmed. Path, query and user info keep their case.
///
/// ```
/// use a2a_protocol::xdeleg::normalize_url;
/// assert_eq!(normalize_url("HTTP://Agent.Example:80/a2a/"), "http://agent.example/a2a");
/// ```
pub fn normalize_url(url: &str) -> String {
    let url = url.trim();
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.trim_end_matches('/').to_owned();
    };
    let scheme = scheme.to_ascii_lowercase();
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let (userinfo, host) = match authority.rsplit_once('@') {
        Some((user, host)) => (Some(user), host),
        None => (None, authority),
    };
    let mut host = host.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" => Some(":80"),
        "https" => Some(":443"),
        _ => None,
    };
    if let Some(port) = default_port
        && let Some(stripped) = host.strip_suffix(port)
    {
        host = stripped.to_owned();
    }
    let (path, suffix) = match tail.find(['?', '#']) {
        Some(i) => tail.split_at(i),
        None => (tail, ""),
    };
    let path = path.trim_end_matches('/');
    let mut out = format!("{scheme}://");
    if let Some(user) = userinfo {
        out.push_str(user);
        out.push('@');
    }
    out.push_str(&host);
    out.push_str(path);
    out.push_str(suffix);
    out
}

/// UTC, truncated to whole milliseconds (rounding toward the earlier, safer instant).
fn normalise_deadline(dt: OffsetDateTime) -> OffsetDateTime {
    let utc = dt.to_offset(UtcOffset::UTC);
    utc.replace_millisecond(utc.millisecond()).unwrap_or(utc)
}

/// `YYYY-MM-DDTHH:MM:SS.sssZ` in UTC.
fn format_deadline(dt: OffsetDateTime) -> String {
    let d = normalise_deadline(dt);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        d.year(),
        u8::from(d.month()),
        d.day(),
        d.hour(),
        d.minute(),
        d.second(),
        d.millisecond()
    )
}

fn serialize_deadline<S: Serializer>(dt: &OffsetDateTime, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format_deadline(*dt))
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A depth as `x-deleg` carries it: an integer in `u32`, written as an integer (`2`) or as an
/// integral number (`2.0`, what a `google.protobuf.Struct` round trip makes of it).
///
/// ```
/// use serde_json::json;
/// use a2a_protocol::xdeleg::depth_of;
/// assert_eq!(depth_of(&json!(2)), Some(2));
/// assert_eq!(depth_of(&json!(2.0)), Some(2));
/// assert_eq!(depth_of(&json!(2.5)), None);
/// assert_eq!(depth_of(&json!(-1)), None);
/// ```
pub fn depth_of(v: &Value) -> Option<u32> {
    if let Some(d) = v.as_u64() {
        return u32::try_from(d).ok();
    }
    let f = v.as_f64()?;
    (f.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&f)).then_some(f as u32)
}
