//! The commands that stand up a network until Ctrl-C or SIGTERM: `serve` (the mock network of
//! one case, for reproducing by hand) and `record` (recording proxies in front of real
//! upstream agents).

use a2a_driver_contract::HarnessExitCode;
use a2a_harness_core::scenario::Scenario;
use anyhow::Context;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use tokio::signal::unix::{SignalKind, signal as unix_signal};

/// `serve`: the network of case `case` (with the network seed `run --seed seed` gives it)
/// until Ctrl-C or SIGTERM; then its journal to `journal`. Its card URLs and a banner are
/// printed on stdout first.
pub fn serve(
    cat: &[Scenario],
    case: &str,
    seed: u64,
    journal: Option<&Path>,
) -> anyhow::Result<HarnessExitCode> {
    let s = cat
        .iter()
        .find(|s| s.id == case)
        .with_context(|| format!("no case {case:?} (see `a2a-harness list`)"))?;
    if let Some(j) = journal {
        // Unwritable: said now, not after the session.
        std::fs::File::create(j).with_context(|| format!("--journal {}", j.display()))?;
    }
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async move {
        // The same network as `run --seed N` gives this case.
        let mut spec = s.network.clone();
        let case_seed = spec.seed;
        spec.seed ^= seed;
        let net = a2a_mock_agents::Network::start(spec.clone()).await?;
        // Listening before the banner, so that a signal right after it is caught.
        let mut int = unix_signal(SignalKind::interrupt())?;
        let mut term = unix_signal(SignalKind::terminate())?;
        let mut out = std::io::stdout().lock();
        for n in net.names() {
            writeln!(out, "{n}\t{}", net.card_url(n).unwrap_or_default())?;
        }
        writeln!(
            out,
            "serving case {} with network seed {} (the case's {case_seed} XOR --seed {seed}); Ctrl-C to stop{}",
            s.id,
            spec.seed,
            journal
                .map(|j| format!(" (journal -> {})", j.display()))
                .unwrap_or_default()
        )?;
        out.flush()?;
        drop(out);
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
        if let Some(j) = journal {
            let f = std::fs::File::create(j).with_context(|| format!("--journal {}", j.display()))?;
            let mut w = std::io::BufWriter::new(f);
            net.journal()
                .write_jsonl(&mut w)
                .and_then(|()| w.flush())
                .with_context(|| format!("writing the journal to {}", j.display()))?;
        }
        net.shutdown().await;
        Ok::<_, anyhow::Error>(HarnessExitCode::Success)
    })
}

/// What `record` was asked for (its command-line options).
#[derive(Debug, Clone)]
pub struct RecordSettings {
    /// The upstream agents: each an origin (`http://host:port`) or a card URL.
    pub upstream: Vec<String>,
    /// Where to listen for the upstream of the same position (default `127.0.0.1:0`).
    pub listen: Vec<SocketAddr>,
    /// The output directory (the journal is `DIR/journal.jsonl`).
    pub out: PathBuf,
    /// Payload paths redacted in every recorded body.
    pub redact: Vec<a2a_harness_record::record::RedactPath>,
    /// Strings longer than this are recorded as length + sha256 + their first bytes.
    pub max_inline_bytes: usize,
    /// Artifact content recorded whole per artifact.
    pub max_artifact_bytes: u64,
    /// Artifact content recorded whole over the whole recording.
    pub max_recorded_artifact_bytes: u64,
    /// Record every string whole.
    pub keep_bytes: bool,
    /// Longest wait for an upstream's answer, in seconds (at least 1).
    pub upstream_timeout_s: u64,
}

impl RecordSettings {
    /// The upstreams with their listen addresses and the recorder's options; an error when
    /// there are more listen addresses than upstreams.
    pub fn options(
        self,
    ) -> anyhow::Result<(
        Vec<a2a_harness_record::record::UpstreamSpec>,
        a2a_harness_record::record::RecordOptions,
    )> {
        use a2a_harness_record::record::{RecordOptions, UpstreamSpec};
        if self.listen.len() > self.upstream.len() {
            anyhow::bail!(
                "{} --listen addresses for {} --upstream URLs: give at most one each",
                self.listen.len(),
                self.upstream.len()
            );
        }
        let any = SocketAddr::from(([127, 0, 0, 1], 0));
        let upstreams: Vec<UpstreamSpec> = self
            .upstream
            .iter()
            .enumerate()
            .map(|(i, url)| UpstreamSpec {
                url: url.clone(),
                listen: self.listen.get(i).copied().unwrap_or(any),
            })
            .collect();
        let mut opts = RecordOptions::new(&self.out);
        opts.redact = self.redact;
        opts.max_inline_bytes = self.max_inline_bytes;
        opts.keep_bytes = self.keep_bytes;
        opts.max_artifact_bytes = self.max_artifact_bytes;
        opts.max_recorded_artifact_bytes = self.max_recorded_artifact_bytes;
        opts.bounds.upstream = std::time::Duration::from_secs(self.upstream_timeout_s.max(1));
        Ok((upstreams, opts))
    }
}

/// `record`: the recording proxies until Ctrl-C or SIGTERM; their card URLs on stdout first,
/// the number of entries written last.
pub fn record(settings: RecordSettings) -> anyhow::Result<HarnessExitCode> {
    use a2a_harness_record::record::Recorder;
    let (upstreams, opts) = settings.options()?;
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async move {
        let mut int = unix_signal(SignalKind::interrupt())?;
        let mut term = unix_signal(SignalKind::terminate())?;
        let rec = Recorder::start(&upstreams, opts).await?;
        let mut out = std::io::stdout().lock();
        for a in rec.agents() {
            writeln!(
                out,
                "{}\t{}\t(upstream {})",
                a.name,
                a.card_url(),
                a.upstream
            )?;
            for (origin, listen) in &a.origins {
                writeln!(
                    out,
                    "{}\t{listen}\t(upstream {origin}: a further origin of its card)",
                    a.name
                )?;
            }
        }
        writeln!(
            out,
            "recording to {}; Ctrl-C to stop",
            rec.journal().path().display()
        )?;
        out.flush()?;
        drop(out);
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
        let journal = rec.journal().clone();
        rec.shutdown().await;
        if let Some(e) = journal.write_error() {
            anyhow::bail!("writing the journal {}: {e}", journal.path().display());
        }
        println!("{} entries in {}", journal.len(), journal.path().display());
        Ok::<_, anyhow::Error>(HarnessExitCode::Success)
    })
}
