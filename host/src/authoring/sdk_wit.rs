//! The WIT the Go and C SDKs build against, carried in the binary so that `palisade
//! componentize` needs no checkout: the contract (`wit/`), the WASI packages the SDKs' HTTP and
//! secrets import, and the world that joins them (`sdk-guest/wit/sdk.wit`).

use wit_parser::{PackageId, Resolve, SourceMap};

use super::AuthoringError;

/// The world `componentize` builds when told no other: `palisade:sdk/plugin`.
pub const DEFAULT_WORLD: &str = "palisade:sdk/plugin";

/// The contract's files, one package.
const CONTRACT: &[(&str, &str)] = &[
    ("wit/types.wit", include_str!("../../../wit/types.wit")),
    ("wit/host.wit", include_str!("../../../wit/host.wit")),
    ("wit/tools.wit", include_str!("../../../wit/tools.wit")),
    (
        "wit/resources.wit",
        include_str!("../../../wit/resources.wit"),
    ),
    ("wit/prompts.wit", include_str!("../../../wit/prompts.wit")),
    (
        "wit/completion.wit",
        include_str!("../../../wit/completion.wit"),
    ),
    ("wit/worlds.wit", include_str!("../../../wit/worlds.wit")),
];

/// The WASI packages, dependencies first. The Python SDK ships the same files
/// (`palisade_sdk/wasi_wit`), which is where they are kept.
const WASI: &[(&str, &str)] = &[
    (
        "wasi/io.wit",
        include_str!("../../../sdk-guest/python/palisade_sdk/wasi_wit/deps/io.wit"),
    ),
    (
        "wasi/clocks.wit",
        include_str!("../../../sdk-guest/python/palisade_sdk/wasi_wit/deps/clocks.wit"),
    ),
    (
        "wasi/http.wit",
        include_str!("../../../sdk-guest/python/palisade_sdk/wasi_wit/deps/http.wit"),
    ),
    (
        "wasi/config.wit",
        include_str!("../../../sdk-guest/python/palisade_sdk/wasi_wit/deps/config.wit"),
    ),
];

const SDK_WORLD: (&str, &str) = (
    "sdk-guest/wit/sdk.wit",
    include_str!("../../../sdk-guest/wit/sdk.wit"),
);

/// Every package above, resolved; the id is `palisade:sdk`'s.
pub fn resolve() -> Result<(Resolve, PackageId), AuthoringError> {
    let mut resolve = Resolve::default();
    let bundled = |e: anyhow::Error| AuthoringError::BundledWit(format!("{e:#}"));
    for (path, text) in WASI {
        resolve.push_source(path, text).map_err(bundled)?;
    }
    let mut contract = SourceMap::default();
    for (path, text) in CONTRACT {
        contract.push_str(path, *text);
    }
    let group = contract
        .parse()
        .map_err(|(_, e)| AuthoringError::BundledWit(e.to_string()))?;
    resolve
        .push_group(group)
        .map_err(|e| AuthoringError::BundledWit(e.to_string()))?;
    let sdk = resolve
        .push_source(SDK_WORLD.0, SDK_WORLD.1)
        .map_err(bundled)?;
    Ok((resolve, sdk))
}

/// The files, for `palisade new` to write into a project that wants its own copy.
pub fn files() -> impl Iterator<Item = (&'static str, &'static str)> {
    CONTRACT
        .iter()
        .chain(WASI)
        .chain(std::iter::once(&SDK_WORLD))
        .copied()
}
