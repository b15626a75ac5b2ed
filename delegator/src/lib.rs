//! Placeholder crate: filled by a later issue.
