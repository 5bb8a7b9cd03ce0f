//! {{name}}: a Palisade plugin.

use palisade_sdk::Tool;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Greet {
    /// Who to greet.
    name: String,
}

fn greet(args: Greet) -> String {
    format!("Hello, {}!", args.name)
}

palisade_sdk::export_plugin! {
    tools: [
        Tool::new("greet", greet).description("Say hello to someone").read_only(true),
    ],
}
