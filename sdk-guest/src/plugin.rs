//! The plugin as a whole, and its implementation of the WIT exports.

use std::fmt;
use std::marker::PhantomData;

use crate::Arguments;
use crate::bindings::exports::palisade::plugin::{completion, prompts, resources, tools};
use crate::prompt::Prompt;
use crate::resource::{Resource, ResourceInfo, ResourceTemplate};
use crate::tool::Tool;
use crate::types::{PluginError, ResourceContents};

type Lister = Box<dyn Fn() -> Vec<ResourceInfo>>;

/// Everything a plugin offers. [`export_plugin!`](crate::export_plugin) builds one from its
/// `part: value` list, calling the builder method named by each part.
///
/// Parts not given keep the contract's defaults: no tools, resources, templates or prompts, and
/// so nothing to complete.
#[derive(Default)]
#[non_exhaustive]
pub struct Plugin {
    tools: Vec<Tool>,
    resources: Vec<Resource>,
    listers: Vec<Lister>,
    templates: Vec<ResourceTemplate>,
    prompts: Vec<Prompt>,
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

    /// Adds resources with fixed URIs, each with the function that reads it.
    pub fn resources(mut self, resources: impl IntoIterator<Item = Resource>) -> Self {
        self.resources.extend(resources);
        self
    }

    /// Adds a function that lists resources when the client asks: for resources that come and
    /// go, such as the files in a directory. Its resources are listed after the fixed ones, in
    /// its order; a URI listed already is left out.
    ///
    /// A listed resource is read by the first [resource template](Self::resource_templates) its
    /// URI matches, so a lister goes with a template (`notes://{name}` for `notes://todo`);
    /// [`percent_encode`](crate::percent_encode) builds URIs the template matches.
    pub fn resource_lister<F>(mut self, lister: F) -> Self
    where
        F: Fn() -> Vec<ResourceInfo> + 'static,
    {
        self.listers.push(Box::new(lister));
        self
    }

    /// Adds resource templates, each with the function that reads the resources it names.
    pub fn resource_templates(
        mut self,
        templates: impl IntoIterator<Item = ResourceTemplate>,
    ) -> Self {
        self.templates.extend(templates);
        self
    }

    /// Adds prompts.
    pub fn prompts(mut self, prompts: impl IntoIterator<Item = Prompt>) -> Self {
        self.prompts.extend(prompts);
        self
    }

    fn list_tools(&self) -> Vec<tools::Tool> {
        // Fails the plugin's load: the host could never route calls to the second one.
        check_unique("tools are named", self.tools.iter().map(Tool::name));
        self.tools.iter().map(Tool::to_wit).collect()
    }

    fn call_tool(&self, name: &str, arguments: &str) -> Result<tools::CallResult, PluginError> {
        match self.tools.iter().find(|t| t.name() == name) {
            Some(tool) => Ok(tool.call(arguments).into()),
            None => Err(PluginError::not_found(format!(
                "this plugin has no tool named `{name}`"
            ))),
        }
    }

    fn list_resources(&self) -> Vec<resources::Resource> {
        check_unique(
            "resources have the URI",
            self.resources.iter().map(Resource::uri),
        );
        let mut listed: Vec<resources::Resource> =
            self.resources.iter().map(|r| r.info().to_wit()).collect();
        for lister in &self.listers {
            for info in lister() {
                if !listed.iter().any(|r| r.uri == info.uri()) {
                    listed.push(info.to_wit());
                }
            }
        }
        listed
    }

    fn list_resource_templates(&self) -> Vec<resources::ResourceTemplate> {
        self.check_templates();
        self.templates
            .iter()
            .map(ResourceTemplate::to_wit)
            .collect()
    }

    fn read_resource(&self, uri: &str) -> Result<Vec<ResourceContents>, PluginError> {
        if let Some(resource) = self.resources.iter().find(|r| r.uri() == uri) {
            return resource.read();
        }
        match self.templates.iter().find(|t| t.matches(uri).is_some()) {
            Some(template) => template.read(uri),
            None => Err(PluginError::not_found(format!(
                "this plugin has no resource `{uri}`"
            ))),
        }
    }

    fn list_prompts(&self) -> Vec<prompts::Prompt> {
        self.check_prompts();
        self.prompts.iter().map(Prompt::to_wit).collect()
    }

    fn get_prompt(
        &self,
        name: &str,
        arguments: &Arguments,
    ) -> Result<prompts::PromptResult, PluginError> {
        match self.prompts.iter().find(|p| p.name() == name) {
            Some(prompt) => prompt.get(arguments).map(Into::into),
            None => Err(PluginError::not_found(format!(
                "this plugin has no prompt named `{name}`"
            ))),
        }
    }

    fn completable(&self) -> Vec<completion::CompletionRef> {
        self.check_prompts();
        self.check_templates();
        let prompts = self
            .prompts
            .iter()
            .filter(|p| !p.completers.is_empty())
            .map(|p| completion::CompletionRef::Prompt(p.name().to_string()));
        let templates = self
            .templates
            .iter()
            .filter(|t| !t.completers.is_empty())
            .map(|t| completion::CompletionRef::ResourceTemplate(t.uri_template().to_string()));
        prompts.chain(templates).collect()
    }

    fn complete(
        &self,
        target: &completion::CompletionRef,
        argument: &str,
        typed: &str,
        context: &Arguments,
    ) -> Result<completion::CompletionResult, PluginError> {
        let completers = match target {
            completion::CompletionRef::Prompt(name) => {
                let prompt = self
                    .prompts
                    .iter()
                    .find(|p| p.name() == name)
                    .ok_or_else(|| {
                        PluginError::not_found(format!("this plugin has no prompt named `{name}`"))
                    })?;
                if !prompt.has_argument(argument) {
                    return Err(PluginError::invalid_params(format!(
                        "the prompt `{name}` has no argument `{argument}`"
                    )));
                }
                &prompt.completers
            }
            completion::CompletionRef::ResourceTemplate(uri_template) => {
                let template = self
                    .templates
                    .iter()
                    .find(|t| t.uri_template() == uri_template)
                    .ok_or_else(|| {
                        PluginError::not_found(format!(
                            "this plugin has no resource template `{uri_template}`"
                        ))
                    })?;
                if !template.variables().any(|v| v == argument) {
                    return Err(PluginError::invalid_params(format!(
                        "the resource template `{uri_template}` has no variable `{argument}`"
                    )));
                }
                &template.completers
            }
        };
        Ok(completers.complete(argument, typed, context))
    }

    fn check_prompts(&self) {
        check_unique("prompts are named", self.prompts.iter().map(Prompt::name));
        self.prompts.iter().for_each(Prompt::check);
    }

    fn check_templates(&self) {
        check_unique(
            "resource templates are",
            self.templates.iter().map(ResourceTemplate::uri_template),
        );
    }
}

/// Panics when two of `names` are equal: a mistake in the plugin that fails its load, as the
/// host could never route to the second one.
fn check_unique<'a>(what: &str, names: impl Iterator<Item = &'a str>) {
    let names: Vec<&str> = names.collect();
    for (i, name) in names.iter().enumerate() {
        if names[..i].contains(name) {
            panic!("two {what} `{name}`");
        }
    }
}

impl fmt::Debug for Plugin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Plugin")
            .field("tools", &self.tools)
            .field("resources", &self.resources)
            .field("resource_listers", &self.listers.len())
            .field("resource_templates", &self.templates)
            .field("prompts", &self.prompts)
            .finish()
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
        D::define().list_resources()
    }

    fn list_resource_templates() -> Vec<resources::ResourceTemplate> {
        D::define().list_resource_templates()
    }

    fn read_resource(uri: String) -> Result<Vec<ResourceContents>, PluginError> {
        D::define().read_resource(&uri)
    }
}

impl<D: Define> prompts::Guest for Export<D> {
    fn list_prompts() -> Vec<prompts::Prompt> {
        D::define().list_prompts()
    }

    fn get_prompt(
        name: String,
        arguments: Vec<(String, String)>,
    ) -> Result<prompts::PromptResult, PluginError> {
        D::define().get_prompt(&name, &arguments.into_iter().collect())
    }
}

impl<D: Define> completion::Guest for Export<D> {
    fn completable() -> Vec<completion::CompletionRef> {
        D::define().completable()
    }

    fn complete(
        target: completion::CompletionRef,
        argument_name: String,
        argument_value: String,
        context: Vec<(String, String)>,
    ) -> Result<completion::CompletionResult, PluginError> {
        D::define().complete(
            &target,
            &argument_name,
            &argument_value,
            &context.into_iter().collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::exports::palisade::plugin::completion::{CompletionRef, Guest as _};
    use crate::bindings::exports::palisade::plugin::prompts::Guest as _;
    use crate::bindings::exports::palisade::plugin::resources::Guest as _;
    use crate::bindings::exports::palisade::plugin::tools::Guest as _;
    use crate::prefix_matches;
    use crate::prompt::PromptMessage;
    use crate::tool::NoArgs;
    use crate::types::{ErrorCode, ResourceBody};

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
        assert!(Exported::list_resources().is_empty());
        assert!(Exported::list_resource_templates().is_empty());
        assert!(Exported::list_prompts().is_empty());
        assert!(Exported::completable().is_empty());
        let Err(error) = Exported::read_resource("x://y".into()) else {
            panic!()
        };
        assert_eq!(error.code, ErrorCode::NotFound);
        let Err(error) = Exported::get_prompt("p".into(), Vec::new()) else {
            panic!()
        };
        assert_eq!(error.code, ErrorCode::NotFound);
        let Err(error) = Exported::complete(
            CompletionRef::Prompt("p".into()),
            "a".into(),
            String::new(),
            Vec::new(),
        ) else {
            panic!()
        };
        assert_eq!(error.code, ErrorCode::NotFound);
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

    struct Full;

    impl Define for Full {
        fn define() -> Plugin {
            Plugin::new()
                .resources([Resource::new("fixed://one", "one", || "fixed")])
                .resource_lister(|| {
                    vec![
                        ResourceInfo::new("fixed://one", "duplicate"),
                        ResourceInfo::new("n://b", "b"),
                        ResourceInfo::new("n://a", "a"),
                    ]
                })
                .resource_templates([
                    ResourceTemplate::new("n://{name}", "note", |_, vars| {
                        format!("note {}", vars["name"])
                    })
                    .complete("name", |typed, _| prefix_matches(typed, ["alpha", "beta"])),
                    ResourceTemplate::new("raw://{+path}", "raw", |_, _| vec![0u8]),
                ])
                .prompts([
                    Prompt::new("ask", |args: &Arguments| format!("ask {}", args["q"]))
                        .argument("q", "The question", true)
                        .argument("lang", "A language", false)
                        .complete("lang", |typed, context| {
                            let mut values = prefix_matches(typed, ["Rust", "Ruby"]);
                            values.extend(context.get("q").cloned());
                            values
                        }),
                    Prompt::new("plain", |_: &Arguments| vec![PromptMessage::user("hi")]),
                ])
        }
    }

    type Everything = Export<Full>;

    fn text(contents: &[ResourceContents]) -> &str {
        match contents {
            [
                ResourceContents {
                    body: ResourceBody::Text(text),
                    ..
                },
            ] => text,
            _ => panic!("expected one text contents"),
        }
    }

    #[test]
    fn resources_list_fixed_then_listed_without_duplicates() {
        let uris: Vec<String> = Everything::list_resources()
            .into_iter()
            .map(|r| r.uri)
            .collect();
        assert_eq!(uris, ["fixed://one", "n://b", "n://a"]);
        assert_eq!(Everything::list_resource_templates().len(), 2);
    }

    #[test]
    fn reads_go_to_the_fixed_resource_or_the_matching_template() {
        let fixed = Everything::read_resource("fixed://one".into()).expect("fixed");
        assert_eq!(text(&fixed), "fixed");
        let note = Everything::read_resource("n://b".into()).expect("note");
        assert_eq!(text(&note), "note b");
        let raw = Everything::read_resource("raw://a/b".into()).expect("raw");
        assert!(matches!(raw[0].body, ResourceBody::Blob(_)));
        let error = Everything::read_resource("n://a/b".into()).expect_err("none");
        assert_eq!(error.code, ErrorCode::NotFound);
    }

    #[test]
    fn prompts_list_and_get() {
        let names: Vec<String> = Everything::list_prompts()
            .into_iter()
            .map(|p| p.name)
            .collect();
        assert_eq!(names, ["ask", "plain"]);
        let result =
            Everything::get_prompt("ask".into(), vec![("q".into(), "why".into())]).expect("ok");
        assert_eq!(result.messages.len(), 1);
        let error = Everything::get_prompt("ask".into(), Vec::new()).expect_err("missing");
        assert_eq!(error.code, ErrorCode::InvalidParams);
    }

    #[test]
    fn completable_lists_what_has_completers() {
        let refs = Everything::completable();
        assert_eq!(refs.len(), 2);
        assert!(matches!(&refs[0], CompletionRef::Prompt(p) if p == "ask"));
        assert!(matches!(&refs[1], CompletionRef::ResourceTemplate(t) if t == "n://{name}"));
    }

    #[test]
    fn complete_dispatches_to_the_completer() {
        let prompt = CompletionRef::Prompt("ask".into());
        let done = Everything::complete(
            prompt.clone(),
            "lang".into(),
            "ru".into(),
            vec![("q".into(), "why".into())],
        )
        .expect("ok");
        assert_eq!(done.values, ["Rust", "Ruby", "why"]);
        assert_eq!(done.total, Some(3));
        // A declared argument without a completer: no suggestions.
        let none = Everything::complete(prompt.clone(), "q".into(), "".into(), Vec::new());
        assert!(none.expect("ok").values.is_empty());
        let error = Everything::complete(prompt, "zzz".into(), "".into(), Vec::new())
            .expect_err("unknown argument");
        assert_eq!(error.code, ErrorCode::InvalidParams);
        let template = CompletionRef::ResourceTemplate("n://{name}".into());
        let done = Everything::complete(template, "name".into(), "B".into(), Vec::new());
        assert_eq!(done.expect("ok").values, ["beta"]);
        let unknown = CompletionRef::ResourceTemplate("zz://{x}".into());
        let error = Everything::complete(unknown, "x".into(), "".into(), Vec::new())
            .expect_err("unknown template");
        assert_eq!(error.code, ErrorCode::NotFound);
    }

    #[test]
    #[should_panic(expected = "two prompts are named `p`")]
    fn duplicate_prompts_fail_the_listing() {
        Plugin::new()
            .prompts([
                Prompt::new("p", |_: &Arguments| "a".to_string()),
                Prompt::new("p", |_: &Arguments| "b".to_string()),
            ])
            .list_prompts();
    }

    #[test]
    #[should_panic(expected = "two resources have the URI `x://a`")]
    fn duplicate_resources_fail_the_listing() {
        Plugin::new()
            .resources([
                Resource::new("x://a", "a", || ""),
                Resource::new("x://a", "b", || ""),
            ])
            .list_resources();
    }

    #[test]
    #[should_panic(expected = "two resource templates are `x://{a}`")]
    fn duplicate_templates_fail_the_listing() {
        Plugin::new()
            .resource_templates([
                ResourceTemplate::new("x://{a}", "a", |_, _| ""),
                ResourceTemplate::new("x://{a}", "b", |_, _| ""),
            ])
            .list_resource_templates();
    }
}
