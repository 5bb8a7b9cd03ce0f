//! The plugin as a whole, and its implementation of the WIT exports.

use std::marker::PhantomData;

use crate::bindings::exports::palisade::plugin::{completion, prompts, resources, tools};
use crate::tool::Tool;
use crate::types::{ErrorCode, PluginError, ResourceContents};

/// Everything a plugin offers. [`export_plugin!`](crate::export_plugin) builds one from its
/// `part: value` list, calling the builder method named by each part.
///
/// Parts not given keep the contract's defaults: no resources, no prompts, no completions.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Plugin {
    tools: Vec<Tool>,
}

impl Plugin {
    /// A plugin that offers nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds tools.
    pub fn tools(mut self, tools: impl IntoIterator<Item = Tool>) -> Self {
        self.tools.extend(tools);
        self
    }

    fn list_tools(&self) -> Vec<tools::Tool> {
        for (i, tool) in self.tools.iter().enumerate() {
            // Fails the plugin's load: the host could never route calls to the second one.
            if self.tools[..i].iter().any(|t| t.name() == tool.name()) {
                panic!("two tools are named `{}`", tool.name());
            }
        }
        self.tools.iter().map(Tool::to_wit).collect()
    }

    fn call_tool(&self, name: &str, arguments: &str) -> Result<tools::CallResult, PluginError> {
        match self.tools.iter().find(|t| t.name() == name) {
            Some(tool) => Ok(tool.call(arguments).into()),
            None => Err(not_found(format!("this plugin has no tool named `{name}`"))),
        }
    }
}

fn not_found(message: String) -> PluginError {
    PluginError {
        code: ErrorCode::NotFound,
        message,
        data: None,
    }
}

/// Builds the plugin; implemented by the type [`export_plugin!`](crate::export_plugin) defines.
pub trait Define {
    /// The plugin's definition.
    fn define() -> Plugin;
}

/// The type the WIT exports are implemented for. The plugin is defined anew on every call: each
/// call runs in a fresh instance, so there is nothing to keep between calls.
pub struct Export<D>(PhantomData<D>);

impl<D: Define> tools::Guest for Export<D> {
    fn list_tools() -> Vec<tools::Tool> {
        D::define().list_tools()
    }

    fn call_tool(name: String, arguments: String) -> Result<tools::CallResult, PluginError> {
        D::define().call_tool(&name, &arguments)
    }
}

impl<D: Define> resources::Guest for Export<D> {
    fn list_resources() -> Vec<resources::Resource> {
        Vec::new()
    }

    fn list_resource_templates() -> Vec<resources::ResourceTemplate> {
        Vec::new()
    }

    fn read_resource(uri: String) -> Result<Vec<ResourceContents>, PluginError> {
        Err(not_found(format!("this plugin has no resource `{uri}`")))
    }
}

impl<D: Define> prompts::Guest for Export<D> {
    fn list_prompts() -> Vec<prompts::Prompt> {
        Vec::new()
    }

    fn get_prompt(
        name: String,
        _arguments: Vec<(String, String)>,
    ) -> Result<prompts::PromptResult, PluginError> {
        Err(not_found(format!(
            "this plugin has no prompt named `{name}`"
        )))
    }
}

impl<D: Define> completion::Guest for Export<D> {
    fn complete(
        _target: completion::CompletionRef,
        _argument_name: String,
        _argument_value: String,
        _context: Vec<(String, String)>,
    ) -> Result<completion::CompletionResult, PluginError> {
        Ok(completion::CompletionResult {
            values: Vec::new(),
            total: Some(0),
            has_more: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::exports::palisade::plugin::tools::Guest as _;
    use crate::tool::NoArgs;

    struct Demo;

    impl Define for Demo {
        fn define() -> Plugin {
            Plugin::new().tools([Tool::new("ok", |_: NoArgs| "fine")])
        }
    }

    type Exported = Export<Demo>;

    #[test]
    fn unknown_tool_is_not_found() {
        let Err(error) = Exported::call_tool("nope".into(), "{}".into()) else {
            panic!("expected an error");
        };
        assert_eq!(error.code, ErrorCode::NotFound);
        assert!(error.message.contains("`nope`"));
    }

    #[test]
    fn known_tool_runs() {
        let result = Exported::call_tool("ok".into(), "{}".into()).expect("ok");
        assert!(!result.is_error);
        assert_eq!(Exported::list_tools().len(), 1);
    }

    #[test]
    fn defaults_are_empty_or_not_found() {
        use crate::bindings::exports::palisade::plugin::{
            completion::Guest as _, prompts::Guest as _, resources::Guest as _,
        };
        assert!(Exported::list_resources().is_empty());
        assert!(Exported::list_prompts().is_empty());
        let Err(error) = Exported::read_resource("x://y".into()) else {
            panic!()
        };
        assert_eq!(error.code, ErrorCode::NotFound);
        let Err(error) = Exported::get_prompt("p".into(), Vec::new()) else {
            panic!()
        };
        assert_eq!(error.code, ErrorCode::NotFound);
        let done = Exported::complete(
            completion::CompletionRef::Prompt("p".into()),
            "a".into(),
            String::new(),
            Vec::new(),
        )
        .expect("ok");
        assert!(done.values.is_empty());
    }

    #[test]
    #[should_panic(expected = "two tools are named `ok`")]
    fn duplicate_names_fail_the_listing() {
        Plugin::new()
            .tools([
                Tool::new("ok", |_: NoArgs| "a"),
                Tool::new("ok", |_: NoArgs| "b"),
            ])
            .list_tools();
    }
}
