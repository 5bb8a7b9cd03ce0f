//! From a component file to a linked, ready plugin: reading it, checking its pin, compiling (or
//! loading from the cache), and linking its imports to what the sandbox provides; and, for
//! `palisade inspect`, what the sandbox gives for each import.

use anyhow::Result;
use sha2::Digest as _;
use wasmtime::Engine;
use wasmtime::component::types::ComponentItem;
use wasmtime::component::{Component, HasSelf, InstancePre, Linker, ResourceType};

use super::bindings;
use super::generic::docs::PackageDocs;
use super::store::StoreState;
use crate::{AccessMode, CompileBounds, CompileCache, LoadError, PluginSpec, RootsAccess};

/// Reads the component of `spec`, checks it against its pinned SHA-256, composes it with the
/// components it links, compiles the result (or loads it from the cache) and links it.
pub(super) fn prepare(
    engine: &Engine,
    cache: &CompileCache,
    spec: &PluginSpec,
) -> Result<Prepared, LoadError> {
    let name = spec.name.as_str();
    let path = spec.path.as_path();
    let bounds = spec.compile_bounds;
    let wasm = read_pinned(name, path, spec.sha256, bounds)?;
    let wasm = if spec.links.is_empty() {
        wasm
    } else {
        let mut plugs = Vec::new();
        for link in &spec.links {
            let bytes = read_pinned(&link.name, &link.path, link.sha256, bounds)?;
            plugs.push((link.name.as_str(), bytes));
        }
        super::compose::compose(&wasm, &plugs).map_err(|e| LoadError::Compose {
            plugin: name.to_string(),
            links: spec.links.iter().map(|l| l.name.clone()).collect(),
            source: e.into(),
        })?
    };
    if let Some(why) = not_a_component(&wasm) {
        return Err(LoadError::NotAComponentFile {
            plugin: name.to_string(),
            path: path.to_path_buf(),
            why,
        });
    }
    check_bounds(name, path, &wasm, bounds)?;
    let wasm_sha256: [u8; 32] = sha2::Sha256::digest(&wasm).into();
    let component =
        cache
            .load(engine, &wasm, &wasm_sha256, name)
            .map_err(|e| LoadError::NotAComponent {
                plugin: name.to_string(),
                path: path.to_path_buf(),
                source: e.into(),
            })?;
    let pre = link(engine, &component, spec).map_err(|e| LoadError::Link {
        plugin: name.to_string(),
        source: e.into(),
    })?;
    Ok(Prepared {
        wasm_sha256,
        pre,
        docs: PackageDocs::read(&wasm),
    })
}

/// Why `wasm` is plainly no component, in one line: the parser's own error for these dumps the
/// bytes it expected.
fn not_a_component(wasm: &[u8]) -> Option<&'static str> {
    const MAGIC: &[u8] = b"\0asm";
    const CORE_MODULE: [u8; 4] = [1, 0, 0, 0];
    if !wasm.starts_with(MAGIC) {
        return Some(
            "it does not start with WebAssembly's magic bytes (\\0asm); is it the right file?",
        );
    }
    if wasm.get(4..8) == Some(&CORE_MODULE[..]) {
        return Some(
            "it is a core WebAssembly module; build it for wasm32-wasip2, or make a component of \
             it with `wasm-tools component new`",
        );
    }
    None
}

/// The bytes of the component file at `path`, checked against the `pinned` SHA-256.
fn read_pinned(
    name: &str,
    path: &std::path::Path,
    pinned: Option<[u8; 32]>,
    bounds: CompileBounds,
) -> Result<Vec<u8>, LoadError> {
    let unreadable = |source| LoadError::Read {
        plugin: name.to_string(),
        path: path.to_path_buf(),
        source,
    };
    // Refused before it is read: a huge file costs memory to hold too.
    let size = std::fs::metadata(path).map_err(unreadable)?.len();
    if size > bounds.max_bytes {
        return Err(too_large(name, path, size_over(size, bounds)));
    }
    let wasm = std::fs::read(path).map_err(unreadable)?;
    if let Some(expected) = pinned {
        let actual: [u8; 32] = sha2::Sha256::digest(&wasm).into();
        if actual != expected {
            return Err(LoadError::NotPinned {
                plugin: name.to_string(),
                path: path.to_path_buf(),
                actual: hex::encode(actual),
                pinned: hex::encode(expected),
            });
        }
    }
    Ok(wasm)
}

/// Refuses a component (composed with its links) over `bounds`: its bytes, then its functions,
/// counted from the code sections' headers without decoding a body.
fn check_bounds(
    name: &str,
    path: &std::path::Path,
    wasm: &[u8],
    bounds: CompileBounds,
) -> Result<(), LoadError> {
    let size = wasm.len() as u64;
    if size > bounds.max_bytes {
        return Err(too_large(name, path, size_over(size, bounds)));
    }
    let functions = function_count(wasm);
    if functions > bounds.max_functions {
        return Err(LoadError::TooLarge {
            plugin: name.to_string(),
            path: path.to_path_buf(),
            what: format!("{functions} functions, more than {}", bounds.max_functions),
            setting: "max_component_functions",
        });
    }
    Ok(())
}

/// Functions defined in every core module of `wasm`, nested ones included. A malformed
/// component counts as far as it parses: compiling it reports the error.
fn function_count(wasm: &[u8]) -> u64 {
    wasmparser::Parser::new(0)
        .parse_all(wasm)
        .map_while(Result::ok)
        .map(|payload| match payload {
            wasmparser::Payload::CodeSectionStart { count, .. } => u64::from(count),
            _ => 0,
        })
        .sum()
}

fn size_over(size: u64, bounds: CompileBounds) -> String {
    format!(
        "{:.1} MiB, more than {} MiB",
        size as f64 / (1 << 20) as f64,
        bounds.max_bytes >> 20
    )
}

fn too_large(name: &str, path: &std::path::Path, what: String) -> LoadError {
    LoadError::TooLarge {
        plugin: name.to_string(),
        path: path.to_path_buf(),
        what,
        setting: "max_component_mib",
    }
}

/// A component read, checked, compiled and linked.
pub(super) struct Prepared {
    /// SHA-256 of the file (of the composed component, for a plugin with links).
    pub wasm_sha256: [u8; 32],
    /// Linked, ready to instantiate.
    pub pre: InstancePre<StoreState>,
    /// The WIT's doc comments, if the component carries them.
    pub docs: Option<PackageDocs>,
}

/// Interface packages the linker provides. WASI's are matched by semver (a plugin built against
/// wasi 0.2.6 links to the host's 0.2.x); what each may do is decided by the call's WASI context.
const PROVIDED_PACKAGES: [&str; 8] = [
    "wasi:cli/",
    "wasi:clocks/",
    "wasi:filesystem/",
    "wasi:http/",
    "wasi:io/",
    "wasi:random/",
    "wasi:sockets/",
    "palisade:plugin/",
];

/// Whether the linker provides the import `name`: a package matched by semver, or an interface
/// of a pre-release version, which only matches itself.
fn is_provided(name: &str, spec: &PluginSpec) -> bool {
    PROVIDED_PACKAGES.iter().any(|p| name.starts_with(p))
        || super::wasi_config::INTERFACES.contains(&name)
        || (spec.keyvalue.is_some() && super::keyvalue::INTERFACES.contains(&name))
}

/// A linker with WASI (denied by default through the context), the `host` import, and traps for
/// any other import: a plugin that imports something it was not granted still loads, and fails
/// only if it uses it.
fn link(
    engine: &Engine,
    component: &Component,
    spec: &PluginSpec,
) -> Result<InstancePre<StoreState>> {
    let mut linker = Linker::<StoreState>::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    super::wasi_guard::add_to_linker(&mut linker)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
    bindings::palisade::plugin::host::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)?;
    super::wasi_config::add_to_linker(&mut linker)?;
    if spec.keyvalue.is_some() {
        super::keyvalue::add_to_linker(&mut linker)?;
    }
    stub_unprovided_imports(&mut linker, engine, component, spec)?;
    Ok(linker.instantiate_pre(component)?)
}

/// A resource type standing in for the resources of an interface the host does not provide.
struct Unprovided;

/// Defines every import outside [`PROVIDED_PACKAGES`] as functions that trap with a message naming
/// them. (wasmtime's `define_unknown_imports_as_traps` looks names up exactly, so it would also
/// shadow WASI imports that only differ from ours in the patch version.)
fn stub_unprovided_imports(
    linker: &mut Linker<StoreState>,
    engine: &Engine,
    component: &Component,
    spec: &PluginSpec,
) -> Result<()> {
    let ty = component.component_type();
    let shared = shared_wasi_resources(engine, &ty);
    for (name, item) in ty.imports(engine) {
        if is_provided(name, spec) {
            continue;
        }
        match item.ty {
            ComponentItem::ComponentInstance(instance) => {
                let mut stub = linker.instance(name)?;
                for (export, export_item) in instance.exports(engine) {
                    let qualified = format!("{name}#{export}");
                    match export_item.ty {
                        ComponentItem::ComponentFunc(_) => stub.func_new(export, move |_, _, _, _| {
                            wasmtime::bail!("`{qualified}` is not available to this plugin: the host does not grant it")
                        })?,
                        // A resource the interface `use`s from wasi:io is the host's own type.
                        ComponentItem::Resource(resource) => stub.resource(
                            export,
                            shared
                                .iter()
                                .find(|(abstract_type, _)| *abstract_type == resource)
                                .map_or(ResourceType::host::<Unprovided>(), |(_, host)| *host),
                            |_, _| Ok(()),
                        )?,
                        _ => {}
                    }
                }
            }
            ComponentItem::ComponentFunc(_) => {
                let qualified = name.to_string();
                linker.root().func_new(name, move |_, _, _, _| {
                    wasmtime::bail!(
                        "`{qualified}` is not available to this plugin: the host does not grant it"
                    )
                })?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// The resources of the component's `wasi:io` imports, each with the host type that implements
/// it. An unprovided interface that `use`s one of them (a pollable, a stream) must be stubbed
/// with that same type, or the component does not link.
fn shared_wasi_resources(
    engine: &Engine,
    ty: &wasmtime::component::types::Component,
) -> Vec<(ResourceType, ResourceType)> {
    use wasmtime_wasi::p2::{DynInputStream, DynOutputStream, DynPollable, IoError};
    let mut shared = Vec::new();
    for (name, item) in ty.imports(engine) {
        let ComponentItem::ComponentInstance(instance) = item.ty else {
            continue;
        };
        let interface = name.split('@').next().unwrap_or(name);
        for (export, export_item) in instance.exports(engine) {
            let ComponentItem::Resource(resource) = export_item.ty else {
                continue;
            };
            let host = match (interface, export) {
                ("wasi:io/poll", "pollable") => ResourceType::host::<DynPollable>(),
                ("wasi:io/streams", "input-stream") => ResourceType::host::<DynInputStream>(),
                ("wasi:io/streams", "output-stream") => ResourceType::host::<DynOutputStream>(),
                ("wasi:io/error", "error") => ResourceType::host::<IoError>(),
                _ => continue,
            };
            shared.push((resource, host));
        }
    }
    shared
}

/// What the sandbox gives a plugin with `spec` for the import `name` (of type `item`).
pub fn import_status(
    engine: &Engine,
    name: &str,
    item: &ComponentItem,
    spec: &PluginSpec,
) -> String {
    // An interface imported only for its types (wasmcp's `mcp`, say) needs nothing.
    if let ComponentItem::ComponentInstance(instance) = item
        && !instance
            .exports(engine)
            .any(|(_, e)| matches!(e.ty, ComponentItem::ComponentFunc(_)))
    {
        return "types only: nothing to provide".into();
    }
    let package = name.split('/').next().unwrap_or(name);
    let list = |items: Vec<String>| {
        if items.is_empty() {
            "nothing granted".to_string()
        } else {
            items.join(", ")
        }
    };
    match package {
        "wasi:filesystem" => {
            let mut granted: Vec<String> = spec
                .dirs
                .iter()
                .map(|d| {
                    let mode = match d.mode {
                        AccessMode::ReadOnly => "read-only",
                        AccessMode::ReadWrite => "read-write",
                    };
                    format!("{} -> {} ({mode})", d.guest, d.host.display())
                })
                .collect();
            match spec.roots {
                RootsAccess::None => {}
                RootsAccess::ReadOnly => granted.push("the client's roots (read-only)".into()),
                RootsAccess::ReadWrite => granted.push("the client's roots (read-write)".into()),
            }
            format!("provided; granted: {}", list(granted))
        }
        "wasi:http" => format!(
            "provided; requests allowed to: {}{}",
            list(spec.network.iter().map(|h| h.text.clone()).collect()),
            if spec.ask {
                "; any other host: the user is asked (ask = true)"
            } else {
                ""
            }
        ),
        "wasi:sockets" => {
            "provided, every address denied (no raw network; HTTP goes through wasi:http)".into()
        }
        "wasi:cli" if name.starts_with("wasi:cli/environment") => format!(
            "provided; variables: {} (no arguments)",
            list(
                spec.env
                    .iter()
                    .map(|(k, _)| k.clone())
                    .chain(
                        spec.secrets
                            .iter()
                            .filter(|s| s.as_env)
                            .map(|s| format!("{} (secret)", s.name))
                    )
                    .collect()
            )
        ),
        "wasi:cli" if name.starts_with("wasi:cli/stdin") => "provided, empty".into(),
        "wasi:cli" if name.contains("/stdout") || name.contains("/stderr") => {
            "provided; written to the host log, tagged with the plugin's name".into()
        }
        "wasi:config" if is_provided(name, spec) => format!(
            "provided; keys: {}",
            list(
                spec.config
                    .iter()
                    .map(|(k, _)| k.clone())
                    .chain(spec.secrets.iter().map(|s| format!("{} (secret)", s.name)))
                    .collect()
            )
        ),
        "wasi:keyvalue" if super::keyvalue::INTERFACES.contains(&name) => match &spec.keyvalue {
            Some(grant) => format!(
                "provided; the plugin's own store {}, up to {} KiB",
                grant.path.display(),
                grant.max_bytes >> 10
            ),
            None => "NOT granted: the plugin loads, and a call that uses it fails (grant it with \
                     [plugins.NAME.keyvalue])"
                .into(),
        },
        _ if is_provided(name, spec) => "provided".into(),
        _ => "NOT provided: the plugin loads, and a call that uses it fails".into(),
    }
}
