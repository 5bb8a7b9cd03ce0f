//! Why a plugin could not be loaded: each variant names the plugin and says what to do.

use std::path::PathBuf;

use super::call::CallError;
use crate::generic::{NameCollision, Skipped};

/// An error from a lower layer (wasmtime, the compile cache), its causes kept as its sources.
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why [`Plugin::load`](crate::Plugin::load) failed.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The component file cannot be read.
    #[error("plugin `{plugin}`: cannot read {}", path.display())]
    Read {
        /// The plugin's name.
        plugin: String,
        /// The component file.
        path: PathBuf,
        /// Why not.
        source: std::io::Error,
    },
    /// The file is not the one the operator pinned with `sha256`.
    #[error(
        "plugin `{plugin}`: {} has SHA-256 {actual}, but the configuration pins {pinned}; refusing \
         to load it (if this file is the one you trust, put its hash in plugins.{plugin}.sha256)",
        path.display()
    )]
    NotPinned {
        /// The plugin's name.
        plugin: String,
        /// The component file.
        path: PathBuf,
        /// The file's SHA-256, in hex.
        actual: String,
        /// The pinned SHA-256, in hex.
        pinned: String,
    },
    /// The file is no WebAssembly component at all (another file, or a core module).
    #[error("plugin `{plugin}`: {} is not a WebAssembly component: {why}", path.display())]
    NotAComponentFile {
        /// The plugin's name.
        plugin: String,
        /// The file.
        path: PathBuf,
        /// What it is instead, and what to do.
        why: &'static str,
    },
    /// The file is no WebAssembly component wasmtime can compile (or load from the cache).
    #[error(
        "plugin `{plugin}`: {} is not a valid WebAssembly component (build it with --target \
         wasm32-wasip2)",
        path.display()
    )]
    NotAComponent {
        /// The plugin's name.
        plugin: String,
        /// The component file.
        path: PathBuf,
        /// What the compiler or the cache said.
        source: Cause,
    },
    /// The component is larger than the server compiles ([`CompileBounds`](crate::CompileBounds)).
    #[error(
        "plugin `{plugin}`: {} is too large to compile: {what} ([server] {setting}; compiling \
         costs memory in proportion)",
        path.display()
    )]
    TooLarge {
        /// The plugin's name.
        plugin: String,
        /// The component file.
        path: PathBuf,
        /// What is over, and the limit.
        what: String,
        /// The setting that raises the limit.
        setting: &'static str,
    },
    /// A `ca_file` its HTTPS should trust cannot be used.
    #[error("plugin `{plugin}`: {source}")]
    Trust {
        /// The plugin's name.
        plugin: String,
        /// What is wrong with the file.
        source: crate::TrustError,
    },
    /// Its imports cannot be linked to what the host provides.
    #[error("plugin `{plugin}`: cannot link its imports")]
    Link {
        /// The plugin's name.
        plugin: String,
        /// What the linker said.
        source: Cause,
    },
    /// The component exports none of the `palisade:plugin` interfaces, nor any function a tool
    /// can be made of.
    #[error(
        "plugin `{plugin}`: {} exports no function a tool can be made of, and none of the \
         interfaces palisade:plugin/tools, resources, prompts or completion @0.2.0 (build it \
         against the WIT in wit/){}",
        path.display(),
        skipped.iter().map(|s| format!("\n  `{}` left out: {}", s.path, s.why)).collect::<String>()
    )]
    NoExports {
        /// The plugin's name.
        plugin: String,
        /// The component file.
        path: PathBuf,
        /// The exported functions that could not be tools, and why.
        skipped: Vec<Skipped>,
    },
    /// `http_handler = true` for a component that does not export `wasi:http/incoming-handler`
    /// (or that exports `palisade:plugin`, whose tools it would mix with).
    #[error(
        "plugin `{plugin}`: http_handler = true, but the component does not export \
         wasi:http/incoming-handler@0.2.x, or it exports palisade:plugin (whose tools are its own)"
    )]
    NoHttpHandler {
        /// The plugin's name.
        plugin: String,
    },
    /// The component exports `palisade:plugin` interfaces of another version than this host's:
    /// served as plain functions, its `list-tools` and `call-tool` would be tools themselves.
    #[error(
        "plugin `{plugin}`: it exports `{found}`, but this server serves palisade:plugin@{expected}\n\
         how to fix: rebuild the plugin against this server's wit/ (or its SDK {expected})"
    )]
    ContractVersion {
        /// The plugin's name.
        plugin: String,
        /// The interface it exports.
        found: String,
        /// The version this host serves.
        expected: &'static str,
    },
    /// The component exports a wasmcp tools interface the adapter does not know.
    #[error("plugin `{plugin}`: a wasmcp tools component the host cannot serve: {why}")]
    Wasmcp {
        /// The plugin's name.
        plugin: String,
        /// What is not as expected.
        why: String,
    },
    /// The plugin's key-value store cannot be read.
    #[error("plugin `{plugin}`: its key-value store")]
    KeyValue {
        /// The plugin's name.
        plugin: String,
        /// Why not.
        source: Cause,
    },
    /// The component could not be composed with the components it links.
    #[error("plugin `{plugin}`: cannot link {}", links.iter().map(|l| format!("`{l}`")).collect::<Vec<_>>().join(", "))]
    Compose {
        /// The plugin's name.
        plugin: String,
        /// The plugins it links.
        links: Vec<String>,
        /// Why not.
        #[source]
        source: Cause,
    },
    /// Two exported functions of a generic component would have the same tool name.
    #[error("plugin `{plugin}`: {collision}; rename one of the exports")]
    ToolNameCollision {
        /// The plugin's name.
        plugin: String,
        /// The two functions and the name.
        collision: NameCollision,
    },
    /// A directory grant reaches the compile cache, whose files the server runs as native code.
    #[error(
        "plugin `{plugin}`: its directory grant {} ({guest}) contains the compile cache {} (or \
         lies inside it): a plugin that can reach the cache could have native code run in the \
         server; grant another directory, or move the cache (--cache-dir)",
        host.display(),
        cache.display()
    )]
    GrantReachesCache {
        /// The plugin's name.
        plugin: String,
        /// The granted host directory.
        host: PathBuf,
        /// Where the plugin would see it.
        guest: String,
        /// The compile cache.
        cache: PathBuf,
    },
    /// Asking the plugin what it offers failed (it trapped, hit a limit, or answered an error).
    #[error("plugin `{plugin}`: listing what it offers failed: {}", crate::log_safe(&why.to_string()))]
    Listing {
        /// The plugin's name.
        plugin: String,
        /// What the call gave instead of its lists.
        why: CallError,
    },
    /// The loading task panicked.
    #[error("plugin `{plugin}`: loading it panicked")]
    Panicked {
        /// The plugin's name.
        plugin: String,
    },
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::{CompileCache, Plugin, PluginSpec, Runtime};

    /// Loads `file` (written first when `bytes` is given) as plugin `p`, pinned to `pinned`.
    async fn load(name: &str, bytes: Option<&[u8]>, pinned: Option<[u8; 32]>) -> LoadError {
        let dir = std::env::temp_dir().join(format!("palisade-load-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let runtime = Runtime::new(CompileCache::open(&dir.join("cache")).unwrap()).unwrap();
        let file = dir.join("p.wasm");
        if let Some(bytes) = bytes {
            std::fs::write(&file, bytes).unwrap();
        }
        let spec = PluginSpec {
            sha256: pinned,
            ..PluginSpec::new("p", file)
        };
        let error = Plugin::load(&runtime, spec).await.err().expect("refused");
        let _ = std::fs::remove_dir_all(&dir);
        error
    }

    /// The error and its causes, as the server's log prints them.
    fn chain(error: &LoadError) -> String {
        let mut text = error.to_string();
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            text.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        text
    }

    #[tokio::test]
    async fn a_missing_file_is_a_read_error_with_its_cause() {
        let error = load("missing", None, None).await;
        assert!(
            matches!(&error, LoadError::Read { plugin, .. } if plugin == "p"),
            "{error:?}"
        );
        let text = chain(&error);
        assert!(text.starts_with("plugin `p`: cannot read "), "{text}");
        assert!(text.contains("No such file"), "{text}");
    }

    #[tokio::test]
    async fn a_file_that_is_not_the_pinned_one_is_refused_before_it_is_compiled() {
        let error = load("pinned", Some(b"\0asm"), Some([7; 32])).await;
        let LoadError::NotPinned { pinned, actual, .. } = &error else {
            panic!("{error:?}");
        };
        assert_eq!(pinned, &"07".repeat(32));
        assert_ne!(actual, pinned);
        assert!(
            error
                .to_string()
                .contains("put its hash in plugins.p.sha256")
        );
    }

    #[tokio::test]
    async fn a_core_module_or_another_file_is_said_in_one_line() {
        let module = wat::parse_str("(module)").unwrap();
        let error = load("module", Some(&module), None).await;
        assert!(
            matches!(error, LoadError::NotAComponentFile { .. }),
            "{error:?}"
        );
        let text = chain(&error);
        assert!(
            text.contains("is a core WebAssembly module; build it for wasm32-wasip2"),
            "{text}"
        );
        assert!(!text.contains('\n'), "{text}");
        let error = load("text", Some(b"not wasm at all"), None).await;
        let text = chain(&error);
        assert!(
            text.contains("does not start with WebAssembly's magic bytes"),
            "{text}"
        );
        assert!(!text.contains('\n'), "{text}");
    }

    #[tokio::test]
    async fn a_broken_component_keeps_the_compilers_reason() {
        // The component header, then nothing valid.
        let broken = b"\0asm\x0d\x00\x01\x00\xff\xff";
        let error = load("broken", Some(broken), None).await;
        assert!(
            matches!(error, LoadError::NotAComponent { .. }),
            "{error:?}"
        );
        let text = chain(&error);
        assert!(text.contains("--target wasm32-wasip2"), "{text}");
        assert!(
            text.len() > error.to_string().len(),
            "the compiler's reason is a source: {text}"
        );
    }

    #[tokio::test]
    async fn a_component_without_palisade_exports_says_what_to_build_against() {
        let component = wat::parse_str("(component)").unwrap();
        let error = load("empty", Some(&component), None).await;
        let LoadError::NoExports { path, .. } = &error else {
            panic!("{error:?}");
        };
        assert_eq!(path.file_name(), Some(Path::new("p.wasm").as_os_str()));
        assert!(
            error
                .to_string()
                .contains("build it against the WIT in wit/")
        );
    }
}
