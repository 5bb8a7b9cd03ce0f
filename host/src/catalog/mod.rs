//! The merged view of what every plugin offers: tools and prompts under public names, resources
//! routed by URI, completions routed to the plugin that owns the prompt or template. Orders are
//! deterministic, collisions are errors, lists are paginated.

pub mod header_params;
mod page;
mod prompts;
mod resources;
mod schema_cost;
mod tools;
pub mod uri_template;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use anyhow::Result;
use serde_json::Value;

use crate::config::TaskSupport;
use crate::config::{AnnotationOverrides, PluginConfig, Scope};
use crate::runtime::bindings::completion::CompletionRef;
use crate::runtime::bindings::tools as wit_tools;
use crate::runtime::{Plugin, log_safe};

pub use page::{InvalidCursor, check_cursor, page};
pub use prompts::CatalogPrompt;
pub use resources::{CatalogTemplate, ResourceRoutes};
pub use tools::{CatalogTool, definition_changes};

/// What runs a tool.
#[derive(Clone)]
pub enum Backend {
    /// A sandboxed plugin.
    Plugin(Arc<Plugin>),
    /// Code compiled into the host (see [`HostTool`]).
    InHost {
        /// The name scopes and logs know its owner by.
        owner: &'static str,
        /// The tool's body.
        run: HostFn,
    },
}

impl Backend {
    /// The name of what serves the tool, for scopes, errors and logs.
    pub fn owner(&self) -> &str {
        match self {
            Backend::Plugin(p) => &p.name,
            Backend::InHost { owner, .. } => owner,
        }
    }
}

/// The body of a tool compiled into the host: arguments (already validated) in, result out.
pub type HostFn = fn(&Value) -> wit_tools::CallResult;

/// A tool compiled into the host rather than served by a plugin. It takes the request path a
/// plugin's tool takes (parsing, validation, scopes, result shaping), minus the sandbox.
pub struct HostTool {
    /// The tool as a plugin would list it.
    pub tool: wit_tools::Tool,
    /// The name scopes and logs know its owner by, as a plugin's name.
    pub owner: &'static str,
    /// What runs it.
    pub run: HostFn,
}

/// A plugin the runtime loaded, beside the configuration it was loaded from: the catalog takes
/// its prefix and per-tool policy from there, and a reload compares it to the new one.
#[derive(Clone)]
pub struct Loaded {
    /// The loaded plugin.
    pub plugin: Arc<Plugin>,
    /// Its configuration: prefix and per-tool policy.
    pub config: PluginConfig,
}

/// Tools compiled into the host that a server serves beside its plugins' (none for `palisade
/// serve`; the benchmark's baseline for `palisade-bench serve`). A function, so every reload
/// gets them fresh.
pub type InHostTools = fn() -> Vec<HostTool>;

/// Every plugin and everything they serve.
pub struct Catalog {
    /// The plugins served, in the configuration's order.
    pub plugins: Vec<Arc<Plugin>>,
    /// Sorted by public name.
    tools: Vec<CatalogTool>,
    /// Sorted by public name.
    prompts: Vec<CatalogPrompt>,
    /// Where each resource URI is read from.
    pub resources: ResourceRoutes,
    /// Plugins served whose resources are not: they claimed URIs another plugin serves.
    without_resources: Vec<Arc<str>>,
    /// Where each plugin served came from, by name.
    provenance: HashMap<Arc<str>, Provenance>,
}

/// Where a plugin came from, as its configuration and the lock say.
#[derive(Debug, Clone, PartialEq)]
pub struct Provenance {
    /// The component file served (for a registry's plugin, the store's copy).
    pub path: std::path::PathBuf,
    /// The registry reference or URL it was fetched from, when it was.
    pub source: Option<String>,
    /// The SHA-256 of the component served, in hex.
    pub sha256: String,
    /// The OCI manifest digest the lock pins, when it came from a registry.
    pub digest: Option<String>,
    /// Whose signature the lock recorded.
    pub signed_by: Option<String>,
    /// Whose signature every load requires (the verify policy), when one is set.
    pub signer_required: Option<String>,
    /// The prefix of its public names.
    pub prefix: String,
}

impl Provenance {
    fn of(loaded: &Loaded) -> Provenance {
        let config = &loaded.config;
        Provenance {
            path: config.spec.path.clone(),
            source: (config.source.as_ref().map(ToString::to_string))
                .or_else(|| config.locked.as_ref().map(|l| l.source.clone())),
            sha256: hex::encode(loaded.plugin.wasm_sha256),
            digest: config.locked.as_ref().and_then(|l| l.digest.clone()),
            signed_by: config.locked.as_ref().and_then(|l| l.signed_by.clone()),
            signer_required: config.verify.as_ref().map(|p| p.signer()),
            prefix: config.prefix.clone(),
        }
    }
}

impl Catalog {
    /// Builds the catalog, plugin by plugin in order. A plugin that would serve a public name an
    /// earlier one serves is left out whole, with an error naming both; one that claims resource
    /// URIs an earlier one serves keeps its tools and prompts, and its resources are left out,
    /// with an error naming both. A tool, prompt or resource the plugin describes badly is left
    /// out with a warning naming it. Fails only when no plugin could be served though some were
    /// given.
    pub fn new(plugins: Vec<Loaded>, in_host: Vec<HostTool>) -> Result<Catalog> {
        let mut tools: BTreeMap<String, CatalogTool> = BTreeMap::new();
        for n in in_host {
            let public_name = n.tool.name.clone();
            let backend = Backend::InHost {
                owner: n.owner,
                run: n.run,
            };
            match tools::catalog_tool(backend, n.tool, &public_name) {
                Ok(entry) => {
                    tools.insert(public_name, entry);
                }
                Err(why) => tracing::warn!(
                    tool = shown(&public_name),
                    "tool left out: {}",
                    log_safe(&why)
                ),
            }
        }
        let mut prompts: BTreeMap<String, CatalogPrompt> = BTreeMap::new();
        let mut resources = ResourceRoutes::default();
        let mut served = Vec::new();
        let given = plugins.len();
        let mut without_resources = Vec::new();
        let mut provenance = HashMap::new();
        for loaded in plugins {
            let origin = Provenance::of(&loaded);
            let Loaded { plugin, config } = loaded;
            let added = plugin_tools(&plugin, &config, &tools)
                .and_then(|new_tools| Ok((new_tools, plugin_prompts(&plugin, &config, &prompts)?)));
            match added {
                Ok((new_tools, new_prompts)) => {
                    tools.extend(new_tools.into_iter().map(|t| (t.public_name.clone(), t)));
                    prompts.extend(new_prompts.into_iter().map(|p| (p.public_name.clone(), p)));
                    match resources.add(&plugin) {
                        Ok(None) => {}
                        Ok(Some(evicted)) => {
                            tracing::error!(
                                plugin = &*evicted,
                                "resources not served (its tools and prompts are): it claimed \
                                 the scheme named after plugin `{}`, which takes it",
                                plugin.name
                            );
                            without_resources.push(evicted);
                        }
                        Err(why) => {
                            tracing::error!(
                                plugin = &*plugin.name,
                                "resources not served (its tools and prompts are): {}",
                                log_safe(&why)
                            );
                            without_resources.push(plugin.name.clone());
                        }
                    }
                    provenance.insert(plugin.name.clone(), origin);
                    served.push(plugin);
                }
                Err(why) => {
                    tracing::error!(
                        plugin = &*plugin.name,
                        "plugin not served: {}",
                        log_safe(&why)
                    );
                }
            }
        }
        anyhow::ensure!(
            given == 0 || !served.is_empty(),
            "none of the plugins can be served (see the errors above)"
        );
        Ok(Catalog {
            provenance,
            plugins: served,
            without_resources,
            tools: tools.into_values().collect(),
            prompts: prompts.into_values().collect(),
            resources,
        })
    }

    /// Why `candidate`, a new listing of a plugin this catalog serves, cannot replace its
    /// current one: a public name or resource URIs another plugin serves. A plugin's own relist
    /// never changes what the others serve.
    pub fn refuses_relist(&self, candidate: &Loaded) -> Option<String> {
        let Loaded { plugin, config } = candidate;
        let others = |owner: &str| owner != &*plugin.name;
        for tool in &plugin.tools {
            let name = public_name(&config.prefix, &tool.name);
            if let Some(served) = self.tool(&name).filter(|t| others(t.backend.owner())) {
                return Some(format!(
                    "it lists the tool `{}`, which plugin `{}` serves",
                    shown(&name),
                    served.backend.owner()
                ));
            }
        }
        for prompt in &plugin.prompts {
            let name = public_name(&config.prefix, &prompt.name);
            if let Some(served) = self.prompt(&name).filter(|p| others(&p.plugin.name)) {
                return Some(format!(
                    "it lists the prompt `{}`, which plugin `{}` serves",
                    shown(&name),
                    served.plugin.name
                ));
            }
        }
        self.resources.claims(plugin).err().map(|d| d.why)
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

    /// Where the plugin `name` came from, when it is served.
    pub fn provenance(&self, name: &str) -> Option<&Provenance> {
        self.provenance.get(name)
    }

    /// The plugin `name`, when it is served.
    pub fn plugin(&self, name: &str) -> Option<&Arc<Plugin>> {
        self.plugins.iter().find(|p| &*p.name == name)
    }

    /// Whether `scope` lets a client see and call `tool`.
    pub fn tool_in_scope(tool: &CatalogTool, scope: &Scope) -> bool {
        scope.allows_item(tool.backend.owner(), &tool.tool.name)
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
        self.plugins
            .iter()
            .filter(|p| p.exports().resources && !self.without_resources.contains(&p.name))
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
    pub(crate) fn completion_route(
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

/// The tools of `plugin` under their public names, or why the plugin cannot be served beside
/// the tools already in the catalog.
fn plugin_tools(
    plugin: &Arc<Plugin>,
    config: &PluginConfig,
    served: &BTreeMap<String, CatalogTool>,
) -> Result<Vec<CatalogTool>, String> {
    let mut entries: Vec<CatalogTool> = Vec::new();
    for tool in &plugin.tools {
        let public_name = public_name(&config.prefix, &tool.name);
        let mut tool = tool.clone();
        let policy = config.tools.get(&tool.name);
        if let Some(policy) = policy {
            apply_overrides(&mut tool, &policy.annotations);
            if let Some(description) = &policy.description {
                tool.description = Some(description.clone());
            }
        }
        let entry = match tools::catalog_tool(Backend::Plugin(plugin.clone()), tool, &public_name) {
            Ok(mut entry) => {
                entry.confirm = policy.is_some_and(|p| p.confirm);
                // The operator's word over the plugin's.
                entry.task = policy
                    .and_then(|p| p.task)
                    .unwrap_or(TaskSupport::declared(entry.tool.task_support));
                entry
            }
            Err(why) => {
                tracing::warn!(
                    plugin = &*plugin.name,
                    tool = shown(&public_name),
                    "tool left out: {}",
                    log_safe(&why)
                );
                continue;
            }
        };
        if let Some(existing) = served.get(&public_name) {
            return Err(format!(
                "plugins `{}` and `{}` both serve a tool named `{public_name}`; give one of \
                 them another prefix (plugins.<name>.prefix in the configuration)",
                existing.backend.owner(),
                plugin.name
            ));
        }
        if entries.iter().any(|e| e.public_name == public_name) {
            tracing::warn!(
                plugin = &*plugin.name,
                tool = shown(&public_name),
                "tool left out: listed twice"
            );
            continue;
        }
        entries.push(entry);
    }
    Ok(entries)
}

/// The prompts of `plugin` under their public names, or why the plugin cannot be served beside
/// the prompts already in the catalog.
fn plugin_prompts(
    plugin: &Arc<Plugin>,
    config: &PluginConfig,
    served: &BTreeMap<String, CatalogPrompt>,
) -> Result<Vec<CatalogPrompt>, String> {
    let mut entries: Vec<CatalogPrompt> = Vec::new();
    for prompt in &plugin.prompts {
        let public_name = public_name(&config.prefix, &prompt.name);
        let described = if let Err(why) = resources::check_name(&prompt.name) {
            Err(why)
        } else if !tools::is_valid_public_name(&public_name) {
            Err("its public name is not 1 to 64 of A-Z a-z 0-9 _ -".to_string())
        } else {
            prompt
                .arguments
                .iter()
                .try_for_each(|a| resources::check_name(&a.name))
                .map_err(|why| format!("an argument: {why}"))
        };
        if let Err(why) = described {
            tracing::warn!(
                plugin = &*plugin.name,
                prompt = shown(&public_name),
                "prompt left out: {}",
                log_safe(&why)
            );
            continue;
        }
        if let Some(existing) = served.get(&public_name) {
            return Err(format!(
                "plugins `{}` and `{}` both serve a prompt named `{public_name}`; give one of \
                 them another prefix (plugins.<name>.prefix in the configuration)",
                existing.plugin.name, plugin.name
            ));
        }
        if entries.iter().any(|e| e.public_name == public_name) {
            tracing::warn!(
                plugin = &*plugin.name,
                prompt = shown(&public_name),
                "prompt left out: listed twice"
            );
            continue;
        }
        entries.push(CatalogPrompt {
            public_name,
            plugin: plugin.clone(),
            prompt: prompt.clone(),
        });
    }
    Ok(entries)
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

/// A plugin-given text as logs and errors show it: escaped, and cut to 120 characters, so a
/// plugin cannot flood the log (or an error) with a name of megabytes.
pub fn shown(text: &str) -> String {
    const MAX: usize = 120;
    let escaped: String = text.escape_debug().take(MAX).collect();
    if text.chars().count() > MAX || escaped.chars().count() >= MAX {
        format!("{escaped}... ({} bytes)", text.len())
    } else {
        escaped
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
    fn plugin_texts_are_shown_short_and_escaped() {
        assert_eq!(shown("notes://a"), "notes://a");
        assert_eq!(shown("a\u{7}b"), "a\\u{7}b");
        let long = shown(&"x".repeat(1 << 20));
        assert!(
            long.len() < 200 && long.ends_with("(1048576 bytes)"),
            "{long}"
        );
    }

    #[test]
    fn public_names_join_prefix_and_name() {
        assert_eq!(public_name("files", "read_file"), "files_read_file");
        assert_eq!(public_name("", "test_simple_text"), "test_simple_text");
        assert!(!tools::is_valid_public_name("a.b"));
        assert!(!tools::is_valid_public_name(&"x".repeat(65)));
    }
}
