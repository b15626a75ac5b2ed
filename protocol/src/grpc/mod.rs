//! The gRPC binding (A2A 1.0 §10): the generated protobuf types and tonic client/server ([`pb`]).

pub mod wkt;

/// The generated `lf.a2a.v1` protobuf messages, enums, and the tonic client and server.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod pb {
    tonic::include_proto!("lf.a2a.v1");
    include!(concat!(env!("OUT_DIR"), "/lf.a2a.v1.serde.rs"));
}
