//! The `a2a-harness` binary's integration tests, one module per subject, linked as one test
//! binary (one link instead of one per file). nextest still runs every test in its own process;
//! `.config/nextest.toml` groups the whole-catalog runs by module (`test(/^self_test::/)`, ...).
//!
//! One module alone: `cargo nextest run -p a2a-harness -E 'test(/^example_python::/)'`, or
//! `cargo test -p a2a-harness --test suite example_python::`.

mod adversaries;
mod catalog;
mod cli;
mod cli_console;
mod cli_errors;
mod cli_install;
mod cli_robust;
mod cli_select;
mod common;
mod crash;
mod crash_sweep;
mod determinism;
mod docs_commands;
mod example_python;
mod example_ts;
mod explore;
mod from_journal;
mod generate;
mod memory;
mod record;
mod record_sdk;
mod report_html;
mod report_junit;
mod report_merge;
mod report_summary;
mod report_support;
mod run;
mod security_loopback;
mod self_test;
mod tls;
