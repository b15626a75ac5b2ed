//! The one adapter between A2A 0.3 peers and the A2A 1.0 wire format.
//!
//! Everything here works on [`serde_json::Value`], so it is independent of the typed 1.0 structs
//! and can translate payloads those structs would reject. It covers version negotiation
//! ([`negotiate`]), JSON-RPC method names, task states, roles, error names, and whole objects in
//! both directions ([`to_v1`] and [`to_v03`], selected by [`ObjectKind`]); the mapping follows
//! reference §1.5.
//!
//! Translation rules common to every object kind:
//!
//! * Keys the adapter does not know are copied unchanged (the receiving side should ignore
//!   them, §5.7). Keys 1.0 removed (`kind`, `final`, `capabilities.stateTransitionHistory`, the
//!   card's legacy transport keys) are dropped going to 1.0 and rebuilt going to 0.3.
//! * A `null` field of a translated object means "unset" in both versions and is dropped.
//! * `metadata`, timestamps, ids and base64 payloads pass through untouched.
//!
//! Known lossy cases (no 0.3 field exists): a text or data part's `mediaType`/`filename`; a
//! non-object data part, which 0.3 receives wrapped as `{"value": x}` (see [`to_v03`]); extra
//! `schemes` of a 0.3 push `authentication` (1.0 keeps the first); all but one OAuth flow (1.0's
//! `OAuthFlows` is a oneof); per-interface `protocolVersion` and `tenant` of an agent card.
//!
//! ```
//! use a2a_protocol::compat03::{to_v1, to_v03, ObjectKind};
//! use serde_json::json;
//!
//! let old = json!({"kind": "message", "messageId": "m-1", "role": "user",
//!                  "parts": [{"kind": "text", "text": "hi"}]});
//! let new = to_v1(ObjectKind::Message, &old)?;
//! assert_eq!(new, json!({"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}));
//! assert_eq!(to_v03(ObjectKind::Message, &new)?, old);
//! # Ok::<(), a2a_protocol::compat03::AdaptError>(())
//! ```
//!
//! Module map: [`negotiate`] and [`ProtocolVersion`] live in [`crate::version`] and method names
//! in [`crate::Method`]; both are re-exported here. The private submodules hold the state, role
//! and error-name tables (`names`), [`AdaptError`] (`errors`), the entry points (`objects`), the
//! shared walking helpers (`helpers`) and one file per object family (`message`, `task`,
//! `params`, `card`).

mod card;
mod errors;
mod helpers;
mod message;
mod methods;
mod names;
mod objects;
mod params;
mod task;

pub use crate::version::{
    ProtocolVersion, VERSION_HEADER, VERSION_NOT_SUPPORTED_CODE, VersionError, negotiate,
};
pub use errors::{AdaptError, AdaptErrorKind};
pub use methods::{method_to_v1, method_to_v03};
pub use names::{
    error_code_known_in_v03, error_name_to_v1, error_name_to_v03, is_final_state, role_to_v1,
    role_to_v03, state_to_v1, state_to_v03,
};
pub use objects::{ObjectKind, to_v1, to_v03};
