//! What resolving a configuration reads from the machine: directories that must exist, files
//! (keys, tokens, secrets, certificate authorities), the server's environment and the desktop
//! keyring. Behind one trait, so that [`Config::parse`](super::Config::parse) is a pure function
//! of the text and what this gives it, and its checks are tested without scratch directories or
//! D-Bus.

use std::path::Path;

use super::keyring::{self, KeyringError};
use crate::runtime::TlsTrust;

/// Why a secret's value could not be read: it is not there (an optional secret is then left
/// out), or it is there but must not be used (always an error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreadable {
    /// Not there: a missing file or variable, an absent keyring entry.
    Missing(String),
    /// There, but unusable: readable by others, too large, not a file.
    Wrong(String),
}

/// The most a secret (a file, a keyring entry) may hold.
pub const MAX_SECRET_BYTES: u64 = 64 << 10;

/// The machine, as the configuration sees it.
pub trait ConfigIo {
    /// Whether `path` is a directory.
    fn is_dir(&self, path: &Path) -> bool;
    /// The text of `path` (a key, a token file).
    fn read_text(&self, path: &Path) -> Result<String, String>;
    /// The bytes of `path`.
    fn read_bytes(&self, path: &Path) -> Result<Vec<u8>, String>;
    /// A secret's file: a regular file of the server's user that no one else can read, its
    /// text without the final line break.
    fn secret_file(&self, path: &Path) -> Result<String, Unreadable>;
    /// The server's environment variable `name`, if set (and UTF-8).
    fn env(&self, name: &str) -> Option<String>;
    /// A keyring entry, `SERVICE/USER`.
    fn keyring(&self, entry: &str) -> Result<String, Unreadable>;
    /// Whether the PEM file `path` holds certificate authorities HTTPS can trust.
    fn check_ca_file(&self, path: &Path) -> Result<(), String>;
}

/// The machine itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemIo;

impl ConfigIo for SystemIo {
    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }

    fn read_text(&self, path: &Path) -> Result<String, String> {
        std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
    }

    fn read_bytes(&self, path: &Path) -> Result<Vec<u8>, String> {
        std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
    }

    fn secret_file(&self, path: &Path) -> Result<String, Unreadable> {
        let shown = path.display();
        let meta = std::fs::metadata(path).map_err(|e| {
            let why = format!("cannot read {shown}: {e}");
            if e.kind() == std::io::ErrorKind::NotFound {
                Unreadable::Missing(why)
            } else {
                Unreadable::Wrong(why)
            }
        })?;
        if !meta.is_file() {
            return Err(Unreadable::Wrong(format!("{shown} is not a file")));
        }
        if !crate::runtime::private_dir::readable_only_by_me(&meta) {
            return Err(Unreadable::Wrong(format!(
                "{shown} can be read or written by other users, or belongs to another\nhow to \
                 fix: chmod 600 {shown} (as the user that runs palisade)"
            )));
        }
        if meta.len() > MAX_SECRET_BYTES {
            return Err(Unreadable::Wrong(format!(
                "{shown} holds more than {} KiB: not a secret",
                MAX_SECRET_BYTES >> 10
            )));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| Unreadable::Wrong(format!("cannot read {shown}: {e}")))?;
        let text = text.strip_suffix('\n').unwrap_or(&text);
        Ok(text.strip_suffix('\r').unwrap_or(text).to_string())
    }

    fn env(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }

    fn keyring(&self, entry: &str) -> Result<String, Unreadable> {
        let (service, user) = keyring::parse_entry(entry).map_err(Unreadable::Wrong)?;
        keyring::lookup(service, user, MAX_SECRET_BYTES as usize).map_err(|e| match e {
            KeyringError::Absent(why) => Unreadable::Missing(why),
            KeyringError::Unusable(why) => Unreadable::Wrong(why),
        })
    }

    fn check_ca_file(&self, path: &Path) -> Result<(), String> {
        TlsTrust::with_ca_files(&[path.to_path_buf()])
            .map(drop)
            .map_err(|e| e.to_string())
    }
}

/// A machine described in memory, for the configuration's tests.
#[cfg(test)]
#[derive(Debug, Default)]
pub struct MemoryIo {
    /// Directories that exist.
    pub dirs: Vec<std::path::PathBuf>,
    /// Files and their text (secret files among them).
    pub files: std::collections::BTreeMap<std::path::PathBuf, String>,
    /// The server's environment.
    pub env: std::collections::BTreeMap<String, String>,
    /// Keyring entries, by `SERVICE/USER`.
    pub keyring: std::collections::BTreeMap<String, String>,
}

#[cfg(test)]
impl ConfigIo for MemoryIo {
    fn is_dir(&self, path: &Path) -> bool {
        self.dirs.iter().any(|d| d == path)
    }

    fn read_text(&self, path: &Path) -> Result<String, String> {
        self.files
            .get(path)
            .cloned()
            .ok_or_else(|| format!("cannot read {}: not found", path.display()))
    }

    fn read_bytes(&self, path: &Path) -> Result<Vec<u8>, String> {
        self.read_text(path).map(String::into_bytes)
    }

    fn secret_file(&self, path: &Path) -> Result<String, Unreadable> {
        self.read_text(path).map_err(Unreadable::Missing)
    }

    fn env(&self, name: &str) -> Option<String> {
        self.env.get(name).cloned()
    }

    fn keyring(&self, entry: &str) -> Result<String, Unreadable> {
        self.keyring
            .get(entry)
            .cloned()
            .ok_or_else(|| Unreadable::Missing(format!("no keyring entry {entry}")))
    }

    fn check_ca_file(&self, path: &Path) -> Result<(), String> {
        let text = self.read_text(path)?;
        match text.contains("-----BEGIN CERTIFICATE-----") {
            true => Ok(()),
            false => Err(format!("{} holds no PEM certificate", path.display())),
        }
    }
}
