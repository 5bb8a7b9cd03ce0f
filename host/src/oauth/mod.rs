//! This server as an OAuth 2.1 resource server, as the MCP authorization specification asks:
//! access tokens (JWTs) from one trusted issuer, checked on every HTTP request for their
//! signature (the issuer's published keys), issuer, audience (RFC 8707: this server's
//! resource identifier), expiry and algorithm; their scopes and other claims mapped to
//! Palisade's scopes. Tokens are read here and nowhere else: plugins never see them.
//!
//! The settings are the configuration's (`config::OAuthSettings`); here `keys.rs` holds the
//! issuer's keys (discovery, JWKS, refresh), `grants.rs` decides what a verified token may use,
//! `challenge.rs` what a refused client is told (RFC 6750 `WWW-Authenticate`, RFC 9728 protected
//! resource metadata).

mod challenge;
mod grants;
mod keys;
mod verified_cache;

use std::sync::Arc;
use std::time::Duration;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Validation, decode, decode_header};
use serde_json::{Map, Value};

pub use challenge::Challenge;
pub use keys::KeyCache;

use crate::config::Scope;
pub use crate::config::{ClaimRule, OAuthSettings, OAuthSubject};

/// Longest token looked at; a JWT from a real provider is a few KiB.
const MAX_TOKEN_BYTES: usize = 16 * 1024;
/// Unknown key ids make the server fetch the issuer's keys again, at most this often: a client
/// cannot turn made-up `kid`s into a flood of requests to the provider.
const MIN_REFRESH_INTERVAL: Duration = Duration::from_secs(10);
/// Keys are fetched again this often even when nothing asks, so a key the provider withdrew
/// stops being trusted.
pub const KEYS_MAX_AGE: Duration = Duration::from_secs(3600);

/// A token that checked out.
#[derive(Debug, Clone)]
pub struct Verified {
    /// Who it speaks for.
    pub subject: OAuthSubject,
    /// What it may see and call: the Palisade scopes its OAuth scopes and claims grant, as one.
    pub scope: Arc<Scope>,
}

/// Why a token is not accepted.
#[derive(Debug, PartialEq, Eq)]
pub enum Rejected {
    /// Signed by a key the server does not have (yet): fetch the keys again, then retry.
    UnknownKey,
    /// Not valid, with the reason a client may be told.
    Invalid(String),
}

/// The verifier: settings, the resource identifier in force, and the issuer's keys.
pub struct OAuth {
    settings: OAuthSettings,
    /// The resource identifier tokens must name, and the forms of it accepted as `aud`.
    resource: String,
    audiences: Vec<String>,
    keys: KeyCache,
    challenge: Challenge,
    verified: verified_cache::VerifiedCache,
}

impl OAuth {
    /// A verifier for tokens naming `resource` (the configured one, or the address the server
    /// listens on); the issuer's keys are fetched by [`OAuth::refresh_keys`].
    pub fn new(settings: OAuthSettings, resource: url::Url) -> anyhow::Result<OAuth> {
        let resource_text = canonical(&resource);
        let mut audiences = vec![resource_text.clone(), resource.to_string()];
        audiences.dedup();
        let challenge = Challenge::new(&resource, &settings);
        Ok(OAuth {
            keys: KeyCache::new(&settings.issuer)?,
            settings,
            resource: resource_text,
            audiences,
            challenge,
            verified: Default::default(),
        })
    }

    /// The resource identifier tokens must name.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The settings in force.
    pub fn settings(&self) -> &OAuthSettings {
        &self.settings
    }

    /// What refused clients are told, and the metadata document.
    pub fn challenge(&self) -> &Challenge {
        &self.challenge
    }

    /// Fetches the issuer's keys again: `scheduled` at the start and every hour, else for a
    /// token naming an unknown key, at most every 10 s. Err says why the
    /// keys could not be fetched; the keys held stay.
    pub async fn refresh_keys(&self, scheduled: bool) -> anyhow::Result<bool> {
        let asked_by_token = (!scheduled).then_some(MIN_REFRESH_INTERVAL);
        let refreshed = self.keys.refresh(asked_by_token).await?;
        if refreshed {
            // A key may be gone: tokens are checked against the new set from now on.
            self.verified.clear();
        }
        Ok(refreshed)
    }

    /// The issuer's keys.
    #[cfg(test)]
    pub fn keys(&self) -> &KeyCache {
        &self.keys
    }

    /// Whether keys were ever fetched: until then no token can be checked.
    pub fn has_keys(&self) -> bool {
        self.keys.fetched()
    }

    /// Checks `token`: signature, algorithm, issuer, audience, expiry; then what it grants. A
    /// token verified before (the same bytes) only has its expiry checked again.
    pub fn verify(&self, token: &str) -> Result<Verified, Rejected> {
        let invalid = |why: &str| Rejected::Invalid(why.to_string());
        if token.len() > MAX_TOKEN_BYTES {
            return Err(invalid("the token is too long"));
        }
        let key = verified_cache::VerifiedCache::key(token);
        let now = jsonwebtoken::get_current_timestamp();
        if let Some(verified) = self.verified.get(&key, now) {
            return Ok(verified);
        }
        let verified = self.verify_signed(token)?;
        // `exp` is there and a number: the check just passed required it.
        if let Some(exp) = verified.1 {
            let until = exp.saturating_add(self.settings.clock_skew.as_secs());
            self.verified.insert(key, verified.0.clone(), until, now);
        }
        Ok(verified.0)
    }

    /// [`OAuth::verify`] without the cache: the token and its `exp`.
    fn verify_signed(&self, token: &str) -> Result<(Verified, Option<u64>), Rejected> {
        let invalid = |why: &str| Rejected::Invalid(why.to_string());
        // Parsing the header before the signature is checked is safe: it only picks the key, and
        // `alg: none` (an unsigned token) or an unknown algorithm fails to parse.
        let header = decode_header(token).map_err(|e| match e.kind() {
            ErrorKind::InvalidAlgorithmName => {
                invalid("the token's algorithm is not one this server accepts")
            }
            _ => invalid("the token is not a signed JWT"),
        })?;
        if !self.settings.algorithms.contains(&header.alg) {
            return Err(Rejected::Invalid(format!(
                "the token is signed with {:?}, which this server does not accept",
                header.alg
            )));
        }
        let keys = self.keys.current();
        let key = keys
            .find(header.kid.as_deref(), header.alg)
            .ok_or(Rejected::UnknownKey)?;
        let mut validation = Validation::new(header.alg);
        validation.leeway = self.settings.clock_skew.as_secs();
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.settings.issuer]);
        validation.set_audience(&self.audiences);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let claims = decode::<Map<String, Value>>(token, key, &validation)
            .map_err(|e| Rejected::Invalid(reason(e.kind()).to_string()))?
            .claims;
        let exp = claims.get("exp").and_then(Value::as_u64);
        let verified = grants::verified(&self.settings, &claims).map_err(Rejected::Invalid)?;
        Ok((verified, exp))
    }

    /// The OAuth scopes that would let a client use `item` of `plugin` (a tool or a prompt), for
    /// the `scope` of an `insufficient_scope` challenge.
    pub fn scopes_granting(&self, plugin: &str, item: &str) -> Vec<&str> {
        self.settings
            .scopes
            .iter()
            .filter(|(_, scope)| scope.allows_item(plugin, item))
            .map(|(name, _)| name.as_str())
            .collect()
    }
}

/// What a client is told about a token that failed a check.
fn reason(kind: &ErrorKind) -> &'static str {
    match kind {
        ErrorKind::ExpiredSignature => "the token has expired",
        ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)",
        ErrorKind::InvalidAudience => "the token was not issued for this server (aud)",
        ErrorKind::InvalidIssuer => "the token is from another issuer (iss)",
        ErrorKind::InvalidSignature => "the token's signature does not verify",
        ErrorKind::InvalidAlgorithm => "the token's algorithm does not match its key",
        ErrorKind::MissingRequiredClaim(claim) => match claim.as_str() {
            "exp" => "the token has no expiry (exp)",
            "aud" => "the token names no audience (aud)",
            "iss" => "the token names no issuer (iss)",
            _ => "the token names no subject (sub)",
        },
        _ => "the token is not valid",
    }
}

/// A resource identifier as RFC 8707 and the MCP specification write it: scheme and host in
/// lower case (the URL parser does that), no trailing slash on an empty path, no fragment.
pub fn canonical(url: &url::Url) -> String {
    let text = url.as_str();
    if url.path() == "/" && url.query().is_none() {
        text.trim_end_matches('/').to_string()
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests;
