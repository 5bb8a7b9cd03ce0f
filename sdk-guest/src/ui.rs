//! MCP Apps (the extension `io.modelcontextprotocol/ui`): a view is an HTML page, served as a
//! `ui://` resource, that a host shows for a tool's results; a tool names its view in
//! `_meta.ui`. [`View`] describes a view, [`Resource::ui_view`] serves it, and [`Tool::ui`]
//! links a tool to it.
//!
//! ```
//! use palisade_sdk::ui::{View, Visibility};
//! use palisade_sdk::{NoArgs, Resource, Tool};
//!
//! let view = Resource::ui_view(
//!     "ui://charts/bars",
//!     "bars",
//!     View::new().prefers_border(true),
//!     || "<!DOCTYPE html><html><body>...</body></html>".to_string(),
//! );
//! let tool = Tool::new("plot", |_: NoArgs| "plotted").ui("ui://charts/bars", &[Visibility::Model, Visibility::App]);
//! ```

use serde_json::{Map, Value, json};

use crate::types::ResourceContents;
use crate::{Resource, Tool};

/// The mime type of an MCP Apps view.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";

/// What a host reads of a view in `_meta.ui`: where the page may connect and load from, what
/// it may use, its origin and whether it wants a border. With nothing set, the page gets no
/// network: it must be one self-contained document.
#[derive(Debug, Clone, Default)]
pub struct View {
    csp: Map<String, Value>,
    permissions: Map<String, Value>,
    domain: Option<String>,
    prefers_border: Option<bool>,
}

/// Something a view may ask the host for (`_meta.ui.permissions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    /// The camera.
    Camera,
    /// The microphone.
    Microphone,
    /// The device's location.
    Geolocation,
    /// Writing to the clipboard.
    ClipboardWrite,
}

/// Who may call a tool that has a view (`_meta.ui.visibility`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visibility {
    /// The model, as any tool.
    Model,
    /// The view, through its host.
    App,
}

impl View {
    /// A view that declares nothing: no network, no permissions.
    pub fn new() -> View {
        View::default()
    }

    /// Origins the page may connect to (`fetch`, WebSocket): `https://api.example.com`.
    pub fn connect_domains<S: Into<String>>(self, origins: impl IntoIterator<Item = S>) -> View {
        self.csp("connectDomains", origins)
    }

    /// Origins the page may load scripts, styles, images, fonts and media from.
    pub fn resource_domains<S: Into<String>>(self, origins: impl IntoIterator<Item = S>) -> View {
        self.csp("resourceDomains", origins)
    }

    /// Origins the page may embed in frames.
    pub fn frame_domains<S: Into<String>>(self, origins: impl IntoIterator<Item = S>) -> View {
        self.csp("frameDomains", origins)
    }

    /// Origins the page's `<base>` may name.
    pub fn base_uri_domains<S: Into<String>>(self, origins: impl IntoIterator<Item = S>) -> View {
        self.csp("baseUriDomains", origins)
    }

    fn csp<S: Into<String>>(mut self, key: &str, origins: impl IntoIterator<Item = S>) -> View {
        let origins: Vec<Value> = origins
            .into_iter()
            .map(|o| Value::String(o.into()))
            .collect();
        self.csp.insert(key.into(), Value::Array(origins));
        self
    }

    /// Asks the host for `permission`.
    pub fn permission(mut self, permission: Permission) -> View {
        let name = match permission {
            Permission::Camera => "camera",
            Permission::Microphone => "microphone",
            Permission::Geolocation => "geolocation",
            Permission::ClipboardWrite => "clipboardWrite",
        };
        self.permissions.insert(name.into(), json!({}));
        self
    }

    /// The origin the host should give the page (host-specific).
    pub fn domain(mut self, domain: impl Into<String>) -> View {
        self.domain = Some(domain.into());
        self
    }

    /// Whether the host should draw a border and background around the page.
    pub fn prefers_border(mut self, prefers: bool) -> View {
        self.prefers_border = Some(prefers);
        self
    }

    /// The view's `_meta.ui`.
    pub fn meta(&self) -> Value {
        let mut ui = Map::new();
        if !self.csp.is_empty() {
            ui.insert("csp".into(), Value::Object(self.csp.clone()));
        }
        if !self.permissions.is_empty() {
            ui.insert(
                "permissions".into(),
                Value::Object(self.permissions.clone()),
            );
        }
        if let Some(domain) = &self.domain {
            ui.insert("domain".into(), domain.clone().into());
        }
        if let Some(prefers) = self.prefers_border {
            ui.insert("prefersBorder".into(), prefers.into());
        }
        Value::Object(ui)
    }
}

impl Resource {
    /// An MCP Apps view at `uri` (`ui://AUTHORITY/PATH`; the plugin's name as the authority
    /// keeps it the plugin's own): the page `render` returns, one self-contained HTML
    /// document, served with the extension's mime type and `view`'s `_meta.ui`, on its listing
    /// and its contents.
    ///
    /// Panics on a URI that is not `ui://AUTHORITY/PATH`, when the plugin is defined.
    pub fn ui_view(
        uri: impl Into<String>,
        name: impl Into<String>,
        view: View,
        render: impl Fn() -> String + 'static,
    ) -> Resource {
        let uri = uri.into();
        assert!(
            is_view_uri(&uri),
            "view `{uri}`: a view's URI is ui://AUTHORITY/PATH"
        );
        let ui = json!({ "ui": view.meta() });
        let contents_meta = ui.to_string();
        let at = uri.clone();
        Resource::new(uri, name, move || {
            let mut contents = ResourceContents::text(at.clone(), render()).mime_type(MIME_TYPE);
            contents.meta = Some(contents_meta.clone());
            contents
        })
        .mime_type(MIME_TYPE)
        .meta(ui)
    }
}

impl Tool {
    /// Names the tool's MCP Apps view (a [`Resource::ui_view`]'s URI), which hosts able to
    /// show one render with the tool's results, and who may call the tool: `[Model, App]` as
    /// usual, or `[App]` to keep it from the model. Sets `_meta.ui` and the older flat
    /// `ui/resourceUri`, beside what [`Tool::meta`] set.
    ///
    /// Panics on a URI that is not `ui://AUTHORITY/PATH`, or an empty `visibility`.
    pub fn ui(self, resource_uri: &str, visibility: &[Visibility]) -> Tool {
        assert!(
            is_view_uri(resource_uri),
            "tool `{}`: a view's URI is ui://AUTHORITY/PATH, not {resource_uri:?}",
            self.name()
        );
        assert!(
            !visibility.is_empty(),
            "tool `{}`: a visibility of nobody",
            self.name()
        );
        let shown: Vec<&str> = visibility
            .iter()
            .map(|v| match v {
                Visibility::Model => "model",
                Visibility::App => "app",
            })
            .collect();
        let mut meta = match self.meta_value() {
            Some(Value::Object(meta)) => meta.clone(),
            _ => Map::new(),
        };
        meta.insert(
            "ui".into(),
            json!({ "resourceUri": resource_uri, "visibility": shown }),
        );
        meta.insert("ui/resourceUri".into(), resource_uri.into());
        self.meta(Value::Object(meta))
    }
}

/// `ui://AUTHORITY/PATH`.
fn is_view_uri(uri: &str) -> bool {
    uri.strip_prefix("ui://")
        .and_then(|rest| rest.split_once('/'))
        .is_some_and(|(authority, path)| {
            !authority.is_empty() && !authority.contains(['?', '#']) && !path.is_empty()
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NoArgs;

    #[test]
    fn a_view_is_a_ui_resource_of_its_mime_type_and_a_tool_names_it() {
        let view = Resource::ui_view(
            "ui://demo/chart",
            "chart",
            View::new()
                .connect_domains(["https://api.example.com"])
                .permission(Permission::ClipboardWrite)
                .prefers_border(true),
            || "<!DOCTYPE html><p>chart</p>".into(),
        );
        let ui = json!({ "ui": { "csp": { "connectDomains": ["https://api.example.com"] },
                                 "permissions": { "clipboardWrite": {} }, "prefersBorder": true } });
        let listed = view.info().to_wit();
        assert_eq!(listed.mime_type.as_deref(), Some(MIME_TYPE));
        assert_eq!(
            serde_json::from_str::<Value>(listed.meta.as_deref().unwrap()).unwrap(),
            ui
        );
        let contents = view.read().unwrap().pop().unwrap();
        assert_eq!(contents.mime_type.as_deref(), Some(MIME_TYPE));
        assert_eq!(
            serde_json::from_str::<Value>(contents.meta.as_deref().unwrap()).unwrap(),
            ui
        );
        let tool = Tool::new("plot", |_: NoArgs| "plotted")
            .meta(json!({ "mine": 1 }))
            .ui("ui://demo/chart", &[Visibility::App]);
        assert_eq!(
            tool.meta_value(),
            Some(
                &json!({ "mine": 1, "ui": { "resourceUri": "ui://demo/chart", "visibility": ["app"] },
                          "ui/resourceUri": "ui://demo/chart" })
            )
        );
        assert!(!is_view_uri("https://x/y") && !is_view_uri("ui://x") && !is_view_uri("ui:///y"));
    }
}
