//! The official TypeScript SDK (`@modelcontextprotocol/sdk`, pinned in tests/clients/package.json)
//! as a real client, over stdio and over Streamable HTTP, against the example configuration: it
//! lists and calls tools, lists and reads resources and templates, gets a prompt, completes an
//! argument, and sees a bad prompt request refused (tests/clients/ts_sdk.mjs asserts each step).

use palisade_tests::*;

fn run_script(args: &[&str]) {
    run_node_client("ts_sdk.mjs", args, &String::new);
}

fn example_config() -> String {
    path_str(&repo_root().join("plugins/palisade.toml"))
}

#[test]
fn official_typescript_sdk_over_stdio() {
    let cache = shared_cache_dir();
    run_script(&[
        "stdio",
        &path_str(&palisade_bin()),
        &example_config(),
        &path_str(cache.as_path()),
    ]);
}

#[test]
fn official_typescript_sdk_over_streamable_http() {
    let server = HttpServer::start(&["--no-watch", "--config", &example_config()]);
    run_script(&["http", &server.url]);
}
