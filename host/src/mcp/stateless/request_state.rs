//! `requestState` for multi round-trip requests (2026-07-28): what the server needs to resume a
//! request after the client answered its input requests, carried by the client.
//!
//! The client must not be able to forge or replay it, so the state is signed (HMAC-SHA256 with
//! the server's key) and names who it was issued to, the request it belongs to, and when it
//! expires. It is signed, not encrypted: it holds only what the client already knows (its own
//! answers and which questions were asked), never a secret of the server's.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Result, bail};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Largest `requestState` accepted or issued: the answers of earlier rounds ride along.
pub const MAX_STATE_BYTES: usize = 256 << 10;

/// The key `requestState` is signed with. Every process behind one load balancer needs the same.
#[derive(Clone)]
pub struct StateKey([u8; 32]);

impl StateKey {
    /// A key of this process only: states it signs are refused by any other process.
    pub fn random() -> Result<StateKey> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key)
            .map_err(|e| anyhow::anyhow!("the operating system's random generator failed: {e}"))?;
        Ok(StateKey(key))
    }

    /// A key shared by several processes, from a secret of at least 32 characters (the file's
    /// contents, without surrounding whitespace).
    pub fn from_secret(secret: &str) -> Result<StateKey> {
        let secret = secret.trim();
        if secret.len() < 32 {
            bail!(
                "the request state key is {} characters long; use at least 32 (`palisade token` makes one)",
                secret.len()
            );
        }
        Ok(StateKey(Sha256::digest(secret.as_bytes()).into()))
    }

    fn mac(&self) -> Hmac<Sha256> {
        // HMAC takes keys of any length.
        Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC accepts any key length")
    }
}

impl std::fmt::Debug for StateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateKey(..)")
    }
}

/// What a `requestState` says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestState {
    /// Seconds since the epoch after which the state is refused.
    pub expires: u64,
    /// The client it was issued to (a token's name, or `anonymous`/`stdio`).
    pub principal: String,
    /// The request it resumes: see [`request_digest`].
    pub request: String,
    /// Answers to input requests of earlier rounds, by key.
    pub answers: Map<String, Value>,
}

/// Why a `requestState` was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StateError {
    /// The signature does not match: not a state this server issued.
    #[error("requestState is not one this server issued, or it was altered")]
    Forged,
    /// Issued longer ago than the configured lifetime.
    #[error("requestState expired; send the request again without it")]
    Expired,
    /// Issued to another client.
    #[error("requestState was issued to another client")]
    OtherPrincipal,
    /// Issued for another request (method, target or arguments).
    #[error("requestState belongs to another request (method, name or arguments differ)")]
    OtherRequest,
    /// Larger than a state may be.
    #[error("requestState is larger than {MAX_STATE_BYTES} bytes")]
    TooLarge,
}

impl RequestState {
    /// A key from the shared secret's bytes.
    pub fn new(
        lifetime: Duration,
        principal: &str,
        request: String,
        answers: Map<String, Value>,
    ) -> RequestState {
        RequestState {
            expires: now_secs().saturating_add(lifetime.as_secs()),
            principal: principal.into(),
            request,
            answers,
        }
    }

    /// The signed, opaque string the client echoes.
    pub fn seal(&self, key: &StateKey) -> Result<String, StateError> {
        // Serializing a struct of strings and JSON values cannot fail.
        let payload = B64.encode(serde_json::to_vec(self).unwrap_or_default());
        let mut mac = key.mac();
        mac.update(payload.as_bytes());
        let sealed = format!("{payload}.{}", B64.encode(mac.finalize().into_bytes()));
        if sealed.len() > MAX_STATE_BYTES {
            return Err(StateError::TooLarge);
        }
        Ok(sealed)
    }

    /// Checks a state the client sent back: signature first, then expiry, client and request.
    pub fn open(
        sealed: &str,
        key: &StateKey,
        principal: &str,
        request: &str,
    ) -> Result<RequestState, StateError> {
        if sealed.len() > MAX_STATE_BYTES {
            return Err(StateError::TooLarge);
        }
        let (payload, tag) = sealed.split_once('.').ok_or(StateError::Forged)?;
        let tag = B64.decode(tag).map_err(|_| StateError::Forged)?;
        let mut mac = key.mac();
        mac.update(payload.as_bytes());
        // Constant-time comparison.
        mac.verify_slice(&tag).map_err(|_| StateError::Forged)?;
        let state: RequestState = B64
            .decode(payload)
            .ok()
            .and_then(|json| serde_json::from_slice(&json).ok())
            .ok_or(StateError::Forged)?;
        if now_secs() > state.expires {
            return Err(StateError::Expired);
        }
        if state.principal != principal {
            return Err(StateError::OtherPrincipal);
        }
        if state.request != request {
            return Err(StateError::OtherRequest);
        }
        Ok(state)
    }
}

/// Names a request by what makes it the same request on a retry: its method, the tool, prompt or
/// resource it is about, and its arguments.
pub fn request_digest(method: &str, target: &str, arguments: &Value) -> String {
    // serde_json's maps are sorted by key, so equal arguments serialize alike.
    let canonical = serde_json::to_vec(&(method, target, arguments)).unwrap_or_default();
    hex::encode(Sha256::digest(canonical))
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn sample(key: &StateKey) -> String {
        let mut answers = Map::new();
        answers.insert("elicit-1".into(), json!({ "action": "accept" }));
        RequestState::new(
            Duration::from_secs(60),
            "alice",
            request_digest("tools/call", "t", &json!({ "a": 1 })),
            answers,
        )
        .seal(key)
        .unwrap()
    }

    #[test]
    fn a_sealed_state_opens_for_its_client_and_request_only() {
        let key = StateKey::from_secret(&"k".repeat(32)).unwrap();
        let sealed = sample(&key);
        let digest = request_digest("tools/call", "t", &json!({ "a": 1 }));
        let state = RequestState::open(&sealed, &key, "alice", &digest).unwrap();
        assert_eq!(state.answers["elicit-1"]["action"], "accept");
        assert_eq!(
            RequestState::open(&sealed, &key, "mallory", &digest),
            Err(StateError::OtherPrincipal)
        );
        let other = request_digest("tools/call", "t", &json!({ "a": 2 }));
        assert_eq!(
            RequestState::open(&sealed, &key, "alice", &other),
            Err(StateError::OtherRequest)
        );
    }

    #[test]
    fn altered_or_foreign_states_are_refused() {
        let key = StateKey::from_secret(&"k".repeat(32)).unwrap();
        let digest = request_digest("tools/call", "t", &json!({ "a": 1 }));
        let sealed = sample(&key);
        // Change one character of the payload, then of the tag.
        for at in [3, sealed.len() - 3] {
            let mut bytes = sealed.clone().into_bytes();
            bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
            let altered = String::from_utf8(bytes).unwrap();
            assert_eq!(
                RequestState::open(&altered, &key, "alice", &digest),
                Err(StateError::Forged)
            );
        }
        let other_key = StateKey::random().unwrap();
        assert_eq!(
            RequestState::open(&sealed, &other_key, "alice", &digest),
            Err(StateError::Forged)
        );
        for junk in ["", "abc", "a.b", "..", &"x".repeat(MAX_STATE_BYTES + 1)] {
            assert!(RequestState::open(junk, &key, "alice", &digest).is_err());
        }
    }

    #[test]
    fn expired_states_are_refused() {
        let key = StateKey::random().unwrap();
        let mut state = RequestState::new(Duration::ZERO, "a", "r".into(), Map::new());
        state.expires = now_secs() - 1;
        let sealed = state.seal(&key).unwrap();
        assert_eq!(
            RequestState::open(&sealed, &key, "a", "r"),
            Err(StateError::Expired)
        );
    }

    #[test]
    fn short_secrets_are_refused() {
        assert!(StateKey::from_secret("short").is_err());
        assert!(StateKey::from_secret(&format!("  {}\n", "x".repeat(32))).is_ok());
    }
}
