//! Completion of prompt arguments and resource-template variables.

use crate::Arguments;
use crate::bindings::exports::palisade::plugin::completion::CompletionResult;

/// The most values one completion answer carries (MCP's limit).
pub(crate) const MAX_COMPLETIONS: usize = 100;

/// Suggests values: gets what the user typed so far and the arguments already filled in.
pub(crate) type Completer = Box<dyn Fn(&str, &Arguments) -> Vec<String>>;

/// The completers of one prompt or template, by argument name, in the order they were added.
#[derive(Default)]
pub(crate) struct Completers(Vec<(String, Completer)>);

impl Completers {
    /// Adds a completer, replacing one for the same argument.
    pub(crate) fn insert(&mut self, argument: String, completer: Completer) {
        self.0.retain(|(name, _)| *name != argument);
        self.0.push((argument, completer));
    }

    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(name, _)| name.as_str())
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Runs the completer of `argument`; no completer means no suggestions.
    pub(crate) fn complete(
        &self,
        argument: &str,
        typed: &str,
        context: &Arguments,
    ) -> CompletionResult {
        let values = match self.0.iter().find(|(name, _)| name == argument) {
            Some((_, completer)) => completer(typed, context),
            None => Vec::new(),
        };
        let total = values.len();
        let mut values = values;
        values.truncate(MAX_COMPLETIONS);
        CompletionResult {
            values,
            total: u32::try_from(total).ok(),
            has_more: total > MAX_COMPLETIONS,
        }
    }
}

/// The candidates that start with `typed`, ignoring case, in their order: the usual completer
/// over a fixed list.
///
/// ```
/// use palisade_sdk::prefix_matches;
///
/// let languages = ["Go", "Haskell", "JavaScript", "Java"];
/// assert_eq!(prefix_matches("ja", languages), ["JavaScript", "Java"]);
/// assert_eq!(prefix_matches("", ["a", "b"]), ["a", "b"]);
/// ```
pub fn prefix_matches<I>(typed: &str, candidates: I) -> Vec<String>
where
    I: IntoIterator,
    I::Item: AsRef<str>,
{
    let typed = typed.to_lowercase();
    candidates
        .into_iter()
        .filter(|c| c.as_ref().to_lowercase().starts_with(&typed))
        .map(|c| c.as_ref().to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lists_are_cut_with_the_total_kept() {
        let mut completers = Completers::default();
        completers.insert(
            "n".into(),
            Box::new(|typed, _| (0..150).map(|i| format!("{typed}{i}")).collect()),
        );
        let result = completers.complete("n", "x", &Arguments::new());
        assert_eq!(result.values.len(), MAX_COMPLETIONS);
        assert_eq!(result.values[0], "x0");
        assert_eq!(result.total, Some(150));
        assert!(result.has_more);
        let none = completers.complete("other", "x", &Arguments::new());
        assert!(none.values.is_empty() && !none.has_more);
    }

    #[test]
    fn later_completer_replaces_earlier() {
        let mut completers = Completers::default();
        completers.insert("a".into(), Box::new(|_, _| vec!["old".into()]));
        completers.insert("a".into(), Box::new(|_, _| vec!["new".into()]));
        assert_eq!(completers.names().count(), 1);
        assert_eq!(
            completers.complete("a", "", &Arguments::new()).values,
            ["new"]
        );
    }

    #[test]
    fn context_reaches_the_completer() {
        let mut completers = Completers::default();
        completers.insert(
            "b".into(),
            Box::new(|_, context| context.values().cloned().collect()),
        );
        let context = Arguments::from([("a".to_string(), "picked".to_string())]);
        assert_eq!(completers.complete("b", "", &context).values, ["picked"]);
    }
}
