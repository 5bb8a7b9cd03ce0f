//! `palisade add`, `update`, `remove` and `publish`: the operator's side of the lock. Nothing is
//! written before the operator has seen what the plugin exports and what it asks for, and said
//! yes (or given `--yes`).

use std::io::BufRead as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use crate::config::{self, Config, PluginConfig};
use crate::inspect::inspect;
use crate::runtime::Runtime;
use crate::sources::fetch::{Fetched, Fetcher};
use crate::sources::lock::{self, Lock, Locked, write_whole};
use crate::sources::source::Source;
use crate::sources::verify::{Policy, verify};
use crate::{plugin_load, plugin_set};

/// What `palisade add` was asked.
#[derive(Debug, Clone)]
pub struct AddRequest {
    /// `oci://...`, `https://...` or a file.
    pub reference: String,
    /// `--name`; else from the reference.
    pub name: Option<String>,
    /// `--config` (default `./palisade.toml`).
    pub config: PathBuf,
    /// `--yes`: no question.
    pub yes: bool,
    /// `--cache-dir`.
    pub cache_dir: Option<PathBuf>,
    /// `--key FILE`: the publisher's cosign public key.
    pub key: Option<PathBuf>,
    /// `--identity` and `--issuer`: the keyless signer.
    pub identity: Option<(String, String)>,
}

/// `palisade add`: fetch, show, ask, then write the configuration section and the lock entry.
pub async fn add(request: AddRequest) -> Result<()> {
    let config = load_or_default(&request.config)?;
    let base = base_of(&request.config);
    // A file is named as the operator typed it, from where they are, and written whole: the
    // configuration may live elsewhere.
    let (source, written) = match Source::parse(&request.reference, Path::new("."))? {
        Source::File(path) => {
            let path = std::fs::canonicalize(&path)
                .with_context(|| format!("cannot find {}", path.display()))?;
            (
                Source::File(path.clone()),
                path.to_string_lossy().into_owned(),
            )
        }
        remote => (remote, request.reference.clone()),
    };
    let name = request
        .name
        .clone()
        .unwrap_or_else(|| source.suggested_name());
    config::check_plugin_name(&name)
        .map_err(|why| anyhow::anyhow!("plugin name `{name}`: {why}; choose one with --name"))?;
    anyhow::ensure!(
        !config.plugins.iter().any(|p| p.spec.name == name),
        "{} already has a plugin named `{name}`: choose another with --name, or run \
         `palisade update {name}` to take a new version of it",
        request.config.display()
    );
    let mut plugin = PluginConfig::new(name.clone(), PathBuf::new());
    let (policy, verify_line) = policy_from_flags(&request, &config, base)?;
    plugin.verify = policy.or_else(|| config.sources.verify.clone());
    let review = review(&config, &source, plugin, request.cache_dir.clone()).await?;
    println!("{}", review.report);
    println!(
        "It is granted nothing: no network, no files, no environment. To grant something, add \
         it to [plugins.{name}] (network = [\"api.example.com\"], dirs, roots, env); \
         docs/configuration.md lists each grant. Or add ask = true, and you are asked through \
         your MCP client when it reaches for a host or an environment variable.\n"
    );
    println!(
        "`palisade add` will write to {}:\n",
        request.config.display()
    );
    println!(
        "[plugins.{name}]\nsource = {written:?}\n{}",
        verify_line
            .as_ref()
            .map(|v| format!("verify = {v}\n"))
            .unwrap_or_default()
    );
    if source.is_remote() {
        println!(
            "and lock {} at {} in {}.\n",
            name,
            review
                .locked
                .digest
                .as_deref()
                .unwrap_or(&review.locked.sha256),
            Lock::path_beside(&request.config).display()
        );
    }
    if !confirm(request.yes, &format!("Add `{name}`?"))? {
        println!("Nothing written.");
        return Ok(());
    }
    write_section(&request.config, &name, &written, verify_line)?;
    if source.is_remote() {
        let lock_path = Lock::path_beside(&request.config);
        let mut lock = Lock::load(&lock_path)?;
        lock.plugins.insert(name.clone(), review.locked);
        lock.save(&lock_path)?;
    }
    println!(
        "Added `{name}`. Serve it with: palisade serve --config {}",
        request.config.display()
    );
    Ok(())
}

/// What `palisade update` was asked.
#[derive(Debug, Clone)]
pub struct UpdateRequest {
    /// One plugin, or every plugin with a remote source.
    pub name: Option<String>,
    /// `--config`.
    pub config: PathBuf,
    /// `--yes`.
    pub yes: bool,
    /// `--cache-dir`.
    pub cache_dir: Option<PathBuf>,
}

/// `palisade update`: fetch what each source names now, show how it differs from the lock, and
/// accept it into the lock when the operator agrees.
pub async fn update(request: UpdateRequest) -> Result<()> {
    let config = Config::load(&request.config)?;
    let lock_path = Lock::path_beside(&request.config);
    let mut lock = Lock::load(&lock_path)?;
    let plugins: Vec<&PluginConfig> = config
        .plugins
        .iter()
        .filter(|p| p.source.is_some())
        .filter(|p| request.name.as_ref().is_none_or(|n| *n == p.spec.name))
        .collect();
    if let Some(name) = &request.name {
        anyhow::ensure!(
            !plugins.is_empty(),
            "{} has no plugin `{name}` with a registry or URL source",
            request.config.display()
        );
    }
    for plugin in plugins {
        let name = &plugin.spec.name;
        let Some(source) = &plugin.source else {
            continue;
        };
        let review = review(&config, source, plugin.clone(), request.cache_dir.clone()).await?;
        let differences = match lock.plugins.get(name) {
            Some(old) => lock::differences(old, &review.locked),
            None => vec!["not in the lock yet".to_string()],
        };
        if differences.is_empty() {
            println!("{name}: up to date ({source})");
            continue;
        }
        println!("{name}: {source} differs from what was accepted:");
        for line in &differences {
            println!("  {line}");
        }
        let old_tools = lock.plugins.get(name).map(|l| &l.tools);
        for (tool, description) in &review.descriptions {
            if old_tools.and_then(|t| t.get(tool)) != review.locked.tools.get(tool) {
                println!("  tool {tool} now says: {description}");
            }
        }
        println!();
        if !confirm(request.yes, &format!("Accept the new `{name}`?"))? {
            println!(
                "{name}: kept as locked; serve keeps refusing it while its tag names another digest."
            );
            continue;
        }
        lock.plugins.insert(name.clone(), review.locked);
        lock.save(&lock_path)?;
        println!("{name}: accepted.");
    }
    Ok(())
}

/// `palisade remove NAME`: the configuration section and the lock entry. The component stays in
/// the store (another configuration may use it).
pub fn remove(name: &str, config_path: &Path) -> Result<()> {
    let text = std::fs::read_to_string(config_path)
        .with_context(|| format!("cannot read {}", config_path.display()))?;
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .with_context(|| format!("{} is not valid TOML", config_path.display()))?;
    let removed = doc
        .get_mut("plugins")
        .and_then(|p| p.as_table_like_mut())
        .and_then(|p| p.remove(name));
    anyhow::ensure!(
        removed.is_some(),
        "{} has no [plugins.{name}]",
        config_path.display()
    );
    write_whole(config_path, &doc.to_string())?;
    let lock_path = Lock::path_beside(config_path);
    let mut lock = Lock::load(&lock_path)?;
    if lock.plugins.remove(name).is_some() {
        lock.save(&lock_path)?;
    }
    // A plugin added again later under this name starts with no remembered grants.
    let grants = crate::grants::commands::forget_plugin(config_path, name)?;
    println!(
        "Removed `{name}` from {}{}.",
        config_path.display(),
        if grants {
            ", and its remembered grants"
        } else {
            ""
        }
    );
    Ok(())
}

/// What `palisade publish` was asked.
#[derive(Debug, Clone)]
pub struct PublishRequest {
    /// The component.
    pub file: PathBuf,
    /// `oci://REGISTRY/REPOSITORY:TAG`.
    pub target: String,
    /// `--config`, for `[sources]`.
    pub config: Option<PathBuf>,
    /// `--sign-key`.
    pub sign_key: Option<PathBuf>,
    /// `--cache-dir`.
    pub cache_dir: Option<PathBuf>,
}

/// `palisade publish FILE.wasm oci://...`: push the component as a CNCF Wasm artifact, signed
/// with `--sign-key` when given.
pub async fn publish(request: PublishRequest) -> Result<()> {
    let PublishRequest {
        file,
        target,
        config,
        sign_key,
        cache_dir,
    } = request;
    let (file, target) = (file.as_path(), target.as_str());
    let signer = sign_key.as_deref().map(load_signer).transpose()?;
    let config = match config.as_deref() {
        Some(path) => Config::load(path)?,
        None => Config::default(),
    };
    let Source::Oci(reference) = Source::parse(target, Path::new("."))? else {
        anyhow::bail!("publish to an OCI registry: oci://REGISTRY/REPOSITORY:TAG");
    };
    anyhow::ensure!(
        reference.tag().is_some() && reference.digest().is_none(),
        "publish to a tag (oci://REGISTRY/REPOSITORY:TAG): a digest is what the registry gives back"
    );
    let wasm = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let runtime = Runtime::new(plugin_load::compile_cache(
        cache_dir,
        config.cache_dir.clone(),
    )?)?;
    let sha256: [u8; 32] =
        sha2::Digest::finalize(<sha2::Sha256 as sha2::Digest>::new_with_prefix(&wasm)).into();
    let component = runtime
        .cache
        .load(
            &runtime.engine,
            &wasm,
            &sha256,
            &plugin_set::name_from_file(file),
        )
        .with_context(|| format!("{} is not a WebAssembly component", file.display()))?;
    let ty = component.component_type();
    let names = |it: &mut dyn Iterator<Item = String>| it.collect::<Vec<_>>();
    let imports = names(&mut ty.imports(&runtime.engine).map(|(n, _)| n.to_string()));
    let exports = names(&mut ty.exports(&runtime.engine).map(|(n, _)| n.to_string()));
    let fetcher = Fetcher::new(&config.sources, true)?;
    let digest = fetcher
        .publish_signed(&reference, wasm, &imports, &exports, signer.as_ref())
        .await?;
    println!(
        "published {} as oci://{}@{digest}",
        file.display(),
        reference.whole()
    );
    Ok(())
}

/// A signing key: PKCS#8 PEM, or cosign's encrypted key (password in `COSIGN_PASSWORD`).
fn load_signer(path: &Path) -> Result<sigstore::crypto::SigStoreSigner> {
    use sigstore::crypto::SigningScheme;
    use sigstore::crypto::signing_key::SigStoreKeyPair;
    let pem = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let pair = if String::from_utf8_lossy(&pem).contains("ENCRYPTED") {
        let password = std::env::var("COSIGN_PASSWORD").unwrap_or_default();
        SigStoreKeyPair::from_encrypted_pem(&pem, password.as_bytes())
    } else {
        SigStoreKeyPair::from_pem(&pem)
    }
    .map_err(|e| anyhow::anyhow!("{}: not a signing key cosign uses: {e}", path.display()))?;
    pair.to_sigstore_signer(&SigningScheme::ECDSA_P256_SHA256_ASN1)
        .map_err(|e| anyhow::anyhow!("{}: {e} (an ECDSA P-256 key is needed)", path.display()))
}

/// A fetched plugin, loaded with the grants it would have, described for the operator.
struct Review {
    /// What the lock would say.
    locked: Locked,
    /// `palisade inspect`'s description.
    report: String,
    /// Each tool's description, for `update` to show what a changed tool now says.
    descriptions: std::collections::BTreeMap<String, String>,
}

async fn review(
    config: &Config,
    source: &Source,
    mut plugin: PluginConfig,
    cache_dir: Option<PathBuf>,
) -> Result<Review> {
    let fetcher = Fetcher::new(&config.sources, true)?;
    let Fetched { wasm, digest } = fetcher.fetch(source, None).await?;
    let store = crate::sources::Store::open_configured(&config.sources)?;
    let sha256 = store.put(&wasm)?;
    let signed_by = match &plugin.verify {
        Some(policy) => {
            let found = fetcher.signatures(source, digest.as_deref()).await?;
            verify(policy, &found, digest.as_deref(), &wasm)
                .await
                .with_context(|| format!("{source}: refused"))?;
            let artifact = digest.clone().unwrap_or_else(|| hex::encode(sha256));
            store.put_signatures(&artifact, &found)?;
            println!("signature verified: signed by {}", policy.signer());
            Some(policy.signer())
        }
        None => {
            anyhow::ensure!(
                !config.sources.require_signatures,
                "[sources] require_signatures is set and nothing says who must have signed \
                 {source}: give --key FILE, or --identity and --issuer"
            );
            None
        }
    };
    let runtime = Runtime::new(plugin_load::compile_cache(
        cache_dir,
        config.cache_dir.clone(),
    )?)?;
    plugin.spec.path = store.path(&sha256);
    plugin.spec.sha256 = Some(sha256);
    plugin.source = None;
    plugin.locked = None;
    let report = inspect(&runtime, plugin.clone()).await?;
    let component = runtime
        .cache
        .load(&runtime.engine, &wasm, &sha256, &plugin.spec.name)
        .context("not a valid component")?;
    let imports = component
        .component_type()
        .imports(&runtime.engine)
        .map(|(name, _)| name.to_string())
        .collect();
    let loaded = plugin_load::load_plugin(&runtime, &plugin)
        .await
        .with_context(|| format!("{source} cannot be served"))?;
    let descriptions = loaded
        .tools
        .iter()
        .map(|t| {
            let description = t.description.as_deref().unwrap_or("(no description)");
            (t.name.clone(), description.to_string())
        })
        .collect();
    Ok(Review {
        locked: Locked {
            source: source.to_string(),
            digest,
            sha256: hex::encode(sha256),
            signed_by,
            imports,
            tools: lock::tool_hashes(&loaded),
        },
        report,
        descriptions,
    })
}

/// The policy `--key` or `--identity`/`--issuer` give, and the `verify` table to write for it.
fn policy_from_flags(
    request: &AddRequest,
    config: &Config,
    base: &Path,
) -> Result<(Option<Policy>, Option<toml_edit::InlineTable>)> {
    let mut table = toml_edit::InlineTable::new();
    let policy = match (&request.key, &request.identity) {
        (None, None) => return Ok((None, None)),
        (Some(_), Some(_)) => anyhow::bail!("give --key, or --identity and --issuer, not both"),
        (Some(key), None) => {
            // Typed from where the operator is; written relative to the configuration's
            // directory when it is inside it, else whole.
            let file = std::fs::canonicalize(key)
                .with_context(|| format!("--key {}: cannot find it", key.display()))?;
            let pem = std::fs::read_to_string(&file)
                .with_context(|| format!("--key {}: cannot read it", file.display()))?;
            let config_dir = std::fs::canonicalize(base).unwrap_or_else(|_| base.to_path_buf());
            let written = file.strip_prefix(&config_dir).unwrap_or(&file);
            table.insert("key", path_value(written));
            Policy::Key { file, pem }
        }
        (None, Some((identity, issuer))) => {
            anyhow::ensure!(
                issuer.starts_with("https://"),
                "--issuer must be an https:// URL"
            );
            table.insert("identity", identity.as_str().into());
            table.insert("issuer", issuer.as_str().into());
            let trusted_root = match &config.sources.verify {
                Some(Policy::Keyless { trusted_root, .. }) => trusted_root.clone(),
                _ => None,
            };
            Policy::Keyless {
                identity: identity.clone(),
                issuer: issuer.clone(),
                trusted_root,
            }
        }
    };
    Ok((Some(policy), Some(table)))
}

fn path_value(path: &Path) -> toml_edit::Value {
    path.to_string_lossy().as_ref().into()
}

/// Asks on stdin; `yes` answers for the operator. No answer (end of input) is no.
fn confirm(yes: bool, question: &str) -> Result<bool> {
    if yes {
        return Ok(true);
    }
    println!("{question} [y/N] (--yes answers yes in scripts)");
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .context("cannot read the answer from stdin")?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes"))
}

fn load_or_default(path: &Path) -> Result<Config> {
    if path.exists() {
        Ok(Config::load(path)?)
    } else {
        Ok(Config::default())
    }
}

fn base_of(config: &Path) -> &Path {
    config
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Adds `[plugins.NAME] source = ...` to the file, keeping everything else as written.
fn write_section(
    config_path: &Path,
    name: &str,
    source: &str,
    verify: Option<toml_edit::InlineTable>,
) -> Result<()> {
    let text = match std::fs::read_to_string(config_path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", config_path.display())),
    };
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .with_context(|| format!("{} is not valid TOML", config_path.display()))?;
    let plugins = doc
        .entry("plugins")
        .or_insert_with(|| {
            let mut table = toml_edit::Table::new();
            table.set_implicit(true);
            toml_edit::Item::Table(table)
        })
        .as_table_mut()
        .context("`plugins` in the configuration is not a table")?;
    let mut section = toml_edit::Table::new();
    section.insert("source", toml_edit::value(source));
    if let Some(verify) = verify {
        section.insert("verify", toml_edit::value(verify));
    }
    section.decor_mut().set_prefix(
        "\n# Added by `palisade add`; granted nothing. Grants: network, dirs, roots, env, config, \
         keyvalue (docs/configuration.md); ask = true asks you when it reaches for a host or a \
         variable.\n",
    );
    plugins.insert(name, toml_edit::Item::Table(section));
    write_whole(config_path, &doc.to_string())
}
