//! The docs match the CLI: every `a2a-harness` command line shown in the README, the CI recipes
//! and the example adapters' READMEs parses (subcommand, flags and their values), checked by
//! running it with `--help` appended (clap validates every argument before it prints help).

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The documents that show command lines to users.
const DOCS: &[&str] = &[
    "README.md",
    "docs/ci/README.md",
    "docs/ci/github-actions.yml",
    "examples/python-delegator/README.md",
    "examples/ts-delegator/README.md",
];

/// The `a2a-harness ...` command lines of a document, joined across shell `\` continuations and
/// YAML folded blocks, with CI variables given example values.
fn command_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        let Some(at) = line.find("a2a-harness ") else {
            continue;
        };
        let before = &line[..at];
        // A command, not prose: at the start of the line, after a prompt, `run:`, `&&`, a binary
        // path (`target/release/`) or as the image of `docker run`.
        let starts_command = before.trim().is_empty()
            || before.trim_end().ends_with("run:")
            || before.trim_end().ends_with("&&")
            || before.ends_with('/')
            || before.trim_end().ends_with('$')
            || before.trim_start().starts_with("docker run ");
        if !starts_command || before.contains('`') || before.contains('#') {
            continue;
        }
        let mut cmd = line[at + "a2a-harness ".len()..].to_string();
        // A YAML folded block (`- run: >` then indented lines) or `\` continuations.
        while cmd.trim_end().ends_with('\\') {
            cmd = cmd.trim_end().trim_end_matches('\\').to_string();
            if i < lines.len() {
                cmd.push(' ');
                cmd.push_str(lines[i].trim());
                i += 1;
            }
        }
        out.push(cmd);
    }
    // YAML folded blocks: `- run: >` followed by a more indented `a2a-harness` first line.
    let mut j = 0;
    while j < lines.len() {
        if lines[j].trim_end().ends_with("run: >") && j + 1 < lines.len() {
            let first = lines[j + 1].trim();
            if let Some(rest) = first.strip_prefix("a2a-harness ") {
                let indent = lines[j + 1].len() - lines[j + 1].trim_start().len();
                let mut cmd = rest.to_string();
                let mut k = j + 2;
                while k < lines.len()
                    && lines[k].len() - lines[k].trim_start().len() >= indent
                    && !lines[k].trim().is_empty()
                {
                    cmd.push(' ');
                    cmd.push_str(lines[k].trim());
                    k += 1;
                }
                // The folded block's first line was also seen above alone: replace it.
                out.retain(|c| c != rest);
                out.push(cmd);
                j = k;
                continue;
            }
        }
        j += 1;
    }
    out.into_iter()
        .map(|c| {
            c.replace("${{ matrix.shard }}", "1")
                .replace("$SHARDS", "4")
                .replace("\"$KNOWN_FAILING\"", "known-failing.txt")
                .split(" # ")
                .next()
                .unwrap_or_default()
                .split(" | ")
                .next()
                .unwrap_or_default()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

#[test]
fn every_documented_command_line_parses() {
    let bin = env!("CARGO_BIN_EXE_a2a-harness");
    let mut checked = 0;
    let mut broken = Vec::new();
    for doc in DOCS {
        let path = repo().join(doc);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for line in command_lines(&text) {
            let mut args = match shell_words::split(&line) {
                Ok(a) => a,
                Err(e) => {
                    broken.push(format!(
                        "{doc}: `a2a-harness {line}`: not a shell line ({e})"
                    ));
                    continue;
                }
            };
            // Globs a shell would expand (report merge shard-*): any path parses.
            for a in &mut args {
                if a.contains('*') {
                    *a = a.replace('*', "1");
                }
            }
            args.push("--help".into());
            let out = Command::new(bin)
                .args(&args)
                .output()
                .unwrap_or_else(|e| panic!("running {bin}: {e}"));
            checked += 1;
            if !out.status.success() {
                broken.push(format!(
                    "{doc}: `a2a-harness {line}`: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "documented command lines the CLI rejects:\n{}",
        broken.join("\n")
    );
    assert!(
        checked >= 10,
        "only {checked} command lines found in the docs: the extraction is broken"
    );
}

#[test]
fn extraction_finds_commands_and_skips_prose() {
    let text = "Run `a2a-harness run` in prose.\n\
                ```sh\n\
                target/release/a2a-harness run --case 'x.*' --seed 7   # comment\n\
                a2a-harness explain DLG-SEND-02 | head\n\
                docker run --rm a2a-harness run \\\n  --out /work/r\n\
                ```\n\
                      - run: >\n\
                          a2a-harness run\n\
                          --partition hash:${{ matrix.shard }}/$SHARDS\n";
    let got = command_lines(text);
    assert_eq!(
        got,
        vec![
            "run --case 'x.*' --seed 7".to_string(),
            "explain DLG-SEND-02".to_string(),
            "run --out /work/r".to_string(),
            "run --partition hash:1/4".to_string(),
        ]
    );
}
