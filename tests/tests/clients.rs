//! Real MCP clients against the real binary.

use std::process::Command;

use palisade_tests::*;

/// Runs the Python SDK client `script` (tests/clients/) against `palisade serve --plugin
/// PLUGIN`; its output, after checking it succeeded.
fn python_client(script: &str, plugin: &str) -> String {
    let cache = shared_cache_dir();
    let out = Command::new(pyclient_python())
        .arg(repo_root().join("tests/clients").join(script))
        .arg(palisade_bin())
        .arg(plugin_path(plugin))
        .arg(cache.as_path())
        .output()
        .expect("running the Python client");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the Python SDK client failed:\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    stdout
}

#[test]
fn official_python_sdk_lists_and_calls_tools_over_stdio() {
    let stdout = python_client("python_stdio.py", "hello");
    for line in [
        "negotiated 2025-11-25 with palisade",
        "tools ['hello_echo', 'hello_greet']",
        "greet -> Hello, Python!",
        "echo -> {'text': 'round trip'}",
        "ping ok",
    ] {
        assert!(stdout.contains(line), "missing {line:?} in:\n{stdout}");
    }
}

#[test]
fn official_python_sdk_lists_and_calls_a_generic_components_tools() {
    let stdout = python_client("python_generic.py", "generic-types");
    for line in [
        "tools 22",
        "add-u8 -> {'result': 4}",
        "shift -> {'label': 'a', 'x': 3, 'y': 2}",
        "describe -> blue circle of radius 1.5",
        "divide by zero -> cannot divide 1 by 0",
    ] {
        assert!(stdout.contains(line), "missing {line:?} in:\n{stdout}");
    }
}

/// Runs the MCP Inspector's CLI against `palisade serve --plugin hello.wasm`; returns its JSON.
fn inspector(cache: &std::path::Path, method_args: &[&str]) -> serde_json::Value {
    let hello = path_str(&plugin_path("hello"));
    inspector_with(cache, &["--plugin", &hello], method_args)
}

/// Runs the MCP Inspector's CLI against `palisade serve <serve_args>`; returns its JSON.
fn inspector_with(
    cache: &std::path::Path,
    serve_args: &[&str],
    method_args: &[&str],
) -> serde_json::Value {
    let inspector = repo_root().join("tests/clients/node_modules/.bin/mcp-inspector");
    assert!(
        inspector.exists(),
        "{} is missing: run ./dev test (it installs the MCP Inspector for this test)",
        inspector.display()
    );
    // The Inspector's own options first; after `--`, the server command (whose `--config` the
    // Inspector would otherwise take for its own).
    let out = Command::new(&inspector)
        .arg("--cli")
        .args(method_args)
        .arg("--")
        .arg(palisade_bin())
        .arg("serve")
        .args(serve_args)
        .arg("--cache-dir")
        .arg(cache)
        .output()
        .expect("running the MCP Inspector");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the Inspector failed:\n--- stdout\n{stdout}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{stdout}"))
}

#[test]
fn mcp_inspector_cli_lists_and_calls_tools_over_stdio() {
    let cache = shared_cache_dir();
    let listed = inspector(cache.as_path(), &["--method", "tools/list"]);
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .expect("a tools array")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["hello_echo", "hello_greet"], "{listed}");
    let called = inspector(
        cache.as_path(),
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "hello_greet",
            "--tool-arg",
            "name=Inspector",
        ],
    );
    assert_eq!(
        called["content"][0]["text"], "Hello, Inspector!",
        "{called}"
    );
    assert_ne!(called["isError"], true, "{called}");
}

/// Proves: the official Python SDK (a real client with a roots callback) works with every part of
/// the server at once: it lists and reads resources and templates (`notes://welcome`), lists and
/// gets prompts, completes a prompt argument and a template variable, and its roots (from the
/// callback, and again after it sends `notifications/roots/list_changed`) are what the files
/// plugin reads, with nothing outside them. The script asserts each step.
#[test]
fn official_python_sdk_uses_resources_prompts_completions_and_roots() {
    let tmp = tempdir();
    let notes = tmp.path().join("notes");
    write_file(
        notes.join("welcome.md"),
        "# Welcome\n\nA note served as notes://welcome.\n",
    );
    write_file(notes.join("todo.md"), "- [ ] test the surface\n");
    write_file(notes.join("recipes.md"), "# Bread\n\nFlour, water, salt.\n");
    let project = tmp.path().join("project");
    write_file(project.join("hello.txt"), "hello from the client's root\n");
    let second = tmp.path().join("second");
    write_file(second.join("other.txt"), "the second root\n");
    let config = config_file(
        tmp.path(),
        &format!(
            "[plugins.notes]\npath = {notes_wasm}\n\
             [[plugins.notes.dirs]]\nhost = {notes_dir}\nguest = \"/notes\"\nmode = \"read-only\"\n\n\
             [plugins.prompts]\npath = {prompts_wasm}\n\n\
             [plugins.files]\npath = {files_wasm}\nroots = \"read-only\"\n",
            notes_wasm = toml_str(&plugin_arg("notes")),
            notes_dir = toml_str(&path_str(&notes)),
            prompts_wasm = toml_str(&plugin_arg("prompts")),
            files_wasm = toml_str(&plugin_arg("files")),
        ),
    );
    let cache = shared_cache_dir();
    let script = repo_root().join("tests/clients/python_surface.py");
    let out = Command::new(pyclient_python())
        .arg(&script)
        .arg(palisade_bin())
        .arg(&config)
        .arg(cache.as_path())
        .arg(&notes)
        .arg(&project)
        .arg(&second)
        .output()
        .expect("running the Python client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the Python SDK client failed:\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    for line in [
        "resources ['notes://recipes', 'notes://todo', 'notes://welcome']",
        "templates ['notes://{name}']",
        "read notes://welcome -> # Welcome",
        "complete language 'Ja' -> ['Java', 'JavaScript']",
        "complete note 'we' -> ['welcome']",
        "read_file in the root -> hello from the client's root",
        "roots after list_changed -> ['second']",
        "surface ok",
    ] {
        assert!(stdout.contains(line), "missing {line:?} in:\n{stdout}");
    }
}

/// Proves: the MCP Inspector, as a new user drives it, browses resources and templates, reads a
/// note, and fills a prompt, against the example configuration.
#[test]
fn mcp_inspector_cli_browses_resources_and_prompts_over_stdio() {
    let cache = shared_cache_dir();
    let config = path_str(&repo_root().join("plugins/palisade.toml"));
    let serve = ["--config", config.as_str(), "--no-watch"];
    let listed = inspector_with(cache.as_path(), &serve, &["--method", "resources/list"]);
    let uris: Vec<&str> = listed["resources"]
        .as_array()
        .expect("a resources array")
        .iter()
        .filter_map(|r| r["uri"].as_str())
        .collect();
    assert_eq!(
        uris,
        [
            "notes://recipes",
            "notes://todo",
            "notes://welcome",
            "textkit-js://about",
            "textkit-py://about",
            // The weather plugin's MCP Apps view.
            "ui://weather/forecast"
        ],
        "{listed}"
    );
    let templates = inspector_with(
        cache.as_path(),
        &serve,
        &["--method", "resources/templates/list"],
    );
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"], "notes://{name}",
        "{templates}"
    );
    let read = inspector_with(
        cache.as_path(),
        &serve,
        &["--method", "resources/read", "--uri", "notes://welcome"],
    );
    let welcome =
        std::fs::read_to_string(repo_root().join("plugins/notes/example/welcome.md")).unwrap();
    assert_eq!(read["contents"][0]["text"], welcome.as_str(), "{read}");
    let prompt = inspector_with(
        cache.as_path(),
        &serve,
        &[
            "--method",
            "prompts/get",
            "--prompt-name",
            "prompts_summarize",
            "--prompt-args",
            "text=Palisade runs tools in a sandbox.",
        ],
    );
    let text = prompt["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("Palisade runs tools in a sandbox."),
        "{prompt}"
    );
}

/// Proves: the official Python SDK's streamable HTTP client works with `palisade serve --http`:
/// it initializes (taking the session id), lists tools, calls one with a JSON answer, follows
/// progress and log notifications on a call's SSE stream, answers a plugin's
/// `sampling/createMessage` that arrives on the stream (its answer is a POST), pings, and ends
/// the session with DELETE on close. The script asserts each step.
#[test]
fn official_python_sdk_lists_and_calls_tools_over_http() {
    let config = repo_root().join("plugins/fixtures/conformance/palisade.toml");
    let server = HttpServer::start(&[
        "--no-watch",
        "--config",
        &path_str(&config),
        "--plugin",
        &plugin_arg("hello"),
        "--plugin",
        &plugin_arg("misbehave"),
    ]);
    let script = repo_root().join("tests/clients/python_http.py");
    let out = Command::new(pyclient_python())
        .arg(&script)
        .arg(&server.url)
        .output()
        .expect("running the Python client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the Python SDK client failed:\n--- stdout\n{stdout}\n--- stderr\n{stderr}\n--- server\n{}",
        server.stderr()
    );
    for line in [
        "negotiated 2025-11-25 with palisade",
        "greet -> Hello, HTTP!",
        "progress -> reported 200000 steps after some progress",
        "log -> logged 2 messages ['message 1', 'message 2']",
        "sampling -> LLM response: 4",
        "ping ok",
        "closed",
    ] {
        assert!(stdout.contains(line), "missing {line:?} in:\n{stdout}");
    }
    assert!(
        server.wait_for_stderr("HTTP session ended by the client", secs(10)),
        "the SDK should end its session with DELETE:\n{}",
        server.stderr()
    );
}
