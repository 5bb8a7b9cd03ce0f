//! Resources: data the client reads by URI. A [`Resource`] has a fixed URI, a
//! [`ResourceTemplate`] names a family of them; both come with the function that reads them.

use std::fmt;

use serde_json::Value;

use crate::Arguments;
use crate::bindings::exports::palisade::plugin::resources as wit;
use crate::completion::{Completer, Completers};
use crate::template::UriTemplate;
use crate::types::{Annotations, Icon, PluginError, ResourceContents};

/// What a resource read function may return.
///
/// Implemented for `String` and `&str` (text), `Vec<u8>` (bytes; the host base64-encodes them),
/// [`ResourceContents`] and `Vec<ResourceContents>` (as built), and `Result<R, E>` where `R` is
/// one of these and `E: Into<PluginError>` (such as a [`PluginError`] or a `String`, which is an
/// internal error).
///
/// Contents without a MIME type get the one declared on the resource or template.
pub trait IntoResourceContents {
    /// Converts the value into the contents of the resource at `uri`, whose declared MIME type
    /// is `mime_type`.
    fn into_resource_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, PluginError>;
}

impl IntoResourceContents for Vec<ResourceContents> {
    fn into_resource_contents(
        mut self,
        _uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, PluginError> {
        for contents in &mut self {
            if contents.mime_type.is_none() {
                contents.mime_type = mime_type.map(str::to_string);
            }
        }
        Ok(self)
    }
}

impl IntoResourceContents for ResourceContents {
    fn into_resource_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, PluginError> {
        vec![self].into_resource_contents(uri, mime_type)
    }
}

impl IntoResourceContents for String {
    fn into_resource_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, PluginError> {
        ResourceContents::text(uri, self).into_resource_contents(uri, mime_type)
    }
}

impl IntoResourceContents for &str {
    fn into_resource_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, PluginError> {
        self.to_string().into_resource_contents(uri, mime_type)
    }
}

impl IntoResourceContents for Vec<u8> {
    fn into_resource_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, PluginError> {
        ResourceContents::blob(uri, self).into_resource_contents(uri, mime_type)
    }
}

impl<R: IntoResourceContents, E: Into<PluginError>> IntoResourceContents for Result<R, E> {
    fn into_resource_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, PluginError> {
        self.map_err(Into::into)?
            .into_resource_contents(uri, mime_type)
    }
}

type Reader = Box<dyn Fn(&str, Option<&str>) -> Result<Vec<ResourceContents>, PluginError>>;
type TemplateReader =
    Box<dyn Fn(&str, &Arguments, Option<&str>) -> Result<Vec<ResourceContents>, PluginError>>;

/// How a listed resource is described (MCP `Resource`), without a function to read it: what a
/// [resource lister](crate::Plugin::resource_lister) returns. [`Resource`] is the same with a
/// read function.
///
/// ```
/// use palisade_sdk::ResourceInfo;
///
/// let info = ResourceInfo::new("notes://todo", "todo")
///     .mime_type("text/markdown")
///     .size(120)
///     .file("/notes/todo.md");
/// assert_eq!(info.uri(), "notes://todo");
/// ```
#[derive(Clone, Debug)]
pub struct ResourceInfo {
    uri: String,
    name: String,
    title: Option<String>,
    description: Option<String>,
    mime_type: Option<String>,
    size: Option<u64>,
    annotations: Option<Annotations>,
    icons: Vec<Icon>,
    meta: Option<Value>,
    file: Option<String>,
}

impl ResourceInfo {
    /// A resource at `uri`, with `name` for programs and as a fallback for display.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceInfo {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            annotations: None,
            icons: Vec::new(),
            meta: None,
            file: None,
        }
    }

    /// The resource's URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The resource's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn info_mut(&mut self) -> &mut ResourceInfo {
        self
    }

    pub(crate) fn to_wit(&self) -> wit::Resource {
        wit::Resource {
            uri: self.uri.clone(),
            name: self.name.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            mime_type: self.mime_type.clone(),
            size: self.size,
            annotations: self.annotations.clone(),
            icons: self.icons.clone(),
            meta: self.meta.as_ref().map(Value::to_string),
            file: self.file.clone(),
        }
    }
}

/// The builder methods [`ResourceInfo`] and [`Resource`] share.
macro_rules! describe_resource {
    ($type:ty) => {
        impl $type {
            /// Sets a name for people.
            pub fn title(mut self, title: impl Into<String>) -> Self {
                self.info_mut().title = Some(title.into());
                self
            }

            /// Sets what the resource is.
            pub fn description(mut self, description: impl Into<String>) -> Self {
                self.info_mut().description = Some(description.into());
                self
            }

            /// Sets the MIME type. Contents read without one get it.
            pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
                self.info_mut().mime_type = Some(mime_type.into());
                self
            }

            /// Sets the size in bytes.
            pub fn size(mut self, size: u64) -> Self {
                self.info_mut().size = Some(size);
                self
            }

            /// Names the file the contents come from, as a path the plugin sees (such as
            /// `/notes/todo.md`, in a granted directory or root). The host watches it and tells
            /// subscribed clients when it changes.
            pub fn file(mut self, path: impl Into<String>) -> Self {
                self.info_mut().file = Some(path.into());
                self
            }

            /// Sets hints for the client: audience, priority, last modification.
            pub fn annotations(mut self, annotations: Annotations) -> Self {
                self.info_mut().annotations = Some(annotations);
                self
            }

            /// Adds an icon for clients to show.
            pub fn icon(mut self, icon: Icon) -> Self {
                self.info_mut().icons.push(icon);
                self
            }

            /// Sets extra metadata (`_meta`), a JSON object.
            pub fn meta(mut self, meta: Value) -> Self {
                self.info_mut().meta = Some(meta);
                self
            }
        }
    };
}

describe_resource!(ResourceInfo);
describe_resource!(Resource);

/// A resource with a fixed URI (MCP `Resource`) and the function that reads it.
///
/// The function takes nothing and returns any [`IntoResourceContents`]: text, bytes, or
/// [`ResourceContents`] built by hand.
///
/// ```
/// use palisade_sdk::{PluginError, Resource};
///
/// let motd = Resource::new("motd://today", "motd", || "Be kind.")
///     .title("Message of the day")
///     .mime_type("text/plain");
/// let config = Resource::new("config://app", "config", || {
///     std::fs::read("/config/app.toml").map_err(|e| PluginError::internal(e.to_string()))
/// });
/// assert_eq!(motd.uri(), "motd://today");
/// ```
pub struct Resource {
    info: ResourceInfo,
    reader: Reader,
}

impl Resource {
    /// The resource at `uri`, named `name`, whose contents `read` returns.
    pub fn new<R, F>(uri: impl Into<String>, name: impl Into<String>, read: F) -> Self
    where
        R: IntoResourceContents,
        F: Fn() -> R + 'static,
    {
        Resource {
            info: ResourceInfo::new(uri, name),
            reader: Box::new(move |uri, mime_type| read().into_resource_contents(uri, mime_type)),
        }
    }

    /// The resource's URI.
    pub fn uri(&self) -> &str {
        &self.info.uri
    }

    /// The resource's name.
    pub fn name(&self) -> &str {
        &self.info.name
    }

    /// How the resource is listed.
    pub fn info(&self) -> &ResourceInfo {
        &self.info
    }

    /// Reads the resource.
    pub fn read(&self) -> Result<Vec<ResourceContents>, PluginError> {
        (self.reader)(&self.info.uri, self.info.mime_type.as_deref())
    }

    fn info_mut(&mut self) -> &mut ResourceInfo {
        &mut self.info
    }
}

impl fmt::Debug for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resource")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

/// A family of resources named by an RFC 6570 URI template (MCP `ResourceTemplate`), and the
/// function that reads any of them.
///
/// The SDK matches a URI against the template itself: it supports `{name}` (one or more
/// characters, none of `: / ? # [ ] @ ! $ & ' ( ) * + , ; =`) and `{+name}` (one or more of any
/// character), with `%XX` escapes decoded. The read function gets the URI and the variables'
/// values; it answers [`PluginError::not_found`] for values that name nothing.
///
/// ```
/// use palisade_sdk::{Arguments, PluginError, ResourceTemplate, prefix_matches};
///
/// fn read_city(_uri: &str, vars: &Arguments) -> Result<String, PluginError> {
///     match vars["city"].as_str() {
///         "paris" => Ok("sunny, 24 °C".into()),
///         other => Err(PluginError::not_found(format!("no weather for `{other}`"))),
///     }
/// }
///
/// let template = ResourceTemplate::new("weather://{city}/today", "weather", read_city)
///     .description("Today's weather in a city")
///     .mime_type("text/plain")
///     .complete("city", |typed, _| prefix_matches(typed, ["paris", "prague"]));
/// assert_eq!(template.read("weather://paris/today").unwrap().len(), 1);
/// assert!(template.read("weather://oslo/today").is_err());
/// ```
///
/// # Panics
///
/// [`ResourceTemplate::new`] panics on a template it cannot match (other operators such as
/// `{?q}`, lists, modifiers, unbalanced braces, a variable used twice, or two variables with
/// nothing between them), so a plugin with one fails when the host loads it.
pub struct ResourceTemplate {
    uri_template: String,
    parsed: UriTemplate,
    name: String,
    title: Option<String>,
    description: Option<String>,
    mime_type: Option<String>,
    annotations: Option<Annotations>,
    icons: Vec<Icon>,
    meta: Option<Value>,
    reader: TemplateReader,
    pub(crate) completers: Completers,
}

impl ResourceTemplate {
    /// The resources whose URIs match `uri_template`, named `name`, read by `read`, which gets
    /// the URI and the values of the template's variables.
    pub fn new<R, F>(uri_template: impl Into<String>, name: impl Into<String>, read: F) -> Self
    where
        R: IntoResourceContents,
        F: Fn(&str, &Arguments) -> R + 'static,
    {
        let uri_template = uri_template.into();
        let parsed = UriTemplate::parse(&uri_template)
            .unwrap_or_else(|e| panic!("resource template `{uri_template}`: {e}"));
        ResourceTemplate {
            uri_template,
            parsed,
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            annotations: None,
            icons: Vec::new(),
            meta: None,
            reader: Box::new(move |uri, vars, mime_type| {
                read(uri, vars).into_resource_contents(uri, mime_type)
            }),
            completers: Completers::default(),
        }
    }

    /// The URI template.
    pub fn uri_template(&self) -> &str {
        &self.uri_template
    }

    /// The template's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The names of the template's variables, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parsed.variables()
    }

    /// Sets a name for people.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets what the resources are.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the MIME type every resource it names has. Contents read without one get it.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets hints for the client.
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Adds an icon for clients to show.
    pub fn icon(mut self, icon: Icon) -> Self {
        self.icons.push(icon);
        self
    }

    /// Sets extra metadata (`_meta`), a JSON object.
    pub fn meta(mut self, meta: Value) -> Self {
        self.meta = Some(meta);
        self
    }

    /// Completes the variable `variable` with `completer`, which gets what the user typed so far
    /// and the values of the variables already filled in, and returns suggestions
    /// ([`prefix_matches`](crate::prefix_matches) filters a fixed list). A second completer for
    /// the same variable replaces the first.
    ///
    /// # Panics
    ///
    /// If the template has no variable `variable`.
    pub fn complete<F>(mut self, variable: impl Into<String>, completer: F) -> Self
    where
        F: Fn(&str, &Arguments) -> Vec<String> + 'static,
    {
        let variable = variable.into();
        if !self.parsed.variables().any(|v| v == variable) {
            panic!(
                "resource template `{}` completes `{variable}`, which is not one of its variables",
                self.uri_template
            );
        }
        self.completers
            .insert(variable, Box::new(completer) as Completer);
        self
    }

    /// The values of the template's variables, if `uri` matches it.
    pub fn matches(&self, uri: &str) -> Option<Arguments> {
        self.parsed.matches(uri)
    }

    /// Reads the resource at `uri`; [`PluginError::not_found`] if `uri` does not match.
    pub fn read(&self, uri: &str) -> Result<Vec<ResourceContents>, PluginError> {
        match self.matches(uri) {
            Some(vars) => (self.reader)(uri, &vars, self.mime_type.as_deref()),
            None => Err(PluginError::not_found(format!(
                "`{uri}` does not match the resource template `{}`",
                self.uri_template
            ))),
        }
    }

    pub(crate) fn to_wit(&self) -> wit::ResourceTemplate {
        wit::ResourceTemplate {
            uri_template: self.uri_template.clone(),
            name: self.name.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            mime_type: self.mime_type.clone(),
            annotations: self.annotations.clone(),
            icons: self.icons.clone(),
            meta: self.meta.as_ref().map(Value::to_string),
        }
    }
}

impl fmt::Debug for ResourceTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceTemplate")
            .field("uri_template", &self.uri_template)
            .field("name", &self.name)
            .field("completes", &self.completers.names().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ResourceBody;

    fn text(contents: &[ResourceContents]) -> (&str, Option<&str>) {
        match contents {
            [
                ResourceContents {
                    body: ResourceBody::Text(text),
                    mime_type,
                    ..
                },
            ] => (text, mime_type.as_deref()),
            _ => panic!("expected one text contents"),
        }
    }

    #[test]
    fn fixed_resource_reads_text_with_its_mime_type() {
        let resource = Resource::new("motd://today", "motd", || "hi").mime_type("text/plain");
        let contents = resource.read().expect("read");
        assert_eq!(text(&contents), ("hi", Some("text/plain")));
        assert_eq!(contents[0].uri, "motd://today");
    }

    #[test]
    fn bytes_become_a_blob_and_errors_pass_through() {
        let blob = Resource::new("b://x", "x", || vec![1u8, 2])
            .read()
            .expect("read");
        assert!(matches!(&blob[0].body, ResourceBody::Blob(b) if b == &[1, 2]));
        let failing = Resource::new("b://y", "y", || Err::<String, _>("disk on fire"));
        let error = failing.read().expect_err("fails");
        assert_eq!(error.code, crate::types::ErrorCode::Internal);
        assert_eq!(error.message, "disk on fire");
    }

    #[test]
    fn explicit_mime_type_wins() {
        let resource = Resource::new("r://x", "x", || {
            ResourceContents::text("r://x", "{}").mime_type("application/json")
        })
        .mime_type("text/plain");
        assert_eq!(
            text(&resource.read().expect("read")),
            ("{}", Some("application/json"))
        );
    }

    #[test]
    fn template_reads_with_variables() {
        let template = ResourceTemplate::new("notes://{name}", "note", |uri, vars| {
            format!("{uri} is {}", vars["name"])
        });
        let contents = template.read("notes://a%20b").expect("read");
        assert_eq!(text(&contents).0, "notes://a%20b is a b");
        let error = template.read("notes://a/b").expect_err("no match");
        assert_eq!(error.code, crate::types::ErrorCode::NotFound);
    }

    #[test]
    #[should_panic(expected = "which is not one of its variables")]
    fn completing_an_unknown_variable_panics() {
        let _ = ResourceTemplate::new("notes://{name}", "note", |_, _| "")
            .complete("nmae", |_, _| Vec::new());
    }

    #[test]
    #[should_panic(expected = "resource template `x://{?q}`")]
    fn unsupported_template_panics() {
        let _ = ResourceTemplate::new("x://{?q}", "x", |_, _| "");
    }

    #[test]
    fn info_carries_the_file() {
        let listed = ResourceInfo::new("notes://a", "a")
            .file("/notes/a.md")
            .size(3)
            .to_wit();
        assert_eq!(listed.file.as_deref(), Some("/notes/a.md"));
        assert_eq!(listed.size, Some(3));
    }
}
