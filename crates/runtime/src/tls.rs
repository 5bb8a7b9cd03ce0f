//! Whom a plugin's HTTPS trusts: Mozilla's root set, bundled so that trust is the same on every
//! machine whatever its system store holds, plus the operator's own certificate authorities
//! (`ca_file` in `[server]` and in a plugin's section), for private APIs and for proxies that
//! re-sign traffic.
//!
//! The crypto provider (ring) is passed to rustls here rather than taken from a process-wide
//! default: the runtime is a library and works whatever its host installed.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject as _;

/// A CA file larger than this is refused unread: Mozilla's whole set is about 250 KiB of PEM.
pub const MAX_CA_FILE_BYTES: u64 = 4 << 20;

/// The TLS client settings of one plugin's outgoing requests.
#[derive(Clone)]
pub struct TlsTrust {
    config: Arc<rustls::ClientConfig>,
    /// How many of the operator's certificates it trusts besides the bundled set.
    operator_certificates: usize,
}

impl std::fmt::Debug for TlsTrust {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsTrust")
            .field("operator_certificates", &self.operator_certificates)
            .finish_non_exhaustive()
    }
}

impl Default for TlsTrust {
    fn default() -> Self {
        TlsTrust::bundled()
    }
}

/// Why a CA file cannot be trusted.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// The file could not be read.
    #[error("cannot read the CA file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_CA_FILE_BYTES`].
    #[error(
        "the CA file {} is larger than {} MiB: name the one CA certificate you need",
        path.display(),
        MAX_CA_FILE_BYTES >> 20
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
    },
    /// The file holds no PEM certificate, or a block that is not one.
    #[error(
        "the CA file {} is not PEM certificates ({why}); it must hold `-----BEGIN CERTIFICATE-----` \
         blocks",
        path.display()
    )]
    NotPem {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        why: String,
    },
    /// A certificate that cannot be a trust anchor.
    #[error("the CA file {}: certificate {index} cannot be trusted: {why}", path.display())]
    Unusable {
        /// The file.
        path: PathBuf,
        /// Its place in the file, from 1.
        index: usize,
        /// What rustls said.
        why: String,
    },
}

impl TlsTrust {
    /// Mozilla's root set alone, built once per process.
    pub fn bundled() -> TlsTrust {
        static BUNDLED: OnceLock<TlsTrust> = OnceLock::new();
        BUNDLED
            .get_or_init(|| TlsTrust::with_roots(bundled_roots(), 0))
            .clone()
    }

    /// The bundled set plus every certificate in `files` (PEM); the bundled set alone when
    /// `files` is empty.
    pub fn with_ca_files(files: &[PathBuf]) -> Result<TlsTrust, TrustError> {
        if files.is_empty() {
            return Ok(TlsTrust::bundled());
        }
        let mut roots = bundled_roots();
        let mut added = 0;
        for path in files {
            for (index, certificate) in read_certificates(path)?.into_iter().enumerate() {
                roots.add(certificate).map_err(|e| TrustError::Unusable {
                    path: path.clone(),
                    index: index + 1,
                    why: e.to_string(),
                })?;
                added += 1;
            }
        }
        Ok(TlsTrust::with_roots(roots, added))
    }

    fn with_roots(roots: rustls::RootCertStore, operator_certificates: usize) -> TlsTrust {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("ring supports rustls's default protocol versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        TlsTrust {
            config: Arc::new(config),
            operator_certificates,
        }
    }

    /// The rustls settings a connection uses.
    pub(crate) fn client_config(&self) -> Arc<rustls::ClientConfig> {
        self.config.clone()
    }

    /// How many of the operator's certificates are trusted besides the bundled set.
    pub fn operator_certificates(&self) -> usize {
        self.operator_certificates
    }
}

fn bundled_roots() -> rustls::RootCertStore {
    rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    }
}

/// The certificates of a PEM file, at least one, read under [`MAX_CA_FILE_BYTES`].
fn read_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, TrustError> {
    let read = |source| TrustError::Read {
        path: path.to_path_buf(),
        source,
    };
    let size = std::fs::metadata(path).map_err(read)?.len();
    if size > MAX_CA_FILE_BYTES {
        return Err(TrustError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    let bytes = std::fs::read(path).map_err(read)?;
    let not_pem = |why: String| TrustError::NotPem {
        path: path.to_path_buf(),
        why,
    };
    let certificates = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| not_pem(e.to_string()))?;
    if certificates.is_empty() {
        return Err(not_pem("no certificate in it".into()));
    }
    Ok(certificates)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_files_the_bundled_set_is_shared() {
        let a = TlsTrust::with_ca_files(&[]).unwrap();
        let b = TlsTrust::bundled();
        assert!(Arc::ptr_eq(&a.config, &b.config));
        assert_eq!(a.operator_certificates(), 0);
    }

    #[test]
    fn files_that_are_not_certificates_are_refused_with_their_path() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.pem");
        let error = TlsTrust::with_ca_files(std::slice::from_ref(&missing)).unwrap_err();
        assert!(matches!(error, TrustError::Read { .. }), "{error}");
        assert!(error.to_string().contains("missing.pem"), "{error}");

        let text = dir.path().join("notes.txt");
        std::fs::write(&text, "just some words\n").unwrap();
        let error = TlsTrust::with_ca_files(std::slice::from_ref(&text)).unwrap_err();
        assert!(matches!(error, TrustError::NotPem { .. }), "{error}");

        let garbage = dir.path().join("garbage.pem");
        std::fs::write(
            &garbage,
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let error = TlsTrust::with_ca_files(std::slice::from_ref(&garbage)).unwrap_err();
        assert!(
            matches!(error, TrustError::Unusable { index: 1, .. }),
            "{error}"
        );

        let huge = dir.path().join("huge.pem");
        std::fs::File::create(&huge)
            .unwrap()
            .set_len(MAX_CA_FILE_BYTES + 1)
            .unwrap();
        let error = TlsTrust::with_ca_files(std::slice::from_ref(&huge)).unwrap_err();
        assert!(matches!(error, TrustError::TooLarge { .. }), "{error}");
    }
}
