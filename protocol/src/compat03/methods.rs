//! JSON-RPC method names: thin 0.3 ⇔ 1.0 lookups over the one table, [`crate::Method`].

use crate::jsonrpc::Method;
use crate::version::ProtocolVersion;

/// The 1.0 method name for a 0.3 JSON-RPC method name (exact, case-sensitive match), so a
/// server can route 0.3 requests to its 1.0 handlers; `None` for anything else, including names
/// that are already 1.0. Same as [`Method::parse_any`] restricted to 0.3 names.
pub fn method_to_v1(name: &str) -> Option<&'static str> {
    match Method::parse_any(name) {
        Some((m, ProtocolVersion::V0_3)) => Some(m.as_str()),
        _ => None,
    }
}

/// The 0.3 JSON-RPC method name for a 1.0 method name, so a client can talk to a 0.3 peer;
/// `None` for unknown names and for `ListTasks`, which 0.3 offered only over gRPC/REST. Same as
/// [`Method::parse`] followed by [`Method::as_v03_str`].
pub fn method_to_v03(name: &str) -> Option<&'static str> {
    Method::parse(name).and_then(Method::as_v03_str)
}
