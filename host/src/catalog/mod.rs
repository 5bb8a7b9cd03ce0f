//! The merged view of what every plugin offers: tools and prompts under public names, resources
//! routed by URI, completions routed to the plugin that owns the prompt or template. Orders are
//! deterministic, collisions are errors, lists are paginated.

pub mod header_params;
mod page;
mod prompts;
mod resources;
mod tools;
pub mod uri_template;

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::Result;

use crate::config::{AnnotationOverrides, Scope};
use crate::runtime::Plugin;
use crate::runtime::bindings::completion::CompletionRef;
use crate::runtime::bindings::tools as wit_tools;

pub use page::{InvalidCursor, page};
pub use prompts::CatalogPrompt;
pub use resources::{CatalogTemplate, ResourceRoutes};
pub use tools::CatalogTool;

/// What runs a tool.
#[derive(Clone)]
pub enum Backend {
    /// A sandboxed plugin.
    Plugin(Arc<Plugin>),
    /// Rust code compiled into the host: only the baseline tools the benchmark compares against.
    Native(crate::native::NativeFn),
}

impl Backend {
    /// The name of what serves the tool, for errors and logs.
    pub fn owner(&self) -> &str {
        match self {
            Backend::Plugin(p) => &p.name,
            Backend::Native(_) => "(built in)",
        }
    }
}

/// Every plugin and everything they serve.
pub struct Catalog {
    pub plugins: Vec<Arc<Plugin>>,
    /// Sorted by public name.
    tools: Vec<CatalogTool>,
    /// Sorted by public name.
    prompts: Vec<CatalogPrompt>,
    pub resources: ResourceRoutes,
}

impl Catalog {
    /// Builds the catalog. Two plugins serving the same public name or resource URI are an error
    /// naming both; a tool the plugin describes badly is left out with a warning naming it.
    pub fn new(
        plugins: Vec<Arc<Plugin>>,
        native: Vec<crate::native::NativeTool>,
    ) -> Result<Catalog> {
        let mut candidates = Vec::new();
        for plugin in &plugins {
            for tool in &plugin.tools {
                let name = public_name(&plugin.config.prefix, &tool.name);
                let mut tool = tool.clone();
                if let Some(policy) = plugin.config.tools.get(&tool.name) {
                    apply_overrides(&mut tool, &policy.annotations);
                }
                candidates.push((name, Backend::Plugin(plugin.clone()), tool));
            }
        }
        for n in native {
            candidates.push((n.tool.name.clone(), Backend::Native(n.run), n.tool));
        }
        let mut by_name: BTreeMap<String, CatalogTool> = BTreeMap::new();
        for (public_name, backend, tool) in candidates {
            let owner = backend.owner().to_string();
            let entry = match tools::catalog_tool(backend, tool, &public_name) {
                Ok(entry) => entry,
                Err(why) => {
                    tracing::warn!(plugin = owner, tool = public_name, "tool left out: {why}");
                    continue;
                }
            };
            if let Some(existing) = by_name.get(&public_name) {
                anyhow::bail!(
                    "plugins `{}` and `{owner}` both serve a tool named `{public_name}`; give one of \
                     them another prefix (plugins.<name>.prefix in the configuration)",
                    existing.backend.owner(),
                );
            }
            by_name.insert(public_name, entry);
        }
        let mut prompts: BTreeMap<String, CatalogPrompt> = BTreeMap::new();
        for plugin in &plugins {
            for prompt in &plugin.prompts {
                let public_name = public_name(&plugin.config.prefix, &prompt.name);
                if !tools::is_valid_public_name(&public_name) {
                    tracing::warn!(
                        plugin = &*plugin.name,
                        prompt = public_name,
                        "prompt left out: its public name is not 1 to 64 of A-Z a-z 0-9 _ -"
                    );
                    continue;
                }
                if let Some(existing) = prompts.get(&public_name) {
                    anyhow::bail!(
                        "plugins `{}` and `{}` both serve a prompt named `{public_name}`; give one \
                         of them another prefix (plugins.<name>.prefix in the configuration)",
                        existing.plugin.name,
                        plugin.name
                    );
                }
                prompts.insert(
                    public_name.clone(),
                    CatalogPrompt {
                        public_name,
                        plugin: plugin.clone(),
                        prompt: prompt.clone(),
                    },
                );
            }
        }
        let resources = ResourceRoutes::new(&plugins)?;
        Ok(Catalog {
            plugins,
            tools: by_name.into_values().collect(),
            prompts: prompts.into_values().collect(),
            resources,
        })
    }

    /// The tool served as `public_name`.
    pub fn tool(&self, public_name: &str) -> Option<&CatalogTool> {
        self.tools
            .binary_search_by(|t| t.public_name.as_str().cmp(public_name))
            .ok()
            .map(|i| &self.tools[i])
    }

    /// Every tool, in order.
    pub fn tools(&self) -> &[CatalogTool] {
        &self.tools
    }

    /// Whether `scope` lets a client see and call `tool`.
    pub fn tool_in_scope(tool: &CatalogTool, scope: &Scope) -> bool {
        match &tool.backend {
            Backend::Plugin(p) => scope.allows_item(&p.name, &tool.tool.name),
            Backend::Native(_) => scope.allows_item(NATIVE_OWNER, &tool.tool.name),
        }
    }

    /// Whether `scope` lets a client see and get `prompt`.
    pub fn prompt_in_scope(prompt: &CatalogPrompt, scope: &Scope) -> bool {
        scope.allows_item(&prompt.plugin.name, &prompt.prompt.name)
    }

    /// Whether `scope` leaves a client anything of this catalog to use.
    pub fn visible_to(&self, scope: &Scope) -> bool {
        self.tools.iter().any(|t| Self::tool_in_scope(t, scope))
            || self.prompts.iter().any(|p| Self::prompt_in_scope(p, scope))
            || self
                .resource_plugins()
                .any(|p| scope.allows_plugin(&p.name))
    }

    /// The prompt served as `public_name`.
    pub fn prompt(&self, public_name: &str) -> Option<&CatalogPrompt> {
        self.prompts
            .binary_search_by(|p| p.public_name.as_str().cmp(public_name))
            .ok()
            .map(|i| &self.prompts[i])
    }

    /// Every prompt, in order.
    pub fn prompts(&self) -> &[CatalogPrompt] {
        &self.prompts
    }

    /// Plugins that export resources.
    pub fn resource_plugins(&self) -> impl Iterator<Item = &Arc<Plugin>> {
        self.plugins.iter().filter(|p| p.exports.resources)
    }

    /// Whether any plugin lists resources or templates.
    pub fn has_resources(&self) -> bool {
        self.resource_plugins()
            .any(|p| !p.resources.is_empty() || !p.templates.is_empty())
    }

    /// Whether any plugin completes an argument of one of its prompts or templates.
    pub fn has_completions(&self) -> bool {
        self.plugins.iter().any(|p| !p.completable.is_empty())
    }

    /// The plugin that completes arguments of `target` and the target in its own terms: `None`
    /// when nothing completes it. `Err` when there is no such prompt or template.
    pub fn completion_route(
        &self,
        target: &CompletionTarget,
        argument: &str,
    ) -> Result<Option<(Arc<Plugin>, CompletionRef)>, String> {
        let (plugin, own) = match target {
            CompletionTarget::Prompt(name) => {
                let prompt = self
                    .prompt(name)
                    .ok_or_else(|| format!("unknown prompt: {name}"))?;
                if !prompt.prompt.arguments.iter().any(|a| a.name == argument) {
                    return Err(format!("prompt `{name}` has no argument `{argument}`"));
                }
                (
                    prompt.plugin.clone(),
                    CompletionRef::Prompt(prompt.prompt.name.clone()),
                )
            }
            CompletionTarget::Resource(uri) => match self.resources.template(uri) {
                Some(t) if !t.parsed.variables().iter().any(|v| v == argument) => {
                    return Err(format!(
                        "resource template `{uri}` has no variable `{argument}`"
                    ));
                }
                Some(t) => (
                    t.plugin.clone(),
                    CompletionRef::ResourceTemplate(t.template.uri_template.clone()),
                ),
                // A fixed URI has no variables to complete.
                None if self.resources.route(uri).is_some() => return Ok(None),
                None => return Err(format!("unknown resource template: {uri}")),
            },
        };
        let completes = plugin.completable.iter().any(|c| same_ref(c, &own));
        Ok(completes.then_some((plugin, own)))
    }
}

fn same_ref(a: &CompletionRef, b: &CompletionRef) -> bool {
    match (a, b) {
        (CompletionRef::Prompt(a), CompletionRef::Prompt(b)) => a == b,
        (CompletionRef::ResourceTemplate(a), CompletionRef::ResourceTemplate(b)) => a == b,
        _ => false,
    }
}

/// What a `completion/complete` asks about, in public terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionTarget {
    /// A prompt's public name.
    Prompt(String),
    /// A resource template (or URI).
    Resource(String),
}

/// The plugin name scopes use for the tools compiled into the host (`--native-baseline`).
pub const NATIVE_OWNER: &str = "native";

/// The operator's annotations replace the plugin's, field by field: a plugin cannot claim to be
/// read-only when the configuration says otherwise.
fn apply_overrides(tool: &mut wit_tools::Tool, overrides: &AnnotationOverrides) {
    if *overrides == AnnotationOverrides::default() {
        return;
    }
    let a = tool.annotations.get_or_insert(wit_tools::ToolAnnotations {
        title: None,
        read_only_hint: None,
        destructive_hint: None,
        idempotent_hint: None,
        open_world_hint: None,
    });
    if let Some(title) = &overrides.title {
        a.title = Some(title.clone());
    }
    for (field, value) in [
        (&mut a.read_only_hint, overrides.read_only_hint),
        (&mut a.destructive_hint, overrides.destructive_hint),
        (&mut a.idempotent_hint, overrides.idempotent_hint),
        (&mut a.open_world_hint, overrides.open_world_hint),
    ] {
        if value.is_some() {
            *field = value;
        }
    }
}

/// `prefix_name`, or `name` alone for an empty prefix.
pub fn public_name(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}_{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_names_join_prefix_and_name() {
        assert_eq!(public_name("files", "read_file"), "files_read_file");
        assert_eq!(public_name("", "test_simple_text"), "test_simple_text");
        assert!(!tools::is_valid_public_name("a.b"));
        assert!(!tools::is_valid_public_name(&"x".repeat(65)));
    }
}
