//! The agent card as the proxy serves it: every interface URL at a proxied origin points at the
//! proxy's listen address for that origin instead (1.0 `supportedInterfaces[].url`; 0.3 `url`
//! and `additionalInterfaces[].url`).

use serde_json::Value;

/// The authority (`host:port`) of an interface URL and whether it had a scheme:
/// `http(s)://host:port/path` or a bare `host:port` (a gRPC interface). `None` for another
/// scheme or no port.
fn authority_of(url: &str) -> Option<(&str, &str, bool)> {
    let (rest, had_scheme) = match url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
    {
        Some(r) => (r, true),
        None if url.contains("://") => return None,
        None => (url, false),
    };
    let (authority, tail) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    has_port(authority).then_some((authority, tail, had_scheme))
}

/// `host:port` or `[v6]:port` with a numeric port.
fn has_port(authority: &str) -> bool {
    let port = match authority.strip_prefix('[') {
        Some(rest) => rest.split_once("]:").map(|(_, p)| p),
        None => authority
            .rsplit_once(':')
            .and_then(|(host, p)| (!host.is_empty()).then_some(p)),
    };
    port.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// The origin a plain interface URL names: the `host:port` of `http://host:port/...` or of a
/// bare `host:port` (a gRPC interface). `None` for TLS (`https://`: the proxy speaks plain HTTP
/// and h2c only) and anything else.
pub fn plain_origin(url: &str) -> Option<&str> {
    if url.starts_with("https://") {
        return None;
    }
    authority_of(url).map(|(a, _, _)| a)
}

/// Rewrite `url` to the proxy: `http(s)://UP/path` becomes `http://PROXY/path` and a bare `UP`
/// (a gRPC interface) becomes `PROXY`, where `route(UP)` is `Some(PROXY)`. `None` when the
/// URL's origin has no route.
pub fn rewrite_url(url: &str, route: impl Fn(&str) -> Option<String>) -> Option<String> {
    let (authority, tail, had_scheme) = authority_of(url)?;
    let proxy = route(authority)?;
    Some(if had_scheme {
        format!("http://{proxy}{tail}")
    } else {
        format!("{proxy}{tail}")
    })
}

/// Every interface URL of a card (1.0 or 0.3 shape).
pub fn interface_urls(card: &Value) -> Vec<&str> {
    let mut out = Vec::new();
    for key in INTERFACE_LISTS {
        if let Some(Value::Array(list)) = card.get(key) {
            out.extend(
                list.iter()
                    .filter_map(|i| i.get("url").and_then(Value::as_str)),
            );
        }
    }
    out.extend(card.get("url").and_then(Value::as_str));
    out
}

/// The card fields holding lists of interfaces.
const INTERFACE_LISTS: [&str; 3] = [
    "supportedInterfaces",
    "supported_interfaces",
    "additionalInterfaces",
];

/// Rewrite a card (1.0 or 0.3 shape) in place by `route` (see [`rewrite_url`]); returns the
/// interface URLs left alone (no route: not proxied).
pub fn rewrite_card(card: &mut Value, route: impl Fn(&str) -> Option<String>) -> Vec<String> {
    let mut others = Vec::new();
    let mut fix = |u: &mut Value| {
        if let Some(s) = u.as_str() {
            match rewrite_url(s, &route) {
                Some(n) => *u = Value::String(n),
                None => others.push(s.to_string()),
            }
        }
    };
    for key in INTERFACE_LISTS {
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

    fn route(a: &str) -> Option<String> {
        match a {
            "127.0.0.1:9000" => Some("127.0.0.1:7".into()),
            "127.0.0.1:9001" => Some("127.0.0.1:8".into()),
            _ => None,
        }
    }

    #[test]
    fn interfaces_at_a_routed_origin_point_at_its_proxy() {
        let mut card = json!({
            "name": "a",
            "supportedInterfaces": [
                {"url": "http://127.0.0.1:9000/a2a", "protocolBinding": "JSONRPC"},
                {"url": "127.0.0.1:9001", "protocolBinding": "GRPC"},
                {"url": "http://other:1/rest", "protocolBinding": "HTTP+JSON"}
            ],
            "url": "http://127.0.0.1:9000/a2a",
            "additionalInterfaces": [{"url": "http://127.0.0.1:9000/v03", "transport": "JSONRPC"}],
            "provider": {"url": "http://127.0.0.1:9000/about"}
        });
        let others = rewrite_card(&mut card, route);
        assert_eq!(
            card["supportedInterfaces"][0]["url"],
            "http://127.0.0.1:7/a2a"
        );
        // A gRPC interface on a port of its own: its own proxy.
        assert_eq!(card["supportedInterfaces"][1]["url"], "127.0.0.1:8");
        assert_eq!(card["supportedInterfaces"][2]["url"], "http://other:1/rest");
        assert_eq!(card["url"], "http://127.0.0.1:7/a2a");
        assert_eq!(
            card["additionalInterfaces"][0]["url"],
            "http://127.0.0.1:7/v03"
        );
        // Not an interface: left as it is.
        assert_eq!(card["provider"]["url"], "http://127.0.0.1:9000/about");
        assert_eq!(others, vec!["http://other:1/rest".to_string()]);
        assert_eq!(rewrite_url("http://127.0.0.10:9000/x", route), None);
    }

    #[test]
    fn plain_origins_are_http_or_bare_host_port() {
        assert_eq!(plain_origin("http://127.0.0.1:9/a2a"), Some("127.0.0.1:9"));
        assert_eq!(plain_origin("127.0.0.1:9"), Some("127.0.0.1:9"));
        assert_eq!(plain_origin("[::1]:9"), Some("[::1]:9"));
        assert_eq!(plain_origin("https://127.0.0.1:9/a2a"), None);
        assert_eq!(plain_origin("grpc://127.0.0.1:9"), None);
        assert_eq!(plain_origin("http://host/a2a"), None);
        assert_eq!(plain_origin("unix:/x"), None);
        assert_eq!(plain_origin("[::1]"), None);
        assert_eq!(plain_origin("host:"), None);
        let card = json!({
            "supportedInterfaces": [{"url": "http://a:1/x"}, {"url": "b:2"}],
            "url": "http://a:1/x"
        });
        assert_eq!(
            interface_urls(&card),
            vec!["http://a:1/x", "b:2", "http://a:1/x"]
        );
    }
}
