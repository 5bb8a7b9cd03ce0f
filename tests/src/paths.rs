//! Where things are (the binary, the plugins, the schemas, the shared cache) and how long to wait.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::*;

// ---------------------------------------------------------------------------
// Locations and timeouts
// ---------------------------------------------------------------------------

/// The repository root: the parent of `tests/`.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The `palisade` binary under test. Panics with a hint when it is missing.
pub fn palisade_bin() -> PathBuf {
    let path = match std::env::var_os("PALISADE_BIN") {
        Some(p) => PathBuf::from(p),
        None => repo_root().join("target/debug/palisade"),
    };
    if !path.is_file() {
        panic!(
            "palisade binary not found at {}: {BUILD_HINT}",
            path.display()
        );
    }
    path
}

/// The compiled plugin `<name>.wasm`. Panics with a hint when it is missing.
pub fn plugin_path(name: &str) -> PathBuf {
    let dir = match std::env::var_os("PALISADE_PLUGIN_DIR") {
        Some(p) => PathBuf::from(p),
        None => repo_root().join("target/plugins"),
    };
    let path = dir.join(format!("{name}.wasm"));
    if !path.is_file() {
        panic!(
            "plugin {name} not found at {}: {BUILD_HINT}",
            path.display()
        );
    }
    path
}

/// `plugin_path(name)` as a string, for argument lists.
pub fn plugin_arg(name: &str) -> String {
    path_str(&plugin_path(name))
}

/// `[plugins.NAME]` sections serving the built plugins `names`, for a test's configuration.
pub fn plugin_sections(names: &[&str]) -> String {
    names
        .iter()
        .map(|name| format!("[plugins.{name}]\npath = {}\n", toml_str(&plugin_arg(name))))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The directory holding `<version>/schema.json` for every MCP revision.
pub fn schema_dir() -> PathBuf {
    let dir = match std::env::var_os("PALISADE_MCP_SPEC") {
        Some(p) => PathBuf::from(p).join("schema"),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp-schema"),
    };
    if !dir.is_dir() {
        panic!(
            "MCP schemas not found at {} (set PALISADE_MCP_SPEC to a directory holding schema/)",
            dir.display()
        );
    }
    dir
}

/// Multiplies every harness timeout (`$PALISADE_TEST_TIMEOUT_SCALE`, default 1).
pub fn timeout_scale() -> f64 {
    std::env::var("PALISADE_TEST_TIMEOUT_SCALE")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|f| *f > 0.0)
        .unwrap_or(1.0)
}

/// `secs` seconds, scaled by [`timeout_scale`].
pub fn secs(secs: u64) -> Duration {
    Duration::from_secs_f64(secs as f64 * timeout_scale())
}

/// Default wait for a response.
pub fn default_timeout() -> Duration {
    secs(30)
}

/// Wait for the `initialize` response: the server may compile every plugin first.
pub fn startup_timeout() -> Duration {
    secs(240)
}

/// A path as a `String` (tests only use UTF-8 paths).
pub fn path_str(p: &Path) -> String {
    p.to_str().expect("test paths are UTF-8").to_string()
}

/// A TOML basic string holding `s` (JSON string escapes are valid TOML escapes).
pub fn toml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// Writes `contents` to `path`, creating parent directories.
pub fn write_file(path: impl AsRef<Path>, contents: impl AsRef<[u8]>) {
    let path = path.as_ref();
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, contents).unwrap();
}

/// The compile cache every test server uses unless the test says otherwise. Sharing it is safe
/// (entries are keyed by the component's digest and the engine, and written atomically) and
/// saves compiling the same plugins in every test: the Python and JavaScript examples take many
/// seconds each. The first call compiles every built plugin into it (`palisade compile`, which
/// skips what is there), so that tests starting in parallel do not all compile them at once, and
/// so that a list right after start holds every plugin (plugins load in the background: a list
/// waits for them only a moment).
pub fn shared_cache_dir() -> PathBuf {
    static WARM: std::sync::Once = std::sync::Once::new();
    let dir = repo_root().join("target/test-cache");
    WARM.call_once(|| {
        let plugins: Vec<PathBuf> = std::fs::read_dir(repo_root().join("target/plugins"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|e| e == "wasm"))
            .collect();
        if plugins.is_empty() {
            return;
        }
        let _ = Command::new(palisade_bin())
            .arg("compile")
            .arg("--cache-dir")
            .arg(&dir)
            .args(&plugins)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    });
    dir
}

/// A fresh temporary directory, removed when dropped.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("palisade-test-")
        .tempdir()
        .unwrap()
}

/// Calls `get` every 20 ms until `done` says yes of what it gave, and returns that; fails after
/// `within` with the last value.
#[track_caller]
pub fn poll_until<T: std::fmt::Debug>(
    within: Duration,
    mut get: impl FnMut() -> T,
    done: impl Fn(&T) -> bool,
) -> T {
    let deadline = std::time::Instant::now() + within;
    loop {
        let value = get();
        if done(&value) {
            return value;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not there within {within:?}: {value:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
