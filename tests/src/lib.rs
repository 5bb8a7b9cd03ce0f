//! Harness for Palisade's end-to-end tests.
//!
//! The tests start the real `palisade` binary and speak MCP to it over stdio,
//! exactly as a client would. Every line the server writes on stdout must be
//! a JSON-RPC message that validates against the MCP JSON schema of the
//! protocol version in force; anything else fails the test that is running,
//! quoting the line.
//!
//! Locations:
//! - the binary: `$PALISADE_BIN`, else `<repo>/target/debug/palisade`;
//! - the plugins: `$PALISADE_PLUGIN_DIR`, else `<repo>/target/plugins/<name>.wasm`;
//! - the MCP schemas: `$PALISADE_MCP_SPEC/schema`, else the copy vendored in `tests/mcp-schema`;
//! - compiled components: one cache shared by every test, `<repo>/target/test-cache` (see
//!   [`shared_cache_dir`]); the tests of the cache itself use their own.
//!
//! Timeouts are generous; `$PALISADE_TEST_TIMEOUT_SCALE` (a float, default 1)
//! multiplies all of them on a very slow machine.

// The harness by concern, every item re-exported here so tests `use palisade_tests::*`:
// paths (locations, timeouts), schema (validation against the MCP schemas), stdio (the server
// over stdin/stdout), cli (one-shot runs), results (reading results, files), resources
// (resources, prompts, completion), http (Streamable HTTP and SSE), stateless (2026-07-28),
// clients (the official Python SDK and the Inspector).

pub use serde_json;
pub use tempfile;

/// The newest protocol version; also what the server answers to a version it does not know.
pub const LATEST_VERSION: &str = "2025-11-25";

/// Every protocol version the server must accept and echo.
pub const SUPPORTED_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// JSON-RPC error codes.
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;

const BUILD_HINT: &str = "run ./dev test (it builds the host and the plugins)";

mod cli;
mod clients;
mod components;
mod fake_api;
mod http;
mod oidc;
mod paths;
mod resources;
mod results;
mod schema;
mod services;
mod stateless;
mod stdio;

pub use cli::*;
pub use clients::*;
pub use components::*;
pub use fake_api::*;
pub use http::*;
pub use oidc::*;
pub use paths::*;
pub use resources::*;
pub use results::*;
pub use schema::*;
pub use services::*;
pub use stateless::*;
pub use stdio::*;

#[cfg(test)]
mod tests {
    //! Checks of the validation itself (they need the MCP schemas, not the binary).
    use serde_json::{Value, json};

    use super::*;

    fn init_result(version: &str) -> Value {
        json!({
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "palisade", "version": env!("CARGO_PKG_VERSION")}
        })
    }

    #[test]
    fn definitions_are_enforced_in_every_version() {
        for v in SUPPORTED_VERSIONS {
            validate_against(v, "InitializeResult", &init_result(v)).unwrap();
            // Required members missing: the $ref must not be ignored (draft-07 roots).
            assert!(
                validate_against(v, "InitializeResult", &json!({"protocolVersion": v})).is_err(),
                "{v}"
            );
            let (ok_def, err_def) = response_definitions(v);
            validate_against(v, ok_def, &json!({"jsonrpc": "2.0", "id": 1, "result": {}})).unwrap();
            assert!(
                validate_against(v, ok_def, &json!({"jsonrpc": "1.0", "id": 1, "result": {}}))
                    .is_err()
            );
            validate_against(
                v,
                err_def,
                &json!({"jsonrpc": "2.0", "id": "a", "error": {"code": -32601, "message": "x"}}),
            )
            .unwrap();
            assert!(
                validate_against(
                    v,
                    err_def,
                    &json!({"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "x"}})
                )
                .is_err()
            );
            let text = json!({"content": [{"type": "text", "text": "hi"}], "isError": true});
            validate_against(v, "CallToolResult", &text).unwrap();
            assert!(
                validate_against(v, "CallToolResult", &json!({"content": [{"type": "text"}]}))
                    .is_err()
            );
            assert!(
                validate_against(v, "ListToolsResult", &json!({"tools": [{"name": "t"}]})).is_err()
            );
            validate_against(v, "EmptyResult", &json!({})).unwrap();
            assert!(validate_against(v, "JSONRPCMessage", &json!(42)).is_err());
        }
    }

    #[test]
    fn null_id_errors_are_checked_member_by_member() {
        for v in SUPPORTED_VERSIONS {
            let ok = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}});
            validate_null_id_error(v, &ok).unwrap();
            let bad_code =
                json!({"jsonrpc": "2.0", "id": null, "error": {"code": 1.5, "message": "x"}});
            assert!(validate_null_id_error(v, &bad_code).is_err(), "{v}");
            let extra = json!({"jsonrpc": "2.0", "id": null, "error": {"code": 1, "message": "x"}, "result": {}});
            assert!(validate_null_id_error(v, &extra).is_err(), "{v}");
            let no_message = json!({"jsonrpc": "2.0", "id": null, "error": {"code": 1}});
            assert!(validate_null_id_error(v, &no_message).is_err(), "{v}");
        }
    }

    #[test]
    fn toml_strings_round_trip_through_json_escapes() {
        assert_eq!(toml_str("a\"b\\c\n"), r#""a\"b\\c\n""#);
        assert_eq!(toml_str("/tmp/x y"), r#""/tmp/x y""#);
    }
}
