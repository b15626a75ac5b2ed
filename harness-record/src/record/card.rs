//! The agent card as the proxy serves it: every interface URL at the upstream's origin points at
//! the proxy instead (1.0 `supportedInterfaces[].url`; 0.3 `url` and `additionalInterfaces[].url`).

use serde_json::Value;

/// Rewrite `url` from the upstream authority (`host:port`) to the proxy's: `http(s)://UP/path`
/// becomes `http://PROXY/path`, a bare `UP` (a gRPC interface) becomes `PROXY`. `None` when the
/// URL is elsewhere.
pub fn rewrite_url(url: &str, upstream: &str, proxy: &str) -> Option<String> {
    let (rest, had_scheme) = match url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
    {
        Some(r) => (r, true),
        None => (url, false),
    };
    let (authority, tail) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    if !authority.eq_ignore_ascii_case(upstream) {
        return None;
    }
    Some(if had_scheme {
        format!("http://{proxy}{tail}")
    } else {
        format!("{proxy}{tail}")
    })
}

/// Rewrite a card (1.0 or 0.3 shape) in place; returns the interface URLs left alone (at
/// another origin: not proxied).
pub fn rewrite_card(card: &mut Value, upstream: &str, proxy: &str) -> Vec<String> {
    let mut others = Vec::new();
    let mut fix = |u: &mut Value| {
        if let Some(s) = u.as_str() {
            match rewrite_url(s, upstream, proxy) {
                Some(n) => *u = Value::String(n),
                None => others.push(s.to_string()),
            }
        }
    };
    for key in [
        "supportedInterfaces",
        "supported_interfaces",
        "additionalInterfaces",
    ] {
        if let Some(Value::Array(list)) = card.get_mut(key) {
            for i in list {
                if let Some(u) = i.get_mut("url") {
                    fix(u);
                }
            }
        }
    }
    if let Some(u) = card.get_mut("url") {
        fix(u);
    }
    others
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn interfaces_at_the_upstream_point_at_the_proxy() {
        let mut card = json!({
            "name": "a",
            "supportedInterfaces": [
                {"url": "http://127.0.0.1:9000/a2a", "protocolBinding": "JSONRPC"},
                {"url": "127.0.0.1:9000", "protocolBinding": "GRPC"},
                {"url": "http://other:1/rest", "protocolBinding": "HTTP+JSON"}
            ],
            "url": "http://127.0.0.1:9000/a2a",
            "additionalInterfaces": [{"url": "http://127.0.0.1:9000/v03", "transport": "JSONRPC"}],
            "provider": {"url": "http://127.0.0.1:9000/about"}
        });
        let others = rewrite_card(&mut card, "127.0.0.1:9000", "127.0.0.1:7");
        assert_eq!(
            card["supportedInterfaces"][0]["url"],
            "http://127.0.0.1:7/a2a"
        );
        assert_eq!(card["supportedInterfaces"][1]["url"], "127.0.0.1:7");
        assert_eq!(card["supportedInterfaces"][2]["url"], "http://other:1/rest");
        assert_eq!(card["url"], "http://127.0.0.1:7/a2a");
        assert_eq!(
            card["additionalInterfaces"][0]["url"],
            "http://127.0.0.1:7/v03"
        );
        // Not an interface: left as it is.
        assert_eq!(card["provider"]["url"], "http://127.0.0.1:9000/about");
        assert_eq!(others, vec!["http://other:1/rest".to_string()]);
        assert_eq!(
            rewrite_url("http://127.0.0.10:9000/x", "127.0.0.1:9000", "p"),
            None
        );
    }
}
