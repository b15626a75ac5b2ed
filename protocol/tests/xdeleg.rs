//! Tests of the `x-deleg` convention: parsing, writing, and the delegation rules.

use a2a_protocol::xdeleg::{
    LimitViolation, XDELEG_KEY, XDeleg, XDelegError, normalize_url, split_budget,
};
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use time::Duration;
use time::macros::datetime;

fn meta(x: Value) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert(XDELEG_KEY.into(), x);
    m
}

fn sample() -> XDeleg {
    XDeleg {
        deadline: datetime!(2026-03-20 10:07:00.250 UTC),
        budget_usd: 2.0,
        depth: 1,
        chain: vec!["http://127.0.0.1:4100/".into()],
    }
}

fn read_err(x: Value) -> XDelegError {
    XDeleg::read(&meta(x)).expect_err("malformed x-deleg must be rejected")
}

// ---------------------------------------------------------------------------------------------
// Reading and writing
// ---------------------------------------------------------------------------------------------

#[test]
fn reference_example_reads() {
    let params = json!({
      "message":{"messageId":"m-1","role":"ROLE_USER","contextId":"c-1",
                 "parts":[{"text":"Book a flight"}]},
      "configuration":{"acceptedOutputModes":["text/plain"],"historyLength":0,
                       "returnImmediately":false},
      "metadata":{"x-deleg":{"deadline":"2026-03-20T10:07:00Z","budget_usd":2.0,
                             "depth":1,"chain":["http://127.0.0.1:4100/"]}}});
    let metadata = params["metadata"].as_object().expect("metadata object");
    let x = XDeleg::read(metadata).expect("valid").expect("present");
    assert_eq!(
        x,
        XDeleg {
            deadline: datetime!(2026-03-20 10:07:00 UTC),
            budget_usd: 2.0,
            depth: 1,
            chain: vec!["http://127.0.0.1:4100/".into()],
        }
    );
}

#[test]
fn absent_is_none() {
    assert_eq!(XDeleg::read(&Map::new()), Ok(None));
    assert_eq!(XDeleg::read(&meta(Value::Null)), Ok(None));
}

#[test]
fn write_then_read_round_trips() {
    let x = sample();
    let mut m = Map::new();
    m.insert("other".into(), json!(1));
    x.write(&mut m);
    assert_eq!(m["other"], json!(1), "other metadata is untouched");
    assert_eq!(XDeleg::read(&m), Ok(Some(x)));
}

#[test]
fn write_format_is_utc_z_with_milliseconds() {
    let mut m = Map::new();
    sample().write(&mut m);
    assert_eq!(
        m[XDELEG_KEY],
        json!({"deadline": "2026-03-20T10:07:00.250Z", "budget_usd": 2.0, "depth": 1,
               "chain": ["http://127.0.0.1:4100/"]})
    );
    let mut x = sample();
    x.deadline = datetime!(2026-03-20 12:07:00 +02:00);
    assert_eq!(x.to_value()["deadline"], json!("2026-03-20T10:07:00.000Z"));
}

#[test]
fn write_replaces_previous_value() {
    let mut m = meta(json!("garbage"));
    sample().write(&mut m);
    assert_eq!(XDeleg::read(&m), Ok(Some(sample())));
}

#[test]
fn serde_matches_read_and_write() {
    let x = sample();
    let text = serde_json::to_string(&x).expect("serialize");
    let parsed: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(parsed, x.to_value());
    let back: XDeleg = serde_json::from_str(&text).expect("deserialize");
    assert_eq!(back, x);
    let bad = serde_json::from_value::<XDeleg>(json!({"deadline": "2026-03-20T10:07:00Z",
        "budget_usd": -1, "depth": 0, "chain": []}));
    let msg = bad.expect_err("negative budget").to_string();
    assert!(msg.contains("budget_usd"), "{msg}");
}

#[test]
fn non_utc_offset_is_accepted_and_normalised() {
    let x = XDeleg::read(&meta(json!({"deadline": "2026-03-20T12:07:00.5+02:00",
        "budget_usd": 1, "depth": 0, "chain": []})))
    .expect("valid")
    .expect("present");
    assert_eq!(x.deadline, datetime!(2026-03-20 10:07:00.500 UTC));
    assert_eq!(x.deadline.offset(), time::UtcOffset::UTC);
    assert_eq!(x.budget_usd, 1.0);
}

#[test]
fn sub_millisecond_precision_is_truncated() {
    let x = XDeleg::read(&meta(json!({"deadline": "2026-03-20T10:07:00.123999Z",
        "budget_usd": 1, "depth": 0, "chain": []})))
    .expect("valid")
    .expect("present");
    assert_eq!(x.deadline, datetime!(2026-03-20 10:07:00.123 UTC));
}

#[test]
fn extra_fields_are_ignored() {
    let x = XDeleg::read(&meta(json!({"deadline": "2026-03-20T10:07:00Z",
        "budget_usd": 0.5, "depth": 2, "chain": ["a", "b"], "future": true})))
    .expect("valid")
    .expect("present");
    assert_eq!(x.depth, 2);
}

// ---------------------------------------------------------------------------------------------
// Malformed metadata names the field
// ---------------------------------------------------------------------------------------------

fn valid_json() -> Value {
    json!({"deadline": "2026-03-20T10:07:00Z", "budget_usd": 2.0, "depth": 1, "chain": ["u"]})
}

fn with(field: &str, value: Value) -> Value {
    let mut v = valid_json();
    v[field] = value;
    v
}

fn without(field: &str) -> Value {
    let mut v = valid_json();
    v.as_object_mut().map(|m| m.remove(field));
    v
}

#[test]
fn malformed_not_an_object() {
    let e = read_err(json!([1]));
    assert_eq!(e, XDelegError::NotAnObject { found: "array" });
    assert_eq!(e.field(), "");
    assert_eq!(e.to_string(), "x-deleg: expected an object, found array");
}

#[test]
fn malformed_missing_fields() {
    for field in ["deadline", "budget_usd", "depth", "chain"] {
        let e = read_err(without(field));
        assert_eq!(
            e,
            XDelegError::MissingField {
                field: field.into()
            }
        );
        assert_eq!(e.to_string(), format!("x-deleg.{field}: missing"));
        let e = read_err(with(field, Value::Null));
        assert_eq!(e.field(), field);
    }
}

#[test]
fn malformed_negative_budget() {
    let e = read_err(with("budget_usd", json!(-0.01)));
    assert_eq!(e.field(), "budget_usd");
    assert!(e.to_string().starts_with("x-deleg.budget_usd: "), "{e}");
}

#[test]
fn malformed_budget_type() {
    let e = read_err(with("budget_usd", json!("2.0")));
    assert_eq!(e.field(), "budget_usd");
    assert!(e.to_string().contains("found string"), "{e}");
}

#[test]
fn malformed_deadline_not_rfc3339() {
    for bad in [
        json!("2026-03-20 10:07:00"),
        json!("tomorrow"),
        json!("2026-03-20T10:07:00"),
        json!(1_774_000_000),
    ] {
        let e = read_err(with("deadline", bad.clone()));
        assert_eq!(e.field(), "deadline", "{bad}");
        assert!(e.to_string().starts_with("x-deleg.deadline: "), "{e}");
    }
}

#[test]
fn malformed_depth() {
    for bad in [
        json!(-1),
        json!(1.5),
        json!("1"),
        json!(u64::from(u32::MAX) + 1),
    ] {
        let e = read_err(with("depth", bad.clone()));
        assert_eq!(e.field(), "depth", "{bad}");
    }
}

#[test]
fn malformed_chain() {
    let e = read_err(with("chain", json!("http://a/")));
    assert_eq!(e.field(), "chain");
    let e = read_err(with("chain", json!(["http://a/", 7])));
    assert_eq!(e.field(), "chain[1]");
    assert_eq!(
        e.to_string(),
        "x-deleg.chain[1]: expected a string, found number"
    );
}

// ---------------------------------------------------------------------------------------------
// Rules
// ---------------------------------------------------------------------------------------------

const NOW: time::OffsetDateTime = datetime!(2026-03-20 10:00:00 UTC);

#[test]
fn incoming_ok() {
    assert_eq!(
        sample().check_incoming(NOW, 3, "http://127.0.0.1:4200/"),
        Ok(())
    );
}

#[test]
fn incoming_deadline_passed() {
    let mut x = sample();
    x.deadline = datetime!(2026-03-20 09:59:59 UTC);
    let v = x.check_incoming(NOW, 3, "http://b/").expect_err("late");
    assert_eq!(
        v,
        LimitViolation::DeadlinePassed {
            deadline: x.deadline,
            now: NOW
        }
    );
    assert_eq!(
        v.to_string(),
        "delegation deadline 2026-03-20T09:59:59.000Z has passed (now 2026-03-20T10:00:00.000Z)"
    );
    x.deadline = NOW;
    assert!(matches!(
        x.check_incoming(NOW, 3, "http://b/"),
        Err(LimitViolation::DeadlinePassed { .. })
    ));
}

#[test]
fn incoming_depth_exceeded() {
    let mut x = sample();
    x.depth = 4;
    let v = x.check_incoming(NOW, 3, "http://b/").expect_err("deep");
    assert_eq!(v, LimitViolation::DepthExceeded { depth: 4, limit: 3 });
    assert_eq!(v.to_string(), "delegation depth 4 exceeds the limit of 3");
    x.depth = 3;
    assert_eq!(x.check_incoming(NOW, 3, "http://b/"), Ok(()));
}

#[test]
fn incoming_loop() {
    let x = sample();
    let v = x
        .check_incoming(NOW, 3, "http://127.0.0.1:4100/")
        .expect_err("loop");
    assert_eq!(
        v,
        LimitViolation::Loop {
            url: "http://127.0.0.1:4100/".into()
        }
    );
    assert_eq!(
        v.to_string(),
        "delegation loop: http://127.0.0.1:4100/ already appears in the x-deleg chain"
    );
}

#[test]
fn incoming_loop_compares_normalised_urls() {
    let x = sample();
    for own in [
        "http://127.0.0.1:4100",
        "HTTP://127.0.0.1:4100//",
        " http://127.0.0.1:4100/ ",
    ] {
        assert!(
            matches!(
                x.check_incoming(NOW, 3, own),
                Err(LimitViolation::Loop { .. })
            ),
            "{own}"
        );
    }
    let mut x = sample();
    x.chain = vec!["https://Agent.Example:443/a2a/".into()];
    assert!(matches!(
        x.check_incoming(NOW, 3, "https://agent.example/a2a"),
        Err(LimitViolation::Loop { .. })
    ));
    // The path is case-sensitive; a different path is a different agent.
    assert_eq!(
        x.check_incoming(NOW, 3, "https://agent.example/A2A"),
        Ok(())
    );
    assert_eq!(
        x.check_incoming(NOW, 3, "https://agent.example/a2a/b"),
        Ok(())
    );
}

#[test]
fn incoming_budget_exhausted() {
    let mut x = sample();
    x.budget_usd = 0.0;
    let v = x.check_incoming(NOW, 3, "http://b/").expect_err("broke");
    assert_eq!(v, LimitViolation::BudgetExhausted);
    assert_eq!(v.to_string(), "delegation budget is exhausted");
}

#[test]
fn normalize_url_rules() {
    assert_eq!(
        normalize_url("HTTP://Agent.Example:80/a2a/"),
        "http://agent.example/a2a"
    );
    assert_eq!(
        normalize_url("https://h:8443/x/?q=A"),
        "https://h:8443/x?q=A"
    );
    assert_eq!(normalize_url("http://User@HOST/"), "http://User@host");
    assert_eq!(normalize_url("not a url/"), "not a url");
}

#[test]
fn child_applies_margin_budget_depth_and_chain() {
    let parent = sample();
    let child = parent
        .child(NOW, Duration::seconds(30), 0.75, "http://127.0.0.1:4200/")
        .expect("child");
    assert_eq!(child.deadline, datetime!(2026-03-20 10:06:30.250 UTC));
    assert_eq!(child.budget_usd, 0.75);
    assert_eq!(child.depth, 2);
    assert_eq!(
        child.chain,
        vec![
            "http://127.0.0.1:4100/".to_string(),
            "http://127.0.0.1:4200/".to_string()
        ]
    );
    // The receiver of the child accepts it, and refuses to send it back to us.
    assert_eq!(
        child.check_incoming(NOW, 3, "http://127.0.0.1:4300/"),
        Ok(())
    );
    assert!(matches!(
        child.check_incoming(NOW, 3, "http://127.0.0.1:4200"),
        Err(LimitViolation::Loop { .. })
    ));
}

#[test]
fn child_margin_that_eats_the_deadline() {
    let parent = sample(); // deadline 10:07:00.250, now 10:00
    let v = parent
        .child(NOW, Duration::minutes(8), 0.5, "http://b/")
        .expect_err("no time left");
    assert_eq!(
        v,
        LimitViolation::DeadlinePassed {
            deadline: datetime!(2026-03-20 09:59:00.250 UTC),
            now: NOW
        }
    );
    // Exactly at `now` is not after it.
    let v = parent
        .child(
            NOW,
            Duration::milliseconds(7 * 60_000 + 250),
            0.5,
            "http://b/",
        )
        .expect_err("equal to now");
    assert!(matches!(v, LimitViolation::DeadlinePassed { .. }));
}

#[test]
fn child_negative_margin_counts_as_zero() {
    let child = sample()
        .child(NOW, Duration::minutes(-5), 0.5, "http://b/")
        .expect("child");
    assert_eq!(child.deadline, sample().deadline);
}

#[test]
fn child_budget_exceeded() {
    let v = sample()
        .child(NOW, Duration::ZERO, 2.5, "http://b/")
        .expect_err("too much");
    assert_eq!(
        v,
        LimitViolation::BudgetExceeded {
            requested: 2.5,
            remaining: 2.0
        }
    );
    assert_eq!(
        v.to_string(),
        "requested budget 2.5 USD exceeds the remaining 2 USD"
    );
    assert!(
        sample()
            .child(NOW, Duration::ZERO, 2.0, "http://b/")
            .is_ok()
    );
}

#[test]
fn child_budget_exhausted() {
    let mut parent = sample();
    parent.budget_usd = 0.0;
    assert_eq!(
        parent.child(NOW, Duration::ZERO, 0.0, "http://b/"),
        Err(LimitViolation::BudgetExhausted)
    );
}

#[test]
fn child_invalid_budget_share() {
    for bad in [-0.1, f64::NAN, f64::INFINITY] {
        let v = sample()
            .child(NOW, Duration::ZERO, bad, "http://b/")
            .expect_err("invalid");
        assert!(matches!(v, LimitViolation::InvalidBudget { .. }), "{bad}");
    }
}

#[test]
fn root_starts_at_depth_zero() {
    let root = XDeleg::root(datetime!(2026-03-20 12:00:00.123456 +02:00), 2.0);
    assert_eq!(root.depth, 0);
    assert!(root.chain.is_empty());
    assert_eq!(root.deadline, datetime!(2026-03-20 10:00:00.123 UTC));
}

#[test]
fn remaining_time() {
    let x = sample();
    assert_eq!(x.remaining(NOW), Duration::milliseconds(7 * 60_000 + 250));
    assert_eq!(
        x.remaining(datetime!(2026-03-20 11:00:00 UTC)),
        Duration::ZERO
    );
}

// ---------------------------------------------------------------------------------------------
// Budget split
// ---------------------------------------------------------------------------------------------

#[test]
fn split_examples() {
    assert_eq!(split_budget(2.0, 3, 0.25), vec![0.5, 0.5, 0.5]);
    assert_eq!(split_budget(1.0, 3, 0.0), vec![0.333333; 3]);
    assert_eq!(split_budget(2.0, 0, 0.1), Vec::<f64>::new());
    assert_eq!(split_budget(0.0, 2, 0.1), vec![0.0, 0.0]);
    assert_eq!(split_budget(-1.0, 2, 0.1), vec![0.0, 0.0]);
    assert_eq!(split_budget(f64::NAN, 1, 0.1), vec![0.0]);
    assert_eq!(split_budget(1.0, 2, 1.0), vec![0.0, 0.0]);
    assert_eq!(
        split_budget(1.0, 2, 7.0),
        vec![0.0, 0.0],
        "reserve clamped to 1"
    );
    assert_eq!(
        split_budget(1.0, 2, -3.0),
        vec![0.5, 0.5],
        "reserve clamped to 0"
    );
}

#[test]
fn split_is_robust_to_float_rounding() {
    // 0.1 + 0.1 + 0.1 > 0.3 in f64; the split must not produce that.
    let shares = split_budget(0.3, 3, 0.0);
    assert!(shares.iter().sum::<f64>() <= 0.3, "{shares:?}");
    assert!(shares.iter().all(|s| *s > 0.099));
}

#[test]
fn split_shares_are_accepted_by_child() {
    let parent = sample();
    for share in split_budget(parent.budget_usd, 7, 0.1) {
        assert!(
            parent
                .child(NOW, Duration::ZERO, share, "http://b/")
                .is_ok()
        );
    }
}

proptest! {
    #[test]
    fn split_never_exceeds_remainder(
        remainder in prop_oneof![0.0f64..10.0, 0.0f64..1e6, 0.0f64..1e15],
        children in 0usize..50,
        reserve in 0.0f64..=1.0,
    ) {
        let shares = split_budget(remainder, children, reserve);
        prop_assert_eq!(shares.len(), children);
        let sum: f64 = shares.iter().sum();
        prop_assert!(sum + remainder * reserve <= remainder,
            "sum {} + reserve {} > remainder {}", sum, remainder * reserve, remainder);
        prop_assert!(shares.iter().all(|s| *s >= 0.0 && s.is_finite()));
        if let Some(first) = shares.first() {
            prop_assert!(shares.iter().all(|s| s == first), "equal shares");
            // Nothing much is wasted: within a few micro-dollars per child of the ideal share.
            let ideal = (remainder - remainder * reserve) / children as f64;
            prop_assert!(*first <= ideal * (1.0 + 1e-12), "share {} ideal {}", first, ideal);
            if remainder < 1e6 {
                prop_assert!(ideal - first < 1e-5, "share {} ideal {}", first, ideal);
            }
        }
    }

    #[test]
    fn read_write_round_trip(
        ms in 0i64..4_000_000_000_000,
        budget in 0.0f64..1e6,
        depth in any::<u32>(),
        chain in prop::collection::vec("[ -~]{0,20}", 0..5),
    ) {
        let deadline = time::OffsetDateTime::UNIX_EPOCH + Duration::milliseconds(ms);
        let x = XDeleg { deadline, budget_usd: budget, depth, chain };
        let mut m = Map::new();
        x.write(&mut m);
        prop_assert_eq!(XDeleg::read(&m), Ok(Some(x)));
    }
}
