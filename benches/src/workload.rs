//! Workloads as data: one TOML file per workload in `benches/workloads/`, strict (unknown keys
//! rejected) with errors naming the file, line, column and field.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What part kind carries the artifact's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PartKind {
    /// `text` parts (printable ASCII).
    Text,
    /// `raw` parts (bytes, base64 in JSON).
    Raw,
    /// `data` parts (one JSON string value per chunk; the bytes are the JSON text).
    Data,
}

/// How the delegator observes the task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// `SendStreamingMessage` (the card declares streaming, the spec prefers it).
    Stream,
    /// `SendMessage` then `GetTask` polling (no streaming, no push on the card).
    Poll,
    /// `SendMessage` with a push config (no streaming on the card; webhook on).
    Push,
}

/// The A2A binding the agent serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum BindingKind {
    /// JSON-RPC 2.0 (default).
    #[default]
    Jsonrpc,
    /// HTTP+JSON.
    Rest,
    /// gRPC.
    Grpc,
}

impl BindingKind {
    /// The protocol crate's binding.
    pub fn binding(self) -> a2a_protocol::Binding {
        match self {
            BindingKind::Jsonrpc => a2a_protocol::Binding::JsonRpc,
            BindingKind::Rest => a2a_protocol::Binding::Rest,
            BindingKind::Grpc => a2a_protocol::Binding::Grpc,
        }
    }
}

/// Transport faults applied to every send of the workload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Faults {
    /// Wait this long before processing each send (added latency).
    #[serde(default)]
    pub latency_ms: Option<u64>,
    /// Send each response body at this many bytes per second.
    #[serde(default)]
    pub trickle_bytes_per_sec: Option<ByteSize>,
}

/// A byte count written as an integer or as a string with a unit: `"64KiB"`, `"4 MiB"`,
/// `"1GiB"`, `"512B"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct ByteSize(pub u64);

impl ByteSize {
    /// Parse `"64KiB"`-style text.
    pub fn parse(s: &str) -> Result<ByteSize, String> {
        let t = s.trim();
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let n: u64 = num
            .parse()
            .map_err(|_| format!("{s:?} is not a size such as 65536, \"64KiB\" or \"4MiB\""))?;
        let mult: u64 = match unit.trim() {
            "" | "B" => 1,
            "KiB" => 1 << 10,
            "MiB" => 1 << 20,
            "GiB" => 1 << 30,
            other => {
                return Err(format!(
                    "unknown size unit {other:?} (use B, KiB, MiB or GiB)"
                ));
            }
        };
        n.checked_mul(mult)
            .map(ByteSize)
            .ok_or_else(|| format!("{s:?} is too large"))
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(u64),
            S(String),
        }
        match Raw::deserialize(d)
            .map_err(|_| serde::de::Error::custom("expected a size: 65536 or \"64KiB\""))?
        {
            Raw::N(n) => Ok(ByteSize(n)),
            Raw::S(s) => ByteSize::parse(&s).map_err(serde::de::Error::custom),
        }
    }
}

fn one() -> u32 {
    1
}
fn default_chunk() -> ByteSize {
    ByteSize(64 * 1024)
}
fn default_limit() -> u64 {
    300
}

/// One benchmark workload (`benches/workloads/*.toml`).
///
/// ```
/// let w = a2a_benches::Workload::from_toml(
///     std::path::Path::new("w.toml"),
///     "name = \"tiny\"\nartifact_bytes = \"64KiB\"\nchunk_bytes = \"16KiB\"\n",
/// )
/// .unwrap();
/// assert_eq!(w.chunks_per_artifact(), 4);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// Unique name (used by `--workload` and in reports).
    pub name: String,
    /// What it measures, for reports.
    #[serde(default)]
    pub description: String,
    /// Bytes per artifact (rounded up to whole chunks).
    pub artifact_bytes: ByteSize,
    /// Bytes per chunk (one event each; default 64 KiB).
    #[serde(default = "default_chunk")]
    pub chunk_bytes: ByteSize,
    /// Part kind (default `text`).
    #[serde(default = "default_part")]
    pub part: PartKind,
    /// Artifacts per delegation (default 1).
    #[serde(default = "one")]
    pub artifacts: u32,
    /// Concurrent delegations through one delegator process (default 1).
    #[serde(default = "one")]
    pub parallel: u32,
    /// How the delegator observes the task (default `stream`).
    #[serde(default = "default_delivery")]
    pub delivery: Delivery,
    /// The binding the agent serves (default `jsonrpc`).
    #[serde(default)]
    pub binding: BindingKind,
    /// Transport faults.
    #[serde(default)]
    pub faults: Faults,
    /// Longest time one run (all its delegations) may take, seconds (default 300): a run
    /// past it is FAILED.
    #[serde(default = "default_limit")]
    pub time_limit_s: u64,
    /// Repetitions unless `--repeat` says otherwise (default 1).
    #[serde(default = "one")]
    pub repeat: u32,
    /// Heavy workloads (such as 10,000 delegations) run only with `--heavy`.
    #[serde(default)]
    pub heavy: bool,
    /// Where it was loaded from.
    #[serde(skip)]
    pub file: PathBuf,
}

fn default_part() -> PartKind {
    PartKind::Text
}
fn default_delivery() -> Delivery {
    Delivery::Stream
}

/// A workload file could not be read or is invalid.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// Reading failed.
    #[error("{file}: {source}")]
    Io {
        /// The file.
        file: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// TOML syntax or a field of the wrong type / unknown.
    #[error("{file}:{line}:{column}: {field}{message}")]
    Parse {
        /// The file.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The field path and ": ", or empty.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A value out of range.
    #[error("{file}: {field}: {message}")]
    Invalid {
        /// The file.
        file: PathBuf,
        /// The field.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// Two workloads share a name, or a requested name is unknown.
    #[error("{0}")]
    Selection(String),
}

impl Workload {
    /// Parse and check one workload.
    pub fn from_toml(file: &Path, text: &str) -> Result<Workload, WorkloadError> {
        let parse_error = |field: String, e: &toml::de::Error| {
            let (line, column) = e
                .span()
                .map_or((1, 1), |s| a2a_mock_agents::script::line_col(text, s.start));
            WorkloadError::Parse {
                file: file.to_path_buf(),
                line,
                column,
                field: if field.is_empty() || field == "." {
                    String::new()
                } else {
                    format!("{field}: ")
                },
                message: e.message().trim().to_string(),
            }
        };
        let de = toml::de::Deserializer::parse(text).map_err(|e| parse_error(String::new(), &e))?;
        let mut w: Workload = serde_path_to_error::deserialize(de)
            .map_err(|e| parse_error(e.path().to_string(), e.inner()))?;
        w.file = file.to_path_buf();
        w.validate()?;
        Ok(w)
    }

    /// Read one file.
    pub fn load(file: &Path) -> Result<Workload, WorkloadError> {
        let text = std::fs::read_to_string(file).map_err(|source| WorkloadError::Io {
            file: file.to_path_buf(),
            source,
        })?;
        Workload::from_toml(file, &text)
    }

    fn validate(&self) -> Result<(), WorkloadError> {
        let bad = |field: &str, message: String| WorkloadError::Invalid {
            file: self.file.clone(),
            field: field.to_string(),
            message,
        };
        if self.name.is_empty()
            || !self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            return Err(bad(
                "name",
                format!("{:?}: use letters, digits, '-', '_', '.'", self.name),
            ));
        }
        if self.chunk_bytes.0 == 0 || self.chunk_bytes.0 > 8 << 20 {
            return Err(bad("chunk_bytes", "must be 1 B ..= 8 MiB".into()));
        }
        if self.artifact_bytes.0 == 0 || self.artifact_bytes.0 > 4 << 30 {
            return Err(bad("artifact_bytes", "must be 1 B ..= 4 GiB".into()));
        }
        if self.artifacts == 0 || self.artifacts > 64 {
            return Err(bad("artifacts", "must be 1..=64".into()));
        }
        if self.parallel == 0 || self.parallel > 100_000 {
            return Err(bad("parallel", "must be 1..=100000".into()));
        }
        if self.repeat == 0 || self.repeat > 100 {
            return Err(bad("repeat", "must be 1..=100".into()));
        }
        if !(10..=3600).contains(&self.time_limit_s) {
            return Err(bad(
                "time_limit_s",
                "must be 10..=3600 (the driver contract's timeout_seconds range)".into(),
            ));
        }
        if self.part == PartKind::Data && self.total_bytes() > 256 << 20 {
            return Err(bad(
                "artifact_bytes",
                "data parts are literal in the script: at most 256 MiB in total".into(),
            ));
        }
        if self.faults.latency_ms.is_some() && self.faults.trickle_bytes_per_sec.is_some() {
            return Err(bad(
                "faults",
                "one fault at a time: latency_ms or trickle_bytes_per_sec".into(),
            ));
        }
        if self.faults.trickle_bytes_per_sec == Some(ByteSize(0)) {
            return Err(bad(
                "faults.trickle_bytes_per_sec",
                "must be at least 1".into(),
            ));
        }
        Ok(())
    }

    /// Chunks per artifact (the artifact size rounded up to whole chunks).
    pub fn chunks_per_artifact(&self) -> u64 {
        self.artifact_bytes.0.div_ceil(self.chunk_bytes.0)
    }

    /// Content bytes of one delegation (every artifact).
    pub fn delegation_bytes(&self) -> u64 {
        self.chunks_per_artifact() * self.chunk_bytes.0 * u64::from(self.artifacts)
    }

    /// Content bytes of one run (every delegation).
    pub fn total_bytes(&self) -> u64 {
        self.delegation_bytes() * u64::from(self.parallel)
    }

    /// The shrunken form `--quick` runs: at most 1 MiB per artifact in chunks of at most
    /// 16 KiB, at most 4 parallel delegations (50 for workloads of more than 100), once.
    pub fn quick(&self) -> Workload {
        let mut w = self.clone();
        w.artifact_bytes = ByteSize(w.artifact_bytes.0.min(1 << 20));
        w.chunk_bytes = ByteSize(w.chunk_bytes.0.min(16 << 10).min(w.artifact_bytes.0));
        w.parallel = if w.parallel > 100 {
            50
        } else {
            w.parallel.min(4)
        };
        w.repeat = 1;
        w.time_limit_s = w.time_limit_s.min(60);
        w
    }
}

/// Load workloads from a file or from every `*.toml` of a directory (sorted by file name);
/// names must be unique.
pub fn load_workloads(path: &Path) -> Result<Vec<Workload>, WorkloadError> {
    let io = |source| WorkloadError::Io {
        file: path.to_path_buf(),
        source,
    };
    let files: Vec<PathBuf> = if path.is_dir() {
        let mut v: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(io)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        v.sort();
        v
    } else {
        vec![path.to_path_buf()]
    };
    let mut out: Vec<Workload> = Vec::new();
    for f in files {
        let w = Workload::load(&f)?;
        if let Some(o) = out.iter().find(|o| o.name == w.name) {
            return Err(WorkloadError::Selection(format!(
                "{}: workload name {:?} is already used by {}",
                f.display(),
                w.name,
                o.file.display()
            )));
        }
        out.push(w);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(ByteSize::parse("64KiB"), Ok(ByteSize(65536)));
        assert_eq!(ByteSize::parse("4 MiB"), Ok(ByteSize(4 << 20)));
        assert_eq!(ByteSize::parse("12"), Ok(ByteSize(12)));
        assert!(ByteSize::parse("4MB").is_err());
        assert!(ByteSize::parse("x").is_err());
    }

    #[test]
    fn errors_name_file_line_column_and_field() {
        let text = "name = \"a\"\nartifact_bytes = \"1MiB\"\nparallel = \"two\"\n";
        let e = Workload::from_toml(Path::new("w.toml"), text)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("w.toml:3:12: parallel: "), "{e}");
        let e = Workload::from_toml(
            Path::new("w.toml"),
            "name = \"a\"\nartifact_bytes = 1\nbogus = 1\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("w.toml:3:1: "), "{e}");
        assert!(e.contains("bogus"), "{e}");
        let e = Workload::from_toml(
            Path::new("w.toml"),
            "name = \"a\"\nartifact_bytes = \"3XB\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("w.toml:2:18: artifact_bytes: "), "{e}");
    }
}
