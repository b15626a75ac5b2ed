//! Embeds the scenario catalog (`scenarios/**/*.toml`) in this library (so in the `a2a-harness`
//! binary, and in every other program built on it): generates
//! `$OUT_DIR/builtin_catalog.rs` with one `(path, include_str!(...))` entry per file, paths
//! relative to the workspace root (`scenarios/states/completed.toml`) so that errors name them;
//! and `BUILTIN_FILES`, the part files beside them (every file inside a `*.d` directory, such as
//! `scenarios/recorded/case.d/artifact-1.chunk-1.part-1.bin`), as bytes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>, parts: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let in_parts_dir = dir.extension().is_some_and(|x| x == "d");
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            collect(&p, out, parts)?;
        } else if in_parts_dir {
            parts.push(p);
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(p);
        }
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let root = manifest.join("..");
    let dir = root.join("scenarios");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files = Vec::new();
    let mut parts = Vec::new();
    if dir.is_dir() {
        collect(&dir, &mut files, &mut parts)?;
    } else {
        println!(
            "cargo:warning=no scenario catalog at {}: the binary embeds none (use --scenarios DIR)",
            dir.display()
        );
    }
    files.sort();
    parts.sort();
    let mut code = String::new();
    for (doc, name, ty, include, list) in [
        (
            "The embedded catalog: (path relative to the workspace root, file text).",
            "BUILTIN",
            "&str",
            "include_str",
            &files,
        ),
        (
            "The part files beside them: (path relative to the workspace root, bytes).",
            "BUILTIN_FILES",
            "&[u8]",
            "include_bytes",
            &parts,
        ),
    ] {
        writeln!(code, "/// {doc}\npub static {name}: &[(&str, {ty})] = &[")?;
        for f in list {
            println!("cargo:rerun-if-changed={}", f.display());
            let rel = f
                .strip_prefix(&root)
                .unwrap_or(f)
                .to_string_lossy()
                .replace('\\', "/");
            let abs = f.canonicalize()?;
            writeln!(
                code,
                "    ({rel:?}, {include}!({:?})),",
                abs.to_string_lossy()
            )?;
        }
        code.push_str("];\n");
    }
    let out = PathBuf::from(std::env::var("OUT_DIR")?).join("builtin_catalog.rs");
    std::fs::write(out, code)?;
    Ok(())
}
