//! The three A2A 1.0 protocol bindings ([`Binding`]): the `protocolBinding` string an agent card
//! advertises for each, and the short name scripts and the command line use.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The `protocolBinding` of a JSON-RPC interface.
pub const BINDING_JSONRPC: &str = "JSONRPC";
/// The `protocolBinding` of an HTTP+JSON (REST) interface.
pub const BINDING_HTTP_JSON: &str = "HTTP+JSON";
/// The `protocolBinding` of a gRPC interface.
pub const BINDING_GRPC: &str = "GRPC";

/// A protocol binding of A2A 1.0 (specification §5, §9–§11).
///
/// ```
/// use a2a_protocol::Binding;
/// assert_eq!(Binding::from_protocol_binding("HTTP+JSON"), Some(Binding::Rest));
/// assert_eq!("grpc".parse::<Binding>().unwrap().protocol_binding(), "GRPC");
/// assert_eq!(Binding::JsonRpc.to_string(), "jsonrpc");
/// ```
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
pub enum Binding {
    /// JSON-RPC 2.0 over HTTP: one POST endpoint, SSE for streams.
    #[serde(rename = "jsonrpc")]
    JsonRpc,
    /// HTTP+JSON: an HTTP method and path per operation, SSE of bare `StreamResponse`s.
    #[serde(rename = "rest")]
    Rest,
    /// gRPC: `lf.a2a.v1.A2AService` over HTTP/2.
    #[serde(rename = "grpc")]
    Grpc,
}

impl Binding {
    /// Every binding, in the order the specification lists them.
    pub const ALL: [Binding; 3] = [Binding::JsonRpc, Binding::Rest, Binding::Grpc];

    /// The `protocolBinding` value of the card (`JSONRPC`, `HTTP+JSON`, `GRPC`).
    pub const fn protocol_binding(self) -> &'static str {
        match self {
            Binding::JsonRpc => BINDING_JSONRPC,
            Binding::Rest => BINDING_HTTP_JSON,
            Binding::Grpc => BINDING_GRPC,
        }
    }

    /// The binding a card's `protocolBinding` names (ASCII case ignored: the specification does
    /// not say whether matching is exact), or `None` for a custom binding.
    pub fn from_protocol_binding(s: &str) -> Option<Self> {
        Binding::ALL
            .into_iter()
            .find(|b| b.protocol_binding().eq_ignore_ascii_case(s.trim()))
    }

    /// The short name used in scripts, case ids and on the command line.
    pub const fn short_name(self) -> &'static str {
        match self {
            Binding::JsonRpc => "jsonrpc",
            Binding::Rest => "rest",
            Binding::Grpc => "grpc",
        }
    }
}

impl fmt::Display for Binding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.short_name())
    }
}

/// A binding name that is none of `jsonrpc`, `rest` (or `http+json`) and `grpc`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown binding {0:?}: expected jsonrpc, rest or grpc")]
pub struct UnknownBinding(pub String);

impl FromStr for Binding {
    type Err = UnknownBinding;

    /// A short name (`jsonrpc`, `rest`, `grpc`) or a `protocolBinding` value.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Binding::ALL
            .into_iter()
            .find(|b| b.short_name().eq_ignore_ascii_case(s.trim()))
            .or_else(|| Binding::from_protocol_binding(s))
            .ok_or_else(|| UnknownBinding(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for b in Binding::ALL {
            assert_eq!(b.short_name().parse::<Binding>(), Ok(b));
            assert_eq!(b.protocol_binding().parse::<Binding>(), Ok(b));
            assert_eq!(
                Binding::from_protocol_binding(b.protocol_binding()),
                Some(b)
            );
            let json = serde_json::to_string(&b).unwrap();
            assert_eq!(json, format!("\"{}\"", b.short_name()));
        }
        assert_eq!(Binding::from_protocol_binding("grpc"), Some(Binding::Grpc));
        assert_eq!(
            Binding::from_protocol_binding("https://example.com/custom"),
            None
        );
        assert!("soap".parse::<Binding>().is_err());
    }
}
