//! The mock agents' integration tests, one module per subsystem, linked as one test binary
//! (one link instead of one per file: the build spent about 2 minutes of CPU linking 22 of them).
//! nextest still runs every test in its own process.

mod bindings;
mod client_situations;
mod common;
mod delegation;
mod expectations;
mod faults;
mod foreign_push;
mod front_door;
mod grpc;
mod hardening;
mod http_surface;
mod interop;
mod large_artifacts;
mod literal_parts;
mod matching;
mod methods;
mod mock_memory;
mod reference_agent;
mod rest;
mod robustness;
mod scripts;
mod steps;
mod tls;
