//! Components the tests make at run time: from WAT, and with the WIT's docs added.

use std::path::{Path, PathBuf};

use crate::paths::{plugin_path, repo_root, write_file};

/// The component of `tests/fixtures/NAME.wat`, written to `dir/NAME.wasm`.
pub fn wat_component(dir: &Path, name: &str) -> PathBuf {
    let source = repo_root().join(format!("tests/fixtures/{name}.wat"));
    let wasm = wat::parse_file(&source)
        .unwrap_or_else(|e| panic!("{} does not assemble: {e}", source.display()));
    let path = dir.join(format!("{name}.wasm"));
    write_file(&path, wasm);
    path
}

/// The built test plugin `plugin` with a `package-docs` section made from the WIT package in
/// `wit_dir` (relative to the repository), as tools that add docs to a built component do:
/// wit-bindgen does not keep doc comments. Written to `dir/NAME-docs.wasm`.
pub fn with_package_docs(dir: &Path, plugin: &str, wit_dir: &str) -> PathBuf {
    let mut resolve = wit_parser::Resolve::default();
    let (package, _) = resolve
        .push_dir(repo_root().join(wit_dir))
        .unwrap_or_else(|e| panic!("{wit_dir}: {e:#}"));
    let docs = wit_parser::PackageMetadata::extract(&resolve, package)
        .encode()
        .unwrap_or_else(|e| panic!("encoding the docs of {wit_dir}: {e:#}"));
    let mut wasm = std::fs::read(plugin_path(plugin)).unwrap_or_else(|e| panic!("{plugin}: {e}"));
    append_custom_section(&mut wasm, wit_parser::PackageMetadata::SECTION_NAME, &docs);
    let path = dir.join(format!("{plugin}-docs.wasm"));
    write_file(&path, wasm);
    path
}

/// Appends a custom section (id 0: a name, then the payload) to a wasm binary.
pub fn append_custom_section(wasm: &mut Vec<u8>, name: &str, payload: &[u8]) {
    let mut body = Vec::new();
    leb128(&mut body, name.len());
    body.extend_from_slice(name.as_bytes());
    body.extend_from_slice(payload);
    wasm.push(0);
    leb128(wasm, body.len());
    wasm.extend(body);
}

fn leb128(out: &mut Vec<u8>, mut value: usize) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}
