//! RFC 6570 URI templates, the small part resource templates need: `{var}` (simple expansion)
//! and `{+var}` (reserved expansion), matched against a URI to get the variables' values back.

use crate::Arguments;

/// RFC 3986 `reserved` characters: gen-delims and sub-delims. A `{var}` value never contains
/// them unencoded.
const RESERVED: &str = ":/?#[]@!$&'()*+,;=";

#[derive(Clone, Debug, PartialEq)]
enum Part {
    Literal(String),
    /// `{name}`, or `{+name}` when `reserved`.
    Variable {
        name: String,
        reserved: bool,
    },
}

/// A parsed URI template.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct UriTemplate {
    parts: Vec<Part>,
}

impl UriTemplate {
    /// Parses `template`. Refuses what the SDK cannot match: other operators (`{?q}`, `{/p}`...),
    /// lists (`{a,b}`), modifiers (`{p*}`, `{p:3}`), a variable used twice, two variables with
    /// nothing between them, and unbalanced braces.
    pub(crate) fn parse(template: &str) -> Result<Self, String> {
        let mut parts = Vec::new();
        let mut rest = template;
        while !rest.is_empty() {
            let Some(open) = rest.find(['{', '}']) else {
                parts.push(Part::Literal(rest.to_string()));
                break;
            };
            if rest[open..].starts_with('}') {
                return Err("a `}` without its `{`".into());
            }
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_string()));
            }
            let after = &rest[open + 1..];
            let close = after.find('}').ok_or("a `{` without its `}`")?;
            let expression = &after[..close];
            let (reserved, name) = match expression.strip_prefix('+') {
                Some(name) => (true, name),
                None => (false, expression),
            };
            let valid = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
            if name.is_empty() || !name.chars().all(valid) {
                return Err(format!(
                    "`{{{expression}}}`: the SDK matches only `{{name}}` and `{{+name}}`, names made of A-Z a-z 0-9 _ ."
                ));
            }
            let variables = || parts.iter().filter_map(Part::variable);
            if variables().any(|v| v == name) {
                return Err(format!("the variable `{name}` appears twice"));
            }
            if matches!(parts.last(), Some(Part::Variable { .. })) {
                return Err(format!(
                    "`{{{expression}}}` follows another variable directly: put a literal between them"
                ));
            }
            parts.push(Part::Variable {
                name: name.to_string(),
                reserved,
            });
            rest = &after[close + 1..];
        }
        Ok(UriTemplate { parts })
    }

    /// The names of the template's variables, in order.
    pub(crate) fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(Part::variable)
    }

    /// The variables' values if `uri` is an expansion of the template, percent-decoded.
    ///
    /// Every variable matches at least one character. `{var}` matches characters other than
    /// RFC 3986 reserved ones (so not `/`, `?`, `#`...); `{+var}` matches any. Where a URI can
    /// match in several ways, earlier variables take as much as they can.
    pub(crate) fn matches(&self, uri: &str) -> Option<Arguments> {
        let mut values = Vec::new();
        if !match_parts(&self.parts, uri, &mut values) {
            return None;
        }
        values
            .into_iter()
            .map(|(name, raw)| Some((name.to_string(), percent_decode(raw)?)))
            .collect()
    }
}

impl Part {
    fn variable(&self) -> Option<&str> {
        match self {
            Part::Variable { name, .. } => Some(name),
            Part::Literal(_) => None,
        }
    }
}

/// Backtracking match; `values` gets the raw (still encoded) value of each variable.
fn match_parts<'a>(parts: &'a [Part], uri: &'a str, values: &mut Vec<(&'a str, &'a str)>) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return uri.is_empty();
    };
    match first {
        Part::Literal(literal) => uri
            .strip_prefix(literal.as_str())
            .is_some_and(|tail| match_parts(rest, tail, values)),
        Part::Variable { name, reserved } => {
            let longest = if *reserved {
                uri.len()
            } else {
                uri.find(|c| RESERVED.contains(c)).unwrap_or(uri.len())
            };
            let ends = (1..=longest).rev().filter(|&end| uri.is_char_boundary(end));
            for end in ends {
                values.push((name, &uri[..end]));
                if match_parts(rest, &uri[end..], values) {
                    return true;
                }
                values.pop();
            }
            false
        }
    }
}

/// Decodes `%XX` escapes; `None` for a malformed escape or bytes that are not UTF-8.
fn percent_decode(raw: &str) -> Option<String> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = raw.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Percent-encodes `value` for a `{var}` in a URI: everything but the RFC 3986 unreserved
/// characters (`A-Z a-z 0-9 - . _ ~`) becomes `%XX`. Use it to build the URIs a resource
/// lister returns, so that they match the template that reads them.
///
/// ```
/// assert_eq!(palisade_sdk::percent_encode("my notes/2024"), "my%20notes%2F2024");
/// ```
pub fn percent_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(template: &str, uri: &str) -> Option<Vec<(String, String)>> {
        let template = UriTemplate::parse(template).expect("valid template");
        template.matches(uri).map(|v| v.into_iter().collect())
    }

    fn pairs(list: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(
            list.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn simple_variable_stops_at_reserved_characters() {
        assert_eq!(
            vars("notes://{name}", "notes://todo"),
            pairs(&[("name", "todo")])
        );
        assert_eq!(vars("notes://{name}", "notes://a/b"), None);
        assert_eq!(vars("notes://{name}", "notes://"), None);
        assert_eq!(vars("notes://{name}", "other://todo"), None);
        assert_eq!(
            vars("notes://{name}", "notes://my%20note%2F.."),
            pairs(&[("name", "my note/..")])
        );
    }

    #[test]
    fn reserved_variable_takes_slashes_and_backtracks() {
        assert_eq!(
            vars("file:///{+path}.md", "file:///a/b.c.md"),
            pairs(&[("path", "a/b.c")])
        );
        assert_eq!(
            vars("weather://{city}/{+rest}", "weather://paris/today/noon"),
            pairs(&[("city", "paris"), ("rest", "today/noon")])
        );
        assert_eq!(vars("x://{+p}.md", "x://a.txt"), None);
    }

    #[test]
    fn malformed_escapes_do_not_match() {
        assert_eq!(vars("n://{v}", "n://%zz"), None);
        assert_eq!(vars("n://{v}", "n://%ff"), None);
        assert_eq!(vars("n://{v}", "n://caf%C3%A9"), pairs(&[("v", "café")]));
    }

    #[test]
    fn unsupported_templates_are_refused() {
        for bad in [
            "x://{?q}",
            "x://{a,b}",
            "x://{p*}",
            "x://{p:3}",
            "x://{}",
            "x://{a",
            "x://a}",
            "x://{a}/{a}",
            "x://{a}{b}",
        ] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad} was accepted");
        }
        let template = UriTemplate::parse("x://{a}/{+b}").expect("valid");
        assert_eq!(template.variables().collect::<Vec<_>>(), ["a", "b"]);
    }

    #[test]
    fn encode_then_match_gives_the_value_back() {
        let value = "é ü/?#%";
        let uri = format!("n://{}", percent_encode(value));
        assert_eq!(vars("n://{v}", &uri), pairs(&[("v", value)]));
    }
}
