//! What a client without a good token is told: the `WWW-Authenticate` challenges of RFC 6750
//! with the `resource_metadata` of RFC 9728, and that metadata document itself, from which an
//! MCP client finds the authorization server.

use serde_json::{Value, json};

use super::{OAuthSettings, canonical};

/// The challenges and the metadata document, built once.
pub struct Challenge {
    metadata_url: String,
    document: Value,
}

impl Challenge {
    /// For the resource `resource`, served as `settings` say.
    pub fn new(resource: &url::Url, settings: &OAuthSettings) -> Challenge {
        // RFC 9728 section 3.1: the well-known part goes between the host and the path.
        let mut metadata = resource.clone();
        let path = resource.path().trim_end_matches('/');
        metadata.set_path(&format!("/.well-known/oauth-protected-resource{path}"));
        metadata.set_query(None);
        let scopes: Vec<&str> = settings.advertised.iter().map(String::as_str).collect();
        let mut document = json!({
            "resource": canonical(resource),
            "authorization_servers": [settings.issuer],
            "bearer_methods_supported": ["header"],
            "resource_name": "Palisade MCP server",
        });
        if !scopes.is_empty()
            && let Some(map) = document.as_object_mut()
        {
            map.insert("scopes_supported".into(), json!(scopes));
        }
        Challenge {
            metadata_url: metadata.to_string(),
            document,
        }
    }

    /// Where the metadata document is served.
    pub fn metadata_url(&self) -> &str {
        &self.metadata_url
    }

    /// The protected resource metadata (RFC 9728).
    pub fn document(&self) -> &Value {
        &self.document
    }

    /// No token at all: where to find out how to get one.
    pub fn missing_token(&self) -> String {
        format!(r#"Bearer resource_metadata="{}""#, self.metadata_url)
    }

    /// A token that failed a check, and why.
    pub fn invalid_token(&self, why: &str) -> String {
        format!(
            r#"Bearer error="invalid_token", error_description="{}", resource_metadata="{}""#,
            quotable(why),
            self.metadata_url
        )
    }

    /// A good token whose scopes do not cover the request: `scopes` would.
    pub fn insufficient_scope(&self, scopes: &[&str], why: &str) -> String {
        format!(
            r#"Bearer error="insufficient_scope", scope="{}", resource_metadata="{}", error_description="{}""#,
            quotable(&scopes.join(" ")),
            self.metadata_url,
            quotable(why)
        )
    }
}

/// Text safe inside a quoted-string of RFC 6750 (printable ASCII without `"` and `\`).
fn quotable(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            ' '..='~' if c != '"' && c != '\\' => c,
            _ => '\'',
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use super::*;
    use crate::config::Scope;

    fn settings() -> OAuthSettings {
        OAuthSettings {
            scopes: BTreeMap::from([
                ("tools:read".to_string(), Arc::new(Scope::all())),
                ("tools:admin".to_string(), Arc::new(Scope::all())),
            ]),
            advertised: vec!["tools:admin".into(), "tools:read".into()],
            ..OAuthSettings::for_tests("https://id.example.com/realms/team")
        }
    }

    #[test]
    fn metadata_sits_between_host_and_path() {
        let resource = url::Url::parse("https://MCP.example.com:8443/team/mcp").unwrap();
        let c = Challenge::new(&resource, &settings());
        assert_eq!(
            c.metadata_url(),
            "https://mcp.example.com:8443/.well-known/oauth-protected-resource/team/mcp"
        );
        assert_eq!(
            c.document()["resource"],
            "https://mcp.example.com:8443/team/mcp"
        );
        assert_eq!(
            c.document()["authorization_servers"],
            json!(["https://id.example.com/realms/team"])
        );
        assert_eq!(
            c.document()["scopes_supported"],
            json!(["tools:admin", "tools:read"])
        );
        let root = Challenge::new(
            &url::Url::parse("https://mcp.example.com").unwrap(),
            &settings(),
        );
        assert_eq!(
            root.metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource"
        );
        assert_eq!(root.document()["resource"], "https://mcp.example.com");
    }

    #[test]
    fn challenges_are_well_formed_whatever_the_reason_says() {
        let c = Challenge::new(
            &url::Url::parse("http://127.0.0.1:9/mcp").unwrap(),
            &settings(),
        );
        let meta = "http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp";
        assert_eq!(
            c.missing_token(),
            format!(r#"Bearer resource_metadata="{meta}""#)
        );
        assert_eq!(
            c.invalid_token("bad \"quote\" \\ and\nnewline é"),
            format!(
                r#"Bearer error="invalid_token", error_description="bad 'quote' ' and'newline '", resource_metadata="{meta}""#
            )
        );
        assert_eq!(
            c.insufficient_scope(&["a", "b"], "needs more"),
            format!(
                r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="{meta}", error_description="needs more""#
            )
        );
    }
}
