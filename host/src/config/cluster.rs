//! `[cluster]`: the Redis that replicas behind one load balancer share, checked.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// How long a call waits for Redis before the failure policy applies, unless configured.
const DEFAULT_TIMEOUT: Duration = Duration::from_millis(1000);
/// Bounds of `timeout_ms`: long enough for a loaded Redis, short enough not to stall calls.
const TIMEOUT_MS: std::ops::RangeInclusive<u64> = 10..=30_000;

/// `[cluster]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ClusterSection {
    /// `redis://HOST:PORT/DB` or `rediss://` (TLS); `USER:PASSWORD@` is accepted, but a
    /// password is better given by `password_env` or `password_file`.
    pub redis: Option<String>,
    /// The environment variable holding Redis's password.
    pub password_env: Option<String>,
    /// A file holding Redis's password (only the server's user may read it).
    pub password_file: Option<PathBuf>,
    /// PEM certificates of the authority that signed Redis's TLS certificate, for a `rediss://`
    /// server whose certificate the system does not trust (default: the system's).
    pub ca_file: Option<PathBuf>,
    /// When Redis cannot answer: `"closed"` (default) refuses calls; `"open"` lets them in
    /// under each replica's own limits.
    pub fail: Option<FailPolicy>,
    /// What every key starts with, so that deployments can share one Redis (default
    /// `palisade`).
    pub prefix: Option<String>,
    /// How long a call waits for Redis, in milliseconds (default 1000).
    pub timeout_ms: Option<u64>,
    /// How long a replica's hold on the tasks it runs lasts, in seconds, renewed every third
    /// of it (default 15): a task whose replica stopped fails that long after.
    pub task_lease_s: Option<u64>,
}

/// What calls meet while Redis cannot answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailPolicy {
    /// Refused, saying why: no replica exceeds the cluster's limits, at the price of service.
    #[default]
    Closed,
    /// Let in under each replica's own limits: service goes on, and the cluster's allowance is
    /// multiplied by the replicas until Redis is back.
    Open,
}

/// `[cluster]`, resolved.
#[derive(Clone)]
pub struct ClusterSettings {
    /// Where Redis is, without the password.
    pub url: url::Url,
    /// Redis's password, from the URL, the environment or a file.
    pub password: Option<String>,
    /// Extra trusted certificates (PEM) for `rediss://`.
    pub ca_pem: Option<Vec<u8>>,
    /// The failure policy.
    pub fail: FailPolicy,
    /// The keys' prefix.
    pub prefix: String,
    /// The longest wait for Redis on a call.
    pub timeout: Duration,
    /// How long a replica's hold on the tasks it runs lasts unless renewed: past it, another
    /// replica takes a task not ended for failed (its replica stopped).
    pub task_lease: Duration,
}

impl std::fmt::Debug for ClusterSettings {
    // Never the password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterSettings")
            .field("url", &self.url.as_str())
            .field("password", &self.password.as_ref().map(|_| "(set)"))
            .field("fail", &self.fail)
            .field("prefix", &self.prefix)
            .field("timeout", &self.timeout)
            .field("task_lease", &self.task_lease)
            .finish()
    }
}

impl ClusterSettings {
    /// Whether the connection to Redis is encrypted.
    pub fn tls(&self) -> bool {
        self.url.scheme() == "rediss"
    }
}

/// How long a replica's hold on its tasks lasts unless `task_lease_s` says.
const DEFAULT_TASK_LEASE: Duration = Duration::from_secs(15);

/// Checks `[cluster]`; `base` is the configuration file's directory. `None`: no cluster.
pub(super) fn resolve_cluster(
    section: ClusterSection,
    base: &Path,
    io: &dyn super::io::ConfigIo,
) -> Result<Option<ClusterSettings>, String> {
    let Some(text) = section.redis else {
        let set = section.password_env.is_some()
            || section.password_file.is_some()
            || section.ca_file.is_some()
            || section.fail.is_some()
            || section.prefix.is_some()
            || section.timeout_ms.is_some()
            || section.task_lease_s.is_some();
        return match set {
            true => Err(
                "redis is missing\nhow to fix: redis = \"redis://HOST:6379/0\" (or \
                         rediss:// for TLS), or remove [cluster] to serve alone"
                    .into(),
            ),
            false => Ok(None),
        };
    };
    let mut url = url::Url::parse(&text)
        .map_err(|e| format!("redis: `{}` is not a URL ({e})", redact(&text)))?;
    if !matches!(url.scheme(), "redis" | "rediss") {
        return Err(format!(
            "redis: `{}` is not redis:// or rediss://",
            redact(&text)
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("redis: the URL names no host".into());
    }
    let db = url.path().trim_start_matches('/');
    if !db.is_empty() && db.parse::<u16>().is_err() {
        return Err(format!("redis: `/{db}` is not a database number"));
    }
    // As written in the URL, `%40` is `@`.
    let in_url = url.password().map(|p| {
        percent_encoding::percent_decode_str(p)
            .decode_utf8_lossy()
            .into_owned()
    });
    let _ = url.set_password(None);
    let password = match (in_url, section.password_env, section.password_file) {
        (p, None, None) => p,
        (None, Some(var), None) => Some(io.env(&var).ok_or_else(|| {
            format!(
                "password_env: the server's environment variable {var} is not set (or not UTF-8)"
            )
        })?),
        (None, None, Some(file)) => Some(io.secret_file(&base.join(file)).map_err(
            |(super::io::Unreadable::Missing(why) | super::io::Unreadable::Wrong(why))| {
                format!("password_file: {why}")
            },
        )?),
        _ => {
            return Err("give the password once: in the URL, password_env or password_file".into());
        }
    };
    if password.as_deref() == Some("") {
        return Err("the Redis password is empty".into());
    }
    let ca_pem = match section.ca_file {
        None => None,
        Some(_) if url.scheme() != "rediss" => {
            return Err("ca_file is for TLS: use a rediss:// URL".into());
        }
        Some(file) => {
            let path = base.join(file);
            let pem = io
                .read_bytes(&path)
                .map_err(|why| format!("ca_file: {why}"))?;
            if !String::from_utf8_lossy(&pem).contains("-----BEGIN CERTIFICATE-----") {
                return Err(format!(
                    "ca_file: {} holds no PEM certificate",
                    path.display()
                ));
            }
            Some(pem)
        }
    };
    let prefix = section.prefix.unwrap_or_else(|| "palisade".into());
    if prefix.is_empty()
        || prefix.len() > 64
        || !prefix
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(format!(
            "prefix = {prefix:?}: use 1 to 64 letters, digits, '-', '_' or '.'"
        ));
    }
    let timeout = match section.timeout_ms {
        None => DEFAULT_TIMEOUT,
        Some(ms) if TIMEOUT_MS.contains(&ms) => Duration::from_millis(ms),
        Some(ms) => {
            return Err(format!(
                "timeout_ms = {ms} is out of range\nhow to fix: use {} to {} milliseconds",
                TIMEOUT_MS.start(),
                TIMEOUT_MS.end()
            ));
        }
    };
    let task_lease = match section.task_lease_s {
        None => DEFAULT_TASK_LEASE,
        Some(s) if (2..=300).contains(&s) => Duration::from_secs(s),
        Some(s) => {
            return Err(format!(
                "task_lease_s = {s} is out of range\nhow to fix: use 2 to 300 seconds"
            ));
        }
    };
    Ok(Some(ClusterSettings {
        url,
        password,
        ca_pem,
        fail: section.fail.unwrap_or_default(),
        prefix,
        timeout,
        task_lease,
    }))
}

/// `text` with any password in it masked, for messages.
fn redact(text: &str) -> String {
    match url::Url::parse(text) {
        Ok(mut url) if url.password().is_some() => {
            let _ = url.set_password(Some("***"));
            url.to_string()
        }
        Ok(_) => text.to_string(),
        // Not a URL: it may still hold a password; say nothing of it.
        Err(_) => "(the value)".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(toml_text: &str) -> Result<Option<ClusterSettings>, String> {
        let section: ClusterSection = toml::from_str(toml_text).map_err(|e| e.to_string())?;
        resolve_cluster(
            section,
            Path::new("/nonexistent"),
            &crate::config::io::MemoryIo::default(),
        )
    }

    #[test]
    fn a_url_resolves_with_defaults_and_keeps_no_password() {
        let s = resolve("redis = \"redis://app:s%40cret@127.0.0.1:6390/2\"")
            .unwrap()
            .unwrap();
        assert_eq!(s.url.as_str(), "redis://app@127.0.0.1:6390/2");
        assert_eq!(s.password.as_deref(), Some("s@cret"));
        assert_eq!(s.fail, FailPolicy::Closed);
        assert_eq!(s.prefix, "palisade");
        assert_eq!(s.timeout, DEFAULT_TIMEOUT);
        assert!(!format!("{s:?}").contains("cret"));
    }

    #[test]
    fn bad_values_are_refused_without_showing_the_password() {
        for (text, needle) in [
            ("redis = \"http://h:1\"", "not redis://"),
            ("redis = \"redis://:pw@h:1/x\"", "database number"),
            (
                "redis = \"redis://h:1\"\nfail = \"maybe\"",
                "unknown variant",
            ),
            ("redis = \"redis://h:1\"\nprefix = \"a b\"", "prefix"),
            ("redis = \"redis://h:1\"\ntimeout_ms = 5", "out of range"),
            ("redis = \"redis://h:1\"\nca_file = \"ca.pem\"", "rediss://"),
            ("fail = \"open\"", "redis is missing"),
            (
                "redis = \"redis://:pw@h:1\"\npassword_env = \"X\"",
                "password once",
            ),
            (
                "redis = \"redis://h:1\"\npassword_file = \"p\"",
                "cannot read /nonexistent/p",
            ),
        ] {
            let err = resolve(text).unwrap_err();
            assert!(err.contains(needle), "{text}: {err}");
            assert!(!err.contains("pw"), "{text}: {err}");
        }
        assert!(resolve("").unwrap().is_none());
    }
}
