//! The benchmark's baseline: tools compiled into the host, served (by `palisade-bench serve`)
//! through the same request path as a plugin's tool (parsing, validation, dispatch, result
//! shaping), minus the sandbox.

use serde_json::Value;

use palisade::catalog::{HostFn, HostTool};
use palisade::runtime::bindings::tools::{CallResult, Tool};
use palisade::runtime::bindings::types::{ContentBlock, TextContent};

/// The name scopes know these tools' owner by, as a plugin's name.
pub const OWNER: &str = "native";

/// `native_greet`, the twin of `hello_greet`, and `native_blob`, the twin of `bench_blob`.
pub fn baseline_tools() -> Vec<HostTool> {
    vec![
        native_tool(
            "native_greet",
            "Say hello, natively in the host (benchmark baseline)",
            r#"{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}"#,
            greet,
        ),
        native_tool(
            "native_blob",
            "Return that many bytes of text, natively in the host (benchmark baseline)",
            r#"{"type":"object","properties":{"bytes":{"type":"integer","minimum":0,"maximum":16777216}},"required":["bytes"]}"#,
            blob,
        ),
    ]
}

fn native_tool(name: &str, description: &str, input_schema: &str, run: HostFn) -> HostTool {
    HostTool {
        owner: OWNER,
        tool: Tool {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            input_schema: input_schema.into(),
            output_schema: None,
            annotations: None,
            task_support: palisade::runtime::bindings::tools::TaskSupport::Forbidden,
            icons: Vec::new(),
            meta: None,
        },
        run,
    }
}

fn greet(arguments: &Value) -> CallResult {
    let name = arguments
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    text_result(format!("Hello, {name}!"))
}

fn blob(arguments: &Value) -> CallResult {
    // The schema bounds it to 16 MiB: the sandboxed twin is bounded by its memory limit.
    let bytes = arguments.get("bytes").and_then(Value::as_u64).unwrap_or(0);
    text_result("x".repeat(usize::try_from(bytes).unwrap_or(0)))
}

fn text_result(text: String) -> CallResult {
    CallResult {
        content: vec![ContentBlock::Text(TextContent {
            text,
            annotations: None,
            meta: None,
        })],
        structured_content: None,
        is_error: false,
        meta: None,
    }
}
