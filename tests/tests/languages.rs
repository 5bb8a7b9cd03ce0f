//! Plugins written in Python and JavaScript (`plugins/textkit-py`, `plugins/textkit-js`, built
//! with `sdk-guest/python` and `sdk-guest/js`): the same tools, resources and prompt, served in the
//! same sandbox as Rust plugins, with the same grants and limits. Every test runs once per
//! language; the two example plugins behave the same but for the language they name and their
//! URI scheme (the plugin's name, so both can be served together).

use std::path::Path;

use palisade_tests::*;
use serde_json::{Value, json};
use tempfile::TempDir;

/// A server with the example plugin `plugin` (`textkit-py` or `textkit-js`), a read-only
/// directory `/data` holding `a.txt`, and `limits` (TOML lines for its `[limits]` table).
fn textkit(plugin: &str, limits: &str) -> (Server, TempDir) {
    let dir = tempdir();
    write_file(
        dir.path().join("data/a.txt"),
        "one two\nthree\n\nfour five six\n",
    );
    write_file(dir.path().join("secret.txt"), "not for plugins\n");
    let config = config_file(
        dir.path(),
        &format!(
            "[plugins.{plugin}]\npath = {}\n\n[[plugins.{plugin}.dirs]]\nhost = {}\nguest = \"/data\"\nmode = \"read-only\"\n\n[plugins.{plugin}.limits]\n{limits}\n",
            toml_str(&plugin_arg(plugin)),
            toml_str(&path_str(&dir.path().join("data"))),
        ),
    );
    let mut s = Server::start(&["--no-watch", "--config", &path_str(&config)]);
    s.initialize(LATEST_VERSION);
    // Lists wait only 2 s for plugins still loading: load first.
    s.wait_ready();
    (s, dir)
}

fn language(plugin: &str) -> &'static str {
    match plugin {
        "textkit-py" => "Python",
        "textkit-js" => "JavaScript",
        other => panic!("no example plugin {other}"),
    }
}

/// Proves: tools/list, resources/list, resources/templates/list and prompts/list show what the
/// plugin declared, with input schemas derived from its type hints (Python) or declared object
/// (JavaScript), and the hints and output schema it gave.
fn lists_what_it_declares(plugin: &str) {
    let (mut s, _dir) = textkit(plugin, "");
    let (tools, _) = s.list_all_tools();
    let mut names = tool_names(&tools);
    names.sort();
    assert_eq!(
        names,
        [
            format!("{plugin}_count_primes"),
            format!("{plugin}_greet"),
            format!("{plugin}_word_count"),
        ]
    );
    let tool = |name: &str| -> &Value {
        let public = format!("{plugin}_{name}");
        tools.iter().find(|t| t["name"] == public.as_str()).unwrap()
    };
    let greet = tool("greet");
    assert_eq!(greet["description"], "Say hello to someone", "{greet}");
    assert_eq!(greet["annotations"]["readOnlyHint"], true, "{greet}");
    let schema = &greet["inputSchema"];
    assert_eq!(schema["type"], "object", "{schema}");
    assert_eq!(schema["properties"]["name"]["type"], "string", "{schema}");
    assert_eq!(
        schema["properties"]["excited"]["type"], "boolean",
        "{schema}"
    );
    assert_eq!(schema["required"], json!(["name"]), "{schema}");
    let count = tool("count_primes");
    assert_eq!(
        count["inputSchema"]["properties"]["below"]["type"], "integer",
        "{count}"
    );
    // The plugin says it may run as a task; a client asking for one gets one.
    assert_eq!(count["execution"]["taskSupport"], "optional", "{count}");
    assert!(greet.get("execution").is_none(), "{greet}");
    let created = s.result(
        "tools/call",
        json!({ "name": format!("{plugin}_count_primes"), "arguments": { "below": 100 }, "task": {} }),
    );
    let id = created["task"]["taskId"].clone();
    let result = s.result("tasks/result", json!({ "taskId": id }));
    assert_eq!(tool_text(&result), "25", "{result}");
    let word_count = tool("word_count");
    let output = &word_count["outputSchema"];
    assert_eq!(output["type"], "object", "{word_count}");
    for field in ["lines", "words", "characters"] {
        assert_eq!(output["properties"][field]["type"], "integer", "{output}");
    }

    let resources = s.result("resources/list", json!({}));
    assert_eq!(
        resources["resources"],
        json!([{"uri": format!("{plugin}://about"), "name": "about", "mimeType": "text/plain"}]),
        "{resources}"
    );
    let templates = s.result("resources/templates/list", json!({}));
    let templates = templates["resourceTemplates"].as_array().unwrap();
    assert_eq!(templates.len(), 1, "{templates:?}");
    assert_eq!(
        templates[0]["uriTemplate"],
        format!("{plugin}://upper/{{text}}")
    );
    assert_eq!(templates[0]["name"], "upper");

    let prompts = s.result("prompts/list", json!({}));
    let prompts = prompts["prompts"].as_array().unwrap();
    assert_eq!(prompts.len(), 1, "{prompts:?}");
    let summarize = &prompts[0];
    assert_eq!(summarize["name"], format!("{plugin}_summarize"));
    assert_eq!(summarize["description"], "Summarize a file");
    let arguments: Vec<(&str, bool)> = summarize["arguments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["name"].as_str().unwrap(), a["required"] == true))
        .collect();
    assert_eq!(arguments, [("path", true), ("style", false)], "{summarize}");
}

/// Proves: tools/call reaches the plugin's function, plain return values become text content,
/// and the plugin's log reaches the server's log tagged with its name.
fn calls_tools(plugin: &str) {
    let (mut s, _dir) = textkit(plugin, "");
    let r = s.call_tool(&format!("{plugin}_greet"), json!({"name": "Ada"}));
    assert_eq!(ok_text(&r), "Hello, Ada!");
    let r = s.call_tool(
        &format!("{plugin}_greet"),
        json!({"name": "Ada", "excited": true}),
    );
    assert_eq!(ok_text(&r), "Hello, Ada!!!");
    let r = s.call_tool(&format!("{plugin}_count_primes"), json!({"below": 100}));
    assert_eq!(ok_text(&r), "25");
    assert!(
        s.wait_for_stderr("greeting Ada", secs(10)),
        "the plugin's log line is missing:\n{}",
        s.stderr()
    );
    assert!(s.stderr().contains(plugin), "{}", s.stderr());

    // Arguments that do not match the derived schema never reach the plugin.
    let r = s.call_tool_response(&format!("{plugin}_greet"), json!({"name": 42}));
    let refused = r.get("error").is_some() || is_tool_error(&r["result"]);
    assert!(refused, "a number for a string argument was accepted: {r}");
}

/// Proves: resources/read serves a fixed resource and a templated one (with the template's
/// variable percent-decoded), and an unknown URI is the MCP "resource not found" error.
fn reads_resources(plugin: &str) {
    let (mut s, _dir) = textkit(plugin, "");
    let about = s.result(
        "resources/read",
        json!({"uri": format!("{plugin}://about")}),
    );
    assert_eq!(
        about["contents"],
        json!([{
            "uri": format!("{plugin}://about"),
            "mimeType": "text/plain",
            "text": format!("textkit, a Palisade plugin written in {}", language(plugin)),
        }]),
        "{about}"
    );
    let upper = s.result(
        "resources/read",
        json!({"uri": format!("{plugin}://upper/hello%20world")}),
    );
    assert_eq!(upper["contents"][0]["text"], "HELLO WORLD", "{upper}");
    let missing = s.request(
        "resources/read",
        json!({"uri": format!("{plugin}://nothing")}),
    );
    expect_error_code(&missing, -32002);
}

/// Proves: prompts/get fills the prompt from its arguments (the optional one defaulting), and
/// completion/complete offers the values the plugin declared.
fn gets_prompts(plugin: &str) {
    let (mut s, _dir) = textkit(plugin, "");
    let name = format!("{plugin}_summarize");
    let got = s.result(
        "prompts/get",
        json!({"name": name, "arguments": {"path": "/data/a.txt"}}),
    );
    assert_eq!(
        got["messages"],
        json!([{"role": "user", "content": {"type": "text",
            "text": "Summarize the file /data/a.txt in a short style."}}]),
        "{got}"
    );
    let got = s.result(
        "prompts/get",
        json!({"name": name, "arguments": {"path": "b.md", "style": "detailed"}}),
    );
    assert_eq!(
        got["messages"][0]["content"]["text"],
        "Summarize the file b.md in a detailed style."
    );
    let missing = s.request("prompts/get", json!({"name": name, "arguments": {}}));
    expect_error_code(&missing, -32602);

    let completed = s.result(
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": name},
               "argument": {"name": "style", "value": "d"}}),
    );
    assert_eq!(
        completed["completion"]["values"],
        json!(["detailed"]),
        "{completed}"
    );
}

/// Proves: the plugin reads a file in the directory it was granted, and cannot read anything
/// else: not a host path, not through `..`, not the directory next to its grant.
fn reads_only_granted_files(plugin: &str) {
    let (mut s, dir) = textkit(plugin, "");
    let tool = format!("{plugin}_word_count");
    let r = s.call_tool(&tool, json!({"path": "/data/a.txt"}));
    assert!(!is_tool_error(&r), "{r}");
    assert_eq!(
        r["structuredContent"],
        json!({"lines": 4, "words": 6, "characters": 29}),
        "{r}"
    );
    let host_secret = path_str(&dir.path().join("secret.txt"));
    for outside in [
        "/etc/passwd",
        "/data/../secret.txt",
        "/secret.txt",
        host_secret.as_str(),
    ] {
        let r = s.call_tool(&tool, json!({"path": outside}));
        let text = error_text(&r, &format!("cannot read {outside}"));
        assert!(!text.contains("not for plugins"), "{text}");
    }
    assert_readable_by_host(&dir.path().join("secret.txt"));
}

fn assert_readable_by_host(path: &Path) {
    // The refusals above are the sandbox's, not a missing file.
    assert_eq!(std::fs::read_to_string(path).unwrap(), "not for plugins\n");
}

/// Proves: the per-call fuel limit stops a long computation in an interpreted language the same
/// way it stops Rust code (a tool error naming the limit), and the plugin serves the next call.
fn fuel_limit_stops_a_long_call(plugin: &str) {
    let (mut s, _dir) = textkit(plugin, "fuel_per_call = 100000000\ntimeout_ms = 120000");
    s.timeout = secs(150);
    let r = s.call_tool(
        &format!("{plugin}_count_primes"),
        json!({"below": 100_000_000}),
    );
    let text = error_text(&r, "out of fuel");
    assert!(text.contains("fuel_per_call"), "{text}");
    let r = s.call_tool(&format!("{plugin}_greet"), json!({"name": "again"}));
    assert_eq!(ok_text(&r), "Hello, again!");
}

/// Proves: a tool call over the stateless 2026-07-28 revision reaches these plugins too.
fn answers_stateless_requests(plugin: &str) {
    let (mut s, _dir) = textkit(plugin, "");
    let id = s.send_stateless(
        "tools/call",
        json!({"name": format!("{plugin}_greet"), "arguments": {"name": "Grace"}}),
        &json!({}),
    );
    let r = s.wait_stateless_response(&id);
    assert_eq!(r["result"]["content"][0]["text"], "Hello, Grace!", "{r}");
}

macro_rules! per_language {
    ($($test:ident),* $(,)?) => {
        mod python {
            $(#[test] fn $test() { super::$test("textkit-py") })*
        }
        mod javascript {
            $(#[test] fn $test() { super::$test("textkit-js") })*
        }
    };
}

per_language!(
    lists_what_it_declares,
    calls_tools,
    reads_resources,
    gets_prompts,
    reads_only_granted_files,
    fuel_limit_stops_a_long_call,
    answers_stateless_requests,
);

/// Proves: the compile cache serves these large components: a second start with the same
/// cache directory loads both from it instead of compiling them again. (How long each start
/// takes is measured by `palisade-bench languages`, not asserted here.)
#[test]
fn a_second_start_loads_both_from_the_compile_cache() {
    let cache = tempdir();
    let cache_dir = path_str(cache.path());
    let args = [
        "--no-watch",
        "--plugin",
        &plugin_arg("textkit-py"),
        "--plugin",
        &plugin_arg("textkit-js"),
        "--cache-dir",
        &cache_dir,
    ];
    let compiled = |s: &Server| s.stderr().matches("compiling component").count();
    let cached = |s: &Server| {
        s.stderr()
            .matches("loaded compiled component from cache")
            .count()
    };
    let mut first = Server::start(&args);
    first.initialize(LATEST_VERSION);
    first.wait_ready();
    assert_eq!(
        (compiled(&first), cached(&first)),
        (2, 0),
        "{}",
        first.stderr()
    );
    first.close_stdin_and_wait(secs(30));

    let mut second = Server::start(&args);
    second.initialize(LATEST_VERSION);
    // Its log lines all read before they are counted.
    second.wait_ready();
    let r = second.call_tool("textkit-py_greet", json!({"name": "cache"}));
    assert_eq!(ok_text(&r), "Hello, cache!");
    let r = second.call_tool("textkit-js_greet", json!({"name": "cache"}));
    assert_eq!(ok_text(&r), "Hello, cache!");
    assert_eq!(
        (compiled(&second), cached(&second)),
        (0, 2),
        "{}",
        second.stderr()
    );
}

/// Runs `program args` in `dir` and fails the test, with its output, unless it succeeds.
fn run_unit_tests(what: &str, program: &Path, args: &[&str], dir: &Path, hint: &str) {
    run_to_success(
        &format!("{what} ({}; {hint})", program.display()),
        std::process::Command::new(program)
            .args(args)
            .current_dir(dir),
    );
}

/// Proves: the Python SDK's own unit tests pass (schemas from type hints, templates, results,
/// errors, the build tool's staging), on the host's CPython.
#[test]
fn python_sdk_unit_tests() {
    run_unit_tests(
        "pytest sdk-guest/python",
        &repo_root().join("target/python-sdk/bin/python"),
        &["-m", "pytest", "-q", "-p", "no:cacheprovider"],
        &repo_root().join("sdk-guest/python"),
        "run plugins/build.sh: it installs the Python SDK and pytest in target/python-sdk",
    );
}

/// Proves: the JavaScript SDK's own unit tests pass (schemas from declared objects, templates,
/// results, errors, file reading), on plain Node.
#[test]
fn javascript_sdk_unit_tests() {
    run_unit_tests(
        "node --test sdk-guest/js",
        Path::new("node"),
        &["--test"],
        &repo_root().join("sdk-guest/js"),
        "install Node.js 20 or later",
    );
}
