//! A walk over the members of a JSON document with their JSON pointers (RFC 6901), shared by
//! the shrinker (numbers to lower) and the found-file writer (keys to leave out).

use serde_json::Value;

/// Call `f(parent, key, pointer, value)` for every member of every object in `v`, in document
/// order, parents before their children (array elements are walked, not reported).
pub(super) fn for_each_member(v: &Value, f: &mut impl FnMut(&str, &str, &str, &Value)) {
    walk(v, &mut String::new(), f);
}

fn walk(v: &Value, at: &mut String, f: &mut impl FnMut(&str, &str, &str, &Value)) {
    let len = at.len();
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                at.push('/');
                at.push_str(&k.replace('~', "~0").replace('/', "~1"));
                f(&at[..len], k, at, x);
                walk(x, at, f);
                at.truncate(len);
            }
        }
        Value::Array(xs) => {
            for (i, x) in xs.iter().enumerate() {
                at.push('/');
                at.push_str(&i.to_string());
                walk(x, at, f);
                at.truncate(len);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn members_come_with_their_pointers_parents_first() {
        let mut seen = Vec::new();
        for_each_member(
            &json!({"a": [{"b/c": 1}], "d": 2}),
            &mut |parent, key, at, _| seen.push(format!("{parent}|{key}|{at}")),
        );
        assert_eq!(seen, ["|a|/a", "/a/0|b/c|/a/0/b~1c", "|d|/d"]);
    }
}
