//! Compiles `proto/a2a/a2a.proto` (and the vendored `google/rpc` status protos) without `protoc`:
//! `protox` parses them into a `FileDescriptorSet`, `tonic-prost-build` generates the prost
//! messages plus the tonic client and server, and `pbjson-build` generates ProtoJSON serde impls
//! for `lf.a2a.v1` so that prost <-> the crate's serde wire types is plain serde.

use std::path::PathBuf;

/// Well-known types: pbjson-types carries serde (ProtoJSON) impls for them. `Timestamp` is the
/// crate's own (`grpc::wkt`): pbjson-types writes `+00:00`, ProtoJSON requires `Z`.
const WKT: &[(&str, &str)] = &[
    (".google.protobuf.Struct", "::pbjson_types::Struct"),
    (".google.protobuf.Value", "::pbjson_types::Value"),
    (".google.protobuf.ListValue", "::pbjson_types::ListValue"),
    (".google.protobuf.NullValue", "::pbjson_types::NullValue"),
    (".google.protobuf.Any", "::pbjson_types::Any"),
    (".google.protobuf.Duration", "::pbjson_types::Duration"),
    (".google.protobuf.Timestamp", "crate::grpc::wkt::Timestamp"),
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = [
        "a2a/a2a.proto",
        "google/rpc/status.proto",
        "google/rpc/error_details.proto",
    ];
    println!("cargo:rerun-if-changed=proto");
    let mut compiler = protox::Compiler::new(["proto"])?;
    compiler.include_imports(true).include_source_info(false);
    compiler.open_files(files)?;
    let fds = compiler.file_descriptor_set();
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    // Unlike `fds.encode_to_vec()` this keeps extension options (`google.api.http`,
    // `field_behavior`). Embedded as `grpc::FILE_DESCRIPTOR_SET` for tests and reflection.
    let bytes = compiler.encode_file_descriptor_set();
    std::fs::write(out.join("a2a_descriptor.bin"), &bytes)?;

    let mut cfg = tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .build_transport(true)
        .compile_well_known_types(false);
    for (proto, rust) in WKT {
        cfg = cfg.extern_path(*proto, *rust);
    }
    cfg.compile_fds(fds)?;

    let mut json = pbjson_build::Builder::new();
    json.register_descriptors(&bytes)?;
    for (proto, rust) in WKT {
        json.extern_path(*proto, *rust);
    }
    json.build(&[".lf.a2a.v1"])?;
    let serde_rs = out.join("lf.a2a.v1.serde.rs");
    open_enums(&serde_rs)?;
    null_part_data(&serde_rs)
}

/// `Part.data` is a `google.protobuf.Value`, for which ProtoJSON `null` is the value `NullValue`,
/// not "unset" (as it is for every other field). pbjson reads `"data": null` as unset, which
/// leaves the part without content; read it as `Value { null_value }` like protobuf does.
fn null_part_data(path: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    const FROM: &str =
        "content__ = map_.next_value::<::std::option::Option<_>>()?.map(part::Content::Data)";
    const TO: &str = "content__ = Some(part::Content::Data(map_.next_value::<::std::option::Option<::pbjson_types::Value>>()?.unwrap_or(::pbjson_types::Value { kind: Some(::pbjson_types::value::Kind::NullValue(0)) })))";
    let src = std::fs::read_to_string(path)?;
    if src.matches(FROM).count() != 1 {
        return Err("pbjson output: Part.data deserialization not found".into());
    }
    std::fs::write(path, src.replace(FROM, TO))?;
    Ok(())
}

/// Proto3 enums are open, but pbjson refuses to serialize an enum field holding a number its enum
/// does not name ("Invalid variant"). Rewrite those sites to emit the bare number instead, as
/// protobuf's own `MessageToDict` does, so a peer's unknown `TaskState` reaches the conformance
/// checker instead of failing the conversion. Fails the build if pbjson's output shape changed.
fn open_enums(path: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    let src = std::fs::read_to_string(path)?;
    let mut out = String::with_capacity(src.len() + 1024);
    let mut lines = src.lines();
    let mut patched = 0;
    while let Some(line) = lines.next() {
        let Some(at) =
            line.find(".map_err(|_| serde::ser::Error::custom(format!(\"Invalid variant {}\", ")
        else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let field = line[at..]
            .rsplit_once(", ")
            .map(|(_, f)| f.trim_end_matches(")))?;"))
            .ok_or("unexpected pbjson enum serialization shape")?
            .to_string();
        let next = lines.next().ok_or("unexpected end of pbjson output")?;
        let name = next
            .trim()
            .strip_prefix("struct_ser.serialize_field(")
            .and_then(|r| r.strip_suffix(", &v)?;"))
            .ok_or("unexpected pbjson enum serialization shape")?;
        out.push_str(&line[..at]);
        out.push_str(";\n");
        out.push_str(&format!(
            "            match v {{ Ok(v) => struct_ser.serialize_field({name}, &v)?, Err(_) => struct_ser.serialize_field({name}, &{field})? }}\n"
        ));
        patched += 1;
    }
    if patched == 0 {
        return Err("pbjson output has no enum serialization site to patch".into());
    }
    std::fs::write(path, out)?;
    Ok(())
}
