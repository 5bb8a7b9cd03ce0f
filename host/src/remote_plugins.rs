//! What `serve` does with plugins from registries and URLs: each is served from the store, at
//! the digest `palisade.lock` accepted, and refused when its tag has moved since. Nothing is
//! fetched by tag here: a registry that changed what a tag names cannot change what is served
//! until the operator reviews it with `palisade update`.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use crate::config::{Config, PluginConfig};
use crate::sources::fetch::Fetcher;
use crate::sources::lock::{Lock, Locked};
use crate::sources::source::Source;
use crate::sources::store::Store;
use crate::sources::verify::{Policy, verify};

/// Points every plugin with a remote source at its locked component in the store, fetching the
/// locked digest when the store lacks it.
pub async fn pin(
    config: &Config,
    config_path: Option<&Path>,
    plugins: &mut [&mut PluginConfig],
) -> Result<()> {
    if plugins.iter().all(|p| p.source.is_none()) {
        return Ok(());
    }
    let config_path =
        config_path.context("a plugin with a source needs a configuration file (--config)")?;
    let lock_path = Lock::path_beside(config_path);
    let lock = Lock::load(&lock_path)?;
    let store = Store::open_configured(&config.sources)?;
    let origin = |p: &PluginConfig| format!("{}: [plugins.{}]", config_path.display(), p.spec.name);
    for p in plugins.iter() {
        let grants = p.spec.dirs.iter().map(|d| &d.host);
        if let Some(dir) = grants.chain(&config.roots).find(|d| store.overlaps(d)) {
            anyhow::bail!(
                "{}: {} holds the plugin store {} (or lies inside it): a plugin granted it could \
                 replace what the lock pins; grant another directory, or move the store \
                 ([sources] store_dir)",
                origin(p),
                dir.display(),
                store.dir().display()
            );
        }
    }
    let fetcher = Fetcher::new(&config.sources, false)?;
    let checks = plugins.iter().map(|p| async {
        let Some(source) = &p.source else {
            return Ok(None);
        };
        let plugin = Pinning {
            name: &p.spec.name,
            source,
            policy: p.verify.as_ref(),
        };
        pin_one(plugin, &lock, &lock_path, &store, &fetcher, config)
            .await
            .with_context(|| origin(p))
            .map(Some)
    });
    let pinned = futures_util::future::join_all(checks).await;
    for (p, pinned) in plugins.iter_mut().zip(pinned) {
        let Some((path, locked, sha256)) = pinned? else {
            continue;
        };
        if let Some(configured) = p.spec.sha256.filter(|c| *c != sha256) {
            anyhow::bail!(
                "{}: sha256 = {} in the configuration, but palisade.lock accepted {}; remove \
                 one of them",
                origin(p),
                hex::encode(configured),
                hex::encode(sha256)
            );
        }
        p.spec.path = path;
        p.spec.sha256 = Some(sha256);
        p.locked = Some(locked);
    }
    Ok(())
}

/// The longest `serve` waits for a component (or its signatures) the store lacks.
const FETCH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// The plugin being pinned.
struct Pinning<'a> {
    name: &'a str,
    source: &'a Source,
    policy: Option<&'a Policy>,
}

async fn pin_one(
    Pinning {
        name,
        source,
        policy,
    }: Pinning<'_>,
    lock: &Lock,
    lock_path: &Path,
    store: &Store,
    fetcher: &Fetcher,
    config: &Config,
) -> Result<(PathBuf, Locked, [u8; 32])> {
    let locked = lock.plugins.get(name).with_context(|| {
        format!(
            "plugin `{name}` ({source}) is not in {}: nothing from a registry or a URL is served \
             before it was reviewed; run `palisade add {source} --name {name}`",
            lock_path.display()
        )
    })?;
    anyhow::ensure!(
        locked.source == source.to_string(),
        "plugin `{name}`: the configuration says {source}, but {} accepted {}; run `palisade \
         update {name}` to review the new source",
        lock_path.display(),
        locked.source
    );
    let sha256 = locked.sha256()?;
    if let Source::Oci(reference) = source
        && reference.digest().is_none()
    {
        let timeout = config.sources.tag_check_timeout;
        match tokio::time::timeout(timeout, fetcher.resolve(reference)).await {
            Ok(Ok(now)) if Some(&now) != locked.digest.as_ref() => anyhow::bail!(
                "plugin `{name}`: {source} now names {now}, but {} accepted {}: the tag was \
                 moved. It is not served until you review the change: run `palisade update {name}`",
                lock_path.display(),
                locked.digest.as_deref().unwrap_or("-")
            ),
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::warn!(
                plugin = name,
                "cannot check what {source} names now ({e:#}); serving the digest the lock pins"
            ),
            Err(_) => tracing::warn!(
                plugin = name,
                "the registry of {source} did not answer in {} s; serving the digest the lock pins",
                timeout.as_secs()
            ),
        }
    }
    if !store.contains(&sha256) {
        // A registry that answers slowly, a byte at a time, holds the start only this long.
        let fetched = tokio::time::timeout(
            FETCH_TIMEOUT,
            fetcher.fetch(source, locked.digest.as_deref()),
        )
        .await
        .map_err(|_| {
            anyhow::anyhow!(
                "plugin `{name}`: fetching {source} took over {} s; it is not in the store, so \
                     it cannot be served",
                FETCH_TIMEOUT.as_secs()
            )
        })??;
        let got = sha2::Digest::finalize(<sha2::Sha256 as sha2::Digest>::new_with_prefix(
            &fetched.wasm,
        ));
        anyhow::ensure!(
            got[..] == sha256[..],
            "plugin `{name}`: {source} sent a component with SHA-256 {}, but {} accepted {}; \
             refused (run `palisade update {name}` to review what it serves now)",
            hex::encode(got),
            lock_path.display(),
            locked.sha256
        );
        store.put(&fetched.wasm)?;
    }
    match policy {
        Some(policy) => {
            check_signature(name, source, policy, locked, store, fetcher, &sha256).await?;
        }
        None => anyhow::ensure!(
            !config.sources.require_signatures,
            "plugin `{name}`: [sources] require_signatures is set, and nothing says who must have \
             signed it; add verify = {{ key = \"cosign.pub\" }} or verify = {{ identity = \"...\", \
             issuer = \"https://...\" }}"
        ),
    }
    Ok((store.path(&sha256), locked.clone(), sha256))
}

/// Verifies the plugin's signature again, from the store (fetched once when missing), and that
/// the lock accepted it under the same signer.
async fn check_signature(
    name: &str,
    source: &Source,
    policy: &Policy,
    locked: &Locked,
    store: &Store,
    fetcher: &Fetcher,
    sha256: &[u8; 32],
) -> Result<()> {
    let artifact = locked
        .digest
        .clone()
        .unwrap_or_else(|| locked.sha256.clone());
    let found = match store.signatures(&artifact) {
        Some(found) => found,
        None => {
            let found = tokio::time::timeout(
                FETCH_TIMEOUT,
                fetcher.signatures(source, locked.digest.as_deref()),
            )
            .await
            .map_err(|_| {
                anyhow::anyhow!("plugin `{name}`: fetching the signatures of {source} timed out")
            })??;
            store.put_signatures(&artifact, &found)?;
            found
        }
    };
    let wasm = std::fs::read(store.path(sha256)).context("reading the component from the store")?;
    verify(policy, &found, locked.digest.as_deref(), &wasm)
        .await
        .with_context(|| format!("plugin `{name}` ({source}): refused"))?;
    let signer = policy.signer();
    anyhow::ensure!(
        locked.signed_by.as_deref() == Some(signer.as_str()),
        "plugin `{name}`: palisade.lock accepted it signed by {}, the configuration now names \
         {signer}; run `palisade update {name}` to review",
        locked.signed_by.as_deref().unwrap_or("nobody")
    );
    Ok(())
}
