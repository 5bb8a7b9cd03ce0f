//! The merged view of every plugin's tools under public names: deterministic order, collision
//! checks, argument validation and pagination.

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::Result;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value};

use crate::runtime::Plugin;
use crate::runtime::bindings::tools;

/// Longest public name some clients accept.
const MAX_PUBLIC_NAME: usize = 64;

/// A tool as the server serves it.
pub struct CatalogTool {
    /// The name clients call it by.
    pub public_name: String,
    /// What runs it.
    pub backend: Backend,
    /// The plugin's description of it; `name` is the plugin's own name.
    pub tool: tools::Tool,
    /// `tool.input_schema`, parsed.
    pub input_schema: Map<String, Value>,
    /// `tool.output_schema`, parsed.
    pub output_schema: Option<Map<String, Value>>,
    validator: jsonschema::Validator,
}

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

/// Every plugin and every tool the server serves.
pub struct Catalog {
    pub plugins: Vec<Arc<Plugin>>,
    /// Sorted by public name.
    tools: Vec<CatalogTool>,
}

impl Catalog {
    /// Builds the catalog. Two plugins serving the same public name are an error naming both; a
    /// tool the plugin describes badly is left out with a warning naming it.
    pub fn new(
        plugins: Vec<Arc<Plugin>>,
        native: Vec<crate::native::NativeTool>,
    ) -> Result<Catalog> {
        let mut candidates = Vec::new();
        for plugin in &plugins {
            for tool in &plugin.tools {
                let name = public_name(&plugin.config.prefix, &tool.name);
                candidates.push((name, Backend::Plugin(plugin.clone()), tool.clone()));
            }
        }
        for n in native {
            candidates.push((n.tool.name.clone(), Backend::Native(n.run), n.tool));
        }
        let mut by_name: BTreeMap<String, CatalogTool> = BTreeMap::new();
        for (public_name, backend, tool) in candidates {
            let owner = backend.owner().to_string();
            let entry = match catalog_tool(backend, tool, &public_name) {
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
        Ok(Catalog {
            plugins,
            tools: by_name.into_values().collect(),
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

    /// One page of tools starting at `cursor`, and the cursor of the next page if any.
    pub fn tools_page(
        &self,
        cursor: Option<&str>,
        page_size: usize,
    ) -> Result<(&[CatalogTool], Option<String>), InvalidCursor> {
        page(&self.tools, cursor, page_size)
    }
}

impl CatalogTool {
    /// Checks `arguments` against the input schema; the errors, one per line, if they do not match.
    pub fn validate(&self, arguments: &Value) -> Result<(), String> {
        let errors: Vec<String> = self
            .validator
            .iter_errors(arguments)
            .map(|e| {
                let at = e.instance_path().to_string();
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("at {at}: {e}")
                }
            })
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("\n"))
        }
    }
}

fn catalog_tool(
    backend: Backend,
    tool: tools::Tool,
    public_name: &str,
) -> Result<CatalogTool, String> {
    if !is_valid_public_name(public_name) {
        return Err(format!(
            "its public name `{public_name}` is not 1 to {MAX_PUBLIC_NAME} of A-Z a-z 0-9 _ -"
        ));
    }
    let input_schema = json_object(&tool.input_schema).map_err(|e| format!("input schema: {e}"))?;
    if input_schema.get("type") != Some(&Value::String("object".into())) {
        return Err("input schema: must have \"type\": \"object\"".into());
    }
    let output_schema = tool
        .output_schema
        .as_deref()
        .map(json_object)
        .transpose()
        .map_err(|e| format!("output schema: {e}"))?;
    let schema = Value::Object(input_schema.clone());
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&schema)
        .map_err(|e| format!("input schema is not a valid JSON Schema: {e}"))?;
    Ok(CatalogTool {
        public_name: public_name.to_string(),
        backend,
        tool,
        input_schema,
        output_schema,
        validator,
    })
}

fn json_object(text: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err("not a JSON object".into()),
        Err(e) => Err(format!("not JSON: {e}")),
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

fn is_valid_public_name(name: &str) -> bool {
    (1..=MAX_PUBLIC_NAME).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A cursor this server did not hand out, or one from before a change of the list.
#[derive(Debug, PartialEq, Eq)]
pub struct InvalidCursor;

/// Cursors are opaque to clients: an offset, encoded so nobody is tempted to compute one.
fn page<'a, T>(
    items: &'a [T],
    cursor: Option<&str>,
    page_size: usize,
) -> Result<(&'a [T], Option<String>), InvalidCursor> {
    let start = match cursor {
        None => 0,
        Some(cursor) => decode_cursor(cursor).ok_or(InvalidCursor)?,
    };
    if start > items.len() || (start == items.len() && start != 0) {
        return Err(InvalidCursor);
    }
    let end = start.saturating_add(page_size).min(items.len());
    let next = (end < items.len()).then(|| encode_cursor(end));
    Ok((&items[start..end], next))
}

fn encode_cursor(offset: usize) -> String {
    URL_SAFE_NO_PAD.encode(format!("palisade:{offset}"))
}

fn decode_cursor(cursor: &str) -> Option<usize> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    let offset = text.strip_prefix("palisade:")?;
    // Only the canonical form: no leading zeros or signs.
    let n: usize = offset.parse().ok()?;
    (n.to_string() == offset && n > 0).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_cover_everything_once() {
        let items: Vec<u32> = (0..5).collect();
        let (first, next) = page(&items, None, 2).unwrap();
        assert_eq!(first, &[0, 1]);
        let (second, next) = page(&items, next.as_deref(), 2).unwrap();
        assert_eq!(second, &[2, 3]);
        let (third, next) = page(&items, next.as_deref(), 2).unwrap();
        assert_eq!(third, &[4]);
        assert_eq!(next, None);
    }

    #[test]
    fn foreign_cursors_are_refused() {
        let items: Vec<u32> = (0..5).collect();
        for bad in [
            "",
            "2",
            "!!",
            &encode_cursor(9),
            &URL_SAFE_NO_PAD.encode("palisade:02"),
        ] {
            assert_eq!(page(&items, Some(bad), 2), Err(InvalidCursor), "{bad}");
        }
        let empty: Vec<u32> = Vec::new();
        assert_eq!(page(&empty, None, 2), Ok((&empty[..], None)));
    }

    #[test]
    fn public_names_join_prefix_and_name() {
        assert_eq!(public_name("files", "read_file"), "files_read_file");
        assert_eq!(public_name("", "test_simple_text"), "test_simple_text");
        assert!(!is_valid_public_name("a.b"));
        assert!(!is_valid_public_name(&"x".repeat(65)));
    }
}
