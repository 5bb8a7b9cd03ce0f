//! Validation of what the server sends against the official MCP schemas.

use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::*;

// ---------------------------------------------------------------------------
// Schema validation
// ---------------------------------------------------------------------------

pub(crate) struct SchemaDoc {
    doc: Value,
    /// `definitions` (draft-07 versions) or `$defs` (2020-12 versions).
    defs_key: &'static str,
}

pub(crate) fn schema_doc(version: &str) -> &'static SchemaDoc {
    static DOCS: OnceLock<Mutex<HashMap<String, &'static SchemaDoc>>> = OnceLock::new();
    let mut docs = DOCS.get_or_init(Default::default).lock().unwrap();
    if let Some(doc) = docs.get(version) {
        return doc;
    }
    let path = schema_dir().join(version).join("schema.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read MCP schema {}: {e}", path.display()));
    let doc: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("MCP schema {} is not JSON: {e}", path.display()));
    let defs_key = if doc.get("$defs").is_some() {
        "$defs"
    } else {
        "definitions"
    };
    let doc: &'static SchemaDoc = Box::leak(Box::new(SchemaDoc { doc, defs_key }));
    docs.insert(version.to_string(), doc);
    doc
}

/// Whether `version`'s schema defines `name`.
pub fn schema_has_definition(version: &str, name: &str) -> bool {
    let doc = schema_doc(version);
    doc.doc[doc.defs_key].get(name).is_some()
}

pub(crate) fn validator(version: &str, def_path: &str) -> Arc<jsonschema::Validator> {
    type Cache = Mutex<HashMap<(String, String), Arc<jsonschema::Validator>>>;
    static VALIDATORS: OnceLock<Cache> = OnceLock::new();
    let key = (version.to_string(), def_path.to_string());
    if let Some(v) = VALIDATORS
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .get(&key)
    {
        return v.clone();
    }
    let doc = schema_doc(version);
    // A schema that is the whole document plus a `$ref` to one definition:
    // every internal `#/...` reference still resolves against this root.
    let mut root = doc.doc.clone();
    let first = def_path.split('/').next().unwrap();
    if doc.doc[doc.defs_key].get(first).is_none() {
        panic!("MCP schema {version} has no definition {first}");
    }
    root["$ref"] = Value::String(format!("#/{}/{}", doc.defs_key, def_path));
    let built = Arc::new(
        jsonschema::validator_for(&root)
            .unwrap_or_else(|e| panic!("cannot build validator for {version} {def_path}: {e}")),
    );
    VALIDATORS
        .get()
        .unwrap()
        .lock()
        .unwrap()
        .insert(key, built.clone());
    built
}

/// Validates `instance` against the definition `def_path` (e.g. `InitializeResult`,
/// or a path below a definition such as `JSONRPCError/properties/error`) of the
/// schema of `version`. The error lists the failures with their locations.
pub fn validate_against(version: &str, def_path: &str, instance: &Value) -> Result<(), String> {
    let v = validator(version, def_path);
    let errors: Vec<String> = v
        .iter_errors(instance)
        .take(8)
        .map(|e| format!("at '{}': {}", e.instance_path(), e))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "not a valid {def_path} (MCP {version}): {}",
            errors.join("; ")
        ))
    }
}

/// The definition the successful `result` of `method` must satisfy (a `tools/call` that
/// became a task answers with the task, 2025-11-25).
pub(crate) fn result_definition(method: &str, result: &Value) -> &'static str {
    match method {
        "initialize" => "InitializeResult",
        "ping" => "EmptyResult",
        "tools/list" => "ListToolsResult",
        "tools/call" if result.get("task").is_some() => "CreateTaskResult",
        "tools/call" => "CallToolResult",
        "tasks/get" => "GetTaskResult",
        "tasks/list" => "ListTasksResult",
        "tasks/cancel" => "CancelTaskResult",
        "tasks/result" => "GetTaskPayloadResult",
        _ => "Result",
    }
}

/// Where the tasks extension's schema is, as a `version` of [`validate_against`].
pub const TASKS_EXTENSION_SCHEMA: &str = "extensions/tasks";

/// `(result response, error response)` definition names of `version`.
pub(crate) fn response_definitions(version: &str) -> (&'static str, &'static str) {
    if schema_has_definition(version, "JSONRPCErrorResponse") {
        ("JSONRPCResultResponse", "JSONRPCErrorResponse")
    } else {
        ("JSONRPCResponse", "JSONRPCError")
    }
}

pub(crate) fn id_key(id: &Value) -> String {
    id.to_string()
}

/// Validates one message the server sent, as far as it can be validated
/// without knowing what it answers. Returns the error text on failure.
///
/// One deliberate exception: an error response whose `id` is `null`.
/// JSON-RPC 2.0 (section 5) requires `"id": null` when the request's id
/// could not be determined (parse error, invalid request), and the project's
/// contract asks for it, but every MCP schema types `id` as string|integer
/// (2025-11-25 lets it be absent instead, see basic/index.mdx line 80 and 89).
/// Such a message is checked field by field instead: `jsonrpc` is "2.0",
/// `error` matches the schema's error object, no other members.
/// A batch's answer: a non-empty array of responses. JSON-RPC answers an element that is no
/// request with an error of `id: null`, which MCP's `JSONRPCBatchResponse` has no room for:
/// those are checked as on their own, the rest against the schema.
pub(crate) fn validate_batch_response(version: &str, msg: &Value) -> Result<(), String> {
    let batch = msg.as_array().expect("a batch");
    if batch.is_empty() {
        return Err("an empty batch response (JSON-RPC sends nothing instead)".into());
    }
    if let Some(m) = batch.iter().find(|m| m.get("method").is_some()) {
        return Err(format!(
            "a request or notification inside a batch response: {m}"
        ));
    }
    let null_id = |m: &&Value| m.get("id") == Some(&Value::Null) && m.get("error").is_some();
    for m in batch.iter().filter(null_id) {
        validate_null_id_error(version, m)?;
    }
    let rest: Vec<Value> = batch.iter().filter(|m| !null_id(m)).cloned().collect();
    if rest.is_empty() {
        return Ok(());
    }
    validate_against(version, "JSONRPCBatchResponse", &Value::Array(rest))
}

pub(crate) fn validate_null_id_error(version: &str, msg: &Value) -> Result<(), String> {
    let obj = msg.as_object().unwrap();
    if obj.get("jsonrpc") != Some(&json!("2.0")) {
        return Err("jsonrpc is not \"2.0\"".into());
    }
    if let Some(k) = obj
        .keys()
        .find(|k| !matches!(k.as_str(), "jsonrpc" | "id" | "error"))
    {
        return Err(format!("unexpected member {k:?} in an error response"));
    }
    let error_def = if schema_has_definition(version, "Error") {
        "Error"
    } else {
        "JSONRPCError/properties/error"
    };
    validate_against(version, error_def, &obj["error"])
}
