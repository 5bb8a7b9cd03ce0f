//! Secrets the operator gives a plugin (`[plugins.NAME.secrets]`): read through
//! `wasi:config/store` beside the plain `config` values, and kept out of everything the host
//! writes about the plugin: its logs, its error messages, its tool results.

use std::borrow::Cow;
use std::sync::Arc;

use crate::spec::SecretGrant;

/// Values shorter than this are not searched for: replacing every `a` or `42` in a plugin's
/// output would garble it and hide nothing worth hiding.
pub const MIN_REDACTED_LEN: usize = 4;

/// Replaces a plugin's secrets, wherever they appear in text about it, by `[secret NAME]`.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Each secret's name and the forms it is searched in: as is, and escaped as in JSON text.
    secrets: Arc<[(String, Vec<String>)]>,
}

impl Redactor {
    /// Hides the values of `grants` (those of at least [`MIN_REDACTED_LEN`] bytes).
    pub fn new(grants: &[SecretGrant]) -> Redactor {
        let secrets = grants
            .iter()
            .filter(|g| g.value.expose().len() >= MIN_REDACTED_LEN)
            .map(|g| {
                let plain = g.value.expose().to_string();
                let quoted = serde_json::to_string(&plain).unwrap_or_default();
                let json = quoted
                    .strip_prefix('"')
                    .and_then(|q| q.strip_suffix('"'))
                    .unwrap_or_default()
                    .to_string();
                let mut forms = vec![plain];
                if json != forms[0] && !json.is_empty() {
                    forms.push(json);
                }
                (g.name.clone(), forms)
            })
            .collect();
        Redactor { secrets }
    }

    /// Whether there is anything to hide.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// `text` with every secret replaced.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for (name, forms) in self.secrets.iter() {
            for form in forms {
                if out.contains(form.as_str()) {
                    out = Cow::Owned(out.replace(form.as_str(), &format!("[secret {name}]")));
                }
            }
        }
        out
    }

    /// Redacts `text` in place.
    pub fn redact_in_place(&self, text: &mut String) {
        if let Cow::Owned(clean) = self.redact(text) {
            *text = clean;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::SecretValue;

    fn grant(name: &str, value: &str) -> SecretGrant {
        SecretGrant {
            name: name.into(),
            value: SecretValue::new(value.into()),
            as_env: false,
        }
    }

    #[test]
    fn secrets_are_replaced_by_their_names() {
        let redactor = Redactor::new(&[grant("TOKEN", "ghp_abc123"), grant("PIN", "42")]);
        assert_eq!(
            redactor.redact("auth ghp_abc123 failed; ghp_abc123 again; 42"),
            "auth [secret TOKEN] failed; [secret TOKEN] again; 42"
        );
        assert!(matches!(redactor.redact("nothing here"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_secret_escaped_in_json_is_found_too() {
        let redactor = Redactor::new(&[grant("KEY", "a\"b\\c")]);
        assert_eq!(
            redactor.redact(r#"{"key":"a\"b\\c"}"#),
            r#"{"key":"[secret KEY]"}"#
        );
    }

    #[test]
    fn a_secret_value_never_shows_in_debug_output() {
        let text = format!("{:?}", grant("TOKEN", "ghp_abc123"));
        assert!(!text.contains("ghp_abc123"), "{text}");
    }
}
