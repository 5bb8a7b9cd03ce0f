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
            if !rest.contains('/')
                || !(host.contains('.') || host.contains(':') || host == "localhost")
            {
                return Err(invalid(
                    "name the registry: oci://REGISTRY/REPOSITORY:TAG, such as \
                     oci://ghcr.io/owner/tool:1.0 or oci://127.0.0.1:5000/tools/weather:1.0",
                ));
            }
            let reference = parse_reference(rest).map_err(|why| invalid(&why))?;
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
            Source::Oci(r) => r
                .repository()
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_string(),
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
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .take(32)
            .collect();
        if name.is_empty() {
            "plugin".into()
        } else {
            name
        }
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

/// `REGISTRY/REPOSITORY[:TAG][@sha256:DIGEST]`, checked against the distribution spec's grammar.
/// Not `Reference::try_from`: its grammar is a regular expression that takes about 60 ms to
/// compile, paid at every start that reads a configuration with an OCI source.
fn parse_reference(text: &str) -> Result<Reference, String> {
    let (name, digest) = match text.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (text, None),
    };
    let (registry, path) = name
        .split_once('/')
        .ok_or("no repository after the registry")?;
    // A tag follows the last `:` that comes after the last `/`.
    let (repository, tag) = match path.rsplit_once(':') {
        Some((repository, tag)) if !tag.contains('/') => (repository, Some(tag)),
        _ => (path, None),
    };
    let component_ok = |c: &str| {
        let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
        let bytes = c.as_bytes();
        // alnum (separator alnum)*, a separator being `.`, `_`, `__` or a run of `-`.
        bytes.first().is_some_and(|b| alnum(*b))
            && bytes.last().is_some_and(|b| alnum(*b))
            && bytes.iter().all(|b| alnum(*b) || b"._-".contains(b))
            && bytes
                .windows(2)
                .all(|w| alnum(w[0]) || alnum(w[1]) || w == b"__" || w == b"--")
            && !c.contains("___")
    };
    if registry.is_empty()
        || !registry
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b))
    {
        return Err(format!("`{registry}` is not a registry host"));
    }
    if repository.len() > 255 || !repository.split('/').all(component_ok) {
        return Err(format!(
            "`{repository}` is not an OCI repository name (lowercase letters, digits and . _ -              between slashes)"
        ));
    }
    if let Some(tag) = tag {
        let ok = (1..=128).contains(&tag.len())
            && tag.bytes().enumerate().all(|(i, b)| {
                b.is_ascii_alphanumeric() || b == b'_' || i > 0 && (b == b'.' || b == b'-')
            });
        if !ok {
            return Err(format!(
                "`{tag}` is not a tag (up to 128 of A-Z a-z 0-9 _ . -)"
            ));
        }
    }
    if let Some(digest) = digest {
        let hex = digest
            .strip_prefix("sha256:")
            .ok_or("the digest must be sha256: followed by 64 hex digits")?;
        if super::parse_sha256(hex).is_none() {
            return Err("the digest must be sha256: followed by 64 hex digits".into());
        }
    }
    let (registry, repository) = (registry.to_string(), repository.to_string());
    Ok(match (tag, digest) {
        (Some(tag), Some(digest)) => {
            Reference::with_tag_and_digest(registry, repository, tag.into(), digest.into())
        }
        (Some(tag), None) => Reference::with_tag(registry, repository, tag.into()),
        (None, Some(digest)) => Reference::with_digest(registry, repository, digest.into()),
        (None, None) => {
            return Err(
                "give a tag or a digest: oci://REGISTRY/REPOSITORY:TAG or @sha256:...".into(),
            );
        }
    })
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
            ("oci://ghcr.io/o/t@sha256:abc", "64 hex digits"),
            ("oci://ghcr.io/o/T:1", "not an OCI repository name"),
            ("oci://ghcr.io/o/t:-1", "not a tag"),
            ("oci://ghcr.io/o/t", "give a tag or a digest"),
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
