//! RFC 6570 URI templates, as far as routing needs them: does a URI match a template, and can two
//! templates ever match the same URI.
//!
//! A template is read as a pattern: literal characters, and for each `{...}` expression a run of
//! characters the expression could expand to (possibly none). This over-approximates what an
//! expansion can produce (an expression with a `/` operator may match without its leading slash),
//! which errs on the safe side: a URI another plugin's template could produce is never routed
//! silently to the wrong plugin.

use std::collections::HashSet;

/// Longest template a plugin may declare: matching costs the URI's length times the template's.
pub const MAX_TEMPLATE_BYTES: usize = 512;
/// Longest URI routed: longer ones (from a client or a plugin) match nothing.
pub const MAX_URI_BYTES: usize = crate::runtime::MAX_URI_BYTES;

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    tokens: Vec<Token>,
    /// The names of its variables, in order.
    variables: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Literal(char),
    /// Any run of characters of the class (possibly empty).
    Expression(Class),
}

/// The characters an expression can expand to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Class {
    /// `+` and `#` allow reserved characters such as `/`; the others only unreserved ones and
    /// percent-encodings.
    reserved: bool,
    /// Separators and prefixes the operator adds (`,` `.` `/` `;` `=` `?` `&` `#`).
    extra: &'static str,
}

impl Class {
    fn contains(self, c: char) -> bool {
        let unreserved = c.is_ascii_alphanumeric() || "-._~%".contains(c);
        let reserved = ":/?#[]@!$&'()*+,;=".contains(c);
        // Template variables may hold any character, percent-encoded; a URI from a client may
        // also carry raw non-ASCII (an IRI).
        unreserved || !c.is_ascii() || (self.reserved && reserved) || self.extra.contains(c)
    }
}

/// Why a URI template is refused: its length, an unclosed or unmatched brace, whitespace, an operator or variable RFC 6570 does not allow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidUriTemplate(pub String);

impl UriTemplate {
    /// Parses `template`; the error says what is wrong.
    pub fn parse(template: &str) -> Result<UriTemplate, InvalidUriTemplate> {
        UriTemplate::parse_text(template).map_err(InvalidUriTemplate)
    }

    fn parse_text(template: &str) -> Result<UriTemplate, String> {
        if template.len() > MAX_TEMPLATE_BYTES {
            return Err(format!(
                "a URI template of {} bytes, over the {MAX_TEMPLATE_BYTES} allowed",
                template.len()
            ));
        }
        let mut tokens = Vec::new();
        let mut variables = Vec::new();
        let mut chars = template.chars();
        while let Some(c) = chars.next() {
            match c {
                '{' => {
                    let mut body = String::new();
                    loop {
                        match chars.next() {
                            Some('}') => break,
                            Some('{') | None => {
                                return Err(format!("unclosed `{{` in URI template `{template}`"));
                            }
                            Some(c) => body.push(c),
                        }
                    }
                    tokens.push(Token::Expression(expression_class(&body).ok_or_else(
                        || format!("invalid expression `{{{body}}}` in URI template `{template}`"),
                    )?));
                    let names = body.trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
                    for spec in names.split(',') {
                        let name = spec.trim_end_matches('*').split(':').next().unwrap_or("");
                        variables.push(name.to_string());
                    }
                }
                '}' => return Err(format!("unmatched `}}` in URI template `{template}`")),
                c if c.is_whitespace() || c.is_control() => {
                    return Err(format!("URI template `{template}` contains whitespace"));
                }
                c => tokens.push(Token::Literal(c)),
            }
        }
        Ok(UriTemplate { tokens, variables })
    }

    /// The names of the template's variables.
    pub fn variables(&self) -> &[String] {
        &self.variables
    }

    /// Whether some expansion of the template could be `uri`. Linear: one pass over `uri`, each
    /// step over the template's positions (a URI over [`MAX_URI_BYTES`] matches nothing).
    pub fn matches(&self, uri: &str) -> bool {
        if uri.len() > MAX_URI_BYTES {
            return false;
        }
        // The literal text before the first expression must start the URI: most templates are
        // told apart here.
        let prefix = self.tokens.iter().map_while(|t| match t {
            Token::Literal(c) => Some(*c),
            Token::Expression(_) => None,
        });
        let mut rest = uri.chars();
        for expected in prefix {
            if rest.next() != Some(expected) {
                return false;
            }
        }
        // Positions in the pattern reachable after the characters read so far.
        let positions = self.tokens.len() + 1;
        let mut states = vec![false; positions];
        let mut next = vec![false; positions];
        states[0] = true;
        self.close(&mut states);
        for c in uri.chars() {
            next.fill(false);
            let mut any = false;
            for (i, token) in self.tokens.iter().enumerate() {
                if !states[i] {
                    continue;
                }
                match token {
                    Token::Literal(l) if *l == c => next[i + 1] = true,
                    Token::Expression(class) if class.contains(c) => next[i] = true,
                    _ => continue,
                }
                any = true;
            }
            if !any {
                return false;
            }
            self.close(&mut next);
            std::mem::swap(&mut states, &mut next);
        }
        states[self.tokens.len()]
    }

    /// Adds the positions reachable by letting expressions expand to nothing (they only move
    /// forward, so one pass in order finds them all).
    fn close(&self, states: &mut [bool]) {
        for (i, token) in self.tokens.iter().enumerate() {
            if states[i] && matches!(token, Token::Expression(_)) {
                states[i + 1] = true;
            }
        }
    }

    /// Whether some URI matches both templates: a search over pairs of positions, moving both
    /// patterns over a character they can both read.
    pub fn overlaps(&self, other: &UriTemplate) -> bool {
        let (a, b) = (&self.tokens, &other.tokens);
        let mut seen = HashSet::new();
        let mut stack = vec![(0, 0)];
        while let Some((i, j)) = stack.pop() {
            if !seen.insert((i, j)) {
                continue;
            }
            if i == a.len() && j == b.len() {
                return true;
            }
            let mut push = |state| stack.push(state);
            match (a.get(i), b.get(j)) {
                (Some(Token::Literal(x)), Some(Token::Literal(y))) if x == y => {
                    push((i + 1, j + 1))
                }
                (Some(Token::Literal(x)), Some(Token::Expression(class))) if class.contains(*x) => {
                    push((i + 1, j))
                }
                (Some(Token::Expression(class)), Some(Token::Literal(y))) if class.contains(*y) => {
                    push((i, j + 1))
                }
                _ => {}
            }
            // An expression may also end here (or expand to nothing).
            if let Some(Token::Expression(_)) = a.get(i) {
                stack.push((i + 1, j));
            }
            if let Some(Token::Expression(_)) = b.get(j) {
                stack.push((i, j + 1));
            }
        }
        false
    }
}

/// The class of an expression body such as `name`, `+path`, `?q,lang` or `var:3`; `None` if it is
/// not a valid expression.
fn expression_class(body: &str) -> Option<Class> {
    let (operator, variables) = match body.chars().next()? {
        c @ ('+' | '#' | '.' | '/' | ';' | '?' | '&') => (Some(c), &body[1..]),
        _ => (None, body),
    };
    let valid_variable = |spec: &str| {
        let name = spec
            .strip_suffix('*')
            .unwrap_or(spec)
            .split(':')
            .next()
            .unwrap_or("");
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.%".contains(c))
    };
    if variables.is_empty() || !variables.split(',').all(valid_variable) {
        return None;
    }
    let (reserved, extra) = match operator {
        None => (false, ","),
        Some('+') => (true, ","),
        Some('#') => (true, "#,"),
        Some('.') => (false, ".,"),
        Some('/') => (false, "/,"),
        Some(';') => (false, ";=,"),
        Some('?') => (false, "?=&,"),
        Some('&') => (false, "&=,"),
        Some(_) => unreachable!("operators are matched above"),
    };
    Some(Class { reserved, extra })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> UriTemplate {
        UriTemplate::parse(s).unwrap()
    }

    #[test]
    fn matching_follows_the_operators() {
        let data = t("test://template/{id}/data");
        assert!(data.matches("test://template/42/data"));
        assert!(!data.matches("test://template/4/2/data"));
        assert!(!data.matches("test://template/42/data/more"));
        assert!(t("file:///{+path}").matches("file:///a/b/c.md"));
        assert!(!t("file:///{path}").matches("file:///a/b"));
        assert!(t("search://{?q,lang}").matches("search://?q=x&lang=en"));
        assert!(t("notes://{name}").matches("notes://caf%C3%A9"));
        assert_eq!(
            t("search://{?q,lang}/{+rest:3}").variables(),
            ["q", "lang", "rest"]
        );
    }

    #[test]
    fn overlap_is_found_only_where_a_uri_matches_both() {
        assert!(t("notes://{name}").overlaps(&t("notes://{other}")));
        assert!(t("notes://{name}").overlaps(&t("notes://today")));
        assert!(t("file:///{+path}").overlaps(&t("file:///notes/{name}.md")));
        assert!(!t("notes://{name}").overlaps(&t("todo://{name}")));
        assert!(!t("notes://{name}").overlaps(&t("notes://{a}/{b}")));
        assert!(!t("test://template/{id}/data").overlaps(&t("test://static-text")));
    }

    #[test]
    fn bad_templates_are_refused() {
        let long = format!("a://{}", "{x}".repeat(1000));
        for bad in [
            "a://{",
            "a://}",
            "a://{}",
            "a://{!x}",
            "a://{x y}",
            "a b",
            &long,
        ] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn huge_uris_match_nothing() {
        let any = t("x://{+rest}");
        assert!(any.matches(&format!("x://{}", "a".repeat(MAX_URI_BYTES - 4))));
        assert!(!any.matches(&format!("x://{}", "a".repeat(MAX_URI_BYTES))));
        // The worst template allowed against the longest URI allowed: every position live.
        let worst = t(&format!(
            "x://{}",
            "{+a}".repeat((MAX_TEMPLATE_BYTES - 4) / 4)
        ));
        assert!(worst.matches(&format!("x://{}", "/".repeat(MAX_URI_BYTES - 4))));
    }
}

#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4000, failure_persistence: None, ..ProptestConfig::default() })]

        /// Parsing any text, and matching any URI against what parsed, ends without a panic; a
        /// template matches its literal text when it has no expressions, and always overlaps
        /// itself.
        #[test]
        fn templates_parse_and_match_without_surprises(
            template in "[a-z:/{}+#.;?&,=*0-9 %-]{0,40}",
            uri in "[a-z:/+#.;?&,=0-9%-]{0,60}",
        ) {
            if let Ok(parsed) = UriTemplate::parse(&template) {
                let matched = parsed.matches(&uri);
                if parsed.variables().is_empty() {
                    prop_assert_eq!(matched, uri == template);
                    prop_assert!(parsed.matches(&template));
                }
                prop_assert!(parsed.overlaps(&parsed));
            }
        }
    }
}
