//! Every problem of a configuration file, found in one run, each with its line.

use std::fmt::Display;
use std::ops::Range;
use std::path::Path;

use toml::Spanned;

use super::ConfigError;

/// Where `value` is written, for a problem's line.
pub(super) fn span<T>(value: &Spanned<T>) -> Option<Range<usize>> {
    Some(value.span())
}

/// The problems found so far in one file.
pub(super) struct Problems<'a> {
    path: &'a Path,
    text: &'a str,
    found: Vec<String>,
}

impl<'a> Problems<'a> {
    /// Problems of `text`, the file at `path`.
    pub(super) fn new(path: &'a Path, text: &'a str) -> Problems<'a> {
        Problems {
            path,
            text,
            found: Vec::new(),
        }
    }

    /// Records `problem` (what it is about, and how to fix it), at the line where `span`
    /// starts, when known.
    pub(super) fn add(&mut self, span: Option<Range<usize>>, problem: impl Display) {
        let line = span
            .and_then(|span| self.text.get(..span.start))
            .map(|before| before.matches('\n').count() + 1);
        self.found.push(match line {
            Some(line) => format!("{}, line {line}: {problem}", self.path.display()),
            None => format!("{}: {problem}", self.path.display()),
        });
    }

    /// The value of `result`; its error, prefixed with `what`, is recorded as a problem.
    pub(super) fn take<T, E: Display>(
        &mut self,
        span: Option<Range<usize>>,
        what: impl Display,
        result: Result<T, E>,
    ) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(why) => {
                self.add(span, format_args!("{what}{why}"));
                None
            }
        }
    }

    /// The number `key` of `[section]` when it is in `range`, else `default`, with the problem
    /// recorded; `default` when it is not written.
    pub(super) fn number_in(
        &mut self,
        section: &str,
        key: &str,
        value: Option<Spanned<u64>>,
        range: std::ops::RangeInclusive<u64>,
        default: u64,
    ) -> u64 {
        match value {
            Some(v) if !range.contains(v.get_ref()) => {
                self.add(
                    span(&v),
                    format_args!(
                        "[{section}] {key} = {} is out of range\nhow to fix: use a number from {} \
                         to {}, or leave it out for the default ({default})",
                        v.get_ref(),
                        range.start(),
                        range.end()
                    ),
                );
                default
            }
            Some(v) => v.into_inner(),
            None => default,
        }
    }

    /// `value` if nothing was found, else every problem found.
    pub(super) fn finish<T>(self, value: T) -> Result<T, ConfigError> {
        match self.found.len() {
            0 => Ok(value),
            1 => Err(ConfigError(self.found.concat())),
            n => Err(ConfigError(format!(
                "{n} problems in {}:\n\n{}",
                self.path.display(),
                self.found.join("\n\n")
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_come_from_spans_and_all_problems_are_told() {
        let text = "a = 1\nb = 2\n";
        let mut problems = Problems::new(Path::new("p.toml"), text);
        problems.add(Some(6..11), "b is wrong");
        problems.add(None, "something else");
        let err = problems.finish(()).unwrap_err().to_string();
        assert_eq!(
            err,
            "2 problems in p.toml:\n\np.toml, line 2: b is wrong\n\np.toml: something else"
        );
        let one = Problems::new(Path::new("p.toml"), text);
        assert_eq!(one.finish(7).unwrap(), 7);
    }
}
