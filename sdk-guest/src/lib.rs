//! Write Palisade MCP plugins in Rust.
//!
//! A Palisade plugin is a WebAssembly component (`wasm32-wasip2`) that implements the
//! `palisade:plugin` WIT contract. This crate hides the contract behind plain Rust: a tool is a
//! function that takes an argument struct and returns something that converts into a
//! [`ToolResult`]. The argument struct's JSON Schema, derived with [`schemars`], becomes the
//! tool's input schema; the arguments of each call are deserialized with [`serde`].
//!
//! One macro, [`export_plugin!`], exports the plugin. Parts of the contract a plugin does not
//! provide get defaults: no resources, no prompts, no completions.
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
//! use palisade_sdk::{Json, NoArgs, Tool, ToolResult, host};
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
//! palisade_sdk::export_plugin! {
//!     tools: [
//!         Tool::new("greet", greet).description("Say hello to someone"),
//!         Tool::new("divide", divide).description("Divide a by b").read_only(true),
//!         Tool::new("roots", roots).description("List the roots this plugin may use"),
//!     ],
//! }
//! # fn main() {}
//! ```
//!
//! Build it with `cargo build --release --target wasm32-wasip2`; the `.cdylib` output,
//! `target/wasm32-wasip2/release/<name>.wasm`, is the component the host loads.
#![warn(missing_docs)]

mod content;
pub mod host;
mod plugin;
mod result;
mod schema;
mod tool;

pub use plugin::Plugin;
pub use result::{IntoToolResult, Json, ToolResult};
pub use tool::{NoArgs, Tool};

/// The WIT types shared by every part of the contract: content blocks, resource contents,
/// annotations, icons, errors.
pub use bindings::palisade::plugin::types;
pub use types::{ContentBlock, ResourceContents};

// Re-exported so plugins derive with the same versions the SDK uses.
pub use schemars;
pub use serde;
pub use serde_json;

/// The raw bindings generated from the WIT contract (`palisade:plugin@0.1.0`, world `plugin`).
///
/// Use them for what the SDK does not wrap; everything here follows the WIT documentation.
#[allow(missing_docs, clippy::all)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "plugin",
        path: "../wit",
        pub_export_macro: true,
        default_bindings_module: "palisade_sdk::bindings",
    });
}

/// Exports a plugin: call it once, at the top level of the plugin crate.
///
/// Each part is written `part: value`, where `value` is anything iterable (an array, a `Vec`, a
/// function call returning one) and `part` names a [`Plugin`] builder method. Today that is
/// `tools`, taking [`Tool`]s; parts a plugin leaves out get the contract's defaults.
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
/// the values cheap to build: input schemas are only generated when the host lists the tools.
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
