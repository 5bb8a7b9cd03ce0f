//! `[console]`: who may use the operator's console, and where it listens of its own.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use toml::Spanned;

use super::server::parse_listen;
use crate::config::file::ConsoleSection;
use crate::config::problems::{Problems, span};
use crate::config::{AccessConfig, ConsoleConfig};

/// How an operator entry names an OAuth subject rather than a static token.
const OAUTH_PREFIX: &str = "oauth:";

/// `[console]` checked against `[auth]`: every operator must be a token the server knows, or an
/// OAuth subject of its issuer; a problem names the entry's line.
pub(super) fn resolve(
    section: Option<Spanned<ConsoleSection>>,
    access: &AccessConfig,
    taken: &[Option<SocketAddr>],
    problems: &mut Problems<'_>,
) -> ConsoleConfig {
    let defaults = ConsoleConfig::default();
    let Some(section) = section else {
        return defaults;
    };
    let at = span(&section);
    let section = section.into_inner();
    let mut operators: Vec<Arc<str>> = Vec::new();
    for entry in section.operators {
        let name = entry.get_ref().trim();
        let problem = if name.is_empty() {
            Some("an operator is empty\nhow to fix: name a token of [[auth.tokens]], or write oauth:SUBJECT".to_string())
        } else if let Some(subject) = name.strip_prefix(OAUTH_PREFIX) {
            match (&access.oauth, subject.is_empty()) {
                (_, true) => Some(format!(
                    "operator {name:?} names no subject\nhow to fix: write oauth: followed by the \
                     `sub` claim of the operator's access tokens"
                )),
                (None, _) => Some(format!(
                    "operator {name:?} is an OAuth subject, but [auth.oauth] is not configured\n\
                     how to fix: configure [auth.oauth], or name a token of [[auth.tokens]]"
                )),
                (Some(_), false) => None,
            }
        } else if !access.tokens.iter().any(|t| t.name == name) {
            Some(format!(
                "operator {name:?} is not the name of any [[auth.tokens]] entry\nhow to fix: add \
                 a token with name = {name:?}, or write oauth:SUBJECT for an OAuth subject"
            ))
        } else {
            None
        };
        match problem {
            Some(problem) => problems.add(span(&entry), format_args!("[console] {problem}")),
            None if operators.iter().any(|o| &**o == name) => {}
            None => operators.push(name.into()),
        }
    }
    let listen = section.listen.as_ref().and_then(|text| {
        problems.take(
            span(text),
            "[console] listen = ",
            parse_listen(text.get_ref())
                .map_err(|why| format!("{why}\nhow to fix: use a form such as \"127.0.0.1:7777\"")),
        )
    });
    if let Some(listen) = listen
        && listen.port() != 0
        && taken.contains(&Some(listen))
    {
        problems.add(
            at.clone(),
            "[console] listen is the address of MCP or of the metrics: the console goes on an \
             address of its own",
        );
    }
    let question_wait = Duration::from_secs(problems.number_in(
        "console",
        "question_wait_s",
        section.question_wait_s,
        1..=3600,
        defaults.question_wait.as_secs(),
    ));
    ConsoleConfig {
        operators,
        listen,
        question_wait,
    }
}
