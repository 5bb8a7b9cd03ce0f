//! Requests plugins make of the client over stdio: sampling (`sampling/createMessage`) and
//! elicitation (`elicitation/create`), sent only when the client declared the capability, and the
//! client's answer handed back to the plugin. The `conformance` plugin's `test_sampling` and
//! `test_elicitation` tools ask, and put the answer in their result.

use palisade_tests::*;
use serde_json::{Value, json};

fn conformance_server() -> Server {
    let config = repo_root().join("plugins/fixtures/conformance/palisade.toml");
    Server::start(&["--no-watch", "--config", &path_str(&config)])
}

/// Starts a call without waiting for its result; returns the request id.
fn start_call(s: &mut Server, name: &str, arguments: Value) -> Value {
    s.send_request("tools/call", json!({"name": name, "arguments": arguments}))
}

fn result_text(s: &mut Server, id: &Value) -> (String, bool) {
    let response = s.wait_response(id, default_timeout());
    let result = s.expect_result(response);
    (tool_text(&result), result["isError"] == true)
}

#[test]
fn a_plugin_samples_through_a_client_that_can() {
    let mut s = conformance_server();
    s.initialize_with_capabilities("2025-11-25", json!({"sampling": {}}));
    s.notify("notifications/initialized", Value::Null);
    let id = start_call(&mut s, "test_sampling", json!({"prompt": "What is 2+2?"}));
    let request = s.wait_server_request("sampling/createMessage", default_timeout());
    let params = &request["params"];
    assert_eq!(params["messages"][0]["role"], "user", "{request}");
    assert_eq!(
        params["messages"][0]["content"],
        json!({"type": "text", "text": "What is 2+2?"}),
        "{request}"
    );
    assert_eq!(params["maxTokens"], 100, "{request}");
    s.respond(
        &request["id"],
        json!({"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "test-model", "stopReason": "endTurn"}),
    );
    let (text, is_error) = result_text(&mut s, &id);
    assert!(!is_error, "{text}");
    assert_eq!(text, "LLM response: 4");
}

#[test]
fn a_client_without_sampling_is_not_asked() {
    let mut s = conformance_server();
    s.initialize("2025-11-25");
    s.notify("notifications/initialized", Value::Null);
    let id = start_call(&mut s, "test_sampling", json!({"prompt": "hi"}));
    let (text, is_error) = result_text(&mut s, &id);
    assert!(is_error, "{text}");
    assert!(
        text.contains("did not declare the sampling capability"),
        "{text}"
    );
    s.expect_no_server_request("sampling/createMessage", secs(1));
}

#[test]
fn a_client_error_reaches_the_plugin() {
    let mut s = conformance_server();
    s.initialize_with_capabilities("2025-06-18", json!({"sampling": {}}));
    s.notify("notifications/initialized", Value::Null);
    let id = start_call(&mut s, "test_sampling", json!({"prompt": "hi"}));
    let request = s.wait_server_request("sampling/createMessage", default_timeout());
    s.respond_error(&request["id"], -1, "User rejected sampling request");
    let (text, is_error) = result_text(&mut s, &id);
    assert!(is_error, "{text}");
    assert!(text.contains("User rejected sampling request"), "{text}");
}

#[test]
fn a_plugin_elicits_a_form_and_gets_the_answer() {
    let mut s = conformance_server();
    s.initialize_with_capabilities("2025-11-25", json!({"elicitation": {}}));
    s.notify("notifications/initialized", Value::Null);
    let id = start_call(
        &mut s,
        "test_elicitation",
        json!({"message": "Who are you?"}),
    );
    let request = s.wait_server_request("elicitation/create", default_timeout());
    assert_eq!(
        request["params"]["message"], "[plugin `conformance`] Who are you?",
        "{request}"
    );
    assert_eq!(
        request["params"]["requestedSchema"]["type"], "object",
        "{request}"
    );
    s.respond(
        &request["id"],
        json!({"action": "accept", "content": {"username": "ada", "email": "ada@example.com"}}),
    );
    let (text, is_error) = result_text(&mut s, &id);
    assert!(!is_error, "{text}");
    assert!(text.contains("action=accept"), "{text}");
    assert!(text.contains("\"username\":\"ada\""), "{text}");

    // A decline carries no content.
    let id = start_call(&mut s, "test_elicitation", json!({"message": "Again?"}));
    let request = s.wait_server_request("elicitation/create", default_timeout());
    s.respond(&request["id"], json!({"action": "decline"}));
    let (text, _) = result_text(&mut s, &id);
    assert!(text.contains("action=decline, content={}"), "{text}");
}

#[test]
fn elicitation_needs_the_capability_and_a_revision_that_has_it() {
    // 2025-03-26 has no elicitation, whatever the client claims.
    let mut s = conformance_server();
    s.initialize_with_capabilities("2025-03-26", json!({"elicitation": {}}));
    s.notify("notifications/initialized", Value::Null);
    let id = start_call(&mut s, "test_elicitation", json!({"message": "x"}));
    let (text, is_error) = result_text(&mut s, &id);
    assert!(is_error, "{text}");
    assert!(text.contains("has no elicitation"), "{text}");

    let mut s = conformance_server();
    s.initialize_with_capabilities("2025-11-25", json!({"sampling": {}}));
    s.notify("notifications/initialized", Value::Null);
    let id = start_call(&mut s, "test_elicitation", json!({"message": "x"}));
    let (text, is_error) = result_text(&mut s, &id);
    assert!(is_error, "{text}");
    assert!(
        text.contains("did not declare the elicitation capability"),
        "{text}"
    );
    s.expect_no_server_request("elicitation/create", secs(1));
}

#[test]
fn a_client_that_only_does_url_elicitation_gets_no_form() {
    let mut s = conformance_server();
    s.initialize_with_capabilities("2025-11-25", json!({"elicitation": {"url": {}}}));
    s.notify("notifications/initialized", Value::Null);
    let id = start_call(&mut s, "test_elicitation", json!({"message": "x"}));
    let (text, is_error) = result_text(&mut s, &id);
    assert!(is_error, "{text}");
    assert!(text.contains("only URL-mode"), "{text}");
}

/// Proves: bytes a plugin returns for a resource reach the client as a base64 `blob`, unchanged,
/// and a resource served by two routes (the fixed URI and the template) reads the same either way.
#[test]
fn binary_resources_are_sent_as_base64_blobs() {
    let mut s = conformance_server();
    s.initialize("2025-11-25");
    let png =
        std::fs::read(repo_root().join("plugins/fixtures/conformance/src/red-pixel.png")).unwrap();
    let read = s.result("resources/read", json!({"uri": "test://static-binary"}));
    let contents = &read["contents"][0];
    assert_eq!(contents["uri"], "test://static-binary", "{read}");
    assert_eq!(contents["mimeType"], "image/png", "{read}");
    assert!(contents.get("text").is_none(), "{read}");
    let blob = contents["blob"].as_str().expect("a blob");
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob)
        .expect("base64");
    assert_eq!(bytes, png, "{read}");
    let read = s.result("resources/read", json!({"uri": "test://template/123/data"}));
    assert!(
        read["contents"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("123")),
        "{read}"
    );
}
