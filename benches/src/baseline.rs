//! The Python SDK baseline: `benches/python/sdk_consumer.py`, a consumer built on the official
//! `a2a-sdk` client, reading and hashing the same responses from a fresh network of the same
//! spec; it reports its own CPU time and peak RSS (`getrusage`).

use crate::run::RunSample;
use crate::workload::Workload;
use std::path::Path;

/// Run the Python consumer on the workload once.
pub async fn python_sdk(w: &Workload, seed: u64, python: &Path, script: &Path) -> RunSample {
    let _ = (w, seed, python, script);
    RunSample {
        failures: vec!["the python-sdk baseline is not implemented yet".into()],
        ..RunSample::default()
    }
}
