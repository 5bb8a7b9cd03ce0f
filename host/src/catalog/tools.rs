//! Tools as the server serves them: public names, parsed schemas, argument validation.

use serde_json::{Map, Value};

use super::Backend;
use super::header_params::{HeaderParam, header_params};
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
    /// Parameters the plugin marked with `x-mcp-header`.
    pub header_params: Vec<HeaderParam>,
    validator: jsonschema::Validator,
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

pub(super) fn catalog_tool(
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
    let header_params = header_params(&input_schema).map_err(|e| format!("input schema: {e}"))?;
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
        header_params,
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

pub(super) fn is_valid_public_name(name: &str) -> bool {
    (1..=MAX_PUBLIC_NAME).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}
