//! The issuer's signing keys: found through its metadata (OpenID Connect Discovery, else RFC
//! 8414), fetched from its `jwks_uri`, held in memory, fetched again when a token names a key
//! not held (the provider rotated its keys) and every hour.
//!
//! Everything the provider sends is bounded (size, time, number of keys), and its metadata must
//! name the configured issuer exactly, or the keys are not used.

use parking_lot::RwLock;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde::Deserialize;

use crate::config::check_transport;

/// Largest metadata document or key set read.
const MAX_DOCUMENT_BYTES: usize = 256 * 1024;
/// Most keys kept from one key set.
const MAX_KEYS: usize = 64;
/// Time for each request to the provider.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// One verification key.
pub struct Key {
    kid: Option<String>,
    /// The algorithm the key is for, when its JWK says.
    alg: Option<Algorithm>,
    key: DecodingKey,
}

/// The keys held now.
#[derive(Default)]
pub struct KeySet {
    keys: Vec<Key>,
}

impl KeySet {
    /// The key for a token's `kid` and `alg`: the one with that id; without an id, the only key
    /// that fits the algorithm.
    pub fn find(&self, kid: Option<&str>, alg: Algorithm) -> Option<&DecodingKey> {
        let fits =
            |k: &&Key| k.key.family() == alg.family() && k.alg.is_none_or(|key_alg| key_alg == alg);
        match kid {
            Some(kid) => self
                .keys
                .iter()
                .filter(fits)
                .find(|k| k.kid.as_deref() == Some(kid)),
            None => {
                let mut fitting = self.keys.iter().filter(fits);
                match (fitting.next(), fitting.next()) {
                    (Some(only), None) => Some(only),
                    _ => None,
                }
            }
        }
        .map(|k| &k.key)
    }
}

/// The keys, and when they were last fetched.
pub struct KeyCache {
    issuer: String,
    http: reqwest::Client,
    keys: RwLock<Arc<KeySet>>,
    /// When a token last made the server fetch the keys (held across every fetch: one at a
    /// time). Scheduled fetches do not count: a provider that rotates its keys just after the
    /// start is followed at once.
    last_asked: tokio::sync::Mutex<Option<Instant>>,
    fetched: std::sync::atomic::AtomicBool,
}

/// The parts of the provider's metadata used here.
#[derive(Deserialize)]
struct Metadata {
    issuer: String,
    jwks_uri: String,
}

impl KeyCache {
    /// An empty cache for `issuer`'s keys.
    pub fn new(issuer: &str) -> Result<KeyCache> {
        let http = reqwest::Client::builder()
            .connect_timeout(REQUEST_TIMEOUT)
            .timeout(REQUEST_TIMEOUT)
            // The metadata names where the keys are; nothing is followed elsewhere.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .context("cannot set up the HTTP client for the OAuth provider")?;
        Ok(KeyCache {
            issuer: issuer.to_string(),
            http,
            keys: RwLock::new(Arc::new(KeySet::default())),
            last_asked: tokio::sync::Mutex::new(None),
            fetched: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// The keys held now.
    pub fn current(&self) -> Arc<KeySet> {
        self.keys.read().clone()
    }

    /// Whether keys were ever fetched.
    pub fn fetched(&self) -> bool {
        self.fetched.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Fetches the keys: on schedule (`asked_by_token: None`), or for a token naming a key not
    /// held, unless a token did that less than the interval given ago. Ok(true) when new keys
    /// are in place. Concurrent callers wait for the one fetch.
    pub async fn refresh(&self, asked_by_token: Option<Duration>) -> Result<bool> {
        let mut last_asked = self.last_asked.lock().await;
        if let Some(interval) = asked_by_token {
            if last_asked.is_some_and(|at| at.elapsed() < interval) {
                return Ok(false);
            }
            *last_asked = Some(Instant::now());
        }
        let keys = self.fetch().await?;
        tracing::info!(
            issuer = self.issuer,
            keys = keys.keys.len(),
            "fetched the OAuth issuer's signing keys"
        );
        *self.keys.write() = Arc::new(keys);
        self.fetched
            .store(true, std::sync::atomic::Ordering::Release);
        Ok(true)
    }

    /// Puts `set` in place as if fetched (the verifier's unit tests).
    #[cfg(test)]
    pub fn set(&self, set: &JwkSet) {
        let keys = set.keys.iter().filter_map(key).collect();
        *self.keys.write() = Arc::new(KeySet { keys });
    }

    async fn fetch(&self) -> Result<KeySet> {
        let metadata = self.metadata().await?;
        let jwks_uri = url::Url::parse(&metadata.jwks_uri).with_context(|| {
            format!("the issuer's jwks_uri {:?} is not a URL", metadata.jwks_uri)
        })?;
        check_transport(&jwks_uri, "the issuer's jwks_uri").map_err(anyhow::Error::msg)?;
        let set: JwkSet = self
            .get_json(jwks_uri.as_str())
            .await
            .with_context(|| format!("cannot read the issuer's keys from {jwks_uri}"))?;
        let keys: Vec<Key> = set.keys.iter().filter_map(key).take(MAX_KEYS).collect();
        if keys.is_empty() {
            bail!(
                "{jwks_uri} holds no signing key this server can use (RSA, EC P-256/P-384 or Ed25519)"
            );
        }
        Ok(KeySet { keys })
    }

    /// The provider's metadata: OpenID Connect Discovery first (most providers), then RFC 8414
    /// (with the issuer's path after the well-known part). It must name our issuer exactly.
    async fn metadata(&self) -> Result<Metadata> {
        let issuer = url::Url::parse(&self.issuer).context("the issuer is not a URL")?;
        let oidc = format!(
            "{}/.well-known/openid-configuration",
            self.issuer.trim_end_matches('/')
        );
        let mut rfc8414 = issuer.clone();
        let path = issuer.path().trim_end_matches('/');
        rfc8414.set_path(&format!("/.well-known/oauth-authorization-server{path}"));
        let mut failures = Vec::new();
        for url in [oidc, rfc8414.to_string()] {
            match self.get_json::<Metadata>(&url).await {
                Ok(metadata) if metadata.issuer == self.issuer => return Ok(metadata),
                Ok(metadata) => bail!(
                    "{url} names the issuer {:?}, not {:?}: check [auth.oauth] issuer (it must match exactly, trailing slash included)",
                    metadata.issuer,
                    self.issuer
                ),
                Err(e) => failures.push(format!("{url}: {e:#}")),
            }
        }
        bail!(
            "cannot read the OAuth issuer's metadata: {}",
            failures.join("; ")
        )
    }

    /// GETs `url` as JSON, reading at most [`MAX_DOCUMENT_BYTES`].
    async fn get_json<T: serde::de::DeserializeOwned>(&self, url: &str) -> Result<T> {
        let mut response = self
            .http
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await?;
        if !response.status().is_success() {
            bail!("HTTP {}", response.status());
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await? {
            if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                bail!("larger than {} KiB", MAX_DOCUMENT_BYTES / 1024);
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&body).context("not the JSON expected")
    }
}

/// A JWK this server can verify with: a public signing key (not `use: enc`), of a kind and
/// algorithm the verifier knows; other keys in the set are skipped.
fn key(jwk: &Jwk) -> Option<Key> {
    if jwk.common.public_key_use == Some(PublicKeyUse::Encryption) {
        return None;
    }
    if matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_)) {
        // A shared secret in a public key set is a provider's mistake; never verify with it.
        return None;
    }
    let alg = match jwk.common.key_algorithm {
        None => None,
        Some(alg) => Some(signing_algorithm(alg)?),
    };
    let key = DecodingKey::from_jwk(jwk).ok()?;
    Some(Key {
        kid: jwk.common.key_id.clone(),
        alg,
        key,
    })
}

fn signing_algorithm(alg: KeyAlgorithm) -> Option<Algorithm> {
    Some(match alg {
        KeyAlgorithm::RS256 => Algorithm::RS256,
        KeyAlgorithm::RS384 => Algorithm::RS384,
        KeyAlgorithm::RS512 => Algorithm::RS512,
        KeyAlgorithm::PS256 => Algorithm::PS256,
        KeyAlgorithm::PS384 => Algorithm::PS384,
        KeyAlgorithm::PS512 => Algorithm::PS512,
        KeyAlgorithm::ES256 => Algorithm::ES256,
        KeyAlgorithm::ES384 => Algorithm::ES384,
        KeyAlgorithm::EdDSA => Algorithm::EdDSA,
        _ => return None,
    })
}
