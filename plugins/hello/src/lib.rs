//! The smallest useful Palisade plugin: `greet` and `echo`.

use palisade_sdk::{Tool, ToolResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Deserialize, JsonSchema)]
struct Greet {
    /// Who to greet.
    name: String,
}

fn greet(args: Greet) -> String {
    format!("Hello, {}!", args.name)
}

/// Both the arguments and the structured output of `echo`.
#[derive(Deserialize, Serialize, JsonSchema)]
struct Echo {
    /// The text to send back.
    text: String,
}

fn echo(args: Echo) -> ToolResult {
    ToolResult::text(&args.text).structured_content(serde_json::json!({ "text": args.text }))
}

palisade_sdk::export_plugin! {
    tools: [
        Tool::new("greet", greet).description("Say hello to someone").read_only(true),
        Tool::new("echo", echo)
            .description("Send the text back, as text and as structured content")
            .output_schema::<Echo>()
            .read_only(true),
    ],
}
