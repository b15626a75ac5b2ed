//! [`Endpoint`]: where and how to call an agent (one interface of its card, its binding,
//! version, tenant and extensions) and the interfaces to fall back to.

use super::*;

/// Where and how to call an agent: one interface of its card, and the others to fall back to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The interface URL: the JSON-RPC endpoint, the HTTP+JSON base URL, or the gRPC authority
    /// (normalized to `http(s)://host:port`).
    pub url: String,
    /// Protocol version (0.3 through the compat adapter, JSON-RPC only).
    pub version: ProtocolVersion,
    /// Tenant to copy into every request, from the card's interface.
    pub tenant: Option<String>,
    /// The protocol binding of this interface.
    pub binding: Binding,
    /// The extensions activated on every request to this agent (`A2A-Extensions`, one
    /// comma-separated header line; gRPC: one `a2a-extensions` metadata entry): the extensions
    /// its card requires that this delegator supports.
    pub extensions: Vec<String>,
    /// The agent's other interfaces this client may use, in preference order (same version):
    /// tried, for the same call, when this one fails at the transport level before any answer.
    pub fallbacks: Vec<Endpoint>,
}

impl Endpoint {
    /// A JSON-RPC endpoint without fallbacks.
    pub fn jsonrpc(url: impl Into<String>, version: ProtocolVersion) -> Self {
        Endpoint {
            url: url.into(),
            version,
            tenant: None,
            binding: Binding::JsonRpc,
            extensions: Vec::new(),
            fallbacks: Vec::new(),
        }
    }

    /// This endpoint with `extensions` activated on it and on each of its fallbacks.
    pub fn with_extensions(mut self, extensions: Vec<String>) -> Self {
        for f in &mut self.fallbacks {
            f.extensions = extensions.clone();
        }
        self.extensions = extensions;
        self
    }

    /// The `A2A-Extensions` value: the activated extensions comma-separated (`None`: none).
    pub fn extensions_header(&self) -> Option<String> {
        (!self.extensions.is_empty()).then(|| self.extensions.join(","))
    }

    /// `binding url`, for messages and logs.
    pub fn label(&self) -> String {
        format!("{} {}", self.binding, self.url)
    }

    /// This interface and its fallbacks, in preference order (each without fallbacks).
    pub fn candidates(&self) -> Vec<Endpoint> {
        let mut first = self.clone();
        first.fallbacks = Vec::new();
        std::iter::once(first)
            .chain(self.fallbacks.iter().map(|f| {
                let mut f = f.clone();
                f.fallbacks = Vec::new();
                f
            }))
            .collect()
    }

    /// This endpoint with its plain-HTTP candidates left out (TLS required: §7.1), the first
    /// `https://` one first; an error naming the interfaces when none is `https://`.
    pub fn https_only(&self) -> Result<Endpoint, String> {
        let all = self.candidates();
        let (tls, plain): (Vec<Endpoint>, Vec<Endpoint>) =
            all.into_iter().partition(|e| e.url.starts_with("https://"));
        let mut it = tls.into_iter();
        let Some(mut first) = it.next() else {
            let urls: Vec<&str> = plain.iter().map(|e| e.url.as_str()).collect();
            return Err(format!(
                "no https interface (TLS is required: init.tls_roots); the card lists {}",
                urls.join(", ")
            ));
        };
        first.fallbacks = it.collect();
        Ok(first)
    }

    pub(super) fn memory_key(&self) -> String {
        format!("{}|{}", self.binding, self.url)
    }
}
