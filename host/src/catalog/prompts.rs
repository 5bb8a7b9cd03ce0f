//! Prompts as the server serves them: public names and the checks of `prompts/get` arguments.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::runtime::Plugin;
use crate::runtime::bindings::prompts;

/// A prompt under its public name.
pub struct CatalogPrompt {
    /// The name clients see: the plugin's prefix and the prompt's own name.
    pub public_name: String,
    /// The plugin that serves it.
    pub plugin: Arc<Plugin>,
    /// The plugin's description of it; `name` is the plugin's own name.
    pub prompt: prompts::Prompt,
}

impl CatalogPrompt {
    /// The arguments of a `prompts/get`, as the plugin takes them, or why they are refused: a
    /// value that is not a string, an argument the prompt does not take, a required one missing.
    pub(crate) fn check_arguments(
        &self,
        arguments: &Map<String, Value>,
    ) -> Result<Vec<(String, String)>, String> {
        let name = &self.public_name;
        let mut checked = Vec::new();
        for (key, value) in arguments {
            let Some(declared) = self.prompt.arguments.iter().find(|a| &a.name == key) else {
                let known: Vec<&str> = self
                    .prompt
                    .arguments
                    .iter()
                    .map(|a| a.name.as_str())
                    .collect();
                return Err(format!(
                    "prompt `{name}` has no argument `{key}` (its arguments: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ));
            };
            let Value::String(value) = value else {
                return Err(format!(
                    "argument `{key}` of prompt `{name}` must be a string"
                ));
            };
            checked.push((declared.name.clone(), value.clone()));
        }
        for argument in self.prompt.arguments.iter().filter(|a| a.required) {
            if !arguments.contains_key(&argument.name) {
                return Err(format!(
                    "prompt `{name}` needs the argument `{}`",
                    argument.name
                ));
            }
        }
        Ok(checked)
    }
}
