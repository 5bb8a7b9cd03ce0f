//! What a verified token may use: its OAuth scopes and claims, mapped to Palisade's scopes.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{OAuthSettings, OAuthSubject, Verified};
use crate::config::Scope;

/// Longest subject or client id kept: they name the client in logs, limits and the audit log.
const MAX_NAME_CHARS: usize = 256;
/// Most OAuth scopes read from one token.
const MAX_SCOPES: usize = 256;

/// Who the token speaks for and what it grants; Err says why it cannot be used.
pub(super) fn verified(
    settings: &OAuthSettings,
    claims: &Map<String, Value>,
) -> Result<Verified, String> {
    let subject = name(claims, "sub")?.ok_or("the token names no subject (sub)")?;
    let client_id = match name(claims, "client_id")? {
        Some(id) => Some(id),
        None => name(claims, "azp")?,
    };
    let scopes = token_scopes(settings, claims);
    let mut granted: Vec<&Arc<Scope>> = scopes
        .iter()
        .filter_map(|s| settings.scopes.get(s))
        .collect();
    granted.extend(
        settings
            .rules
            .iter()
            .filter(|rule| claim(claims, &rule.claim).is_some_and(|v| holds(v, &rule.equals)))
            .map(|rule| &rule.scope),
    );
    Ok(Verified {
        scope: Arc::new(Scope::union(&granted)),
        subject: OAuthSubject {
            subject,
            client_id,
            scopes,
        },
    })
}

/// A claim that names someone: a string of printable characters, not too long.
fn name(claims: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match claims.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s))
            if !s.is_empty()
                && s.chars().count() <= MAX_NAME_CHARS
                && !s.chars().any(char::is_control) =>
        {
            Ok(Some(s.clone()))
        }
        Some(_) => Err(format!(
            "the token's `{key}` claim is not a name (1 to {MAX_NAME_CHARS} printable characters)"
        )),
    }
}

/// The token's OAuth scopes: a space-separated string (RFC 9068 `scope`) or a list (`scp` as
/// some providers write it).
fn token_scopes(settings: &OAuthSettings, claims: &Map<String, Value>) -> Vec<String> {
    let value = match &settings.scope_claim {
        Some(name) => claim(claims, name),
        None => claims.get("scope").or_else(|| claims.get("scp")),
    };
    let mut scopes: Vec<String> = match value {
        Some(Value::String(s)) => s.split_ascii_whitespace().map(str::to_string).collect(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    };
    scopes.truncate(MAX_SCOPES);
    scopes
}

/// The claim `path`: a top-level claim of that exact name (names like
/// `https://example.com/groups` have dots), else `a.b.c` into nested objects.
fn claim<'a>(claims: &'a Map<String, Value>, path: &str) -> Option<&'a Value> {
    if let Some(value) = claims.get(path) {
        return Some(value);
    }
    let mut parts = path.split('.');
    let mut value = claims.get(parts.next()?)?;
    for part in parts {
        value = value.as_object()?.get(part)?;
    }
    Some(value)
}

/// Whether a claim's value is `wanted`, or a list holding it. Strings only: a rule never
/// matches a number or a boolean by its text.
fn holds(value: &Value, wanted: &str) -> bool {
    match value {
        Value::String(s) => s == wanted,
        Value::Array(items) => items.iter().any(|v| v.as_str() == Some(wanted)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;
    use crate::oauth::ClaimRule;

    fn scope(name: &str, entries: &[&str]) -> Arc<Scope> {
        let entries: Vec<String> = entries.iter().map(|s| s.to_string()).collect();
        Arc::new(Scope::parse(name, &entries).unwrap())
    }

    fn settings() -> OAuthSettings {
        OAuthSettings {
            scopes: BTreeMap::from([
                ("tools:hello".to_string(), scope("hello-only", &["hello"])),
                (
                    "tools:files".to_string(),
                    scope("files-read", &["files/read_*"]),
                ),
            ]),
            advertised: vec!["tools:hello".into()],
            rules: vec![ClaimRule {
                claim: "realm_access.roles".into(),
                equals: "admin".into(),
                scope: scope("admin", &["misbehave"]),
            }],
            ..OAuthSettings::for_tests("https://id.example.com")
        }
    }

    fn claims(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn scopes_map_to_palisade_scopes_and_unknown_ones_grant_nothing() {
        let v = verified(
            &settings(),
            &claims(json!({"sub": "alice", "scope": "tools:hello openid tools:files", "client_id": "cli"})),
        )
        .unwrap();
        assert_eq!(v.subject.subject, "alice");
        assert_eq!(v.subject.client_id.as_deref(), Some("cli"));
        assert_eq!(
            v.subject.scopes,
            ["tools:hello", "openid", "tools:files"].map(String::from)
        );
        assert!(v.scope.allows_item("hello", "greet"));
        assert!(v.scope.allows_item("files", "read_file"));
        assert!(!v.scope.allows_item("files", "write_file"));
        assert!(!v.scope.allows_plugin("misbehave"));

        let none = verified(
            &settings(),
            &claims(json!({"sub": "bob", "scope": "openid"})),
        )
        .unwrap();
        assert!(!none.scope.allows_plugin("hello"));
        assert!(!none.scope.allows_item("hello", "greet"));
    }

    #[test]
    fn scp_lists_and_nested_claim_rules_grant_too() {
        let v = verified(
            &settings(),
            &claims(json!({"sub": "carol", "scp": ["tools:hello"], "azp": "web",
                           "realm_access": {"roles": ["user", "admin"]}})),
        )
        .unwrap();
        assert_eq!(v.subject.client_id.as_deref(), Some("web"));
        assert!(v.scope.allows_item("hello", "greet"));
        assert!(v.scope.allows_plugin("misbehave"));
        // A number is not the string "admin", and a role elsewhere is not the rule's claim.
        let v = verified(
            &settings(),
            &claims(json!({"sub": "dan", "realm_access": {"roles": 1}, "roles": ["admin"]})),
        )
        .unwrap();
        assert!(!v.scope.allows_plugin("misbehave"));
    }

    #[test]
    fn names_that_cannot_name_a_client_are_refused() {
        for bad in [
            json!({"sub": ""}),
            json!({"sub": 7}),
            json!({"sub": "a\nb"}),
            json!({}),
        ] {
            assert!(
                verified(&settings(), &claims(bad.clone())).is_err(),
                "{bad}"
            );
        }
        let long = "x".repeat(MAX_NAME_CHARS + 1);
        assert!(verified(&settings(), &claims(json!({"sub": long}))).is_err());
    }
}
