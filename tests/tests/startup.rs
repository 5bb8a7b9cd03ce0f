//! Starting: the server answers at once and loads its plugins in the background. A plugin still
//! compiling is waited for by a call to it, appears in the lists with `list_changed` when ready,
//! and its compile reports its progress; a plugin that fails is left out while the others serve,
//! and served once its file is fixed.

use palisade_tests::*;
use serde_json::json;

const READY: &str = "plugins ready";

/// Proves: with an empty compile cache, `initialize` is answered before the Python example has
/// compiled (seconds of work); a list does not wait for it; a call to one of its tools waits for
/// it and succeeds, and the client, which listed tools, is told the list changed; the compile
/// logs its progress with a percentage.
#[test]
fn initialize_is_answered_while_a_large_plugin_compiles() {
    let dir = tempdir();
    let cache = dir.path().join("cache");
    // The call below waits for the compile up to the plugin's time limit: a loaded machine may
    // take far longer than the 10 s an idle one does, so both that and the harness wait are long.
    let config = config_file(
        dir.path(),
        &format!(
            "[plugins.hello]\npath = {}\n\n[plugins.textkit-py]\npath = {}\n\n\
             [plugins.textkit-py.limits]\ntimeout_ms = 240000\n",
            toml_str(&plugin_arg("hello")),
            toml_str(&plugin_arg("textkit-py")),
        ),
    );
    let mut s = Server::builder()
        .args([
            "--no-watch",
            "--config",
            &path_str(&config),
            "--cache-dir",
            &path_str(&cache),
        ])
        .start();
    s.timeout = startup_timeout();
    s.initialize(LATEST_VERSION);
    // The stderr reader only lags: anything logged before the answer came would be here by now
    // had `initialize` waited for seconds of compiling.
    let at_initialize = s.stderr();
    assert!(
        !at_initialize.contains(READY) && !at_initialize.contains("textkit-py: compiled"),
        "initialize must not wait for the plugins:\n{at_initialize}"
    );

    // A list waits only a moment: the Python plugin is not in it yet.
    let (listed, _) = s.list_all_tools();
    assert!(
        !tool_names(&listed)
            .iter()
            .any(|n| n.starts_with("textkit-py")),
        "{listed:?}"
    );
    let greeted = s.call_tool("textkit-py_greet", json!({"name": "start"}));
    assert!(!is_tool_error(&greeted), "{greeted}");
    assert!(ok_text(&greeted).contains("start"), "{greeted}");
    s.wait_notification("notifications/tools/list_changed", secs(30));
    let (tools, _) = s.list_all_tools();
    let names = tool_names(&tools);
    for name in ["hello_greet", "textkit-py_greet"] {
        assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
    }
    assert!(s.wait_for_stderr(READY, startup_timeout()));
    let stderr = s.stderr();
    let progress = stderr
        .lines()
        .find(|l| l.contains("textkit-py") && l.contains("compiling (") && l.contains("s left"))
        .unwrap_or_else(|| panic!("a progress line for the long compile:\n{stderr}"));
    assert!(progress.contains('%'), "{progress}");
}

/// Proves: a call to a tool no loading plugin can serve (its prefix fits none) is refused at
/// once, not after the loading plugins' timeouts.
#[test]
fn an_unknown_tool_is_refused_without_waiting_for_the_plugins() {
    let dir = tempdir();
    let mut s = Server::builder()
        .args([
            "--no-watch",
            "--plugin",
            &plugin_arg("textkit-js"),
            "--cache-dir",
            &path_str(&dir.path().join("cache")),
        ])
        .start();
    s.initialize(LATEST_VERSION);
    let resp = s.call_tool_response("nothing_here", json!({}));
    let error = s.expect_error(&resp);
    assert!(
        error["message"].as_str().unwrap().contains("unknown tool"),
        "{error}"
    );
    assert!(
        !s.stderr().contains(READY),
        "answered while the plugin still compiled:\n{}",
        s.stderr()
    );
}

/// Proves: a call that waited its plugin's whole `timeout_ms` for a compile that is not done
/// says the plugin is still loading (a tool error the model can act on), not "unknown tool".
#[test]
fn a_call_that_outwaits_its_timeout_says_the_plugin_is_still_loading() {
    let dir = tempdir();
    let config = config_file(
        dir.path(),
        &format!(
            "[plugins.textkit-js]\npath = {}\n\n[plugins.textkit-js.limits]\ntimeout_ms = 200\n",
            toml_str(&plugin_arg("textkit-js"))
        ),
    );
    let mut s = Server::builder()
        .args([
            "--no-watch",
            "--config",
            &path_str(&config),
            "--cache-dir",
            &path_str(&dir.path().join("cache")),
        ])
        .start();
    s.initialize(LATEST_VERSION);
    let result = s.call_tool("textkit-js_greet", json!({"name": "early"}));
    let text = error_text(&result, "still loading");
    assert!(
        text.contains("plugin `textkit-js` is still loading"),
        "{text}"
    );
    assert!(text.contains("retry"), "{text}");
}

/// Proves: a plugin that cannot load is reported and left out while the others serve; once its
/// file is fixed, the watcher loads it and clients are told.
#[test]
fn a_plugin_that_fails_at_start_is_left_out_and_loaded_once_fixed() {
    let dir = tempdir();
    let broken = dir.path().join("later.wasm");
    write_file(&broken, b"\0asm\x01\0\0\0garbage");
    let mut s = assert_plugin_refused(
        &[
            "--plugin",
            &plugin_arg("hello"),
            "--plugin",
            &path_str(&broken),
        ],
        "later.wasm",
    );
    assert!(s.stderr().contains("not loaded"), "{}", s.stderr());
    let greeted = s.call_tool("hello_greet", json!({"name": "still"}));
    assert_eq!(ok_text(&greeted), "Hello, still!");

    // Replaced, as a compiler does.
    let staged = dir.path().join("later.wasm.new");
    std::fs::copy(plugin_path("hello"), &staged).unwrap();
    std::fs::rename(&staged, &broken).unwrap();
    s.wait_notification("notifications/tools/list_changed", secs(60));
    let greeted = s.call_tool("later_greet", json!({"name": "fixed"}));
    assert_eq!(ok_text(&greeted), "Hello, fixed!");
}
