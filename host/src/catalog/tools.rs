//! Tools as the server serves them: public names, parsed schemas, argument validation.

use serde_json::{Map, Value};

use super::Backend;
use super::header_params::{HeaderParam, header_params};
use super::schema_cost;
use crate::config::TaskSupport;
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
    /// The operator asks the user before every call (`confirm = true`).
    pub confirm: bool,
    /// Whether its calls may run as tasks (`[plugins.NAME.tools.TOOL] task`).
    pub task: TaskSupport,
    validator: jsonschema::Validator,
    output_validator: Option<jsonschema::Validator>,
}

/// Arguments that do not match a tool's input schema: the errors, one per line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidArguments(pub String);

/// A result whose `structuredContent` is not JSON or does not match the tool's output schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidOutput(pub String);

impl CatalogTool {
    /// Checks `arguments` against the input schema; the errors, one per line, if they do not match.
    pub fn validate(&self, arguments: &Value) -> Result<(), InvalidArguments> {
        schema_errors(&self.validator, arguments).map_err(InvalidArguments)
    }

    /// Checks the `structuredContent` a call returned (JSON text) against the tool's output
    /// schema, when it has one: the specification has servers conform to it.
    pub fn validate_output(&self, structured: &str) -> Result<(), InvalidOutput> {
        let Some(validator) = &self.output_validator else {
            return Ok(());
        };
        let value: Value = serde_json::from_str(structured)
            .map_err(|e| InvalidOutput(format!("its structuredContent is not JSON: {e}")))?;
        schema_errors(validator, &value).map_err(|errors| {
            InvalidOutput(format!(
                "its structuredContent does not match its outputSchema:\n{errors}"
            ))
        })
    }
}

/// Errors reported per validation, and the longest each may be: an error quotes the value it
/// is about, which can be as large as the request.
const MAX_ERRORS: usize = 10;
const MAX_ERROR_CHARS: usize = 300;

/// The errors of `instance` against a schema, one per line.
fn schema_errors(validator: &jsonschema::Validator, instance: &Value) -> Result<(), String> {
    let mut errors = validator.iter_errors(instance).peekable();
    if errors.peek().is_none() {
        return Ok(());
    }
    let mut lines: Vec<String> = Vec::new();
    for error in errors.by_ref().take(MAX_ERRORS) {
        let at = error.instance_path().to_string();
        let mut line = if at.is_empty() {
            error.to_string()
        } else {
            format!("at {at}: {error}")
        };
        if let Some((cut, _)) = line.char_indices().nth(MAX_ERROR_CHARS) {
            line.truncate(cut);
            line.push_str("...");
        }
        lines.push(line);
    }
    if errors.next().is_some() {
        lines.push("(and more)".into());
    }
    Err(lines.join("\n"))
}

pub(super) fn catalog_tool(
    backend: Backend,
    tool: tools::Tool,
    public_name: &str,
) -> Result<CatalogTool, String> {
    // An empty name would be served as `prefix_`, a name the plugin never gave.
    super::resources::check_name(&tool.name)?;
    if !is_valid_public_name(public_name) {
        return Err(format!(
            "its public name `{}` is not 1 to {MAX_PUBLIC_NAME} of A-Z a-z 0-9 _ -",
            super::shown(public_name)
        ));
    }
    // Sizes first: parsing is work too.
    schema_cost::check_size(&tool.input_schema)
        .map_err(|e| format!("input schema refused: {e}"))?;
    if let Some(text) = &tool.output_schema {
        schema_cost::check_size(text).map_err(|e| format!("output schema refused: {e}"))?;
    }
    let input_schema = json_object(&tool.input_schema).map_err(|e| format!("input schema: {e}"))?;
    let input_value = Value::Object(input_schema.clone());
    schema_cost::check(&input_value).map_err(|e| format!("input schema refused: {e}"))?;
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
    if let Some(schema) = &output_schema {
        schema_cost::check(&Value::Object(schema.clone()))
            .map_err(|e| format!("output schema refused: {e}"))?;
    }
    let validator =
        schema_cost::validator(&input_value).map_err(|e| format!("input schema: {e}"))?;
    let output_validator = output_schema
        .as_ref()
        .map(|schema| schema_cost::validator(&Value::Object(schema.clone())))
        .transpose()
        .map_err(|e| format!("output schema: {e}"))?;
    Ok(CatalogTool {
        public_name: public_name.to_string(),
        backend,
        tool,
        input_schema,
        output_schema,
        header_params,
        confirm: false,
        task: TaskSupport::Forbidden,
        validator,
        output_validator,
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

/// What differs between two listings of one plugin's tools, a line per changed part of each
/// tool in both (a tool only in one listing was added or removed, not changed).
pub fn definition_changes(old: &[tools::Tool], new: &[tools::Tool]) -> Vec<String> {
    let mut changes = Vec::new();
    for before in old {
        let Some(after) = new.iter().find(|t| t.name == before.name) else {
            continue;
        };
        let name = &before.name;
        let parts = [
            ("title", before.title != after.title),
            ("description", before.description != after.description),
            ("input schema", before.input_schema != after.input_schema),
            ("output schema", before.output_schema != after.output_schema),
            ("annotations", before.annotations != after.annotations),
            ("icons", before.icons != after.icons),
            ("_meta", before.meta != after.meta),
        ];
        for (part, changed) in parts {
            if changed {
                changes.push(format!("tool `{}`: its {part} changed", super::shown(name)));
            }
        }
    }
    changes
}
