//! Tools: a name, some metadata, and a function from arguments to a result.

use std::fmt;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::bindings::exports::palisade::plugin::tools as wit;
use crate::result::{IntoToolResult, ToolResult};
use crate::schema::{self, HeaderMark};
use crate::types::Icon;
pub use wit::TaskSupport;

/// The argument type of a tool that takes no arguments (its schema is an empty object).
///
/// ```
/// use palisade_sdk::{NoArgs, Tool};
///
/// let tool = Tool::new("ping", |_: NoArgs| "pong");
/// ```
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema)]
// An explicit empty `properties`: some clients expect it on every object schema.
#[schemars(extend("properties" = {}))]
pub struct NoArgs {}

type Handler = Box<dyn Fn(&str) -> ToolResult>;

/// A tool the plugin offers (MCP `Tool`): built from a function, described with builder methods.
///
/// The function takes one argument struct, `A: Deserialize + JsonSchema`, whose schema becomes
/// the tool's input schema, and returns any [`IntoToolResult`].
///
/// ```
/// use palisade_sdk::Tool;
/// # #[derive(serde::Deserialize, schemars::JsonSchema)] struct Greet { name: String }
/// # fn greet(args: Greet) -> String { format!("Hello, {}!", args.name) }
///
/// let tool = Tool::new("greet", greet)
///     .title("Greeter")
///     .description("Say hello to someone")
///     .read_only(true);
/// assert_eq!(tool.name(), "greet");
/// ```
pub struct Tool {
    name: String,
    title: Option<String>,
    description: Option<String>,
    annotations: Option<wit::ToolAnnotations>,
    task_support: TaskSupport,
    icons: Vec<Icon>,
    meta: Option<Value>,
    // Schemas are built only when the host lists the tools, not on every call.
    input_schema: fn() -> Value,
    output_schema: fn() -> Option<Value>,
    header_marks: Vec<HeaderMark>,
    handler: Handler,
}

impl Tool {
    /// A tool named `name` (1 to 64 characters of `A-Z a-z 0-9 _ -`) that runs `handler`.
    ///
    /// If `R` fixes the structured content's type (as [`crate::Json`] does), that type's schema
    /// becomes the tool's output schema.
    pub fn new<A, R, F>(name: impl Into<String>, handler: F) -> Self
    where
        A: DeserializeOwned + JsonSchema,
        R: IntoToolResult,
        F: Fn(A) -> R + 'static,
    {
        Tool {
            name: name.into(),
            title: None,
            description: None,
            annotations: None,
            task_support: TaskSupport::Forbidden,
            icons: Vec::new(),
            meta: None,
            input_schema: schema::input_schema::<A>,
            output_schema: R::output_schema,
            header_marks: Vec::new(),
            handler: Box::new(move |arguments| match parse_arguments::<A>(arguments) {
                Ok(args) => handler(args).into_tool_result(),
                Err(message) => ToolResult::error(message),
            }),
        }
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sets a name for people.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets what the tool does, for the model.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Declares the structured content's schema: that of `T`, which must serialize as a JSON
    /// object. Use it when the tool builds its [`ToolResult::structured_content`] by hand.
    pub fn output_schema<T: JsonSchema>(mut self) -> Self {
        self.output_schema = || Some(schema::output_schema::<T>());
        self
    }

    /// Mirrors the argument `param` into the HTTP header `Mcp-Param-{header}` (MCP 2026-07-28,
    /// `x-mcp-header`): clients calling over HTTP send its value there too, so load balancers
    /// and gateways can route on it without reading the body. The host checks that header and
    /// body agree.
    ///
    /// `param` names a property of the argument struct (`"region"`, as serialized, so after any
    /// `#[serde(rename)]`), or a property of a nested one as a dotted path (`"target.region"`;
    /// the nested type needs `#[schemars(inline)]`, since MCP does not follow `$ref`). A name
    /// with a dot in it can only be marked on the field, as below. The parameter's type must be
    /// a string, an integer or a boolean: not a float, not an `Option` (its schema allows null;
    /// use `#[serde(default)]` with a plain type instead). `header` is an HTTP field name
    /// (letters, digits, `-` and the like), unique within the tool regardless of case.
    ///
    /// A `mirror_header` that breaks these rules panics when the host lists the tools, with a
    /// message saying why (clients would drop the tool).
    ///
    /// The same marking can be written on the field itself:
    /// `#[schemars(extend("x-mcp-header" = "Region"))]`. The SDK passes such markings on as they
    /// are; the host checks them when it loads the plugin and leaves out, with a warning, a tool
    /// whose markings break the rules.
    ///
    /// ```
    /// use palisade_sdk::Tool;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Query {
    ///     /// Where to run the query.
    ///     region: String,
    ///     /// Sent as `Mcp-Param-Tenant`, marked on the field.
    ///     #[schemars(extend("x-mcp-header" = "Tenant"))]
    ///     tenant: String,
    ///     sql: String,
    /// }
    ///
    /// fn query(q: Query) -> String {
    ///     format!("{} in {} for {}", q.sql, q.region, q.tenant)
    /// }
    ///
    /// let tool = Tool::new("query", query)
    ///     .description("Run a query")
    ///     .mirror_header("region", "Region");
    /// ```
    pub fn mirror_header(mut self, param: impl Into<String>, header: impl Into<String>) -> Self {
        self.header_marks.push(HeaderMark {
            path: param.into(),
            header: header.into(),
        });
        self
    }

    /// Hints that the tool does not change its environment.
    pub fn read_only(self, hint: bool) -> Self {
        self.hint(|a| a.read_only_hint = Some(hint))
    }

    /// Hints whether the tool may destroy data (MCP assumes it may, unless it is read-only).
    pub fn destructive(self, hint: bool) -> Self {
        self.hint(|a| a.destructive_hint = Some(hint))
    }

    /// Hints that calling the tool twice with the same arguments has no further effect.
    pub fn idempotent(self, hint: bool) -> Self {
        self.hint(|a| a.idempotent_hint = Some(hint))
    }

    /// Hints whether the tool talks to the outside world (MCP assumes it does).
    pub fn open_world(self, hint: bool) -> Self {
        self.hint(|a| a.open_world_hint = Some(hint))
    }

    /// Says whether a call may run as a task: detached from its request, polled by the client,
    /// under the plugin's task limits rather than its per-call ones. `Optional` suits a tool
    /// that may take minutes (a crawl, a build, a conversion): it becomes a task whenever the
    /// client can run one. The server's configuration may say otherwise.
    ///
    /// ```
    /// use palisade_sdk::{NoArgs, TaskSupport, Tool};
    ///
    /// let tool = Tool::new("crawl", |_: NoArgs| "done").task_support(TaskSupport::Optional);
    /// ```
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.task_support = support;
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

    /// The extra metadata set so far.
    pub fn meta_value(&self) -> Option<&Value> {
        self.meta.as_ref()
    }

    /// Runs the tool on `arguments`, JSON text. Bad arguments give a result with `is_error` set.
    pub fn call(&self, arguments: &str) -> ToolResult {
        (self.handler)(arguments)
    }

    /// The tool's description for the host, schemas included. Panics on header markings that
    /// break MCP's rules (see [`Tool::mirror_header`]).
    pub(crate) fn to_wit(&self) -> wit::Tool {
        wit::Tool {
            name: self.name.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            input_schema: self.input_schema().to_string(),
            output_schema: (self.output_schema)().map(|s| s.to_string()),
            annotations: self.annotations.clone(),
            task_support: self.task_support,
            icons: self.icons.clone(),
            meta: self.meta.as_ref().map(Value::to_string),
        }
    }

    /// The input schema, with the header markings added and checked.
    fn input_schema(&self) -> Value {
        let mut schema = (self.input_schema)();
        if let Err(why) = schema::mirror_headers(&mut schema, &self.header_marks) {
            panic!("tool `{}`: {why}", self.name);
        }
        schema
    }

    fn hint(mut self, set: impl FnOnce(&mut wit::ToolAnnotations)) -> Self {
        let annotations = self.annotations.get_or_insert(wit::ToolAnnotations {
            title: None,
            read_only_hint: None,
            destructive_hint: None,
            idempotent_hint: None,
            open_world_hint: None,
        });
        set(annotations);
        self
    }
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .field("title", &self.title)
            .field("description", &self.description)
            .finish_non_exhaustive()
    }
}

/// Parses the call's arguments. Going through `Value` keeps serde_json's line and column out of
/// the message: they mean nothing to a model that sent a JSON object.
fn parse_arguments<A: DeserializeOwned>(arguments: &str) -> Result<A, String> {
    let value = if arguments.trim().is_empty() {
        Value::Object(Default::default())
    } else {
        serde_json::from_str::<Value>(arguments)
            .map_err(|e| format!("invalid arguments: not valid JSON: {e}"))?
    };
    A::deserialize(value).map_err(|e| format!("invalid arguments: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ContentBlock;

    #[derive(Deserialize, JsonSchema)]
    struct Greet {
        name: String,
    }

    fn greet(args: Greet) -> String {
        format!("Hello, {}!", args.name)
    }

    fn text(result: &ToolResult) -> &str {
        match result.content.as_slice() {
            [ContentBlock::Text(t)] => &t.text,
            _ => panic!("expected one text block"),
        }
    }

    #[test]
    fn calls_the_function() {
        let result = Tool::new("greet", greet).call(r#"{"name":"Ada"}"#);
        assert!(!result.is_error);
        assert_eq!(text(&result), "Hello, Ada!");
    }

    #[test]
    fn missing_field_is_an_error_result() {
        let result = Tool::new("greet", greet).call("{}");
        assert!(result.is_error);
        assert_eq!(text(&result), "invalid arguments: missing field `name`");
    }

    #[test]
    fn wrong_type_is_an_error_result() {
        let result = Tool::new("greet", greet).call(r#"{"name":7}"#);
        assert!(result.is_error);
        assert!(text(&result).contains("invalid type: integer `7`, expected a string"));
    }

    #[test]
    fn malformed_json_is_an_error_result() {
        let result = Tool::new("greet", greet).call("{");
        assert!(result.is_error);
        assert!(text(&result).starts_with("invalid arguments: not valid JSON"));
    }

    #[test]
    fn no_args_accepts_empty_and_extra_arguments() {
        let tool = Tool::new("ping", |_: NoArgs| "pong");
        assert_eq!(text(&tool.call("")), "pong");
        assert_eq!(text(&tool.call(r#"{"x":1}"#)), "pong");
        let listed = tool.to_wit();
        let schema: Value = serde_json::from_str(&listed.input_schema).expect("json");
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["properties"], serde_json::json!({}));
        assert!(listed.output_schema.is_none());
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Routed {
        region: String,
        score: f64,
    }

    #[test]
    fn mirror_header_marks_the_listed_schema() {
        let listed = Tool::new("route", |_: Routed| "ok")
            .mirror_header("region", "Region")
            .to_wit();
        let schema: Value = serde_json::from_str(&listed.input_schema).expect("json");
        assert_eq!(schema["properties"]["region"]["x-mcp-header"], "Region");
        assert_eq!(schema["properties"]["region"]["type"], "string");
        assert!(schema["properties"]["score"].get("x-mcp-header").is_none());
    }

    #[test]
    #[should_panic(
        expected = "tool `route`: cannot mirror `zone` into a header: the input \
                    schema has no property `zone`"
    )]
    fn mirror_header_of_a_missing_parameter_panics_when_listed() {
        // Building the tool is fine: schemas are only made when the host lists the tools.
        let tool = Tool::new("route", |_: Routed| "ok").mirror_header("zone", "Zone");
        tool.to_wit();
    }

    #[test]
    #[should_panic(
        expected = "tool `route`: cannot mirror `score` into a header: its type is \
                    \"number\", not one of string, integer, boolean"
    )]
    fn mirror_header_of_a_number_panics_when_listed() {
        Tool::new("route", |_: Routed| "ok")
            .mirror_header("score", "Score")
            .to_wit();
    }

    #[test]
    fn to_wit_carries_metadata_and_hints() {
        #[derive(serde::Serialize, JsonSchema)]
        struct Out {
            text: String,
        }
        let listed = Tool::new("greet", greet)
            .description("Say hello")
            .read_only(true)
            .output_schema::<Out>()
            .to_wit();
        assert_eq!(listed.description.as_deref(), Some("Say hello"));
        let hints = listed.annotations.expect("annotations");
        assert_eq!(hints.read_only_hint, Some(true));
        assert_eq!(hints.destructive_hint, None);
        let output: Value =
            serde_json::from_str(&listed.output_schema.expect("schema")).expect("json");
        assert_eq!(output["properties"]["text"]["type"], "string");
    }
}
