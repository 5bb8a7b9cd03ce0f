//! Tools for plugin authors: `palisade componentize` (a WASI preview-1 core module to a
//! component) and `palisade new` (a plugin skeleton in any supported language).

pub mod componentize;
pub mod new;
pub mod sdk_wit;

use std::path::PathBuf;

/// What went wrong while making a component or a skeleton, said for the author.
#[derive(Debug, thiserror::Error)]
pub enum AuthoringError {
    /// A file could not be read.
    #[error("cannot read {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("cannot write {path}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The input is not a core module.
    #[error("{path} is not a WebAssembly module: {why}")]
    NotAModule {
        /// The file.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// The input is already a component.
    #[error(
        "{path} is already a component: serve it as it is (componentize takes the core module \
         a compiler writes for wasm32-wasip1)"
    )]
    AlreadyAComponent {
        /// The file.
        path: PathBuf,
    },
    /// The input is a command, not a library.
    #[error(
        "{path} is a command (it exports `_start`); a plugin is a library: build it as a reactor \
         (Go: -buildmode=c-shared; clang and zig: -mexec-model=reactor, and for zig -fno-entry)"
    )]
    Command {
        /// The file.
        path: PathBuf,
    },
    /// The WIT given does not parse or resolve.
    #[error("the WIT in {path}: {why}")]
    Wit {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// The world is not there, or cannot be embedded.
    #[error("no world {world:?}: {why}")]
    World {
        /// The world asked for.
        world: String,
        /// Why.
        why: String,
    },
    /// The module does not match the world.
    #[error(
        "{path} does not fit the world {world}: {why}\nhow to fix: build it against the bindings \
         generated from that world (the SDK's), or name the world it was built for with --world"
    )]
    Encode {
        /// The module.
        path: PathBuf,
        /// The world.
        world: String,
        /// What wit-component said.
        why: String,
    },
    /// The WIT carried in the binary does not resolve: a bug.
    #[error("the WIT bundled in palisade does not parse (a bug): {0}")]
    BundledWit(String),
    /// `palisade new` cannot write the skeleton.
    #[error("{0}")]
    New(String),
}
