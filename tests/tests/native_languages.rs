//! Plugins in Go, C, C++ and Zig (`plugins/hello-*`, `plugins/fixtures/probe-*`, built with
//! `sdk-guest/go` and `sdk-guest/c` and made components by `palisade componentize`): the same
//! `greet` as the Rust `hello`, and the same sandbox as every other plugin. Their SDKs' own unit
//! tests run natively (`go test`, and the C SDK's JSON tests with the host's C compiler).

use palisade_tests::*;
use serde_json::json;
use tempfile::TempDir;

const LANGUAGES: [&str; 4] = ["go", "c", "cpp", "zig"];

/// Proves: `hello` built from Go, C, C++ and Zig loads beside the others and its `greet`
/// answers as the Rust one does, with the schema and hint the plugin declared.
#[test]
fn hello_greets_in_every_language() {
    let plugins: Vec<String> = LANGUAGES
        .iter()
        .map(|language| plugin_arg(&format!("hello-{language}")))
        .collect();
    let mut args = vec!["--no-watch"];
    for plugin in &plugins {
        args.extend(["--plugin", plugin.as_str()]);
    }
    let mut s = Server::start(&args);
    s.initialize(LATEST_VERSION);
    s.wait_ready();
    let (tools, _) = s.list_all_tools();
    for language in LANGUAGES {
        let name = format!("hello-{language}_greet");
        let tool = tools
            .iter()
            .find(|tool| tool["name"] == name.as_str())
            .unwrap_or_else(|| panic!("{name} is not listed: {tools:?}"));
        assert_eq!(tool["inputSchema"]["required"], json!(["name"]), "{tool}");
        assert_eq!(tool["inputSchema"]["properties"]["name"]["type"], "string");
        assert_eq!(tool["annotations"]["readOnlyHint"], true, "{tool}");
        let r = s.call_tool(&name, json!({"name": "Ada \"Countess\" Lovelace ✓"}));
        assert_eq!(ok_text(&r), "Hello, Ada \"Countess\" Lovelace ✓!", "{name}");
        // The host checks arguments against the declared schema before the plugin runs.
        let r = s.call_tool_response(&name, json!({"name": 42}));
        let refused = r.get("error").is_some() || is_tool_error(&r["result"]);
        assert!(refused, "{name} accepted a number for a string: {r}");
    }
}

/// A server with `probe-LANGUAGE`, a read-only `/data` holding `a.txt`, a file outside it, and
/// a fuel limit that stops a spin in a few hundred milliseconds.
fn probe(language: &str) -> (Server, TempDir, String) {
    let dir = tempdir();
    write_file(dir.path().join("data/a.txt"), "granted text\n");
    write_file(dir.path().join("secret.txt"), "not for plugins\n");
    let plugin = format!("probe-{language}");
    let config = config_file(
        dir.path(),
        &format!(
            "[plugins.{plugin}]\npath = {}\n\n[[plugins.{plugin}.dirs]]\nhost = {}\nguest = \"/data\"\nmode = \"read-only\"\n\n[plugins.{plugin}.limits]\nfuel_per_call = 300000000\ntimeout_ms = 20000\n",
            toml_str(&plugin_arg(&plugin)),
            toml_str(&path_str(&dir.path().join("data"))),
        ),
    );
    let mut s = Server::start(&["--no-watch", "--config", &path_str(&config)]);
    s.initialize(LATEST_VERSION);
    s.wait_ready();
    (s, dir, plugin)
}

/// Proves: a plugin in this language reads a granted file, is refused every file outside its
/// grants (the host's own secret among them, which the host can read), and a spinning call
/// ends in a tool error naming the fuel limit, after which the plugin answers again.
fn sandbox_holds(language: &str) {
    let (mut s, dir, plugin) = probe(language);
    let read = format!("{plugin}_read_file");
    let r = s.call_tool(&read, json!({"path": "/data/a.txt"}));
    assert_eq!(ok_text(&r), "granted text\n", "{language}");
    let host_secret = path_str(&dir.path().join("secret.txt"));
    for outside in [
        "/etc/passwd",
        "/data/../secret.txt",
        "/secret.txt",
        host_secret.as_str(),
    ] {
        let r = s.call_tool(&read, json!({"path": outside}));
        assert!(is_tool_error(&r), "{language} read {outside}: {r}");
        let text = tool_text(&r);
        assert!(!text.contains("not for plugins"), "{text}");
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("secret.txt")).unwrap(),
        "not for plugins\n"
    );
    let r = s.call_tool(&format!("{plugin}_spin"), json!({}));
    let text = error_text(&r, "out of fuel");
    assert!(text.contains("fuel_per_call"), "{text}");
    let r = s.call_tool(&read, json!({"path": "/data/a.txt"}));
    assert_eq!(ok_text(&r), "granted text\n", "{language} after the spin");
}

#[test]
fn sandbox_holds_for_go() {
    sandbox_holds("go");
}

#[test]
fn sandbox_holds_for_c() {
    sandbox_holds("c");
}

#[test]
fn sandbox_holds_for_cpp() {
    sandbox_holds("cpp");
}

#[test]
fn sandbox_holds_for_zig() {
    sandbox_holds("zig");
}

/// Proves: the Go SDK's unit tests pass (schemas from struct types and tags, results, errors,
/// registration mistakes), with the Go that plugins/build.sh installs.
#[test]
fn go_sdk_unit_tests() {
    let go = repo_root().join("target/lang-venv/bin/go");
    run_to_success(
        "go test (sdk-guest/go)",
        std::process::Command::new(&go)
            .args(["test", "-count=1", ".", "./httpclient"])
            .current_dir(repo_root().join("sdk-guest/go"))
            .env("GOPROXY", "off")
            .env("GOTOOLCHAIN", "local")
            .env("GOWORK", repo_root().join("plugins/go.work")),
    );
}

/// Proves: the C SDK's JSON parser and writer (sdk-guest/c/palisade_json.c) pass their tests,
/// built natively with the host's C compiler.
#[test]
fn c_sdk_unit_tests() {
    let sdk = repo_root().join("sdk-guest/c");
    let out = tempdir();
    let binary = out.path().join("json_test");
    run_to_success(
        "cc sdk-guest/c/tests/json_test.c",
        std::process::Command::new("cc")
            .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g"])
            // Memory errors in the parser fail the test, not only wrong answers.
            .args([
                "-fsanitize=address,undefined",
                "-fno-sanitize-recover=all",
                "-I",
            ])
            .arg(&sdk)
            .arg(sdk.join("tests/json_test.c"))
            .arg(sdk.join("palisade_json.c"))
            .args(["-lm", "-o"])
            .arg(&binary),
    );
    run_to_success("json_test", &mut std::process::Command::new(&binary));
}

/// Proves: the Go example `query` finds the data files in the client's roots, describes one,
/// filters, sorts and picks its rows (as structured content and a table), says which columns
/// exist when asked for another, serves its prompt and completes the prompt's path, and cannot
/// open a data file outside the roots.
#[test]
fn query_looks_into_data_files_in_the_roots() {
    let dir = tempdir();
    let root = dir.path().join("work");
    write_file(
        root.join("cities.csv"),
        "name,country,population,capital\nParis,FR,2100000,true\nLyon,FR,520000,false\nBerlin,DE,3600000,true\nBonn,DE,330000,false\n",
    );
    write_file(
        root.join("more/people.json"),
        r#"[{"name": "Ada", "born": 1815}, {"name": "Grace", "born": 1906, "navy": true}]"#,
    );
    write_file(
        root.join("more/events.jsonl"),
        "{\"at\": 1}\n\n{\"at\": 2}\n",
    );
    write_file(root.join("notes.txt"), "not data\n");
    write_file(dir.path().join("outside.csv"), "secret\nnot for plugins\n");
    let root_arg = path_str(&root);
    let mut s = Server::start(&[
        "--no-watch",
        "--plugin",
        &plugin_arg("query"),
        "--root",
        &root_arg,
    ]);
    s.initialize(LATEST_VERSION);
    s.wait_ready();

    let r = s.call_tool("query_files", json!({}));
    let mut files: Vec<String> = r["structuredContent"]["files"]
        .as_array()
        .unwrap_or_else(|| panic!("{r}"))
        .iter()
        .map(|file| file["path"].as_str().unwrap().to_string())
        .collect();
    files.sort();
    let under = |name: &str| path_str(&root.join(name));
    assert_eq!(
        files,
        [
            under("cities.csv"),
            under("more/events.jsonl"),
            under("more/people.json")
        ]
    );

    let r = s.call_tool("query_describe", json!({"path": under("cities.csv")}));
    let description = &r["structuredContent"];
    assert_eq!(description["rows"], 4, "{r}");
    assert_eq!(
        description["columns"],
        json!([
            {"name": "name", "type": "string"},
            {"name": "country", "type": "string"},
            {"name": "population", "type": "number"},
            {"name": "capital", "type": "boolean"},
        ])
    );
    let r = s.call_tool("query_describe", json!({"path": under("more/people.json")}));
    assert_eq!(
        r["structuredContent"]["columns"][2],
        json!({"name": "navy", "type": "boolean"}),
        "{r}"
    );

    let r = s.call_tool(
        "query_query",
        json!({
            "path": under("cities.csv"),
            "columns": ["name", "population"],
            "where": [{"column": "population", "op": ">", "value": "500000"}],
            "order_by": "population",
            "descending": true,
            "limit": 2,
        }),
    );
    assert_eq!(
        r["structuredContent"],
        json!({
            "columns": ["name", "population"],
            "rows": [{"name": "Berlin", "population": 3600000}, {"name": "Paris", "population": 2100000}],
            "matched": 3,
        }),
        "{r}"
    );
    assert!(tool_text(&r).contains("| Berlin | 3600000 |"), "{r}");
    let r = s.call_tool(
        "query_query",
        json!({"path": under("cities.csv"), "where": [{"column": "size", "op": "=", "value": "1"}]}),
    );
    let text = error_text(&r, "has no column \"size\"");
    assert!(
        text.contains("name, country, population, capital"),
        "{text}"
    );

    let r = s.call_tool(
        "query_query",
        json!({"path": path_str(&dir.path().join("outside.csv"))}),
    );
    let text = error_text(&r, "cannot open");
    assert!(!text.contains("not for plugins"), "{text}");

    let prompt = s.result(
        "prompts/get",
        json!({"name": "query_explore", "arguments": {"path": under("cities.csv")}}),
    );
    let text = prompt["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains(&under("cities.csv")), "{prompt}");
    let completion = s.result(
        "completion/complete",
        json!({
            "ref": {"type": "ref/prompt", "name": "query_explore"},
            "argument": {"name": "path", "value": "PEOPLE"},
        }),
    );
    assert_eq!(
        completion["completion"]["values"],
        json!([under("more/people.json")]),
        "{completion}"
    );
}

/// Proves: `palisade new NAME --lang L` writes a skeleton that `make` builds, from an empty
/// folder, with the SDK from this checkout, and whose `greet` answers once served; for Go, C,
/// C++ and Zig (the Rust, Python and JavaScript skeletons are checked by the unit tests of
/// `authoring::new`, which build nothing).
#[test]
fn new_plugins_build_with_make_and_serve_in_go_c_cpp_and_zig() {
    let dir = tempdir();
    let venv = repo_root().join("target/lang-venv");
    let zig = std::process::Command::new(venv.join("bin/python"))
        .args([
            "-c",
            "import os, ziglang; print(os.path.dirname(ziglang.__file__))",
        ])
        .output()
        .expect("the Zig of plugins/build.sh");
    let zig_dir = String::from_utf8(zig.stdout).unwrap().trim().to_string();
    let path = format!(
        "{}:{zig_dir}:{}",
        path_str(&venv.join("bin")),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut args = vec!["--no-watch".to_string()];
    for language in ["go", "c", "cpp", "zig"] {
        let name = format!("my-{language}");
        run_to_success(
            "palisade new",
            std::process::Command::new(palisade_bin())
                .args(["new", &name, "--lang", language])
                .current_dir(dir.path()),
        );
        run_to_success(
            &format!("make in {name}"),
            std::process::Command::new("make")
                .current_dir(dir.path().join(&name))
                .env("PATH", &path)
                .env("GOPROXY", "off")
                .env("GOTOOLCHAIN", "local")
                .env("GOFLAGS", "-modcacherw")
                // `make` runs `palisade compile` into the default cache: this test's own.
                .env("XDG_CACHE_HOME", dir.path().join("cache")),
        );
        let readme = std::fs::read_to_string(dir.path().join(&name).join("README.md")).unwrap();
        assert!(readme.contains("until it is published"), "{readme}");
        args.push("--plugin".into());
        args.push(path_str(
            &dir.path().join(&name).join(format!("{name}.wasm")),
        ));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut s = Server::start(&args);
    s.initialize(LATEST_VERSION);
    s.wait_ready();
    for language in ["go", "c", "cpp", "zig"] {
        let r = s.call_tool(&format!("my-{language}_greet"), json!({"name": "new"}));
        assert_eq!(ok_text(&r), "Hello, new!", "{language}");
    }
}
