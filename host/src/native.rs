//! Tools compiled into the host. They exist only as the benchmark's baseline: the same request
//! path as a plugin's tool (parsing, validation, dispatch, result shaping), minus the sandbox.

use serde_json::Value;

use crate::runtime::bindings::tools::{CallResult, Tool};
use crate::runtime::bindings::types::{ContentBlock, TextContent};

/// A native tool's body: arguments (already validated) in, result out.
pub type NativeFn = fn(&Value) -> CallResult;

/// A native tool and its description.
pub struct NativeTool {
    pub tool: Tool,
    pub run: NativeFn,
}

/// `native_greet`, the twin of `hello_greet`.
pub fn baseline_tools() -> Vec<NativeTool> {
    vec![NativeTool {
        tool: Tool {
            name: "native_greet".into(),
            title: None,
            description: Some("Say hello, natively in the host (benchmark baseline)".into()),
            input_schema:
                r#"{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}"#
                    .into(),
            output_schema: None,
            annotations: None,
            icons: Vec::new(),
            meta: None,
        },
        run: greet,
    }]
}

fn greet(arguments: &Value) -> CallResult {
    let name = arguments
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    CallResult {
        content: vec![ContentBlock::Text(TextContent {
            text: format!("Hello, {name}!"),
            annotations: None,
            meta: None,
        })],
        structured_content: None,
        is_error: false,
        meta: None,
    }
}
