//! Signatures, Sigstore/cosign compatible; the cryptography and the bundle format are the
//! `sigstore` crate's, never ours.
//!
//! Two kinds are checked:
//! - **Key**: cosign's signature of an OCI manifest: a "simple signing" payload naming the
//!   manifest digest, signed with the publisher's key (`verify = { key = "cosign.pub" }`).
//! - **Keyless**: a Sigstore bundle (v0.3): a short-lived Fulcio certificate for an identity,
//!   checked against a trusted root, for the identity and issuer the operator named
//!   (`verify = { identity = "...", issuer = "..." }`). An identity is always required: "any
//!   signer" proves nothing.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use sha2::Digest as _;
use sigstore::bundle::Bundle;
use sigstore::bundle::verify::policy::Identity;
use sigstore::bundle::verify::{ArtifactDigest, Verifier};
use sigstore::crypto::{CosignVerificationKey, Signature};
use sigstore::trust::ManualTrustRoot;

/// The media type of a Sigstore bundle v0.3, as an OCI referrer's artifact type and layer.
pub const BUNDLE_MEDIA_TYPE: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";
/// cosign's simple-signing payload, the layer of a `sha256-<digest>.sig` manifest.
pub const SIMPLE_SIGNING_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The annotation of a simple-signing layer that holds the signature, in base64.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";

/// Who must have signed a plugin, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Policy {
    /// The holder of this public key (PEM), read from `file`.
    Key {
        /// The key file, for messages.
        file: PathBuf,
        /// Its PEM text.
        pem: String,
    },
    /// A Fulcio certificate for this identity from this OIDC issuer, under `trusted_root`.
    Keyless {
        /// The certificate's subject (an email, or a workflow URI).
        identity: String,
        /// The OIDC issuer that vouched for it.
        issuer: String,
        /// A Sigstore trusted root (JSON); `None` is an error at verification, since this build
        /// ships no root of its own.
        trusted_root: Option<PathBuf>,
    },
}

impl Policy {
    /// What the lock records as `signed_by`.
    pub fn signer(&self) -> String {
        match self {
            // The key's fingerprint, not its file's name: the same key moved or named
            // relative to another directory is the same signer.
            Policy::Key { pem, .. } => {
                let key: String = pem.split_whitespace().collect();
                format!(
                    "key sha256:{}",
                    hex::encode(sha2::Sha256::digest(key.as_bytes()))
                )
            }
            Policy::Keyless {
                identity, issuer, ..
            } => format!("{identity} via {issuer}"),
        }
    }
}

/// Signature material found for an artifact, kept in the store beside the component so every
/// load verifies it again, offline.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signatures {
    /// cosign simple-signing payloads and their signatures (base64).
    #[serde(default)]
    pub simple: Vec<SimpleSignature>,
    /// Sigstore bundles (JSON text).
    #[serde(default)]
    pub bundles: Vec<String>,
}

/// One cosign simple-signing signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimpleSignature {
    /// The payload, as signed.
    pub payload: String,
    /// The signature over it, base64.
    pub signature: String,
}

impl Signatures {
    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.simple.is_empty() && self.bundles.is_empty()
    }
}

/// The cosign payload signing `manifest_digest` of `repository` (what `publish --sign-key` signs).
pub fn simple_signing_payload(docker_reference: &str, manifest_digest: &str) -> String {
    serde_json::json!({
        "critical": {
            "identity": {"docker-reference": docker_reference},
            "image": {"docker-manifest-digest": manifest_digest},
            "type": "cosign container image signature",
        },
        "optional": null,
    })
    .to_string()
}

/// Checks that one of `found` satisfies `policy` for the artifact: its OCI manifest digest
/// (`sha256:...`) when it has one, and its bytes' digests (for bundles over the file itself).
pub async fn verify(
    policy: &Policy,
    found: &Signatures,
    manifest_digest: Option<&str>,
    artifact: &[u8],
) -> Result<()> {
    anyhow::ensure!(
        !found.is_empty(),
        "it is not signed: no cosign signature (tag sha256-<digest>.sig) and no Sigstore \
         bundle (OCI referrer) was found for it"
    );
    let mut reasons = Vec::new();
    match policy {
        Policy::Key { file, pem } => {
            let key = CosignVerificationKey::try_from_pem(pem.as_bytes())
                .with_context(|| format!("{} is not a public key cosign uses", file.display()))?;
            for sig in &found.simple {
                match check_simple(&key, sig, manifest_digest) {
                    Ok(()) => return Ok(()),
                    Err(why) => reasons.push(format!("{why:#}")),
                }
            }
            if found.simple.is_empty() {
                reasons.push("no key signature (only Sigstore bundles) was found".into());
            }
        }
        Policy::Keyless {
            identity,
            issuer,
            trusted_root,
        } => {
            let root = trusted_root.as_deref().context(
                "keyless verification needs a Sigstore trusted root: set trusted_root = \
                 \"trusted_root.json\" (from your Sigstore deployment, or the public one's TUF \
                 repository)",
            )?;
            let digests = artifact_digests(manifest_digest, artifact);
            for bundle in &found.bundles {
                match check_bundle(bundle, identity, issuer, root, &digests).await {
                    Ok(()) => return Ok(()),
                    Err(why) => reasons.push(format!("{why:#}")),
                }
            }
            if found.bundles.is_empty() {
                reasons.push("no Sigstore bundle (only key signatures) was found".into());
            }
        }
    }
    anyhow::bail!(
        "no signature by {} verifies: {}",
        policy.signer(),
        reasons.join("; ")
    )
}

fn check_simple(
    key: &CosignVerificationKey,
    sig: &SimpleSignature,
    manifest_digest: Option<&str>,
) -> Result<()> {
    key.verify_signature(
        Signature::Base64Encoded(sig.signature.as_bytes()),
        sig.payload.as_bytes(),
    )
    .map_err(|_| anyhow::anyhow!("a signature does not verify with the key"))?;
    // The signature is good; now what it signs must be this artifact, not another.
    let payload: serde_json::Value =
        serde_json::from_str(&sig.payload).context("the signed payload is not JSON")?;
    let signed = payload["critical"]["image"]["docker-manifest-digest"]
        .as_str()
        .unwrap_or_default();
    anyhow::ensure!(
        Some(signed) == manifest_digest,
        "a valid signature is for another digest ({signed}), not this artifact's ({})",
        manifest_digest.unwrap_or("none")
    );
    Ok(())
}

/// The digests a bundle may sign: the manifest's, the file's SHA-256 and SHA-512.
fn artifact_digests(manifest_digest: Option<&str>, artifact: &[u8]) -> Vec<ArtifactDigest> {
    let mut digests = Vec::new();
    if let Some(hex_digest) = manifest_digest.and_then(|d| d.strip_prefix("sha256:"))
        && let Some(bytes) = super::parse_sha256(hex_digest)
    {
        digests.push(ArtifactDigest::from(bytes));
    }
    digests.push(ArtifactDigest::from(<[u8; 32]>::from(
        sha2::Sha256::digest(artifact),
    )));
    digests.push(ArtifactDigest::from(<[u8; 64]>::from(
        sha2::Sha512::digest(artifact),
    )));
    digests
}

async fn check_bundle(
    bundle: &str,
    identity: &str,
    issuer: &str,
    trusted_root: &Path,
    digests: &[ArtifactDigest],
) -> Result<()> {
    let policy = Identity::new(identity, issuer);
    let parsed: Bundle = serde_json::from_str(bundle).context("not a Sigstore bundle")?;
    // One trust root and verifier for every digest tried; only the bundle is consumed per try.
    let verifier = Verifier::new(
        Default::default(),
        load_trusted_root(trusted_root, &parsed)?,
    )
    .context("the trusted root cannot be used")?;
    let mut last = None;
    for digest in digests {
        match verifier
            .verify_digest_with(*digest, parsed.clone(), &policy, true)
            .await
        {
            Ok(()) => return Ok(()),
            Err(e) => last = Some(e),
        }
    }
    Err(anyhow::anyhow!(
        "the Sigstore bundle does not verify: {}",
        last.map(|e| e.to_string()).unwrap_or_default()
    ))
}

/// A Sigstore trusted root (the `trusted_root.json` of the protobuf-specs), as trust for the
/// bundle's signing time: only authorities and logs valid when the bundle's certificate was
/// issued count, so an expired root refuses what it no longer vouches for.
fn load_trusted_root(path: &Path, bundle: &Bundle) -> Result<ManualTrustRoot<'static>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the trusted root {}", path.display()))?;
    let root: TrustedRoot = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a Sigstore trusted root", path.display()))?;
    let signed_at = certificate_not_before(bundle)?;
    let valid = |v: &Option<ValidFor>| {
        v.as_ref().is_none_or(|v| {
            let start = v.start.as_deref().map(humantime::parse_rfc3339_weak);
            let end = v.end.as_deref().map(humantime::parse_rfc3339_weak);
            start.is_none_or(|s| s.is_ok_and(|s| s <= signed_at))
                && end.is_none_or(|e| e.is_ok_and(|e| signed_at <= e))
        })
    };
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.decode(s);
    let mut trust = ManualTrustRoot::default();
    for ca in root
        .certificate_authorities
        .iter()
        .filter(|ca| valid(&ca.valid_for))
    {
        for cert in &ca.cert_chain.certificates {
            trust.fulcio_certs.push(
                b64(&cert.raw_bytes)
                    .context("a CA certificate is not base64")?
                    .into(),
            );
        }
    }
    for (i, log) in root
        .ctlogs
        .iter()
        .enumerate()
        .filter(|(_, l)| valid(&l.public_key.valid_for))
    {
        let key = b64(&log.public_key.raw_bytes).context("a CT log key is not base64")?;
        trust.ctfe_keys.insert(format!("ctlog-{i}"), key);
    }
    for (i, log) in root
        .tlogs
        .iter()
        .enumerate()
        .filter(|(_, l)| valid(&l.public_key.valid_for))
    {
        let key = b64(&log.public_key.raw_bytes).context("a transparency log key is not base64")?;
        trust.rekor_keys.insert(format!("tlog-{i}"), key);
    }
    anyhow::ensure!(
        !trust.fulcio_certs.is_empty(),
        "{}: no certificate authority in it was valid when the bundle was signed ({})",
        path.display(),
        humantime::format_rfc3339_seconds(signed_at)
    );
    Ok(trust)
}

/// When the bundle's signing certificate became valid: Fulcio issues it at signing time.
fn certificate_not_before(bundle: &Bundle) -> Result<std::time::SystemTime> {
    use x509_cert::der::Decode as _;
    let material = bundle
        .verification_material
        .as_ref()
        .and_then(|m| m.content.as_ref())
        .context("the bundle has no verification material")?;
    use sigstore_protobuf_specs::dev::sigstore::bundle::v1::verification_material::Content;
    let der = match material {
        Content::Certificate(cert) => cert.raw_bytes.clone(),
        Content::X509CertificateChain(chain) => chain
            .certificates
            .first()
            .map(|c| c.raw_bytes.clone())
            .context("the bundle's certificate chain is empty")?,
        Content::PublicKey(_) => anyhow::bail!(
            "the bundle is signed with a key, not a certificate: verify it with verify = {{ key = ... }}"
        ),
    };
    let cert = x509_cert::Certificate::from_der(&der).context("the bundle's certificate")?;
    Ok(cert
        .tbs_certificate()
        .validity()
        .not_before
        .to_system_time())
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TrustedRoot {
    #[serde(default)]
    tlogs: Vec<TransparencyLog>,
    #[serde(default)]
    certificate_authorities: Vec<CertificateAuthority>,
    #[serde(default)]
    ctlogs: Vec<TransparencyLog>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TransparencyLog {
    public_key: PublicKey,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PublicKey {
    raw_bytes: String,
    valid_for: Option<ValidFor>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CertificateAuthority {
    cert_chain: CertChain,
    valid_for: Option<ValidFor>,
}

#[derive(Deserialize)]
struct CertChain {
    certificates: Vec<RawCertificate>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawCertificate {
    raw_bytes: String,
}

#[derive(Deserialize)]
struct ValidFor {
    start: Option<String>,
    end: Option<String>,
}
