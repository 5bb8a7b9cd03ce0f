//! Fetching components: from OCI registries (the CNCF Wasm artifact layout, or an image with the
//! component as its one layer) and from URLs. Everything a registry or a server sends is bounded:
//! the number of layers, their declared size, the bytes actually sent, redirects.

use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use oci_client::client::{ClientConfig, ClientProtocol, ImageLayer};
use oci_client::manifest::{ImageIndexEntry, OciDescriptor, OciImageManifest};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use sha2::Digest as _;

use super::credentials;
use super::settings::SourcesConfig;
use super::source::{Source, is_loopback};
use super::unpack::component_from_layer;
use super::verify::{
    BUNDLE_MEDIA_TYPE, SIGNATURE_ANNOTATION, SIMPLE_SIGNING_MEDIA_TYPE, Signatures,
    SimpleSignature, simple_signing_payload,
};

/// The media types of a layer that is the component itself.
const WASM_LAYER_TYPES: [&str; 2] = [
    "application/wasm",
    "application/vnd.wasm.content.layer.v1+wasm",
];
/// The CNCF Wasm artifact's config media type, which `palisade publish` writes.
pub const WASM_CONFIG_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The CNCF Wasm artifact's layer media type.
pub const WASM_LAYER_TYPE: &str = "application/wasm";
/// Signatures looked at per artifact, and the size of each: a registry cannot make verification
/// slow by attaching thousands, or large ones.
const MAX_SIGNATURES: usize = 16;
const MAX_SIGNATURE_BYTES: usize = 1 << 20;
/// Redirects a URL source may take, all to its own host.
const MAX_REDIRECTS: usize = 5;

/// A component fetched, with what its source resolved to.
#[derive(Debug)]
pub struct Fetched {
    /// The component.
    pub wasm: Vec<u8>,
    /// For OCI sources: the manifest digest (of the index, when the reference named one).
    pub digest: Option<String>,
}

/// Fetches components as `[sources]` says.
pub struct Fetcher {
    settings: SourcesConfig,
    /// Made on first use: building it loads the system's root certificates (tens of ms), which
    /// a start that only serves from the store never needs.
    http: tokio::sync::OnceCell<reqwest::Client>,
    /// Lines on stderr while fetching: `palisade add` and `update` show them, `serve` logs.
    progress: bool,
}

impl Fetcher {
    /// A fetcher with `settings`; `progress` prints what it does to stderr.
    pub fn new(settings: &SourcesConfig, progress: bool) -> Result<Fetcher> {
        Ok(Fetcher {
            settings: settings.clone(),
            http: tokio::sync::OnceCell::new(),
            progress,
        })
    }

    /// The client for URL sources: redirects only within the source's own host.
    async fn http(&self) -> Result<&reqwest::Client> {
        self.http
            .get_or_try_init(|| async {
                reqwest::Client::builder()
                    .connect_timeout(Duration::from_secs(10))
                    .read_timeout(Duration::from_secs(60))
                    .redirect(reqwest::redirect::Policy::custom(same_host_redirects))
                    .build()
                    .context("cannot set up the HTTP client")
            })
            .await
    }

    fn say(&self, line: std::fmt::Arguments<'_>) {
        if self.progress {
            eprintln!("{line}");
        } else {
            tracing::info!("{line}");
        }
    }

    /// Fetches `source`; for an OCI source, `pinned` (a manifest digest) is fetched instead of
    /// what its tag names now.
    pub async fn fetch(&self, source: &Source, pinned: Option<&str>) -> Result<Fetched> {
        let started = Instant::now();
        let fetched = match source {
            Source::Oci(reference) => {
                let reference = match pinned {
                    Some(digest) => with_digest(reference, digest),
                    None => reference.clone(),
                };
                self.fetch_oci(&reference).await?
            }
            Source::Url(url) => Fetched {
                wasm: self.fetch_url(url).await?,
                digest: None,
            },
            Source::File(path) => Fetched {
                wasm: std::fs::read(path)
                    .with_context(|| format!("cannot read {}", path.display()))?,
                digest: None,
            },
        };
        self.say(format_args!(
            "fetched {source}: {} KiB in {:.1} s",
            fetched.wasm.len() >> 10,
            started.elapsed().as_secs_f64()
        ));
        Ok(fetched)
    }

    /// The manifest digest an OCI reference names now (one HEAD request).
    pub async fn resolve(&self, reference: &Reference) -> Result<String> {
        let (client, auth) = self.connect(reference)?;
        client
            .fetch_manifest_digest(reference, &auth)
            .await
            .with_context(|| format!("cannot resolve oci://{}", reference.whole()))
    }

    /// A client for the reference's registry, and how to authenticate to it.
    fn connect(&self, reference: &Reference) -> Result<(Client, RegistryAuth)> {
        let auth = credentials::auth_for(reference.resolve_registry(), &self.settings)?;
        Ok((self.oci_client(reference)?, auth))
    }

    fn oci_client(&self, reference: &Reference) -> Result<Client> {
        let registry = reference.resolve_registry();
        let host = registry.rsplit_once(':').map_or(registry, |(h, _)| h);
        let plain = is_loopback(host)
            || self
                .settings
                .insecure_registries
                .iter()
                .any(|r| r == registry);
        let config = ClientConfig {
            protocol: if plain {
                ClientProtocol::Http
            } else {
                ClientProtocol::Https
            },
            connect_timeout: Some(Duration::from_secs(10)),
            read_timeout: Some(Duration::from_secs(60)),
            platform_resolver: Some(Box::new(wasm_platform)),
            user_agent: concat!("palisade/", env!("CARGO_PKG_VERSION")),
            ..ClientConfig::default()
        };
        Client::try_from(config).context("cannot set up the OCI client")
    }

    async fn fetch_oci(&self, reference: &Reference) -> Result<Fetched> {
        let whole = format!("oci://{}", reference.whole());
        self.say(format_args!("resolving {whole}"));
        let (client, auth) = self.connect(reference)?;
        let (manifest, digest, index_digest) = client
            .pull_image_manifest_and_list_digest(reference, &auth)
            .await
            .with_context(|| format!("cannot fetch the manifest of {whole}"))?;
        let layer = self.pick_layer(&manifest).with_context(|| whole.clone())?;
        self.say(format_args!(
            "downloading {} ({} KiB)",
            layer.digest,
            layer.size.max(0) >> 10
        ));
        let mut writer = BoundedWriter::new(self.settings.max_bytes);
        client
            .pull_blob(reference, &layer, &mut writer)
            .await
            .with_context(|| format!("cannot download {} of {whole}", layer.digest))?;
        let wasm = component_from_layer(writer.bytes, self.settings.max_bytes)
            .with_context(|| format!("{whole}: layer {}", layer.digest))?;
        Ok(Fetched {
            wasm,
            digest: Some(index_digest.unwrap_or(digest)),
        })
    }

    /// Pushes `wasm` to `reference` as a CNCF Wasm artifact; returns the manifest digest.
    async fn publish(
        &self,
        reference: &Reference,
        wasm: Vec<u8>,
        imports: &[String],
        exports: &[String],
    ) -> Result<String> {
        let whole = format!("oci://{}", reference.whole());
        let (client, auth) = self.connect(reference)?;
        let layer_digest = format!("sha256:{}", hex::encode(sha2::Sha256::digest(&wasm)));
        let config = serde_json::json!({
            "created": humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            "architecture": "wasm",
            "os": "wasip2",
            "layerDigests": [layer_digest],
            "component": { "exports": exports, "imports": imports },
        });
        self.say(format_args!("pushing {} KiB to {whole}", wasm.len() >> 10));
        let layers = [ImageLayer::new(wasm, WASM_LAYER_TYPE.to_string(), None)];
        let config = oci_client::client::Config::new(
            serde_json::to_vec(&config).context("serializing the artifact's config")?,
            WASM_CONFIG_TYPE.to_string(),
            None,
        );
        client
            .push(reference, &layers, config, &auth, None)
            .await
            .with_context(|| format!("cannot push to {whole}"))?;
        self.resolve(reference).await
    }

    /// Every signature published for an artifact: for OCI sources cosign's
    /// `sha256-<digest>.sig` tag and Sigstore bundles attached as OCI 1.1 referrers; for URL
    /// sources a bundle at the URL with `.sigstore.json` appended.
    pub async fn signatures(&self, source: &Source, digest: Option<&str>) -> Result<Signatures> {
        let mut found = Signatures::default();
        match (source, digest) {
            (Source::Oci(reference), Some(digest)) => {
                let (client, auth) = self.connect(reference)?;
                let sig_tag = cosign_signature_tag(reference, digest);
                if let Some(manifest) = pull_if_present(&client, &sig_tag, &auth).await? {
                    for layer in manifest
                        .layers
                        .iter()
                        .filter(|l| l.media_type == SIMPLE_SIGNING_MEDIA_TYPE)
                        .take(MAX_SIGNATURES)
                    {
                        let signature = layer
                            .annotations
                            .as_ref()
                            .and_then(|a| a.get(SIGNATURE_ANNOTATION))
                            .cloned()
                            .unwrap_or_default();
                        let payload = self.small_blob(&client, &sig_tag, layer).await?;
                        found.simple.push(SimpleSignature {
                            payload: String::from_utf8_lossy(&payload).into_owned(),
                            signature,
                        });
                    }
                }
                let subject = with_digest(reference, digest);
                let referrers = client
                    .pull_referrers(&subject, Some(BUNDLE_MEDIA_TYPE))
                    .await
                    .with_context(|| format!("cannot list the referrers of {digest}"))?;
                for entry in referrers.manifests.iter().take(MAX_SIGNATURES) {
                    let referrer = with_digest(reference, &entry.digest);
                    let Some(manifest) = pull_if_present(&client, &referrer, &auth).await? else {
                        continue;
                    };
                    for layer in manifest
                        .layers
                        .iter()
                        .filter(|l| l.media_type == BUNDLE_MEDIA_TYPE)
                    {
                        let bundle = self.small_blob(&client, &referrer, layer).await?;
                        found
                            .bundles
                            .push(String::from_utf8_lossy(&bundle).into_owned());
                    }
                }
            }
            (Source::Url(url), _) => {
                let bundle_url = format!("{url}.sigstore.json");
                let response = self
                    .http()
                    .await?
                    .get(&bundle_url)
                    .send()
                    .await
                    .with_context(|| format!("cannot fetch {bundle_url}"))?;
                if response.status().is_success() {
                    let body = response.bytes().await.context("reading the bundle")?;
                    anyhow::ensure!(
                        body.len() <= MAX_SIGNATURE_BYTES,
                        "{bundle_url} is larger than a Sigstore bundle can be"
                    );
                    found
                        .bundles
                        .push(String::from_utf8_lossy(&body).into_owned());
                }
            }
            _ => {}
        }
        Ok(found)
    }

    /// A signature's blob: small, or refused.
    async fn small_blob(
        &self,
        client: &Client,
        reference: &Reference,
        layer: &OciDescriptor,
    ) -> Result<Vec<u8>> {
        anyhow::ensure!(
            (0..=MAX_SIGNATURE_BYTES as i64).contains(&layer.size),
            "a signature layer declares {} bytes; signatures are small",
            layer.size
        );
        let mut writer = BoundedWriter::new(MAX_SIGNATURE_BYTES as u64);
        client
            .pull_blob(reference, layer, &mut writer)
            .await
            .with_context(|| format!("cannot download the signature {}", layer.digest))?;
        Ok(writer.bytes)
    }

    /// Pushes `wasm` to `reference` as a CNCF Wasm artifact, and with `signer` cosign's signature
    /// of it; returns the manifest digest.
    pub async fn publish_signed(
        &self,
        reference: &Reference,
        wasm: Vec<u8>,
        imports: &[String],
        exports: &[String],
        signer: Option<&sigstore::crypto::SigStoreSigner>,
    ) -> Result<String> {
        let digest = self.publish(reference, wasm, imports, exports).await?;
        let Some(signer) = signer else {
            return Ok(digest);
        };
        let docker_reference = format!("{}/{}", reference.registry(), reference.repository());
        let payload = simple_signing_payload(&docker_reference, &digest);
        let signature = signer
            .sign(payload.as_bytes())
            .map_err(|e| anyhow::anyhow!("cannot sign: {e}"))?;
        let signature =
            base64::Engine::encode(&base64::engine::general_purpose::STANDARD, signature);
        let sig_ref = cosign_signature_tag(reference, &digest);
        let layer = ImageLayer::new(
            payload.into_bytes(),
            SIMPLE_SIGNING_MEDIA_TYPE.to_string(),
            Some([(SIGNATURE_ANNOTATION.to_string(), signature)].into()),
        );
        let config = oci_client::client::Config::new(
            b"{}".to_vec(),
            "application/vnd.oci.image.config.v1+json".to_string(),
            None,
        );
        let (client, auth) = self.connect(reference)?;
        client
            .push(&sig_ref, &[layer], config, &auth, None)
            .await
            .with_context(|| format!("cannot push the signature to oci://{}", sig_ref.whole()))?;
        self.say(format_args!("signed {digest} (oci://{})", sig_ref.whole()));
        Ok(digest)
    }

    /// The one layer that holds the component: a `application/wasm` layer, else the only layer.
    fn pick_layer(&self, manifest: &OciImageManifest) -> Result<OciDescriptor> {
        let wasm_layers: Vec<&OciDescriptor> = manifest
            .layers
            .iter()
            .filter(|l| WASM_LAYER_TYPES.contains(&l.media_type.as_str()))
            .collect();
        let layer = match (wasm_layers.as_slice(), manifest.layers.as_slice()) {
            ([one], _) => *one,
            ([], [only]) => only,
            ([], []) => anyhow::bail!("the manifest has no layers"),
            ([], layers) => anyhow::bail!(
                "the image has {} layers and none is application/wasm: a plugin is one \
                 component, published as a Wasm artifact (`palisade publish`) or as an image \
                 with one layer",
                layers.len()
            ),
            (several, _) => anyhow::bail!(
                "the artifact has {} application/wasm layers; a plugin is one component",
                several.len()
            ),
        };
        let max = self.settings.max_bytes;
        anyhow::ensure!(
            u64::try_from(layer.size).is_ok_and(|size| size <= max),
            "the layer {} is {} bytes, over the {} MiB limit ([sources] max_mib)",
            layer.digest,
            layer.size,
            max >> 20
        );
        Ok(layer.clone())
    }

    async fn fetch_url(&self, url: &url::Url) -> Result<Vec<u8>> {
        self.say(format_args!("downloading {url}"));
        let mut response = self
            .http()
            .await?
            .get(url.clone())
            .send()
            .await
            .with_context(|| format!("cannot fetch {url}"))?;
        let status = response.status();
        anyhow::ensure!(status.is_success(), "{url}: the server answered {status}");
        let max = self.settings.max_bytes;
        if let Some(length) = response.content_length() {
            anyhow::ensure!(
                length <= max,
                "{url} is {length} bytes, over the {} MiB limit ([sources] max_mib)",
                max >> 20
            );
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .with_context(|| format!("cannot download {url}"))?
        {
            anyhow::ensure!(
                body.len() as u64 + chunk.len() as u64 <= max,
                "{url} sent more than {} MiB ([sources] max_mib)",
                max >> 20
            );
            body.extend_from_slice(&chunk);
        }
        component_from_layer(body, max).with_context(|| url.to_string())
    }
}

/// The same repository at `digest`.
fn with_digest(reference: &Reference, digest: &str) -> Reference {
    Reference::with_digest(
        reference.registry().to_string(),
        reference.repository().to_string(),
        digest.to_string(),
    )
}

/// Where cosign keeps the signatures of `digest`: the tag `sha256-<hex>.sig` beside it.
fn cosign_signature_tag(reference: &Reference, digest: &str) -> Reference {
    Reference::with_tag(
        reference.registry().to_string(),
        reference.repository().to_string(),
        format!("{}.sig", digest.replace(':', "-")),
    )
}

/// The image manifest at `reference`, or `None` when the registry has none there.
async fn pull_if_present(
    client: &Client,
    reference: &Reference,
    auth: &RegistryAuth,
) -> Result<Option<OciImageManifest>> {
    use oci_client::errors::OciDistributionError as E;
    match client.pull_image_manifest(reference, auth).await {
        Ok((manifest, _)) => Ok(Some(manifest)),
        Err(
            E::ImageManifestNotFoundError(_)
            | E::RegistryError { .. }
            | E::ServerError { code: 404, .. },
        ) => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot fetch oci://{}", reference.whole())),
    }
}

/// The manifest for WebAssembly in an image index, else its only manifest.
fn wasm_platform(entries: &[ImageIndexEntry]) -> Option<String> {
    let wasm = entries.iter().find(|e| {
        e.platform
            .as_ref()
            .is_some_and(|p| p.architecture.to_string() == "wasm")
    });
    match (wasm, entries) {
        (Some(entry), _) | (None, [entry]) => Some(entry.digest.clone()),
        _ => None,
    }
}

/// A source's URL may redirect within its own host (a moved path, http to https on loopback);
/// a redirect elsewhere is refused: the operator trusted that host, not whichever it names.
fn same_host_redirects(attempt: reqwest::redirect::Attempt<'_>) -> reqwest::redirect::Action {
    let first = attempt.previous().first();
    let same = first.is_some_and(|f| {
        f.host_str() == attempt.url().host_str()
            && f.port_or_known_default() == attempt.url().port_or_known_default()
    });
    if attempt.previous().len() > MAX_REDIRECTS {
        attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
    } else if !same {
        let to = attempt.url().to_string();
        attempt.error(format!(
            "redirected to another host ({to}); give that URL as the source if you trust it"
        ))
    } else {
        attempt.follow()
    }
}

/// Collects a blob in memory, failing once it passes the size cap: the layer's declared size is
/// the registry's word, the bytes it sends are what count.
struct BoundedWriter {
    bytes: Vec<u8>,
    max: u64,
}

impl BoundedWriter {
    fn new(max: u64) -> BoundedWriter {
        BoundedWriter {
            bytes: Vec::new(),
            max,
        }
    }
}

impl tokio::io::AsyncWrite for BoundedWriter {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        if self.bytes.len() as u64 + buf.len() as u64 > self.max {
            let max = self.max;
            return std::task::Poll::Ready(Err(std::io::Error::other(format!(
                "the registry sent more than {} MiB ([sources] max_mib)",
                max >> 20
            ))));
        }
        self.bytes.extend_from_slice(buf);
        std::task::Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}
