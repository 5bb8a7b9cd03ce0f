//! Live reload: while the server runs it watches its configuration and every plugin's component;
//! a changed plugin is loaded again and clients get `notifications/tools/list_changed`, a version
//! that fails to load (or a broken configuration) leaves the previous one serving, and
//! `--no-watch` / `[server] watch = false` stop the watching (a plugin that says its lists changed
//! is still listed again).

use palisade_tests::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

const LIST_CHANGED: &str = "notifications/tools/list_changed";

/// Replaces `dest` with a copy of the plugin `name` the way a build does: written under another
/// name in the same directory, then renamed over it.
fn replace_with_plugin(dest: &Path, name: &str) {
    let tmp = dest.with_extension("wasm.partial");
    std::fs::copy(plugin_path(name), &tmp).unwrap();
    std::fs::rename(&tmp, dest).unwrap();
}

/// `<dir>/plugin.wasm`, a copy of hello, served as `[plugins.hello]` from `<dir>/palisade.toml`.
/// Returns (config, plugin file).
fn hello_config(dir: &Path) -> (PathBuf, PathBuf) {
    let wasm = copy_plugin("hello", dir.join("plugin.wasm"));
    let config = config_file(dir, "[plugins.hello]\npath = \"plugin.wasm\"\n");
    (config, wasm)
}

fn start(config: &Path, extra: &[&str]) -> Server {
    let mut s = Server::builder()
        .args(["--config", &path_str(config)])
        .args(extra)
        .start();
    s.initialize(LATEST_VERSION);
    s
}

/// Every tool name, sorted.
fn names(s: &mut Server) -> Vec<String> {
    let (tools, _) = s.list_all_tools();
    let mut names = tool_names(&tools);
    names.sort();
    names
}

const HELLO: [&str; 2] = ["hello_echo", "hello_greet"];

fn greet_works(s: &mut Server) {
    let r = s.call_tool("hello_greet", json!({"name": "still here"}));
    assert_eq!(ok_text(&r), "Hello, still here!", "{r}");
}

fn list_changed_count(s: &Server) -> usize {
    s.notifications
        .iter()
        .filter(|n| n["method"] == LIST_CHANGED)
        .count()
}

/// Proves: replacing a plugin's file (write elsewhere, rename over it) while the server runs
/// sends `notifications/tools/list_changed`, after which `tools/list` shows the new component's
/// tools (under the configured name) and they can be called; the old tools are gone.
#[test]
fn replacing_a_plugin_file_reloads_it() {
    let tmp = tempdir();
    let (config, wasm) = hello_config(tmp.path());
    let mut s = start(&config, &[]);
    assert_eq!(names(&mut s), HELLO);
    greet_works(&mut s);

    replace_with_plugin(&wasm, "files");
    s.wait_notification(LIST_CHANGED, default_timeout());
    assert_eq!(
        names(&mut s),
        [
            "hello_list_dir",
            "hello_list_roots",
            "hello_read_file",
            "hello_search"
        ]
    );
    let r = s.call_tool("hello_list_roots", json!({}));
    ok_text(&r);
    let resp = s.call_tool_response("hello_greet", json!({"name": "gone"}));
    assert!(
        resp.get("error").is_some() || is_tool_error(&resp["result"]),
        "the old tool must be gone: {resp}"
    );
}

/// Proves: a plugin file overwritten with bytes that are no component does not bring the server
/// down: stderr says the new version was not loaded, the old tools are still listed and work, no
/// list change is announced; a good version written afterwards is loaded.
#[test]
fn a_broken_new_version_keeps_the_old_one_serving() {
    let tmp = tempdir();
    let (config, wasm) = hello_config(tmp.path());
    let mut s = start(&config, &[]);
    assert_eq!(names(&mut s), HELLO);

    std::fs::write(&wasm, b"\0asm but not really a component, just garbage").unwrap();
    assert!(
        s.wait_for_stderr("new version not loaded", default_timeout()),
        "stderr should say the new version was not loaded:\n{}",
        s.stderr()
    );
    greet_works(&mut s);
    assert_eq!(names(&mut s), HELLO);
    assert_eq!(
        list_changed_count(&s),
        0,
        "nothing changed: {:?}",
        s.notifications
    );

    // Watching goes on: the next good version is loaded.
    replace_with_plugin(&wasm, "files");
    s.wait_notification(LIST_CHANGED, default_timeout());
    assert!(names(&mut s).contains(&"hello_read_file".to_string()));
}

/// Proves: a plugin added to the configuration while the server runs is loaded, announced with
/// `notifications/tools/list_changed`, and callable, while the existing plugin keeps working.
#[test]
fn adding_a_plugin_to_the_config_loads_it() {
    let tmp = tempdir();
    let (config, _) = hello_config(tmp.path());
    copy_plugin("files", tmp.path().join("files.wasm"));
    let mut s = start(&config, &[]);
    assert_eq!(names(&mut s), HELLO);

    write_file(
        &config,
        "[plugins.hello]\npath = \"plugin.wasm\"\n\n[plugins.files]\npath = \"files.wasm\"\n",
    );
    s.wait_notification(LIST_CHANGED, default_timeout());
    let now = names(&mut s);
    for name in HELLO.iter().chain(&["files_read_file", "files_list_roots"]) {
        assert!(now.contains(&name.to_string()), "{name} missing: {now:?}");
    }
    let r = s.call_tool("files_list_roots", json!({}));
    ok_text(&r);
    greet_works(&mut s);
}

/// Proves: a configuration edited into a syntax error is logged and the plugins loaded before keep
/// serving; once the file is fixed again, the change it makes is applied.
#[test]
fn a_config_with_a_syntax_error_keeps_the_previous_plugins() {
    let tmp = tempdir();
    let (config, _) = hello_config(tmp.path());
    copy_plugin("files", tmp.path().join("files.wasm"));
    let mut s = start(&config, &[]);
    assert_eq!(names(&mut s), HELLO);

    write_file(&config, "[plugins.hello\npath = \"plugin.wasm\"\n");
    assert!(
        s.wait_for_stderr("configuration not reloaded", default_timeout()),
        "stderr should say the configuration was not reloaded:\n{}",
        s.stderr()
    );
    assert!(
        s.stderr().contains("palisade.toml"),
        "the error names the file:\n{}",
        s.stderr()
    );
    greet_works(&mut s);
    assert_eq!(names(&mut s), HELLO);
    assert_eq!(list_changed_count(&s), 0, "{:?}", s.notifications);

    write_file(
        &config,
        "[plugins.hello]\npath = \"plugin.wasm\"\n\n[plugins.files]\npath = \"files.wasm\"\n",
    );
    s.wait_notification(LIST_CHANGED, default_timeout());
    assert!(names(&mut s).contains(&"files_read_file".to_string()));
    greet_works(&mut s);
}

/// Proves: with `--no-watch`, or `watch = false` in `[server]`, replacing the plugin file changes
/// nothing: no list change is announced, the old tools are listed and work. A watching server on
/// the same file, which does reload, shows the change had every chance to be seen.
#[test]
fn without_watching_a_replaced_file_changes_nothing() {
    let tmp = tempdir();
    let (config, wasm) = hello_config(tmp.path());
    // A second configuration, `watch = false`, serving the same file.
    let other = tmp.path().join("unwatched");
    let unwatched_config = config_file(
        &other,
        &format!(
            "[server]\nwatch = false\n\n[plugins.hello]\npath = {}\n",
            toml_str(&path_str(&wasm))
        ),
    );
    let mut watching = start(&config, &[]);
    let mut no_watch_flag = start(&config, &["--no-watch"]);
    let mut watch_false = start(&unwatched_config, &[]);
    for s in [&mut watching, &mut no_watch_flag, &mut watch_false] {
        assert_eq!(names(s), HELLO);
    }

    replace_with_plugin(&wasm, "files");
    watching.wait_notification(LIST_CHANGED, default_timeout());
    assert!(names(&mut watching).contains(&"hello_read_file".to_string()));

    for s in [&mut no_watch_flag, &mut watch_false] {
        s.result("ping", Value::Null);
        assert_eq!(names(s), HELLO);
        greet_works(s);
        assert_eq!(list_changed_count(s), 0, "{:?}", s.notifications);
    }
}

/// Proves: a configuration change that would make two plugins serve the same tool name leaves the
/// newcomer out with a log line naming both, and the plugins loaded before keep serving,
/// unchanged.
#[test]
fn a_config_change_that_makes_names_collide_leaves_the_newcomer_out() {
    let tmp = tempdir();
    let (config, _) = hello_config(tmp.path());
    let mut s = start(&config, &[]);
    assert_eq!(names(&mut s), HELLO);

    write_file(
        &config,
        "[plugins.hello]\npath = \"plugin.wasm\"\n\n\
         [plugins.twin]\npath = \"plugin.wasm\"\nprefix = \"hello\"\n",
    );
    assert!(
        s.wait_for_stderr("plugin not served", default_timeout()),
        "stderr should say the newcomer is not served:\n{}",
        s.stderr()
    );
    let log = s.stderr();
    assert!(
        log.contains("hello_greet") && log.contains("`twin`"),
        "{log}"
    );
    greet_works(&mut s);
    assert_eq!(names(&mut s), HELLO);
    assert_eq!(list_changed_count(&s), 0, "{:?}", s.notifications);
}

/// Proves: changing `[auth]` or `[audit]` in a running server's configuration is not applied
/// silently half-way: the server says they take effect only after a restart (a token removed from
/// the file is still accepted until then), and the plugins keep serving.
#[test]
fn auth_and_audit_changes_are_announced_as_restart_only() {
    let dir = tempdir();
    let (config, _wasm) = hello_config(dir.path());
    let mut s = start(&config, &[]);
    let mut changed = std::fs::read_to_string(&config).unwrap();
    changed.push_str(concat!(
        "\n[auth]\nstdio_scope = \"mine\"\n[auth.scopes]\nmine = [\"nothing\"]\n",
        "\n[audit]\npath = \"audit.jsonl\"\n"
    ));
    std::fs::write(&config, changed).unwrap();
    assert!(
        s.wait_for_stderr("[auth] changed in the configuration", secs(20)),
        "{}",
        s.stderr()
    );
    assert!(s.wait_for_stderr("[audit] changed in the configuration", secs(5)));
    greet_works(&mut s);
}

/// Proves: `--no-watch` only stops watching files: a plugin that says its tool list changed is
/// still listed again, and clients hear of it.
#[test]
fn without_watching_a_plugin_that_says_its_list_changed_is_still_heard() {
    let mut s = Server::builder()
        .args(["--no-watch", "--plugin", &plugin_arg("conformance")])
        .start();
    s.initialize(LATEST_VERSION);
    let r = s.call_tool("conformance_test_trigger_tool_change", json!({}));
    assert!(!is_tool_error(&r), "{r}");
    let heard = s.wait_notification_where(LIST_CHANGED, |_| true, secs(30));
    assert!(heard.is_some(), "no {LIST_CHANGED}:\n{}", s.stderr());
}
