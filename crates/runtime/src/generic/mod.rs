//! Components that do not export `palisade:plugin`: every exported function is a tool.
//!
//! A component built for another host exports plain functions, at the root of its world or in
//! interfaces (`docs:adder/add`). [`GenericTools::discover`] walks its exports (recursively),
//! names one tool per function (`numbers_add-u8` for `add-u8` in `test:generic/numbers`),
//! makes its JSON Schemas from the WIT types ([`schema`]) and its description from the WIT's
//! doc comments ([`docs`]), and leaves out, with the reason, what no JSON call can drive
//! (resources, streams, async exports, componentize-py's internal `exports.init`). A call
//! converts the JSON arguments to component values ([`value`]), calls the export through
//! wasmtime's dynamic values ([`val`]), and renders the result: `ok` and plain results as text and structured content,
//! `err` as a tool error.

pub mod docs;
pub mod schema;
pub mod types;
pub mod val;
pub mod value;

use sha2::Digest as _;
use wasmtime::Engine;
use wasmtime::component::types::{ComponentFunc, ComponentItem};
use wasmtime::component::{Component, ComponentExportIndex};

use crate::bindings::{tools, types as wit};
use docs::PackageDocs;
use types::{Signature, WitType};
use value::Value;

/// Longest tool name MCP clients accept.
pub const MAX_TOOL_NAME: usize = 64;

/// Deepest nesting of exported instances the host follows.
const MAX_INSTANCE_DEPTH: usize = 8;

/// Most functions a component may offer as tools: each costs a schema and a catalog entry.
pub const MAX_FUNCTIONS: usize = 1024;

/// An exported function served as a tool.
#[derive(Debug, Clone)]
pub struct GenericFunc {
    /// The tool's name (before the plugin's prefix).
    pub tool_name: String,
    /// Where it is: the exported instance path (`test:generic/numbers@0.1.0`), empty for a
    /// function at the root.
    pub interface: String,
    /// The function's WIT name.
    pub function: String,
    /// Its parameters and result.
    pub signature: Signature,
    /// The description the tool is listed with.
    pub description: String,
    export: ComponentExportIndex,
}

/// An exported function that is not served, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// `interface#function`, or the function's name at the root.
    pub path: String,
    /// Why it is not a tool.
    pub why: String,
}

/// What a component without `palisade:plugin` exports offers.
#[derive(Debug, Clone, Default)]
pub struct GenericTools {
    /// The functions served as tools, sorted by tool name.
    pub funcs: Vec<GenericFunc>,
    /// The functions left out.
    pub skipped: Vec<Skipped>,
}

/// Two functions whose tool names are the same.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{first}` and `{second}` would both be the tool `{name}`")]
pub struct NameCollision {
    /// The tool name.
    pub name: String,
    /// One function (`interface#function`).
    pub first: String,
    /// The other.
    pub second: String,
}

impl GenericTools {
    /// Every exported function of `component` that can be a tool, and those that cannot.
    pub fn discover(
        engine: &Engine,
        component: &Component,
        docs: Option<&PackageDocs>,
    ) -> Result<GenericTools, NameCollision> {
        let mut found = GenericTools::default();
        let ty = component.component_type();
        for (name, item) in ty.exports(engine) {
            let Some(export) = component.get_export_index(None, name) else {
                continue;
            };
            let at = Location { path: Vec::new() };
            found.visit(engine, component, docs, &at, name, export, item.ty);
        }
        found.funcs.sort_by(|a, b| a.tool_name.cmp(&b.tool_name));
        if let Some(pair) = found
            .funcs
            .windows(2)
            .find(|w| w[0].tool_name == w[1].tool_name)
        {
            return Err(NameCollision {
                name: pair[0].tool_name.clone(),
                first: pair[0].path(),
                second: pair[1].path(),
            });
        }
        Ok(found)
    }

    #[allow(clippy::too_many_arguments)]
    fn visit(
        &mut self,
        engine: &Engine,
        component: &Component,
        docs: Option<&PackageDocs>,
        at: &Location,
        name: &str,
        export: ComponentExportIndex,
        item: ComponentItem,
    ) {
        match item {
            ComponentItem::ComponentFunc(func) => self.add(at, name, export, &func, docs),
            ComponentItem::ComponentInstance(instance) => {
                let inner = Location {
                    path: at.path.iter().cloned().chain([name.to_string()]).collect(),
                };
                if inner.path.len() > MAX_INSTANCE_DEPTH {
                    self.skipped.push(Skipped {
                        path: inner.path.join("/"),
                        why: format!("exported instances nest deeper than {MAX_INSTANCE_DEPTH}"),
                    });
                    return;
                }
                for (inner_name, inner_item) in instance.exports(engine) {
                    let Some(index) = component.get_export_index(Some(&export), inner_name) else {
                        continue;
                    };
                    self.visit(
                        engine,
                        component,
                        docs,
                        &inner,
                        inner_name,
                        index,
                        inner_item.ty,
                    );
                }
            }
            // Types, resources, core modules and components are not functions.
            _ => {}
        }
    }

    fn add(
        &mut self,
        at: &Location,
        name: &str,
        export: ComponentExportIndex,
        func: &ComponentFunc,
        docs: Option<&PackageDocs>,
    ) {
        let interface = at.path.join("/");
        let path = if interface.is_empty() {
            name.to_string()
        } else {
            format!("{interface}#{name}")
        };
        if self.funcs.len() >= MAX_FUNCTIONS {
            self.skipped.push(Skipped {
                path,
                why: format!("the component exports more than {MAX_FUNCTIONS} functions"),
            });
            return;
        }
        if is_componentize_py_init(&at.path, name, func) {
            self.skipped.push(Skipped {
                path,
                why: "componentize-py's internal initializer, not a function of the plugin".into(),
            });
            return;
        }
        let signature = match Signature::of(func) {
            Ok(signature) => signature,
            Err(why) => {
                self.skipped.push(Skipped {
                    path,
                    why: why.to_string(),
                });
                return;
            }
        };
        let short_interface = at.path.last().map(|p| short_name(p));
        let description = docs
            .and_then(|d| d.function(short_interface.as_deref(), name))
            .unwrap_or_else(|| match at.path.last() {
                Some(interface) => format!("`{name}` from the interface `{interface}`."),
                None => format!("`{name}`, exported by the component."),
            });
        self.funcs.push(GenericFunc {
            tool_name: tool_name(&at.path, name),
            interface,
            function: name.to_string(),
            signature,
            description,
            export,
        });
    }

    /// The function served as the tool `name`.
    pub fn get(&self, name: &str) -> Option<&GenericFunc> {
        self.funcs
            .binary_search_by(|f| f.tool_name.as_str().cmp(name))
            .ok()
            .map(|i| &self.funcs[i])
    }
}

/// Where a function sits among the exports.
struct Location {
    /// The names of the instances it is in, outermost first.
    path: Vec<String>,
}

impl GenericFunc {
    /// `interface#function`, or the function's name at the root.
    pub fn path(&self) -> String {
        if self.interface.is_empty() {
            self.function.clone()
        } else {
            format!("{}#{}", self.interface, self.function)
        }
    }

    /// Where to call it in an instance of the component.
    pub fn export(&self) -> ComponentExportIndex {
        self.export
    }

    /// The tool as listed: name, description, schemas.
    pub fn tool(&self) -> tools::Tool {
        let param_docs = schema::ParamDocs {
            params: docs::param_docs(&self.description),
        };
        tools::Tool {
            name: self.tool_name.clone(),
            title: None,
            description: Some(self.description.clone()),
            input_schema: schema::input(&self.signature, &param_docs).to_string(),
            output_schema: schema::output(&self.signature).map(|s| s.to_string()),
            annotations: None,
            // Nothing in the component says; the configuration may (`task = ...`).
            task_support: tools::TaskSupport::Forbidden,
            icons: Vec::new(),
            meta: Some(serde_json::json!({"palisade/export": self.path()}).to_string()),
        }
    }

    /// The tool result of what the function returned.
    pub fn render(&self, result: Option<Value>) -> tools::CallResult {
        let (Some(ty), Some(value)) = (&self.signature.result, result) else {
            return tools::CallResult {
                content: Vec::new(),
                structured_content: None,
                is_error: false,
                meta: None,
            };
        };
        // A top-level `result`: `ok` is the answer, `err` a tool error.
        let (ty, value, is_error) = match (ty, value) {
            (WitType::Result { ok, err }, Value::Case(case, payload)) => {
                let is_error = case == 1;
                let part = if is_error { err } else { ok };
                match (part, payload) {
                    (Some(ty), Some(payload)) => (Some(&**ty), Some(*payload), is_error),
                    _ => (None, None, is_error),
                }
            }
            (ty, value) => (Some(ty), Some(value), false),
        };
        let (text, structured) = match (ty, value) {
            (Some(ty), Some(value)) => {
                let json = value::to_json(ty, &value);
                let text = match &json {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let structured = match (is_error, ty) {
                    (true, _) => None,
                    (false, WitType::Record(_)) => Some(json),
                    (false, _) => Some(serde_json::json!({"result": json})),
                };
                (text, structured)
            }
            _ if is_error => (format!("`{}` failed", self.path()), None),
            _ => (String::new(), None),
        };
        let content = if text.is_empty() {
            Vec::new()
        } else {
            vec![wit::ContentBlock::Text(wit::TextContent {
                text,
                annotations: None,
                meta: None,
            })]
        };
        tools::CallResult {
            content,
            structured_content: structured.map(|s| s.to_string()),
            is_error,
            meta: None,
        }
    }
}

/// An exported instance's name without its package and version: `numbers` for
/// `test:generic/numbers@0.1.0`, the name itself for a plain one.
fn short_name(instance: &str) -> String {
    let unversioned = instance.split('@').next().unwrap_or(instance);
    unversioned
        .rsplit('/')
        .next()
        .unwrap_or(unversioned)
        .to_string()
}

/// The tool name of the function `name` in the instances `path`: their short names and its
/// own, joined by `_`, with anything outside `A-Z a-z 0-9 _ -` replaced by `_`; a name longer
/// than 64 keeps its first 55 characters and a hash of the whole.
fn tool_name(path: &[String], name: &str) -> String {
    let full: Vec<String> = path
        .iter()
        .map(|p| short_name(p))
        .chain([name.to_string()])
        .collect();
    let joined: String = full
        .join("_")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if joined.len() <= MAX_TOOL_NAME {
        return joined;
    }
    let whole = path
        .iter()
        .cloned()
        .chain([name.to_string()])
        .collect::<Vec<_>>()
        .join("#");
    let digest = hex::encode(sha2::Sha256::digest(whole.as_bytes()));
    format!("{}-{}", &joined[..55], &digest[..8])
}

/// componentize-py puts its own `init` in an inline interface `exports` of every component
/// it builds (its `init.wit`): `init: func(app-name: string, symbols: symbols, stub-wasi: bool)
/// -> result<_, string>`.
fn is_componentize_py_init(path: &[String], name: &str, func: &ComponentFunc) -> bool {
    let params: Vec<&str> = func.params().map(|(n, _)| n).collect();
    path == ["exports"] && name == "init" && params == ["app-name", "symbols", "stub-wasi"]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_join_short_interface_names_and_fit() {
        assert_eq!(tool_name(&[], "greet"), "greet");
        assert_eq!(
            tool_name(&["test:generic/numbers@0.1.0".into()], "add-u8"),
            "numbers_add-u8"
        );
        assert_eq!(tool_name(&["a".into(), "b.c".into()], "f"), "a_b_c_f");
        let long = "x".repeat(70);
        let name = tool_name(&["pkg:a/iface".into()], &long);
        assert_eq!(name.len(), 64);
        assert!(name.starts_with("iface_xxx"));
        // Deterministic, and different for a different function of the same prefix.
        assert_eq!(name, tool_name(&["pkg:a/iface".into()], &long));
        assert_ne!(
            name,
            tool_name(&["pkg:a/iface".into()], &format!("{long}y"))
        );
    }

    #[test]
    fn short_names_drop_package_and_version() {
        assert_eq!(short_name("docs:adder/add@0.1.0"), "add");
        assert_eq!(short_name("wasi:http/incoming-handler"), "incoming-handler");
        assert_eq!(short_name("exports"), "exports");
    }
}
