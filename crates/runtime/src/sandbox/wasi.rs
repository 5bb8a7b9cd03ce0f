//! The WASI context of one call: exactly the grants of the configuration, nothing else.

use anyhow::{Context as _, Result};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

use super::{Grants, OutputCapture, Root};
use crate::spec::{AccessMode, RootsAccess};

/// Most random bytes one `get-random-bytes` may ask for: programs ask for a seed or a key, and
/// a larger request traps rather than make the host allocate it.
pub const MAX_RANDOM_BYTES: u64 = 1 << 20;

/// Builds the WASI context for one call: only the granted directories, roots and environment
/// variables; no arguments, no sockets, no name lookup, no stdin; stdout and stderr go to the
/// host's log. (HTTP is decided per request, see `network`.)
pub fn wasi_context(
    grants: &Grants,
    roots: &[Root],
    stdout: OutputCapture,
    stderr: OutputCapture,
) -> Result<WasiCtx> {
    let mut builder = WasiCtxBuilder::new();
    builder
        .stdout(stdout)
        .stderr(stderr)
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false)
        // wasmtime-wasi builds the bytes in host memory before copying them into the plugin's.
        .max_random_size(MAX_RANDOM_BYTES)
        .envs(&grants.env);
    for secret in grants.secrets.iter().filter(|s| s.as_env) {
        builder.env(&secret.name, secret.value.expose());
    }
    for dir in &grants.dirs {
        builder
            .preopened_dir(
                &dir.host,
                &dir.guest,
                perms(dir.mode == AccessMode::ReadWrite),
            )
            .map_err(anyhow::Error::from)
            .with_context(|| {
                format!(
                    "cannot open granted directory {} (for {})",
                    dir.host.display(),
                    dir.guest
                )
            })?;
    }
    for root in grants.shadowed_roots(roots) {
        tracing::warn!(
            root = root.uri,
            "the root is not shown to this plugin: one of its `dirs` is at {} already; \
             set [server] roots_at = \"/roots\" or move the grant",
            root.guest_path
        );
    }
    if grants.roots != RootsAccess::None {
        let perms = perms(grants.roots == RootsAccess::ReadWrite);
        for root in grants.visible_roots(roots) {
            builder
                .preopened_dir(&root.host_path, &root.guest_path, perms)
                .map_err(anyhow::Error::from)
                .with_context(|| format!("cannot open root {}", root.host_path.display()))?;
        }
    }
    Ok(builder.build())
}

fn perms(writable: bool) -> FsPerms {
    if writable {
        FsPerms::ReadWrite
    } else {
        FsPerms::ReadOnly
    }
}
