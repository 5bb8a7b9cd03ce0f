//! Which plugin serves a resource URI: the plugin that listed it, or the one whose template
//! matches it. A URI belongs to the plugin whose namespace holds it, and two plugins may never
//! claim the same URI.
//!
//! A plugin's namespaces are the schemes of the URIs and templates it lists when loaded
//! (`notes:` for `notes://welcome` and `notes://{name}`), and for MCP Apps views, which all use
//! `ui:`, the authority (`ui://weather/` for `ui://weather/forecast`). A scheme or `ui://`
//! authority named after a plugin is that plugin's (`notes:` and the plugin `notes`), wherever
//! either stands in the configuration;
//! any other namespace is the first claimant's in the configuration's order. The plugin that
//! loses a dispute keeps its tools and prompts, its resources are not served, and
//! what any plugin lists later is served only inside its own namespaces, so no plugin can take
//! over or shadow another's URIs by listing them first. `file://` URIs are shared by every
//! plugin, each only inside the directories it is granted.

use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::sync::Arc;

use super::shown;
use super::uri_template::{MAX_URI_BYTES, UriTemplate};
use crate::runtime::bindings::resources;
use crate::runtime::{Plugin, log_safe};

/// A resource template and the plugin that answers it.
pub struct CatalogTemplate {
    /// The plugin that serves it.
    pub plugin: Arc<Plugin>,
    /// The template as the plugin listed it.
    pub template: resources::ResourceTemplate,
    /// The template, parsed for matching URIs.
    pub parsed: UriTemplate,
}

/// Where a plugin's URIs live: a scheme, one authority of `ui://`, or `file://`, which every
/// plugin shares.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Namespace {
    /// Every URI of a scheme (`notes:`).
    Scheme(String),
    /// The MCP Apps views of one authority (`ui://weather/...`): every plugin with a view uses
    /// the scheme `ui:`, so each authority is a namespace of its own.
    Ui(String),
    /// `file://`: shared, each plugin inside its grants.
    File,
}

impl Namespace {
    /// Whether two plugins claiming these would collide.
    fn overlaps(&self, other: &Namespace) -> bool {
        match (self, other) {
            (Namespace::Scheme(a), Namespace::Scheme(b)) | (Namespace::Ui(a), Namespace::Ui(b)) => {
                a == b
            }
            _ => false,
        }
    }

    /// The name a plugin must have to hold this namespace against any other.
    fn named(&self) -> Option<&str> {
        match self {
            Namespace::Scheme(name) | Namespace::Ui(name) => Some(name),
            Namespace::File => None,
        }
    }

    /// The namespace of a URI; the error says why the URI cannot be served.
    fn of_uri(uri: &str) -> Result<Namespace, String> {
        check_uri_text(uri)?;
        Namespace::of_scheme(split_scheme(uri)?, uri)
    }

    /// The namespace a template claims: its scheme, which must be literal text.
    fn of_template(template: &str) -> Result<Namespace, String> {
        let literal = template.split('{').next().unwrap_or("");
        let scheme = split_scheme(literal)
            .map_err(|_| "a URI template must start with a literal scheme (`name:`)".to_string())?;
        Namespace::of_scheme(scheme, literal)
    }

    /// The namespace of `scheme`, the scheme of `uri` (for `ui:`, its authority too: literal
    /// text up to the path).
    fn of_scheme(scheme: String, uri: &str) -> Result<Namespace, String> {
        Ok(match scheme.as_str() {
            "file" => Namespace::File,
            "ui" => {
                let rest = uri
                    .get(3..)
                    .and_then(|r| r.strip_prefix("//"))
                    .unwrap_or("");
                match rest.split_once(['/', '?', '#']) {
                    Some((authority, _)) if !authority.is_empty() => {
                        Namespace::Ui(authority.to_ascii_lowercase())
                    }
                    _ => {
                        return Err(format!(
                            "`{}`: a ui:// URI names its authority, then a path (ui://PLUGIN/VIEW), all \
                             literal in a template",
                            shown(uri)
                        ));
                    }
                }
            }
            _ => Namespace::Scheme(scheme),
        })
    }
}

impl std::fmt::Display for Namespace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Namespace::Scheme(s) => write!(f, "the scheme `{s}:`"),
            Namespace::Ui(a) => write!(f, "`ui://{a}/`"),
            Namespace::File => f.write_str("file://"),
        }
    }
}

/// A URI's scheme (RFC 3986: a letter, then letters, digits, `+`, `-`, `.`), lower-cased.
fn split_scheme(uri: &str) -> Result<String, String> {
    let (scheme, _) = uri
        .split_once(':')
        .ok_or_else(|| format!("`{}` has no scheme", shown(uri)))?;
    let valid = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    if !valid {
        return Err(format!("`{}` has no valid scheme", shown(uri)));
    }
    Ok(scheme.to_ascii_lowercase())
}

/// A URI a plugin lists: not over [`MAX_URI_BYTES`], no whitespace or control characters.
fn check_uri_text(uri: &str) -> Result<(), String> {
    if uri.len() > MAX_URI_BYTES {
        return Err(format!(
            "a URI of {} bytes, over the {MAX_URI_BYTES} allowed",
            uri.len()
        ));
    }
    if uri.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "the URI \"{}\" holds whitespace or control characters",
            shown(uri)
        ));
    }
    Ok(())
}

/// A resource's or template's name: not empty, no control characters.
pub(super) fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("its name is empty".into());
    }
    if name.chars().any(char::is_control) {
        return Err(format!(
            "its name \"{}\" holds control characters",
            shown(name)
        ));
    }
    Ok(())
}

/// Resource templates served of one plugin: every URI a client reads, and every update the
/// plugin reports, is matched against them. Real plugins list a handful.
pub const MAX_TEMPLATES_PER_PLUGIN: usize = 64;

/// What one plugin's listing claims: namespaces, parsed templates, fixed URIs.
pub(super) struct Claims {
    namespaces: Vec<Namespace>,
    templates: Vec<(resources::ResourceTemplate, UriTemplate)>,
    fixed: Vec<String>,
}

/// Why a plugin's listing cannot be served beside what another plugin holds.
pub(super) struct Dispute {
    /// The plugin holding it.
    other: Arc<str>,
    /// The namespace both claim, when that is the dispute.
    namespace: Option<Namespace>,
    /// The error, naming both.
    pub(super) why: String,
}

/// The routes of every resource URI.
#[derive(Default)]
pub struct ResourceRoutes {
    /// Sorted by URI template.
    templates: Vec<CatalogTemplate>,
    /// What each plugin claimed at load, in the order plugins were added.
    namespaces: Vec<(Namespace, Arc<str>)>,
    /// Fixed URIs by each plugin's latest listing.
    fixed: RwLock<BTreeMap<String, Arc<Plugin>>>,
}

impl ResourceRoutes {
    /// Adds the resources and templates `plugin` listed at load, unless one of them is another
    /// plugin's: then nothing is added, and the error names the other plugin and what both
    /// claim. A resource or template the plugin describes badly is left out with a warning.
    ///
    /// One exception, so that no plugin takes another's scheme by loading first: a scheme
    /// named after a plugin (`notes:` and the plugin `notes`) is that plugin's, and another
    /// plugin holding it gives way: its resources leave the routes, and its name is returned.
    pub(super) fn add(&mut self, plugin: &Arc<Plugin>) -> Result<Option<Arc<str>>, String> {
        let (claims, evicted) = match self.claims(plugin) {
            Ok(claims) => (claims, None),
            Err(Dispute {
                other,
                namespace: Some(namespace),
                ..
            }) if namespace.named().is_some_and(|n| {
                n.eq_ignore_ascii_case(&plugin.name) && !n.eq_ignore_ascii_case(&other)
            }) =>
            {
                self.evict(&other);
                (self.claims(plugin).map_err(|d| d.why)?, Some(other))
            }
            Err(dispute) => return Err(dispute.why),
        };
        let Claims {
            namespaces,
            templates,
            fixed,
        } = claims;
        for namespace in namespaces {
            if !self
                .namespaces
                .iter()
                .any(|(n, o)| *n == namespace && **o == *plugin.name)
            {
                self.namespaces.push((namespace, plugin.name.clone()));
            }
        }
        for (template, parsed) in templates {
            self.templates.push(CatalogTemplate {
                plugin: plugin.clone(),
                template,
                parsed,
            });
        }
        self.templates
            .sort_by(|a, b| a.template.uri_template.cmp(&b.template.uri_template));
        let mut routes = self.fixed.write();
        for uri in fixed {
            routes.insert(uri, plugin.clone());
        }
        Ok(evicted)
    }

    /// Takes every route of plugin `name` out.
    fn evict(&mut self, name: &str) {
        self.namespaces.retain(|(_, owner)| &**owner != name);
        self.templates.retain(|t| &*t.plugin.name != name);
        let mut routes = self.fixed.write();
        routes.retain(|_, p| &*p.name != name);
    }

    /// What `plugin`'s listing claims, checked against what other plugins hold here; nothing
    /// changes. A resource or template the plugin describes badly is left out with a warning.
    pub(super) fn claims(&self, plugin: &Arc<Plugin>) -> Result<Claims, Dispute> {
        let mut claimed: Vec<Namespace> = Vec::new();
        let mut templates = Vec::new();
        if plugin.templates.len() > MAX_TEMPLATES_PER_PLUGIN {
            tracing::warn!(
                plugin = &*plugin.name,
                "{} resource templates left out: a plugin may list {MAX_TEMPLATES_PER_PLUGIN}",
                plugin.templates.len() - MAX_TEMPLATES_PER_PLUGIN
            );
        }
        for template in plugin.templates.iter().take(MAX_TEMPLATES_PER_PLUGIN) {
            let checked = check_name(&template.name).and_then(|()| {
                let namespace = Namespace::of_template(&template.uri_template)?;
                Ok((
                    namespace,
                    UriTemplate::parse(&template.uri_template).map_err(|e| e.0)?,
                ))
            });
            match checked {
                Ok((namespace, parsed)) => {
                    claimed.push(namespace);
                    templates.push((template.clone(), parsed));
                }
                Err(why) => tracing::warn!(
                    plugin = &*plugin.name,
                    template = shown(&template.uri_template),
                    "resource template left out: {}",
                    log_safe(&why)
                ),
            }
        }
        let mut fixed = Vec::new();
        for resource in &plugin.resources {
            match check_name(&resource.name).and_then(|()| self.owned_by(plugin, &resource.uri)) {
                Ok(namespace) => {
                    claimed.push(namespace);
                    fixed.push(resource.uri.clone());
                }
                Err(why) => tracing::warn!(
                    plugin = &*plugin.name,
                    uri = shown(&resource.uri),
                    "resource left out: {}",
                    log_safe(&why)
                ),
            }
        }
        for namespace in &claimed {
            if let Some((_, owner)) = self
                .namespaces
                .iter()
                .find(|(other, owner)| **owner != *plugin.name && other.overlaps(namespace))
            {
                return Err(Dispute {
                    other: owner.clone(),
                    namespace: Some(namespace.clone()),
                    why: format!(
                        "plugins `{owner}` and `{}` both claim the resource URIs of {namespace}; \
                         serve them from one plugin, or give one of them another scheme (or, \
                         for ui://, another authority)",
                        plugin.name
                    ),
                });
            }
        }
        for (template, parsed) in &templates {
            if let Some(other) = self
                .templates
                .iter()
                .find(|t| t.plugin.name != plugin.name && t.parsed.overlaps(parsed))
            {
                return Err(Dispute {
                    other: other.plugin.name.clone(),
                    namespace: None,
                    why: format!(
                        "plugins `{}` and `{}` both claim resource URIs: their templates `{}` \
                         and `{}` can match the same URI; serve them from one plugin, or change \
                         one template",
                        other.plugin.name,
                        plugin.name,
                        shown(&other.template.uri_template),
                        shown(&template.uri_template)
                    ),
                });
            }
        }
        for uri in &fixed {
            if let Some(other) = self.route(uri).filter(|o| o.name != plugin.name) {
                return Err(Dispute {
                    other: other.name.clone(),
                    namespace: None,
                    why: format!(
                        "plugins `{}` and `{}` both claim the resource `{}`; serve it from one \
                         of them",
                        other.name,
                        plugin.name,
                        shown(uri)
                    ),
                });
            }
        }
        Ok(Claims {
            namespaces: claimed,
            templates,
            fixed,
        })
    }

    /// The namespace of `uri` if `plugin` may serve it: a `file://` URI inside its grants, or any
    /// other URI once loaded only inside the namespaces it claimed at load.
    fn owned_by(&self, plugin: &Plugin, uri: &str) -> Result<Namespace, String> {
        let namespace = Namespace::of_uri(uri)?;
        if namespace == Namespace::File {
            return if plugin.may_serve_file_uri(uri) {
                Ok(namespace)
            } else {
                Err("a file:// URI outside the directories the plugin is granted".into())
            };
        }
        Ok(namespace)
    }

    /// Whether `plugin` claimed the namespace of `uri` at load.
    fn in_own_namespace(&self, plugin: &Plugin, uri: &str) -> Result<(), String> {
        let namespace = self.owned_by(plugin, uri)?;
        let own = namespace == Namespace::File
            || self
                .namespaces
                .iter()
                .any(|(n, owner)| **owner == *plugin.name && *n == namespace);
        if own {
            Ok(())
        } else {
            Err(format!(
                "{namespace} is not among the plugin's namespaces (those of the URIs and \
                 templates it listed when loaded)"
            ))
        }
    }

    /// Whether plugin `name` serves `uri`: the same answer as [`ResourceRoutes::route`] (no two
    /// plugins' routes overlap), matched against that plugin's own routes only, so what a
    /// plugin reports costs matching its own templates, never every plugin's.
    pub fn serves(&self, name: &str, uri: &str) -> bool {
        if uri.len() > MAX_URI_BYTES {
            return false;
        }
        if let Some(owner) = self.fixed.read().get(uri) {
            return &*owner.name == name;
        }
        let file = uri
            .get(..5)
            .is_some_and(|s| s.eq_ignore_ascii_case("file:"));
        self.templates
            .iter()
            .filter(|t| &*t.plugin.name == name)
            .any(|t| t.parsed.matches(uri) && (!file || t.plugin.may_serve_file_uri(uri)))
    }

    /// The plugin that serves `uri`.
    pub fn route(&self, uri: &str) -> Option<Arc<Plugin>> {
        if uri.len() > MAX_URI_BYTES {
            return None;
        }
        let fixed = self.fixed.read();
        if let Some(plugin) = fixed.get(uri) {
            return Some(plugin.clone());
        }
        drop(fixed);
        let file = uri
            .get(..5)
            .is_some_and(|s| s.eq_ignore_ascii_case("file:"));
        self.templates
            .iter()
            .find(|t| t.parsed.matches(uri) && (!file || t.plugin.may_serve_file_uri(uri)))
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
    /// resources it may serve are returned. A URI outside its namespaces, or one another plugin
    /// serves, is left out with a warning.
    pub fn record_listing(
        &self,
        plugin: &Arc<Plugin>,
        listing: Vec<resources::Resource>,
    ) -> Vec<resources::Resource> {
        self.fixed
            .write()
            .retain(|_, owner| owner.name != plugin.name);
        let mut accepted = Vec::with_capacity(listing.len());
        for resource in listing {
            let checked = check_name(&resource.name)
                .and_then(|()| self.in_own_namespace(plugin, &resource.uri))
                .and_then(|()| match self.route(&resource.uri) {
                    Some(other) if other.name != plugin.name => {
                        Err(format!("plugin `{}` serves it", other.name))
                    }
                    _ => Ok(()),
                });
            match checked {
                Ok(()) => {
                    self.fixed
                        .write()
                        .insert(resource.uri.clone(), plugin.clone());
                    accepted.push(resource);
                }
                Err(why) => tracing::warn!(
                    plugin = &*plugin.name,
                    uri = shown(&resource.uri),
                    "resource left out: {}",
                    log_safe(&why)
                ),
            }
        }
        accepted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(uri: &str) -> Namespace {
        Namespace::of_uri(uri).unwrap()
    }

    #[test]
    fn namespaces_of_uris_and_templates() {
        assert_eq!(ns("notes://welcome"), Namespace::Scheme("notes".into()));
        assert_eq!(ns("Test://a/b?c"), Namespace::Scheme("test".into()));
        assert_eq!(ns("urn:isbn:1"), Namespace::Scheme("urn".into()));
        assert_eq!(ns("file:///etc/passwd"), Namespace::File);
        assert_eq!(ns("ui://Weather/forecast"), Namespace::Ui("weather".into()));
        assert!(Namespace::of_uri("ui://weather").is_err());
        assert!(Namespace::of_uri("ui:///forecast").is_err());
        assert_eq!(
            Namespace::of_template("ui://weather/{view}").unwrap(),
            Namespace::Ui("weather".into())
        );
        assert!(Namespace::of_template("ui://{plugin}/view").is_err());
        let t = |s| Namespace::of_template(s).unwrap();
        assert_eq!(t("notes://{name}"), ns("notes://x"));
        assert_eq!(t("test://template/{id}/data"), ns("test://x"));
        assert!(Namespace::of_template("{+uri}").is_err());
        assert!(Namespace::of_template("{scheme}://x").is_err());
        assert!(Namespace::of_uri("no-scheme").is_err());
        assert!(Namespace::of_uri("1x://a").is_err());
        assert!(Namespace::of_uri("a://b\u{7}").is_err());
        assert!(Namespace::of_uri(&format!("a://{}", "b".repeat(MAX_URI_BYTES))).is_err());
    }

    #[test]
    fn schemes_are_exclusive_and_files_shared() {
        assert!(ns("notes://a").overlaps(&ns("notes://b")));
        assert!(!ns("notes://a").overlaps(&ns("todo://a")));
        assert!(!ns("file:///a").overlaps(&ns("file:///a")));
    }

    #[test]
    fn names_must_be_printable_and_present() {
        assert!(check_name("notes").is_ok());
        assert!(check_name("").is_err());
        assert!(check_name("a\u{1b}[31m").is_err());
    }
}
