//! Tokens already checked, so that a client sending the same token with every request pays for
//! one signature check (measured: an RS256 check per request cut throughput by three quarters,
//! bench/gateway.sh). Keyed by the SHA-256 of the whole token, so only the very bytes that were
//! verified hit; each hit checks the expiry again; emptied whenever the issuer's keys are fetched
//! again, so a withdrawn key stops its tokens within the hour; bounded in entries.

use parking_lot::Mutex;
use std::collections::HashMap;

use sha2::{Digest, Sha256};

use super::Verified;

/// Most tokens remembered; past it, expired ones go, and if none has, all do.
const MAX_ENTRIES: usize = 10_000;

/// Verified tokens and when each expires (seconds since the epoch, leeway included).
#[derive(Default)]
pub struct VerifiedCache {
    entries: Mutex<HashMap<[u8; 32], (Verified, u64)>>,
}

impl VerifiedCache {
    /// The token's digest, its key here.
    pub fn key(token: &str) -> [u8; 32] {
        Sha256::digest(token.as_bytes()).into()
    }

    /// What `key`'s token was verified as, if it was and has not expired by `now`.
    pub fn get(&self, key: &[u8; 32], now: u64) -> Option<Verified> {
        let mut entries = self.entries.lock();
        match entries.get(key) {
            Some((verified, expires)) if now <= *expires => Some(verified.clone()),
            Some(_) => {
                entries.remove(key);
                None
            }
            None => None,
        }
    }

    /// Remembers a verified token until `expires`.
    pub fn insert(&self, key: [u8; 32], verified: Verified, expires: u64, now: u64) {
        let mut entries = self.entries.lock();
        if entries.len() >= MAX_ENTRIES {
            entries.retain(|_, (_, until)| now <= *until);
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
        }
        entries.insert(key, (verified, expires));
    }

    /// Forgets every token (the keys changed).
    pub fn clear(&self) {
        self.entries.lock().clear();
    }
}
