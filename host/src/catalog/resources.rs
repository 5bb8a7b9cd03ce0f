//! Which plugin serves a resource URI: the plugin that listed it, or the one whose template
//! matches it. Two plugins may never claim the same URI.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use anyhow::Result;

use super::uri_template::UriTemplate;
use crate::runtime::Plugin;
use crate::runtime::bindings::resources;

/// A resource template and the plugin that answers it.
pub struct CatalogTemplate {
    pub plugin: Arc<Plugin>,
    pub template: resources::ResourceTemplate,
    pub parsed: UriTemplate,
}

/// The routes of every resource URI.
pub struct ResourceRoutes {
    /// Sorted by URI template.
    templates: Vec<CatalogTemplate>,
    /// Fixed URIs by each plugin's latest listing.
    fixed: RwLock<BTreeMap<String, Arc<Plugin>>>,
}

impl ResourceRoutes {
    /// Routes for the resources and templates the plugins listed at load. A URI or overlapping
    /// templates claimed by two plugins is an error naming both.
    pub fn new(plugins: &[Arc<Plugin>]) -> Result<ResourceRoutes> {
        let mut templates: Vec<CatalogTemplate> = Vec::new();
        for plugin in plugins {
            for template in &plugin.templates {
                let parsed = match UriTemplate::parse(&template.uri_template) {
                    Ok(parsed) => parsed,
                    Err(why) => {
                        tracing::warn!(plugin = &*plugin.name, "resource template left out: {why}");
                        continue;
                    }
                };
                if let Some(other) = templates
                    .iter()
                    .find(|t| t.plugin.name != plugin.name && t.parsed.overlaps(&parsed))
                {
                    anyhow::bail!(
                        "plugins `{}` and `{}` both claim resource URIs: their templates `{}` and \
                         `{}` can match the same URI; serve them from one plugin, or change one \
                         template",
                        other.plugin.name,
                        plugin.name,
                        other.template.uri_template,
                        template.uri_template
                    );
                }
                templates.push(CatalogTemplate {
                    plugin: plugin.clone(),
                    template: template.clone(),
                    parsed,
                });
            }
        }
        templates.sort_by(|a, b| a.template.uri_template.cmp(&b.template.uri_template));
        let routes = ResourceRoutes {
            templates,
            fixed: RwLock::new(BTreeMap::new()),
        };
        for plugin in plugins {
            for resource in &plugin.resources {
                routes.claim(plugin, &resource.uri)?;
            }
        }
        Ok(routes)
    }

    /// Records that `plugin` serves `uri`, unless another plugin does.
    fn claim(&self, plugin: &Arc<Plugin>, uri: &str) -> Result<()> {
        let other = self.route(uri).filter(|owner| owner.name != plugin.name);
        if let Some(other) = other {
            anyhow::bail!(
                "plugins `{}` and `{}` both claim the resource `{uri}`; serve it from one of them",
                other.name,
                plugin.name
            );
        }
        self.fixed
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(uri.to_string(), plugin.clone());
        Ok(())
    }

    /// The plugin that serves `uri`.
    pub fn route(&self, uri: &str) -> Option<Arc<Plugin>> {
        let fixed = self.fixed.read().unwrap_or_else(|e| e.into_inner());
        if let Some(plugin) = fixed.get(uri) {
            return Some(plugin.clone());
        }
        self.templates
            .iter()
            .find(|t| t.parsed.matches(uri))
            .map(|t| t.plugin.clone())
    }

    /// Every template, in order.
    pub fn templates(&self) -> &[CatalogTemplate] {
        &self.templates
    }

    /// The template written exactly as `uri_template`.
    pub fn template(&self, uri_template: &str) -> Option<&CatalogTemplate> {
        self.templates
            .iter()
            .find(|t| t.template.uri_template == uri_template)
    }

    /// Takes a new listing of `plugin`'s fixed resources: its routes are replaced, and the
    /// resources it may serve are returned. A URI another plugin serves is left out with a warning.
    pub fn record_listing(
        &self,
        plugin: &Arc<Plugin>,
        listing: Vec<resources::Resource>,
    ) -> Vec<resources::Resource> {
        self.fixed
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|_, owner| owner.name != plugin.name);
        let mut accepted = Vec::with_capacity(listing.len());
        for resource in listing {
            match self.claim(plugin, &resource.uri) {
                Ok(()) => accepted.push(resource),
                Err(why) => tracing::warn!("resource left out: {why:#}"),
            }
        }
        accepted
    }
}
