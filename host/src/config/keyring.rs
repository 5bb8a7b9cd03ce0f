//! Secrets kept in the user's keyring: the Secret Service (GNOME Keyring, KWallet) on Linux, the
//! login keychain on macOS. An entry is `service/user`, the two attributes `secret-tool`,
//! Python's `keyring` and keyring-rs all store and search by.

use parking_lot::Mutex;
use std::sync::Arc;
use std::time::{Duration, Instant};

use keyring_core::{CredentialStore, Entry, Error};

/// Longest one lookup may take: a keyring that waits on a password prompt nobody can answer
/// must not hold up the server's start, or a reload, for good.
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(10);

/// When a lookup last went unanswered: for a minute after, lookups fail at once, so that a
/// configuration with many keyring secrets does not wait [`LOOKUP_TIMEOUT`] for each.
static UNANSWERED_AT: Mutex<Option<Instant>> = Mutex::new(None);

/// Why a keyring secret could not be read.
#[derive(Debug)]
pub enum KeyringError {
    /// No such entry, or no keyring to ask: an optional secret is left out.
    Absent(String),
    /// The entry is there but cannot be used.
    Unusable(String),
}

/// `service/user` taken apart at the last `/` (a service may be a URL; a user name has none).
pub(super) fn parse_entry(spec: &str) -> Result<(&str, &str), String> {
    match spec.rsplit_once('/') {
        Some((service, user)) if !service.is_empty() && !user.is_empty() => Ok((service, user)),
        _ => Err(format!(
            "keyring = {spec:?} is not \"SERVICE/USER\"\nhow to fix: write the entry's service \
             and user attributes, such as keyring = \"api.github.com/me\""
        )),
    }
}

/// The text stored under `service` and `user`, asked for on a thread of its own so that a
/// keyring that never answers is given up after [`LOOKUP_TIMEOUT`].
pub fn lookup(service: &str, user: &str, max_bytes: usize) -> Result<String, KeyringError> {
    let unanswered = || {
        KeyringError::Absent(format!(
            "the keyring did not answer within {} s (is it locked, waiting for a password \
             prompt?)\nhow to fix: unlock it, then start palisade again",
            LOOKUP_TIMEOUT.as_secs()
        ))
    };
    let last_unanswered = *UNANSWERED_AT.lock();
    if last_unanswered.is_some_and(|at| at.elapsed() < Duration::from_secs(60)) {
        return Err(unanswered());
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let (service_owned, user_owned) = (service.to_string(), user.to_string());
    std::thread::Builder::new()
        .name("keyring".into())
        .spawn(move || {
            let _ = tx.send(read(&service_owned, &user_owned));
        })
        .map_err(|e| KeyringError::Absent(format!("cannot ask the keyring: {e}")))?;
    let value = match rx.recv_timeout(LOOKUP_TIMEOUT) {
        Ok(read) => read.map_err(|e| explain(e, service, user))?,
        Err(_) => {
            *UNANSWERED_AT.lock() = Some(Instant::now());
            return Err(unanswered());
        }
    };
    // `echo token | secret-tool store ...` keeps the line break; a file secret loses it too.
    let value = value.strip_suffix('\n').unwrap_or(&value);
    let value = value.strip_suffix('\r').unwrap_or(value).to_string();
    if value.len() > max_bytes {
        return Err(KeyringError::Unusable(format!(
            "the keyring entry {service}/{user} holds more than {} KiB: not a secret",
            max_bytes >> 10
        )));
    }
    Ok(value)
}

fn read(service: &str, user: &str) -> keyring_core::Result<String> {
    let store = platform_store()?;
    Entry::new_in_store(&store, service, user)?.get_password()
}

#[cfg(target_os = "linux")]
fn platform_store() -> keyring_core::Result<Arc<CredentialStore>> {
    Ok(zbus_secret_service_keyring_store::Store::new()?)
}

#[cfg(target_os = "macos")]
fn platform_store() -> keyring_core::Result<Arc<CredentialStore>> {
    Ok(apple_native_keyring_store::keychain::Store::new()?)
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn platform_store() -> keyring_core::Result<Arc<CredentialStore>> {
    Err(Error::NotSupportedByStore(
        "palisade reads keyrings on Linux and macOS only".into(),
    ))
}

/// What went wrong, and what the user can do about it.
fn explain(error: Error, service: &str, user: &str) -> KeyringError {
    let entry = format!("{service}/{user}");
    match error {
        Error::NoEntry => KeyringError::Absent(format!(
            "the keyring has no entry {entry}\nhow to fix: {}",
            store_hint(service, user)
        )),
        Error::NoStorageAccess(e) => KeyringError::Absent(format!(
            "the keyring refused to give {entry} (is it locked?): {e}"
        )),
        Error::PlatformFailure(e) => KeyringError::Absent(format!(
            "no keyring to ask ({e})\nhow to fix: run palisade in a session with a keyring \
             (GNOME Keyring or KWallet on Linux), or keep the secret in a file or variable"
        )),
        Error::NotSupportedByStore(why) => KeyringError::Absent(why),
        Error::Ambiguous(found) => KeyringError::Unusable(format!(
            "the keyring has {} entries for {entry}\nhow to fix: keep one (seahorse, or \
             secret-tool clear service {service:?} username {user:?} and store it again)",
            found.len()
        )),
        Error::BadEncoding(_) => {
            KeyringError::Unusable(format!("the keyring entry {entry} is not UTF-8 text"))
        }
        other => KeyringError::Unusable(format!("cannot read {entry} from the keyring: {other}")),
    }
}

#[cfg(target_os = "macos")]
fn store_hint(service: &str, user: &str) -> String {
    format!("security add-generic-password -s {service:?} -a {user:?} -w")
}

#[cfg(not(target_os = "macos"))]
fn store_hint(service: &str, user: &str) -> String {
    format!("secret-tool store --label=palisade service {service:?} username {user:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_split_at_the_last_slash() {
        assert_eq!(parse_entry("github/me"), Ok(("github", "me")));
        assert_eq!(
            parse_entry("https://api.example.com/token"),
            Ok(("https://api.example.com", "token"))
        );
        for bad in ["github", "/me", "github/", ""] {
            let err = parse_entry(bad).unwrap_err();
            assert!(err.contains("SERVICE/USER"), "{bad}: {err}");
        }
    }
}
