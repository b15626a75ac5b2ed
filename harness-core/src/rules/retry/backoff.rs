//! DLG-RETRY-02: backoff between retries.
//!
//! DLG-RETRY-02's evidence is the gap from the moment an attempt failed (its error response or
//! dropped connection, by journal time) to the next send of the same intent. That gap is the
//! delegator's sleep *plus* whatever the machine adds (scheduling, reconnecting), so it can only
//! over-state the sleep (but for the journal's own lag, [`JOURNAL_LAG_MS`]): a gap too *short* is
//! a fact, a gap too *long* is not. What the rule asks, and how each part is judged:
//!
//! - *Honour `Retry-After`*: a resend after an answer announcing it waits at least 90 % of it
//!   (taken from the journaled response, else from the script of the agent that answered, for
//!   the status it answered: a rule's fault or a queued fault, 429 or 5xx alike).
//! - *Within the cap*: lateness fails only when no load explains it (more than
//!   [`LOAD_ALLOWANCE_MS`] past the cap and four times the cap).
//! - *Exponentially* (successive gaps grow, from the base): every usual strategy is accepted —
//!   full jitter (each sleep drawn from [0, E_i], E_i = min(cap, base·2^i)), equal jitter
//!   ([E_i/2, E_i]), decorrelated jitter (min(cap, U[base, 3·previous])), plain exponential, a
//!   slower factor, a first retry at once. None of them bounds a single sleep from below (full
//!   jitter may draw 0), so no single short gap is a violation; what none of them does is stay
//!   short *retry after retry* while its envelope doubles. So the judgement is a test over all
//!   the k plain backoffs of an intent (those without Retry-After): load may stretch m = k/6 of
//!   them ([`outliers`]), so with T the (m+1)-th longest gap plus the lag it computes how likely
//!   the most lenient strategies make all but m sleeps at most T — exactly for full jitter (each
//!   sleep at most T with probability min(1, T/E_i), independently), and on a grid, rounded up,
//!   for decorrelated jitter (whose sleeps depend on the previous one); equal jitter, plain
//!   exponential and jitter around E_i make short sleeps rarer than full jitter — and fails when
//!   both are below [`GROWTH_ALPHA`]: a correct delegator is judged NON-STRICT at most that
//!   often (a test replays each strategy). With the harness's base 50 ms and cap 500 ms, ten
//!   backoffs (the most `max_retries` allows) of a constant pause at the base fail while all but
//!   one measure up to about 100 ms; no backoff at all fails from four retries on; a pause twice
//!   the base is not proof; fewer backoffs prove less (`retries.backoff-grows` has ten).
//! - *With jitter*: one schedule alone cannot show it, two can. When two intents each backed off
//!   at least [`JITTER_MIN_GAPS`] times, identical gaps (within [`JITTER_TOLERANCE_MS`], one
//!   index excepted from six on) at every index are no jitter: delegations that failed together
//!   retry together (the thundering herd the seed warns about). Retry-After gaps are the
//!   agent's, not compared.

use super::*;

/// How much later than the delegator saw it a failure may be journaled: the agent records its
/// response once it was handed to the connection, and under load the delegator can read it and
/// start sleeping a few ms before that entry's timestamp (seen: a 25 ms minimum measured as
/// 23 ms). A lower bound on the sleep is only a fact beyond this.
const JOURNAL_LAG_MS: u64 = 10;

/// How late (ms past the cap) a retry may come before lateness counts against the delegator: a
/// loaded machine delays the delegator's wake-up and its reconnect, which the journal cannot tell
/// from a longer sleep (1.4-1.8 s were seen on 2 busy cores with a 500 ms cap).
const LOAD_ALLOWANCE_MS: u64 = 5_000;

/// The `Retry-After` (seconds) `agent` sends with an HTTP `status`, if its script announces one:
/// from a rule's fault or a queued fault, whatever the status (429, 503, ...): for journals whose
/// responses do not carry it (the journal's own value, per response, comes first).
pub(super) fn retry_after_s(ev: &Evidence, agent: &str, status: u16) -> Option<u64> {
    let spec = ev
        .scenario
        .network
        .agents
        .iter()
        .find(|a| a.name == agent)?;
    spec.rules
        .iter()
        .filter_map(|ru| ru.fault.as_ref())
        .chain(spec.queued_faults.iter().map(|q| &q.fault))
        .find_map(|f| match f {
            a2a_mock_agents::Fault::HttpStatus {
                status: s,
                retry_after_s,
            } if *s == status => *retry_after_s,
            _ => None,
        })
}

/// DLG-RETRY-02 fails the growth of an intent's backoffs when even the most lenient accepted
/// strategy explains them with probability below this (see the module doc).
const GROWTH_ALPHA: f64 = 1e-3;
/// Two intents' backoffs this close (ms) at one index are the same sleep.
const JITTER_TOLERANCE_MS: u64 = 3;
/// How many backoffs each of two intents needs before their schedules are compared.
const JITTER_MIN_GAPS: usize = 4;

/// The envelope E_i = min(cap, base·2^i) of the i-th backoff (from 0).
pub(super) fn envelope(base: u64, cap: u64, i: usize) -> u64 {
    base.saturating_mul(1u64 << (i as u32).min(40)).min(cap)
}

/// How many of `k` backoffs the growth test lets load stretch: one in six.
fn outliers(k: usize) -> usize {
    k / 6
}

/// Under full jitter (the i-th sleep uniform on [0, E_i]): the probability that at most `m` of
/// `k` sleeps exceed `t` ms (Poisson-binomial). Equal jitter, plain exponential and jitter around
/// E_i make each sleep at most `t` no more often, so their probability is lower.
pub(super) fn full_jitter_at_most(base: u64, cap: u64, k: usize, t: u64, m: usize) -> f64 {
    // dist[e]: probability of e sleeps above t so far.
    let mut dist = vec![0.0f64; k + 1];
    dist[0] = 1.0;
    for i in 0..k {
        let e = envelope(base, cap, i);
        let below = if e == 0 {
            1.0
        } else {
            (t as f64 / e as f64).min(1.0)
        };
        for n in (0..=i).rev() {
            let p = dist[n];
            dist[n] = p * below;
            dist[n + 1] += p * (1.0 - below);
        }
    }
    dist.iter().take(m + 1).sum::<f64>().min(1.0)
}

/// Cells of the grid over [base, cap] on which [`decorrelated_at_most`] follows the sleeps.
const DECORRELATED_CELLS: usize = 240;

/// Under decorrelated jitter (each sleep uniform on [base, min(cap, 3·previous)], the previous
/// of the first being the base): the probability that at most `m` of `k` sleeps exceed `t` ms,
/// computed on a grid over [base, cap] and rounded up (a cell counts as at most `t` when its
/// lower edge is, and a sleep in a cell continues from that lower edge, the narrowest next range).
pub(super) fn decorrelated_at_most(base: u64, cap: u64, k: usize, t: u64, m: usize) -> f64 {
    if k <= m {
        return 1.0;
    }
    if t < base {
        // Every sleep is at least the base.
        return 0.0;
    }
    if cap <= base {
        return 1.0;
    }
    let (lo, hi) = (base as f64, cap as f64);
    let n = DECORRELATED_CELLS;
    let h = (hi - lo) / n as f64;
    let edge = |j: usize| lo + j as f64 * h;
    let below: Vec<bool> = (0..n).map(|j| edge(j) <= t as f64).collect();
    // Where the next sleep lands, from a sleep at `s` (uniform over [lo, min(hi, 3·s)]): the
    // cell of its upper end and the share of a cell's width per unit of probability.
    let range = |s: f64| {
        let u = (3.0 * s).min(hi);
        let width = (u - lo).max(h * 1e-9);
        (((u - lo) / h).floor() as usize, u, width)
    };
    // mass[e][j]: probability of the last sleep in cell j with e sleeps above t so far.
    let mut mass = vec![vec![0.0f64; n]; m + 1];
    let mut landed = vec![0.0f64; n + 1];
    for step in 0..k {
        let mut next = vec![vec![0.0f64; n]; m + 1];
        for (e, row) in mass.iter().enumerate() {
            // Where the sleeps of the runs with e so far land (a difference array over cells).
            landed.iter_mut().for_each(|x| *x = 0.0);
            let mut spread = |p: f64, s: f64| {
                let (full, u, width) = range(s);
                let per_cell = p * h / width;
                landed[0] += per_cell;
                landed[full.min(n)] -= per_cell;
                if full < n {
                    landed[full] += p * (u - edge(full)) / width;
                    landed[full + 1] -= p * (u - edge(full)) / width;
                }
            };
            if step == 0 {
                if e == 0 {
                    spread(1.0, lo);
                }
            } else {
                for (j, p) in row.iter().enumerate() {
                    if *p > 0.0 {
                        spread(*p, edge(j));
                    }
                }
            }
            let mut acc = 0.0;
            for j in 0..n {
                acc += landed[j];
                let e2 = if below[j] { e } else { e + 1 };
                if e2 <= m && acc > 0.0 {
                    next[e2][j] += acc;
                }
            }
        }
        mass = next;
    }
    mass.iter().flatten().sum::<f64>().min(1.0)
}

/// How likely the most lenient accepted backoff strategies (full and decorrelated jitter; see
/// the module doc) make at most `m` of `k` sleeps longer than `t` ms.
fn growth_p_value(base: u64, cap: u64, k: usize, t: u64, m: usize) -> f64 {
    let full = full_jitter_at_most(base, cap, k, t, m);
    if full >= GROWTH_ALPHA {
        // Already explained: the other bound would not change the verdict.
        return full;
    }
    full.max(decorrelated_at_most(base, cap, k, t, m))
}

/// An intent (agent, messageId) and its plain backoffs as (seq of the resend, gap ms).
type Schedule<'a> = ((&'a str, &'a str), Vec<(u64, u64)>);

/// DLG-RETRY-02: resends of one intent after a transient failure honour `Retry-After`, stay
/// within about the cap, grow exponentially whatever the jitter, and are jittered (two intents
/// do not keep the same schedule). See the module doc for what each part takes as evidence.
pub(in crate::rules) fn retries_back_off(ev: &Evidence) -> Check {
    let base = option_ms(ev, "retry_base_ms", DEFAULT_RETRY_BASE_MS);
    let cap = option_ms(ev, "retry_cap_ms", DEFAULT_RETRY_CAP_MS).max(base);
    let reqs = requests(ev.journal);
    // Per intent (agent, messageId): its sends as (seq, request number, time in µs).
    type Sends = Vec<(u64, u64, u64)>;
    let mut intents: BTreeMap<(&str, &str), Sends> = BTreeMap::new();
    for r in &reqs {
        if r.is_new_send()
            && let Some(m) = r.message_id()
        {
            let at = ev
                .journal
                .iter()
                .find(|e| e.seq == r.seq)
                .map_or(0, |e| e.at_us);
            intents
                .entry((r.agent, m))
                .or_default()
                .push((r.seq, r.req, at));
        }
    }
    let mut any = false;
    // Per intent, its plain backoffs (no Retry-After).
    let mut schedules: Vec<Schedule> = Vec::new();
    for (intent, sends) in &intents {
        // The backoff gaps: from a send whose attempt failed transiently to the next send of the
        // same intent within one process life.
        let mut gaps: Vec<(u64, u64, u64, Option<u64>)> = Vec::new();
        for w in sends.windows(2) {
            let ((s0, req0, t0), (s1, _, t1)) = (w[0], w[1]);
            let agent = reqs.iter().find(|r| r.seq == s0).map_or("", |r| r.agent);
            if ev.crash_seq.is_some_and(|c| s0 <= c && c < s1) {
                continue;
            }
            let (status, journal_ra_s) = response_of(ev.journal, req0)
                .and_then(|e| match &e.event {
                    Event::Response {
                        status,
                        retry_after_s,
                        ..
                    } => Some((Some(*status), *retry_after_s)),
                    _ => None,
                })
                .unwrap_or((None, None));
            let dropped = ev
                .journal
                .iter()
                .any(|e| matches!(&e.event, Event::ConnectionDropped { req, .. } if *req == req0));
            let transient = dropped || status.is_some_and(|s| s == 429 || s >= 500);
            if transient {
                // The backoff starts when the attempt failed (its error response or the dropped
                // connection was journaled), not when it was sent: a slow failure is not a long
                // sleep.
                let failed_at = ev
                    .journal
                    .iter()
                    .filter(|e| e.seq > s0 && e.seq < s1)
                    .find(|e| match &e.event {
                        Event::Response { req, .. } | Event::ConnectionDropped { req, .. } => {
                            *req == req0
                        }
                        _ => false,
                    })
                    .map_or(t0, |e| e.at_us.max(t0));
                // The Retry-After this resend must wait, in ms: the journaled response's own value
                // first, else what the answering agent's script announces for that status.
                let retry_after_ms = journal_ra_s
                    .or_else(|| status.and_then(|st| retry_after_s(ev, agent, st)))
                    .map(|s| s * 1000);
                gaps.push((s0, s1, t1.saturating_sub(failed_at) / 1000, retry_after_ms));
            }
        }
        if gaps.is_empty() {
            continue;
        }
        any = true;
        for &(s0, s1, gap, retry_after) in &gaps {
            if let Some(ra) = retry_after {
                if gap < ra * 9 / 10 {
                    return fail(
                        format!("the resend waits Retry-After {} s", ra / 1000),
                        format!("it came after {gap} ms"),
                        vec![s0, s1],
                    );
                }
                continue;
            }
            // Lateness is not attributable (see the module doc): only a gap no load explains.
            if gap > (cap + LOAD_ALLOWANCE_MS).max(4 * cap) {
                return fail(
                    format!("a retry waits at most the cap ({cap} ms)"),
                    format!("it came after {gap} ms"),
                    vec![s0, s1],
                );
            }
        }
        // Exponential growth, whatever the jitter (see the module doc).
        let plain: Vec<(u64, u64, u64)> = gaps
            .iter()
            .filter(|g| g.3.is_none())
            .map(|g| (g.0, g.1, g.2))
            .collect();
        if !plain.is_empty() {
            let mut sorted: Vec<u64> = plain.iter().map(|g| g.2).collect();
            sorted.sort_unstable_by(|a, b| b.cmp(a));
            let m = outliers(sorted.len());
            let second = sorted[m.min(sorted.len() - 1)];
            let t = second + JOURNAL_LAG_MS;
            let p = growth_p_value(base, cap, plain.len(), t, m);
            if p < GROWTH_ALPHA {
                return fail(
                    format!(
                        "the backoffs grow exponentially from base {base} ms up to cap {cap} ms (any jitter: full, equal, decorrelated)"
                    ),
                    format!(
                        "{} backoffs of {} ms: all but {m} at most {second} ms, which even full or decorrelated jitter makes with probability {p:.1e} (below {GROWTH_ALPHA:.0e})",
                        plain.len(),
                        crate::rules::words::list(plain.iter().map(|g| g.2))
                    ),
                    plain.iter().flat_map(|g| [g.0, g.1]).collect(),
                );
            }
        }
        schedules.push((*intent, plain.iter().map(|g| (g.1, g.2)).collect()));
    }
    // Jitter: two intents that keep the same schedule (see the module doc).
    let long: Vec<&Schedule> = schedules
        .iter()
        .filter(|(_, g)| g.len() >= JITTER_MIN_GAPS)
        .collect();
    for (a, ((agent_a, mid_a), ga)) in long.iter().enumerate() {
        for ((agent_b, mid_b), gb) in long.iter().skip(a + 1) {
            let n = ga.len().min(gb.len());
            let apart = (0..n)
                .filter(|&i| ga[i].1.abs_diff(gb[i].1) > JITTER_TOLERANCE_MS)
                .count();
            let allowed = usize::from(n >= 6);
            if apart <= allowed {
                return fail(
                    "retries back off with jitter: two intents that back off do not keep the same schedule",
                    format!(
                        "{mid_a} (to {agent_a}) and {mid_b} (to {agent_b}) waited the same at {} of {n} backoffs (within {JITTER_TOLERANCE_MS} ms): {} ms and {} ms",
                        n - apart,
                        crate::rules::words::list(ga[..n].iter().map(|g| g.1)),
                        crate::rules::words::list(gb[..n].iter().map(|g| g.1))
                    ),
                    ga[..n].iter().chain(&gb[..n]).map(|g| g.0).collect(),
                );
            }
        }
    }
    Check::held_if_seen(any)
}
