//! `palisade componentize`: a WASI preview-1 core module, as Go, clang and Zig write for
//! `wasm32-wasip1`, plus the world its bindings were generated from, to a component the host
//! loads. The world's types go in as the `component-type` section `wit-component` reads, and the
//! module's preview-1 imports are met by the reactor adapter of the WASI release the host is
//! built with (crate `wasi-preview1-component-adapter-provider`), so nothing else is needed: no
//! `wasm-tools`, no adapter file to download.

use std::path::{Path, PathBuf};

use wasi_preview1_component_adapter_provider::{
    WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME, WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
};
use wit_component::{ComponentEncoder, StringEncoding};
use wit_parser::{PackageId, Resolve};

use super::{AuthoringError, sdk_wit};

/// What to make a component of.
pub struct Request {
    /// The core module.
    pub module: PathBuf,
    /// Where the component goes.
    pub output: PathBuf,
    /// A WIT directory (with `deps/`) or file; the SDKs' bundled WIT when none.
    pub wit: Option<PathBuf>,
    /// The world, by name in the WIT's main package or fully qualified; `palisade:sdk/plugin`
    /// when none is given and `wit` is not.
    pub world: Option<String>,
}

/// Makes the component and writes it; returns its size in bytes.
pub fn componentize(request: &Request) -> Result<usize, AuthoringError> {
    let module = std::fs::read(&request.module).map_err(|source| AuthoringError::Read {
        path: request.module.clone(),
        source,
    })?;
    let component = encode(&request.module, module, request)?;
    std::fs::write(&request.output, &component).map_err(|source| AuthoringError::Write {
        path: request.output.clone(),
        source,
    })?;
    Ok(component.len())
}

fn encode(path: &Path, mut module: Vec<u8>, request: &Request) -> Result<Vec<u8>, AuthoringError> {
    check_core_module(path, &module)?;
    let (resolve, package) = match &request.wit {
        Some(wit) => {
            let mut resolve = Resolve::default();
            let (package, _) = resolve.push_path(wit).map_err(|e| AuthoringError::Wit {
                path: wit.clone(),
                why: format!("{e:#}"),
            })?;
            (resolve, package)
        }
        None => sdk_wit::resolve()?,
    };
    let world_name = match (&request.world, &request.wit) {
        (Some(world), _) => world.clone(),
        (None, None) => sdk_wit::DEFAULT_WORLD.to_string(),
        (None, Some(_)) => String::new(),
    };
    let world = select_world(&resolve, package, &world_name)?;
    let shown = resolve.worlds[world].name.clone();
    wit_component::embed_component_metadata(&mut module, &resolve, world, StringEncoding::UTF8)
        .map_err(|e| AuthoringError::World {
            world: shown.clone(),
            why: format!("{e:#}"),
        })?;
    let encoded = ComponentEncoder::default()
        .validate(true)
        .module(&module)
        .and_then(|encoder| {
            encoder.adapter(
                WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME,
                WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
            )
        })
        .and_then(|mut encoder| encoder.encode());
    encoded.map_err(|e| AuthoringError::Encode {
        path: path.to_path_buf(),
        world: shown,
        why: format!("{e:#}"),
    })
}

/// The world `name` (empty: the package's only one) of `package`, or a fully qualified one.
fn select_world(
    resolve: &Resolve,
    package: PackageId,
    name: &str,
) -> Result<wit_parser::WorldId, AuthoringError> {
    let world = (!name.is_empty()).then_some(name);
    resolve
        .select_world(&[package], world)
        .map_err(|e| AuthoringError::World {
            world: name.to_string(),
            why: format!("{e:#}"),
        })
}

/// A core module that is a library (a reactor), not a component and not a command.
fn check_core_module(path: &Path, bytes: &[u8]) -> Result<(), AuthoringError> {
    let not_a_module = |why: &str| AuthoringError::NotAModule {
        path: path.to_path_buf(),
        why: why.to_string(),
    };
    if bytes.len() < 8 || &bytes[..4] != b"\0asm" {
        return Err(not_a_module("it does not start with the WebAssembly magic"));
    }
    if bytes[4..8] == [0x0d, 0x00, 0x01, 0x00] {
        return Err(AuthoringError::AlreadyAComponent {
            path: path.to_path_buf(),
        });
    }
    for payload in wasmparser::Parser::new(0).parse_all(bytes) {
        let payload = payload.map_err(|e| not_a_module(&e.to_string()))?;
        if let wasmparser::Payload::ExportSection(exports) = payload {
            for export in exports {
                let export = export.map_err(|e| not_a_module(&e.to_string()))?;
                if export.name == "_start" {
                    return Err(AuthoringError::Command {
                        path: path.to_path_buf(),
                    });
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_wit_resolves_with_the_sdk_world() {
        let (resolve, package) = sdk_wit::resolve().unwrap();
        let world = select_world(&resolve, package, sdk_wit::DEFAULT_WORLD).unwrap();
        let world = &resolve.worlds[world];
        let names: Vec<String> = world
            .exports
            .keys()
            .map(|key| resolve.name_world_key(key))
            .collect();
        for export in ["tools", "resources", "prompts", "completion"] {
            let full = format!("palisade:plugin/{export}@0.2.0");
            assert!(names.contains(&full), "{full} missing from {names:?}");
        }
        let imports: Vec<String> = world
            .imports
            .keys()
            .map(|key| resolve.name_world_key(key))
            .collect();
        assert!(imports.contains(&"wasi:http/outgoing-handler@0.2.12".to_string()));
        assert!(imports.contains(&"wasi:config/store@0.2.0-draft".to_string()));
    }

    #[test]
    fn components_commands_and_other_files_are_refused_with_the_reason() {
        let path = Path::new("x.wasm");
        let component = [0, b'a', b's', b'm', 0x0d, 0, 1, 0];
        assert!(matches!(
            check_core_module(path, &component),
            Err(AuthoringError::AlreadyAComponent { .. })
        ));
        let error = check_core_module(path, b"hello").unwrap_err();
        assert!(error.to_string().contains("WebAssembly magic"), "{error}");
        let command = wat::parse_str(r#"(module (func (export "_start")))"#).unwrap();
        let error = check_core_module(path, &command).unwrap_err();
        assert!(error.to_string().contains("-buildmode=c-shared"), "{error}");
    }

    #[test]
    fn a_module_missing_an_export_of_the_world_names_it() {
        let module = wat::parse_str(r#"(module (memory (export "memory") 1))"#).unwrap();
        let request = Request {
            module: "empty.wasm".into(),
            output: "out.wasm".into(),
            wit: None,
            world: None,
        };
        let error = encode(Path::new("empty.wasm"), module, &request).unwrap_err();
        let text = error.to_string();
        assert!(text.contains("does not fit the world plugin"), "{text}");
        assert!(text.contains("list-tools"), "{text}");
    }
}
