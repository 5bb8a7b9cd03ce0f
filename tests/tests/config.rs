//! The configuration file: strictness (unknown fields are refused with the
//! file, line and field named), prefixes, paths relative to the file, and
//! preopened directories.

use palisade_tests::*;
use serde_json::json;

/// Runs `palisade serve --config <body written to a file>` and expects it to
/// refuse to start, naming the file. Returns the run's output.
fn refused(body: &str) -> (RunOutput, tempfile::TempDir) {
    let dir = tempdir();
    let config = config_file(dir.path(), body);
    let out = assert_serve_refused(&["--config", &path_str(&config)], "palisade.toml");
    (out, dir)
}

/// stderr names the file, the line and the field.
fn assert_names(out: &RunOutput, line: usize, field: &str) {
    let err = &out.stderr;
    assert!(
        err.contains("palisade.toml"),
        "stderr must name the config file:\n{out}"
    );
    assert!(
        err.contains(&format!("line {line}")) || err.contains(&format!(":{line}:")),
        "stderr must give line {line}:\n{out}"
    );
    assert!(
        err.contains(field),
        "stderr must name the field {field:?}:\n{out}"
    );
}

fn hello() -> String {
    toml_str(&plugin_arg("hello"))
}

#[test]
fn unknown_field_in_server_is_refused() {
    let (out, _dir) = refused("[server]\npage_size = 2\npage_sise = 3\n");
    assert_names(&out, 3, "page_sise");
}

#[test]
fn unknown_field_in_a_plugin_is_refused() {
    let (out, _dir) = refused(&format!(
        "# a comment\n[plugins.hello]\npath = {}\nprefix = \"hi\"\nroot = \"read-only\"\n",
        hello()
    ));
    assert_names(&out, 5, "root");
}

#[test]
fn unknown_field_in_limits_is_refused() {
    let (out, _dir) = refused(&format!(
        "[plugins.hello]\npath = {}\n\n[plugins.hello.limits]\nfuel_per_call = 1000\nmemory_mb = 64\n",
        hello()
    ));
    assert_names(&out, 6, "memory_mb");
}

#[test]
fn unknown_field_in_dirs_is_refused() {
    let (out, _dir) = refused(&format!(
        "[plugins.hello]\npath = {}\n\n[[plugins.hello.dirs]]\nhost = \".\"\nguest = \"/data\"\nmode = \"read-only\"\nwritable = true\n",
        hello()
    ));
    assert_names(&out, 8, "writable");
}

#[test]
fn unknown_top_level_table_is_refused() {
    let (out, _dir) = refused(&format!(
        "[plugins.hello]\npath = {}\n\n[servre]\npage_size = 2\n",
        hello()
    ));
    assert_names(&out, 4, "servre");
}

#[test]
fn bad_values_are_refused() {
    let (out, _dir) = refused(&format!(
        "[plugins.hello]\npath = {}\nroots = \"sometimes\"\n",
        hello()
    ));
    assert!(out.stderr.contains("palisade.toml"), "{out}");
    let (out, _dir) = refused("[server]\npage_size = \"two\"\n");
    assert!(
        out.stderr.contains("palisade.toml") && out.stderr.contains("page_size"),
        "{out}"
    );
}

#[test]
fn missing_config_file_is_refused() {
    let dir = tempdir();
    let missing = dir.path().join("nowhere.toml");
    let out = run_palisade(&["serve", "--config", &path_str(&missing)], true, secs(60));
    assert!(out.status.is_some() && !out.success(), "{out}");
    assert!(
        out.stderr.contains("nowhere.toml"),
        "stderr must name the file:\n{out}"
    );
}

#[test]
fn prefixes_name_the_tools() {
    let dir = tempdir();
    let config = config_file(
        dir.path(),
        &format!(
            "[plugins.hello]\npath = {h}\n\n[plugins.aliased]\npath = {h}\nprefix = \"hi\"\n\n[plugins.bare]\npath = {h}\nprefix = \"\"\n",
            h = hello()
        ),
    );
    let mut s = Server::start(&["--config", &path_str(&config)]);
    s.initialize(LATEST_VERSION);
    let (tools, _) = s.list_all_tools();
    assert_eq!(
        tool_names(&tools),
        [
            "echo",
            "greet",
            "hello_echo",
            "hello_greet",
            "hi_echo",
            "hi_greet"
        ],
        "default prefix = plugin name, \"hi\" and no prefix, sorted"
    );
    for (tool, who) in [
        ("greet", "bare"),
        ("hello_greet", "default"),
        ("hi_greet", "hi"),
    ] {
        let r = s.call_tool(tool, json!({"name": who}));
        assert_eq!(ok_text(&r), format!("Hello, {who}!"));
    }
    let resp = s.call_tool_response("aliased_greet", json!({"name": "x"}));
    assert_eq!(
        error_code(&resp),
        Some(INVALID_PARAMS),
        "the prefix replaces the plugin name: {resp}"
    );
}

#[test]
fn paths_are_relative_to_the_config_file() {
    let dir = tempdir();
    let conf_dir = dir.path().join("conf");
    copy_plugin("files", conf_dir.join("plugins/files.wasm"));
    write_file(conf_dir.join("data/x.txt"), "from the data dir\n");
    let config = config_file(
        &conf_dir,
        "[plugins.files]\npath = \"plugins/files.wasm\"\n\n[[plugins.files.dirs]]\nhost = \"data\"\nguest = \"/data\"\nmode = \"read-only\"\n",
    );
    // Started from elsewhere, so relative paths can only work against the file's directory.
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let mut s = Server::builder()
        .args(["--config", &path_str(&config)])
        .cwd(&elsewhere)
        .start();
    s.initialize(LATEST_VERSION);

    let r = s.call_tool("files_read_file", json!({"path": "/data/x.txt"}));
    assert!(ok_text(&r).contains("from the data dir"), "{r}");
    let r = s.call_tool("files_list_dir", json!({"path": "/data"}));
    assert!(ok_text(&r).contains("x.txt"), "{r}");
    let r = s.call_tool(
        "files_read_file",
        json!({"path": "/data/../plugins/files.wasm"}),
    );
    assert!(
        is_tool_error(&r),
        "a preopened dir must not give access to its parent: {r}"
    );
}

#[test]
fn dirs_of_one_plugin_are_not_visible_to_another() {
    let dir = tempdir();
    write_file(dir.path().join("private/p.txt"), "private\n");
    let config = config_file(
        dir.path(),
        &format!(
            "[plugins.files]\npath = {f}\n\n[[plugins.files.dirs]]\nhost = \"private\"\nguest = \"/private\"\nmode = \"read-only\"\n\n[plugins.other]\npath = {f}\n",
            f = toml_str(&plugin_arg("files"))
        ),
    );
    let mut s = Server::start(&["--config", &path_str(&config)]);
    s.initialize(LATEST_VERSION);
    let r = s.call_tool("files_read_file", json!({"path": "/private/p.txt"}));
    assert!(ok_text(&r).contains("private"), "{r}");
    let r = s.call_tool("other_read_file", json!({"path": "/private/p.txt"}));
    assert!(is_tool_error(&r), "dirs are per plugin: {r}");
}

#[test]
fn a_config_that_names_a_missing_plugin_is_refused() {
    let (out, _dir) = refused("[plugins.ghost]\npath = \"ghost.wasm\"\n");
    assert!(
        out.stderr.contains("ghost.wasm"),
        "stderr must name the missing file:\n{out}"
    );
}

#[test]
fn a_granted_directory_that_vanishes_is_a_host_failure_not_a_crash() {
    let dir = tempdir();
    write_file(dir.path().join("data/d.txt"), "data\n");
    let config = config_file(
        dir.path(),
        &format!(
            "[plugins.files]\npath = {f}\n\n[[plugins.files.dirs]]\nhost = \"data\"\nguest = \"/data\"\n\n[plugins.hello]\npath = {h}\n",
            f = toml_str(&plugin_arg("files")),
            h = hello()
        ),
    );
    let mut s = Server::start(&["--config", &path_str(&config)]);
    s.initialize(LATEST_VERSION);
    // Plugins load in the background and loading opens the granted directory: remove it
    // only once both are loaded, so the failure happens during the call.
    s.wait_ready();
    std::fs::remove_dir_all(dir.path().join("data")).unwrap();
    let resp = s.call_tool_response("files_read_file", json!({"path": "/data/d.txt"}));
    assert_eq!(error_code(&resp), Some(-32603), "host failure: {resp}");
    // The client gets an incident id, never the host path; the server's log has both.
    let message = resp["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("incident") && !message.contains(&*dir.path().to_string_lossy()),
        "an incident id and no host path: {resp}"
    );
    let incident = message
        .split("incident ")
        .nth(1)
        .and_then(|rest| rest.split(';').next())
        .unwrap_or_default();
    // The log is read on a thread of its own: the line may come a moment after the answer.
    assert!(
        !incident.is_empty() && s.wait_for_stderr(incident, secs(10)),
        "no incident {incident:?} in the log:\n{}",
        s.stderr()
    );
    let log = s.stderr();
    assert!(
        log.lines()
            .any(|l| l.contains(incident) && l.contains("data")),
        "the log ties the incident to the directory:\n{log}"
    );
    let r = s.call_tool("hello_greet", json!({"name": "still"}));
    assert_eq!(
        ok_text(&r),
        "Hello, still!",
        "the server goes on serving: {r}"
    );
}
