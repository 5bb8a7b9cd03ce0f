//! Where a plugin comes from: `source = "oci://..."`, `"https://..."` or a local file.

use std::fmt;
use std::path::{Path, PathBuf};

use oci_client::Reference;

/// A plugin's source, as `palisade.toml` or `palisade add` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `oci://REGISTRY/REPO:TAG` or `oci://REGISTRY/REPO@sha256:...`.
    Oci(Reference),
    /// `https://HOST/x.wasm` (`http://` only for loopback hosts).
    Url(url::Url),
    /// A local file: served in place, like `path`.
    File(PathBuf),
}

/// A source that cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("source `{text}`: {why}")]
pub struct InvalidSource {
    text: String,
    why: String,
}

impl Source {
    /// Parses `text`; a relative file path is taken from `base`.
    pub fn parse(text: &str, base: &Path) -> Result<Source, InvalidSource> {
        let invalid = |why: &str| InvalidSource {
            text: text.to_string(),
            why: why.to_string(),
        };
        if let Some(rest) = text.strip_prefix("oci://") {
            let host = rest.split('/').next().unwrap_or_default();
            // Without a registry, the reference would silently mean Docker Hub.
            if !rest.contains('/') || !(host.contains('.') || host.contains(':') || host == "localhost") {
                return Err(invalid(
                    "name the registry: oci://REGISTRY/REPOSITORY:TAG, such as \
                     oci://ghcr.io/owner/tool:1.0 or oci://127.0.0.1:5000/tools/weather:1.0",
                ));
            }
            let reference = Reference::try_from(rest)
                .map_err(|e| invalid(&format!("not an OCI reference: {e}")))?;
            if reference.tag().is_none() && reference.digest().is_none() {
                return Err(invalid(
                    "give a tag or a digest: oci://REGISTRY/REPOSITORY:TAG or @sha256:...",
                ));
            }
            if let Some(digest) = reference.digest()
                && crate::config::parse_sha256(digest.strip_prefix("sha256:").unwrap_or("")).is_none()
            {
                return Err(invalid("the digest must be sha256: followed by 64 hex digits"));
            }
            return Ok(Source::Oci(reference));
        }
        if text.starts_with("https://") || text.starts_with("http://") {
            let url = url::Url::parse(text).map_err(|e| invalid(&format!("not a URL: {e}")))?;
            if url.scheme() == "http" && !is_loopback(url.host_str().unwrap_or_default()) {
                return Err(invalid(
                    "plain http is only for loopback hosts (127.0.0.1, localhost): use https",
                ));
            }
            if !url.username().is_empty() || url.password().is_some() {
                return Err(invalid(
                    "credentials in the URL would be written to palisade.lock and logs; \
                     use a registry instead",
                ));
            }
            return Ok(Source::Url(url));
        }
        if text.contains("://") {
            return Err(invalid(
                "use oci://, https:// or a file path; other schemes are not supported",
            ));
        }
        if text.is_empty() {
            return Err(invalid("empty"));
        }
        Ok(Source::File(base.join(text)))
    }

    /// Whether the source is fetched over the network (and so locked in `palisade.lock`).
    pub fn is_remote(&self) -> bool {
        !matches!(self, Source::File(_))
    }

    /// For a plugin added without `--name`: the repository's or the file's last segment,
    /// made into a plugin name.
    pub fn suggested_name(&self) -> String {
        let last = match self {
            Source::Oci(r) => r.repository().rsplit('/').next().unwrap_or_default().to_string(),
            Source::Url(u) => u
                .path_segments()
                .and_then(|mut s| s.next_back())
                .unwrap_or_default()
                .to_string(),
            Source::File(p) => p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        };
        let stem = last.strip_suffix(".wasm").unwrap_or(&last);
        let name: String = stem
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
            .take(32)
            .collect();
        if name.is_empty() { "plugin".into() } else { name }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Oci(r) => write!(f, "oci://{}", r.whole()),
            Source::Url(u) => write!(f, "{u}"),
            Source::File(p) => write!(f, "{}", p.display()),
        }
    }
}

/// Hosts where plain HTTP is allowed: nothing leaves the machine.
pub fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Source, InvalidSource> {
        Source::parse(text, Path::new("/etc/palisade"))
    }

    #[test]
    fn oci_references_keep_registry_repository_and_tag_or_digest() {
        let Source::Oci(r) = parse("oci://127.0.0.1:5000/tools/weather:1.0").unwrap() else {
            panic!("not oci");
        };
        assert_eq!(r.registry(), "127.0.0.1:5000");
        assert_eq!(r.repository(), "tools/weather");
        assert_eq!(r.tag(), Some("1.0"));
        let digest = format!("sha256:{}", "a".repeat(64));
        let s = parse(&format!("oci://ghcr.io/o/t@{digest}")).unwrap();
        assert_eq!(s.to_string(), format!("oci://ghcr.io/o/t@{digest}"));
        assert_eq!(s.suggested_name(), "t");
    }

    #[test]
    fn ambiguous_or_unsafe_sources_are_refused_with_the_reason() {
        let sha512 = format!("oci://ghcr.io/o/t@sha512:{}", "a".repeat(128));
        for (text, needle) in [
            ("oci://weather:1.0", "name the registry"),
            ("oci://tools/weather:1.0", "name the registry"),
            ("oci://ghcr.io/o/t@sha256:abc", "not an OCI reference"),
            (&sha512, "must be sha256"),
            ("http://example.com/x.wasm", "loopback"),
            ("https://user:pw@example.com/x.wasm", "credentials"),
            ("ftp://example.com/x.wasm", "not supported"),
            ("", "empty"),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }

    #[test]
    fn files_are_relative_to_the_base_and_urls_name_the_plugin() {
        assert_eq!(
            parse("x.wasm").unwrap(),
            Source::File(PathBuf::from("/etc/palisade/x.wasm"))
        );
        let url = parse("http://127.0.0.1:8080/dl/My.Tool.wasm").unwrap();
        assert!(url.is_remote());
        assert_eq!(url.suggested_name(), "My_Tool");
    }
}
