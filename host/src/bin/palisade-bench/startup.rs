//! Many plugins: distinct copies of one component, and how long a server takes to serve them.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use serde_json::json;

use crate::stdio::{Call, StdioServer};

/// `count` copies of the component `wasm` under `dir`, named `p00`, `p01`, ..., each made
/// distinct by a custom section (ignored when run) so that each is its own entry in the compile
/// cache, like `count` different plugins.
pub fn distinct_copies(wasm: &Path, dir: &Path, count: usize) -> Result<Vec<(String, PathBuf)>> {
    let bytes = std::fs::read(wasm)?;
    std::fs::create_dir_all(dir)?;
    (0..count)
        .map(|i| {
            let name = format!("p{i:02}");
            let path = dir.join(format!("{name}.wasm"));
            let mut copy = bytes.clone();
            copy.extend(custom_section("palisade-bench-copy", name.as_bytes()));
            std::fs::write(&path, copy)?;
            Ok((name, path))
        })
        .collect()
}

/// A custom section (id 0): its name and payload, each length-prefixed in LEB128.
fn custom_section(name: &str, payload: &[u8]) -> Vec<u8> {
    let mut contents = leb128(name.len());
    contents.extend(name.as_bytes());
    contents.extend(payload);
    let mut section = vec![0];
    section.extend(leb128(contents.len()));
    section.extend(contents);
    section
}

fn leb128(mut n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

/// How long from starting a server to its answer to the first `tools/list`, which must list
/// `tools` tools (first page). The server is returned still running.
pub fn time_to_first_list(
    palisade: &Path,
    config: &Path,
    cache: &Path,
    tools: usize,
) -> Result<(Duration, StdioServer)> {
    let started = Instant::now();
    let mut server = StdioServer::start(palisade, config, cache)?;
    let listed = server.request("tools/list", json!({}))?;
    let elapsed = started.elapsed();
    let got = listed["tools"].as_array().map_or(0, Vec::len);
    if got != tools {
        bail!("tools/list listed {got} tools, expected {tools}");
    }
    Ok((elapsed, server))
}

/// One server start with several plugins.
#[derive(Clone, Copy)]
pub struct AllReady {
    /// From starting the server to its answer to `initialize`.
    pub initialized: Duration,
    /// To the answer of a first call to every plugin (each waits for its plugin to load).
    pub called: Duration,
}

/// Starts a server with the plugins `names` (distinct copies of one component with a `greet`
/// tool) and calls each plugin's `greet` once: when the last answers, every plugin is ready.
pub fn time_to_all_called(
    palisade: &Path,
    config: &Path,
    cache: &Path,
    names: &[String],
) -> Result<AllReady> {
    let started = Instant::now();
    let mut server = StdioServer::start(palisade, config, cache)?;
    let initialized = started.elapsed();
    for name in names {
        server.call_when_ready(&Call::greet(&format!("{name}_greet")))?;
    }
    let called = started.elapsed();
    server.stop();
    Ok(AllReady {
        initialized,
        called,
    })
}
