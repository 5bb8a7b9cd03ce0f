//! `[auth.oauth]`, checked: the issuer, the resource, the algorithms, and what grants what.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use jsonwebtoken::Algorithm;

use super::Scope;
use super::file::OAuthSection;
use crate::sources::source::is_loopback;

/// Accepted unless the configuration says otherwise: every asymmetric algorithm the verifier
/// knows. HMAC (`HS*`) is never accepted: its key would be a secret shared with the provider,
/// which a JWKS does not carry, and accepting it invites key-confusion attacks.
const DEFAULT_ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];
/// Largest clock skew accepted in the configuration.
const MAX_CLOCK_SKEW: Duration = Duration::from_secs(300);

/// `[auth.oauth]`, resolved.
#[derive(Debug, Clone)]
pub struct OAuthSettings {
    /// The issuer, exactly as tokens and its metadata name it.
    pub issuer: String,
    /// This server's resource identifier, when configured.
    pub resource: Option<url::Url>,
    /// Signature algorithms accepted.
    pub algorithms: Vec<Algorithm>,
    /// How far `exp` and `nbf` may be off.
    pub clock_skew: Duration,
    /// The claim holding the scopes; `None`: `scope`, else `scp`.
    pub scope_claim: Option<String>,
    /// OAuth scope to the Palisade scope it grants.
    pub scopes: BTreeMap<String, Arc<Scope>>,
    /// The OAuth scopes clients are told to ask for.
    pub advertised: Vec<String>,
    /// Scopes granted by other claims.
    pub rules: Vec<ClaimRule>,
}

/// A token whose `claim` is, or contains, `equals` gets `scope`.
#[derive(Debug, Clone)]
pub struct ClaimRule {
    /// The claim's name (`a.b` reaches into objects).
    pub claim: String,
    /// The value it must be or contain.
    pub equals: String,
    /// What it grants.
    pub scope: Arc<Scope>,
}

impl OAuthSettings {
    /// Settings for unit tests: `issuer`, RS256, 60 s of skew, no scopes or rules (tests set
    /// what they need with `..OAuthSettings::for_tests(issuer)`).
    #[cfg(test)]
    pub fn for_tests(issuer: &str) -> OAuthSettings {
        OAuthSettings {
            issuer: issuer.into(),
            resource: None,
            algorithms: vec![Algorithm::RS256],
            clock_skew: Duration::from_secs(60),
            scope_claim: None,
            scopes: BTreeMap::new(),
            advertised: Vec::new(),
            rules: Vec::new(),
        }
    }

    /// Checks `section`; `find` turns a Palisade scope's name into the scope, or says why not.
    pub(super) fn resolve(
        section: OAuthSection,
        find: impl Fn(&str, &str) -> Result<Arc<Scope>, String>,
    ) -> Result<OAuthSettings, String> {
        let issuer = url::Url::parse(&section.issuer)
            .map_err(|e| format!("oauth.issuer {:?} is not a URL: {e}", section.issuer))?;
        check_transport(&issuer, "oauth.issuer")?;
        if issuer.query().is_some() || issuer.fragment().is_some() {
            return Err("oauth.issuer: an issuer URL has no query or fragment (RFC 8414)".into());
        }
        let resource = section
            .resource
            .as_deref()
            .map(|text| {
                let url = url::Url::parse(text)
                    .map_err(|e| format!("oauth.resource {text:?} is not a URL: {e}"))?;
                check_transport(&url, "oauth.resource")?;
                if url.fragment().is_some() {
                    return Err(format!(
                        "oauth.resource {text:?}: a resource identifier has no fragment (RFC 8707)"
                    ));
                }
                Ok(url)
            })
            .transpose()?;
        let algorithms = match section.algorithms {
            None => DEFAULT_ALGORITHMS.to_vec(),
            Some(names) if names.is_empty() => {
                return Err("oauth.algorithms is empty: no token could be accepted".into());
            }
            Some(names) => names
                .iter()
                .map(|name| algorithm(name))
                .collect::<Result<_, _>>()?,
        };
        let clock_skew = Duration::from_secs(section.clock_skew_s.unwrap_or(60));
        if clock_skew > MAX_CLOCK_SKEW {
            return Err(format!(
                "oauth.clock_skew_s = {} is more than {}: an expired token would be accepted for that long",
                clock_skew.as_secs(),
                MAX_CLOCK_SKEW.as_secs()
            ));
        }
        if section
            .scope_claim
            .as_deref()
            .is_some_and(|c| c.trim().is_empty())
        {
            return Err("oauth.scope_claim is empty".into());
        }
        let mut scopes = BTreeMap::new();
        for (oauth_scope, palisade_scope) in section.scopes {
            if oauth_scope.is_empty() || oauth_scope.contains([' ', '"', '\\']) {
                return Err(format!(
                    "oauth.scopes: {oauth_scope:?} is not an OAuth scope (no spaces, quotes or backslashes)"
                ));
            }
            let scope = find(&palisade_scope, &format!("oauth.scopes.{oauth_scope:?}"))?;
            scopes.insert(oauth_scope, scope);
        }
        let rules = section
            .rules
            .into_iter()
            .enumerate()
            .map(|(i, rule)| {
                if rule.claim.is_empty() {
                    return Err(format!("oauth.rules[{i}]: claim is empty"));
                }
                Ok(ClaimRule {
                    scope: find(&rule.scope, &format!("oauth.rules[{i}]: scope"))?,
                    claim: rule.claim,
                    equals: rule.equals,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let advertised = match section.advertised_scopes {
            None => scopes.keys().cloned().collect(),
            Some(list) => {
                if let Some(unknown) = list.iter().find(|s| !scopes.contains_key(*s)) {
                    return Err(format!(
                        "oauth.advertised_scopes: {unknown:?} is not a key of [auth.oauth.scopes]: it would grant nothing"
                    ));
                }
                list
            }
        };
        if scopes.is_empty() && rules.is_empty() {
            return Err(
                "[auth.oauth] grants nothing: no token could use any tool\nhow to fix: map OAuth scopes to Palisade scopes under [auth.oauth.scopes] (\"tools:read\" = \"readers\"), or add [[auth.oauth.rules]]".into(),
            );
        }
        Ok(OAuthSettings {
            issuer: section.issuer,
            resource,
            algorithms,
            clock_skew,
            scope_claim: section.scope_claim,
            scopes,
            advertised,
            rules,
        })
    }

    /// Whether `other` would accept and grant the same.
    pub fn same_as(&self, other: &OAuthSettings) -> bool {
        let scope_names = |s: &OAuthSettings| -> Vec<(String, String)> {
            s.scopes
                .iter()
                .map(|(k, v)| (k.clone(), v.name.clone()))
                .chain(
                    s.rules
                        .iter()
                        .map(|r| (format!("{}={}", r.claim, r.equals), r.scope.name.clone())),
                )
                .collect()
        };
        self.issuer == other.issuer
            && self.resource == other.resource
            && self.algorithms == other.algorithms
            && self.clock_skew == other.clock_skew
            && self.scope_claim == other.scope_claim
            && self.advertised == other.advertised
            && scope_names(self) == scope_names(other)
    }
}

/// Tokens and keys travel over HTTPS; plain HTTP only to this machine (a provider on
/// loopback, in development and tests).
pub(crate) fn check_transport(url: &url::Url, field: &str) -> Result<(), String> {
    match url.scheme() {
        "https" => Ok(()),
        "http" if url.host_str().is_some_and(is_loopback) => Ok(()),
        _ => Err(format!(
            "{field} {:?} must be an https:// URL (plain http only on loopback)",
            url.as_str()
        )),
    }
}

fn algorithm(name: &str) -> Result<Algorithm, String> {
    let alg: Algorithm = name.parse().map_err(|_| {
        format!(
            "oauth.algorithms: {name:?} is not an algorithm this server knows (use {})",
            DEFAULT_ALGORITHMS.map(|a| format!("{a:?}")).join(", ")
        )
    })?;
    if !DEFAULT_ALGORITHMS.contains(&alg) {
        return Err(format!(
            "oauth.algorithms: {name} is a shared-secret algorithm; only public-key signatures (from the issuer's JWKS) are accepted"
        ));
    }
    Ok(alg)
}
