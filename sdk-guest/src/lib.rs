//! Write Palisade MCP plugins in Rust.
//!
//! A Palisade plugin is a WebAssembly component (`wasm32-wasip2`) that implements the
//! `palisade:plugin` WIT contract. This crate hides the contract behind plain Rust:
//!
//! - a [`Tool`] is a function that takes an argument struct and returns something that converts
//!   into a [`ToolResult`]. The argument struct's JSON Schema, derived with [`schemars`], becomes
//!   the tool's input schema; the arguments of each call are deserialized with [`serde`].
//! - a [`Resource`] is a fixed URI and a function that returns its contents (text or bytes); a
//!   [resource lister](Plugin::resource_lister) lists resources that come and go; a
//!   [`ResourceTemplate`] (`notes://{name}`) reads every URI that matches it, given the values
//!   of its variables.
//! - a [`Prompt`] is a function from its arguments to [`PromptMessage`]s.
//! - prompt arguments and template variables get completions with `.complete(name, completer)`,
//!   a function from what the user typed to suggestions ([`prefix_matches`] filters a list).
//! - [`http`] sends HTTP requests to the hosts the operator grants (`network`), and [`secret`]
//!   reads the API keys and tokens the operator gives (`[plugins.NAME.secrets]`).
//! - while serving a call, a plugin talks to the host through [`host`]: logs, progress, and
//!   questions for the client ([`host::ask`]: the user, its model, its roots).
//!
//! One macro, [`export_plugin!`], exports the plugin. Parts a plugin does not provide stay empty.
//!
//! # Example
//!
//! `Cargo.toml`:
//!
//! ```toml
//! [lib]
//! crate-type = ["cdylib"]
//!
//! [dependencies]
//! palisade-sdk = { path = "../sdk-guest" }
//! serde = { version = "1", features = ["derive"] }
//! schemars = "1"
//! ```
//!
//! `src/lib.rs`:
//!
//! ```
//! use palisade_sdk::{
//!     Arguments, Json, NoArgs, PluginError, Prompt, PromptMessage, Resource, ResourceTemplate,
//!     Tool, ToolResult, host, prefix_matches,
//! };
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! /// Arguments of `greet`. Doc comments become descriptions in the input schema.
//! #[derive(Deserialize, JsonSchema)]
//! struct Greet {
//!     /// Who to greet.
//!     name: String,
//! }
//!
//! fn greet(args: Greet) -> String {
//!     format!("Hello, {}!", args.name)
//! }
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Divide {
//!     a: f64,
//!     b: f64,
//! }
//!
//! /// Structured output: `Json<T>` also sets the tool's output schema.
//! #[derive(Serialize, JsonSchema)]
//! struct Quotient {
//!     value: f64,
//! }
//!
//! // An `Err` becomes a result with `is_error` set, for the model to read.
//! fn divide(args: Divide) -> Result<Json<Quotient>, String> {
//!     if args.b == 0.0 {
//!         return Err("cannot divide by zero".into());
//!     }
//!     Ok(Json(Quotient { value: args.a / args.b }))
//! }
//!
//! fn roots(_: NoArgs) -> ToolResult {
//!     host::log(host::LogLevel::Info, "listing roots");
//!     let paths: Vec<String> = host::list_roots().into_iter().map(|r| r.guest_path).collect();
//!     ToolResult::text(paths.join("\n"))
//!         .structured_content(serde_json::json!({ "roots": paths }))
//! }
//!
//! const CITIES: [&str; 3] = ["paris", "prague", "lima"];
//!
//! // A template's read function gets the URI and its variables; unknown values are not-found.
//! fn weather(_uri: &str, vars: &Arguments) -> Result<String, PluginError> {
//!     let city = &vars["city"];
//!     if !CITIES.contains(&city.as_str()) {
//!         return Err(PluginError::not_found(format!("no weather for `{city}`")));
//!     }
//!     Ok(format!("{city}: sunny"))
//! }
//!
//! // A prompt gets its arguments by name; required ones are always there.
//! fn review(args: &Arguments) -> Vec<PromptMessage> {
//!     let language = args.get("language").map_or("", String::as_str);
//!     vec![PromptMessage::user(format!("Review this {language} code:\n\n{}", args["code"]))]
//! }
//!
//! palisade_sdk::export_plugin! {
//!     tools: [
//!         Tool::new("greet", greet).description("Say hello to someone"),
//!         Tool::new("divide", divide).description("Divide a by b").read_only(true),
//!         Tool::new("roots", roots).description("List the roots this plugin may use"),
//!     ],
//!     resources: [
//!         Resource::new("motd://today", "motd", || "Be kind.").mime_type("text/plain"),
//!     ],
//!     resource_templates: [
//!         ResourceTemplate::new("weather://{city}", "weather", weather)
//!             .description("Today's weather in a city")
//!             .complete("city", |typed, _| prefix_matches(typed, CITIES)),
//!     ],
//!     prompts: [
//!         Prompt::new("review", review)
//!             .description("Ask for a code review")
//!             .argument("code", "The code to review", true)
//!             .argument("language", "Its programming language", false)
//!             .complete("language", |typed, _| prefix_matches(typed, ["Rust", "Python"])),
//!     ],
//! }
//! # fn main() {}
//! ```
//!
//! Build it with `cargo build --release --target wasm32-wasip2`; the `.cdylib` output,
//! `target/wasm32-wasip2/release/<name>.wasm`, is the component the host loads.
#![warn(missing_docs)]

mod completion;
mod content;
mod error;
pub mod host;
pub mod http;
mod plugin;
mod prompt;
mod resource;
mod result;
mod schema;
mod secret;
mod template;
mod tool;
pub mod ui;

pub use completion::prefix_matches;
pub use plugin::Plugin;
pub use prompt::{IntoPromptResult, Prompt, PromptMessage, PromptResult};
pub use resource::{IntoResourceContents, Resource, ResourceInfo, ResourceTemplate};
pub use result::{IntoToolResult, Json, ToolResult};
pub use secret::{MissingSecret, config, secret};
pub use template::percent_encode;
pub use tool::{NoArgs, TaskSupport, Tool};

/// The WIT types shared by every part of the contract: content blocks, resource contents,
/// annotations, icons, roles, errors.
pub use bindings::palisade::plugin::types;
pub use types::{ContentBlock, ErrorCode, PluginError, ResourceContents, Role};

/// Named string values: the arguments of a prompt, the variables of a resource template as
/// matched in a URI, or the arguments already filled in when completing another one. Index it
/// with a name that must be there (`args["code"]` for a required prompt argument, `vars["name"]`
/// for a template variable), or use `get` for an optional one.
pub type Arguments = std::collections::BTreeMap<String, String>;

// Re-exported so plugins derive with the same versions the SDK uses.
pub use schemars;
pub use serde;
pub use serde_json;

/// The raw bindings generated from the WIT contract (`palisade:plugin@0.2.0`, world `plugin`).
///
/// Use them for what the SDK does not wrap; everything here follows the WIT documentation.
#[allow(missing_docs, clippy::all)]
pub mod bindings {
    // `wit-contract` is a symbolic link to the repository's `wit/`, the one copy of the contract:
    // the path is inside the crate, so `cargo package` puts the files in the published crate
    // (it follows the link), and a build from the repository reads `wit/` through it.
    wit_bindgen::generate!({
        world: "plugin",
        path: "wit-contract",
        pub_export_macro: true,
        default_bindings_module: "palisade_sdk::bindings",
    });
}

/// Exports a plugin: call it once, at the top level of the plugin crate.
///
/// Each part is written `part: value`, where `part` names a [`Plugin`] builder method, which is
/// called with `value`:
///
/// | part | value |
/// |------|-------|
/// | `tools` | [`Tool`]s: anything iterable (an array, a `Vec`, a function call returning one) |
/// | `resources` | [`Resource`]s with fixed URIs |
/// | `resource_lister` | a function `fn() -> Vec<ResourceInfo>` listing resources that come and go |
/// | `resource_templates` | [`ResourceTemplate`]s |
/// | `prompts` | [`Prompt`]s |
///
/// Parts a plugin leaves out stay empty; completions come from the prompts and templates.
///
/// ```
/// # #[derive(serde::Deserialize, schemars::JsonSchema)] struct Greet { name: String }
/// # fn greet(args: Greet) -> String { format!("Hello, {}!", args.name) }
/// palisade_sdk::export_plugin! {
///     tools: [
///         palisade_sdk::Tool::new("greet", greet).description("Say hello to someone"),
///     ],
/// }
/// ```
///
/// The plugin is built anew for every call (the host gives each call a fresh instance), so keep
/// the values cheap to build: input schemas are only generated when the host lists the tools,
/// and a resource lister runs only when the host lists the resources.
///
/// Mistakes in the definition panic, at the latest when the host lists what the plugin offers,
/// so the plugin fails to load with a message saying what is wrong: two tools, prompts,
/// resources or templates with one name (or URI), a completer for an argument or variable that
/// does not exist, a URI template the SDK cannot match.
#[macro_export]
macro_rules! export_plugin {
    ($($part:ident : $value:expr),+ $(,)?) => {
        const _: () = {
            struct Definition;

            impl $crate::__private::Define for Definition {
                fn define() -> $crate::Plugin {
                    $crate::Plugin::new()$(.$part($value))+
                }
            }

            // The generated export macro wants a bare identifier, hence the alias.
            type Exported = $crate::__private::Export<Definition>;
            $crate::bindings::export!(Exported with_types_in $crate::bindings);
        };
    };
}

/// Support for [`export_plugin!`]; not a public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::plugin::{Define, Export};
}
