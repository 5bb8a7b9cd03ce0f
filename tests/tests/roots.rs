//! The client's roots: the server asks `roots/list` of a client that declares the `roots`
//! capability, opens the `file://` directories it answers at the same paths for plugins granted
//! roots (or at `/roots/<basename>` with `--roots-at /roots`), asks again on `notifications/roots/list_changed`, and falls back to `--root`
//! for clients that give none.

use palisade_tests::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use tempfile::TempDir;

fn roots_capability() -> Value {
    json!({"roots": {"listChanged": true}})
}

/// `file://` URI of an absolute path (test paths need no escaping).
fn file_uri(path: &Path) -> String {
    format!("file://{}", path_str(path))
}

/// Where plugins see `rel` inside the root `dir`: at the path the client named.
fn inside(dir: &Path, rel: &str) -> String {
    format!("{}/{rel}", path_str(dir))
}

/// `<tmp>/<name>` holding `a.txt` with `text`.
fn dir_with_file(tmp: &TempDir, name: &str, text: &str) -> PathBuf {
    let dir = tmp.path().join(name);
    write_file(dir.join("a.txt"), text);
    dir
}

/// A server with the files plugin (read-only roots, as `--plugin` gives), `extra` arguments, and a
/// client that declares roots.
fn files_server_with_client_roots(extra: &[&str]) -> Server {
    let mut s = Server::builder()
        .args(["--plugin", &plugin_arg("files")])
        .args(extra)
        .start();
    s.initialize_with_capabilities(LATEST_VERSION, roots_capability());
    s
}

/// Waits for the server's `roots/list` and answers it with `roots`; returns the request.
fn answer_roots(s: &mut Server, roots: Value) -> Value {
    let req = s.wait_server_request("roots/list", default_timeout());
    s.respond(&req["id"], json!({ "roots": roots }));
    req
}

/// The guest paths `files_list_roots` reports, in order.
fn listed_roots(s: &mut Server, tool: &str) -> Vec<String> {
    let r = s.call_tool(tool, json!({}));
    ok_text(&r);
    r["structuredContent"]["roots"]
        .as_array()
        .unwrap_or_else(|| panic!("no structuredContent.roots array: {r}"))
        .iter()
        .map(|root| root["guest_path"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Proves: after `notifications/initialized` a client declaring `roots` is asked `roots/list` (a
/// request with a string id); the directory it answers is readable at its own path and
/// replaces the `--root` directories; nothing outside it is (an absolute path, `..` out of the
/// root).
#[test]
fn client_roots_are_readable_and_nothing_outside_them() {
    let tmp = tempdir();
    let project = dir_with_file(&tmp, "project", "from the client\n");
    let server_side = dir_with_file(&tmp, "server-side", "from --root\n");
    let mut s = files_server_with_client_roots(&["--root", &path_str(&server_side)]);
    let req = answer_roots(
        &mut s,
        json!([{"uri": file_uri(&project), "name": "The project"}]),
    );
    assert!(req["id"].is_string(), "roots/list id: {req}");

    let r = s.call_tool(
        "files_read_file",
        json!({"path": inside(&project, "a.txt")}),
    );
    assert!(ok_text(&r).contains("from the client"), "{r}");

    let r = s.call_tool("files_list_roots", json!({}));
    let text = ok_text(&r);
    assert!(
        text.contains(&path_str(&project)) && text.contains("The project"),
        "{text}"
    );
    assert_eq!(
        listed_roots(&mut s, "files_list_roots"),
        [path_str(&project)]
    );
    let r = s.call_tool(
        "files_read_file",
        json!({"path": inside(&server_side, "a.txt")}),
    );
    assert!(is_tool_error(&r), "the client's roots replace --root: {r}");

    for outside in [
        "/etc/passwd".to_string(),
        "/roots/project/a.txt".to_string(),
        inside(&project, "../../etc/passwd"),
        inside(&project, "../server-side/a.txt"),
    ] {
        let r = s.call_tool("files_read_file", json!({"path": outside}));
        assert!(is_tool_error(&r), "{outside} must not be readable: {r}");
        assert!(
            !tool_text(&r).contains("root:") && !tool_text(&r).contains("from --root"),
            "{outside}: {r}"
        );
    }
}

/// Proves: a call sent before the client answered its first `roots/list` waits for the answer
/// and sees the client's roots.
#[test]
fn a_first_call_waits_for_the_client_roots() {
    let tmp = tempdir();
    let project = dir_with_file(&tmp, "project", "early bird\n");
    let mut s = files_server_with_client_roots(&[]);
    let call = s.send_request(
        "tools/call",
        json!({"name": "files_read_file", "arguments": {"path": inside(&project, "a.txt")}}),
    );
    answer_roots(&mut s, json!([{"uri": file_uri(&project)}]));
    let resp = s.wait_response(&call, default_timeout());
    let r = s.expect_result(resp);
    assert!(ok_text(&r).contains("early bird"), "{r}");
}

/// Calls `files_list_roots` until it reports exactly `expected` (bounded by the default timeout).
fn wait_for_listed_roots(s: &mut Server, expected: &[&str]) {
    let deadline = std::time::Instant::now() + default_timeout();
    loop {
        let seen = listed_roots(s, "files_list_roots");
        if seen == expected {
            return;
        }
        if std::time::Instant::now() >= deadline {
            s.fail(format!(
                "files_list_roots still reports {seen:?}, expected {expected:?}"
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Proves: on `notifications/roots/list_changed` the server asks `roots/list` again, and the next
/// call sees the new root and no longer the old one.
#[test]
fn roots_list_changed_replaces_the_roots() {
    let tmp = tempdir();
    let first = dir_with_file(&tmp, "first", "one\n");
    let second = dir_with_file(&tmp, "second", "two\n");
    let mut s = files_server_with_client_roots(&[]);
    answer_roots(&mut s, json!([{"uri": file_uri(&first)}]));
    let r = s.call_tool("files_read_file", json!({"path": inside(&first, "a.txt")}));
    assert!(ok_text(&r).contains("one"), "{r}");

    s.notify("notifications/roots/list_changed", Value::Null);
    answer_roots(&mut s, json!([{"uri": file_uri(&second)}]));
    // Whether the very next call sees them is `a_call_sent_after_the_roots_answer_sees_them`.
    wait_for_listed_roots(&mut s, &[&path_str(&second)]);
    let r = s.call_tool("files_read_file", json!({"path": inside(&second, "a.txt")}));
    assert!(ok_text(&r).contains("two"), "{r}");
    let r = s.call_tool("files_read_file", json!({"path": inside(&first, "a.txt")}));
    assert!(is_tool_error(&r), "the old root must be gone: {r}");
    assert_eq!(
        listed_roots(&mut s, "files_list_roots"),
        [path_str(&second)]
    );
}

/// Proves: roots that are not `file://` URIs, do not exist, or are files are skipped with a log
/// line naming them, while the good ones are kept; with `--roots-at /roots`, two roots with the
/// same directory name get `/roots/<name>` and `/roots/<name>-2` in the client's order, and an
/// unnamed root is named after its directory.
#[test]
fn unusable_roots_are_skipped_and_good_ones_kept() {
    let tmp = tempdir();
    let a = dir_with_file(&tmp, "a/project", "in a\n");
    let b = dir_with_file(&tmp, "b/project", "in b\n");
    let file = a.join("a.txt");
    let missing = tmp.path().join("does-not-exist");
    let mut s = files_server_with_client_roots(&["--roots-at", "/roots"]);
    let bad = [
        "https://example.com/repo".to_string(),
        file_uri(&missing),
        file_uri(&file),
    ];
    answer_roots(
        &mut s,
        json!([
            {"uri": bad[0], "name": "web"},
            {"uri": file_uri(&a), "name": "first"},
            {"uri": bad[1]},
            {"uri": file_uri(&b)},
            {"uri": bad[2]},
        ]),
    );
    assert_eq!(
        listed_roots(&mut s, "files_list_roots"),
        ["/roots/project", "/roots/project-2"]
    );
    let r = s.call_tool("files_list_roots", json!({}));
    let roots = r["structuredContent"]["roots"].as_array().unwrap().clone();
    assert_eq!(roots[0]["name"], "first", "{r}");
    assert_eq!(
        roots[1]["name"], "project",
        "an unnamed root takes its directory's name: {r}"
    );
    let r = s.call_tool("files_read_file", json!({"path": "/roots/project/a.txt"}));
    assert!(ok_text(&r).contains("in a"), "{r}");
    let r = s.call_tool("files_read_file", json!({"path": "/roots/project-2/a.txt"}));
    assert!(ok_text(&r).contains("in b"), "{r}");
    let r = s.call_tool("files_read_file", json!({"path": inside(&a, "a.txt")}));
    assert!(is_tool_error(&r), "under /roots, not at the host path: {r}");
    for uri in &bad {
        assert!(
            s.wait_for_stderr(uri, default_timeout()),
            "stderr should say why {uri} was skipped:\n{}",
            s.stderr()
        );
    }
}

/// Proves: a client that does not declare `roots` is never asked `roots/list` (not even after
/// `notifications/roots/list_changed`), and the `--root` directories apply to its calls.
#[test]
fn without_the_roots_capability_the_root_flag_applies() {
    let tmp = tempdir();
    let project = dir_with_file(&tmp, "project", "server root\n");
    let mut s = Server::start(&[
        "--plugin",
        &plugin_arg("files"),
        "--root",
        &path_str(&project),
    ]);
    s.initialize(LATEST_VERSION);
    let r = s.call_tool(
        "files_read_file",
        json!({"path": inside(&project, "a.txt")}),
    );
    assert!(ok_text(&r).contains("server root"), "{r}");
    s.notify("notifications/roots/list_changed", Value::Null);
    s.expect_no_server_request("roots/list", secs(2));
    let r = s.call_tool(
        "files_read_file",
        json!({"path": inside(&project, "a.txt")}),
    );
    assert!(ok_text(&r).contains("server root"), "{r}");
}

/// Proves: `roots` in the initialize capabilities must be an object to count; `"roots": true` is
/// not the capability, so no `roots/list` is sent and `--root` applies.
#[test]
fn a_roots_capability_that_is_not_an_object_is_ignored() {
    let tmp = tempdir();
    let project = dir_with_file(&tmp, "project", "server root\n");
    let mut s = Server::start(&[
        "--plugin",
        &plugin_arg("files"),
        "--root",
        &path_str(&project),
    ]);
    // Sent raw: the harness's schema check is on what the server sends, not on this.
    s.send_raw(&format!(
        r#"{{"jsonrpc":"2.0","id":"init","method":"initialize","params":{{"protocolVersion":"{LATEST_VERSION}","capabilities":{{"roots":true}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    ));
    let resp = s.wait_response(&json!("init"), startup_timeout());
    s.expect_result(resp);
    s.notify("notifications/initialized", Value::Null);
    let r = s.call_tool(
        "files_read_file",
        json!({"path": inside(&project, "a.txt")}),
    );
    assert!(ok_text(&r).contains("server root"), "{r}");
    s.expect_no_server_request("roots/list", secs(2));
}

/// Proves: a plugin whose grant is `roots = "none"` sees none of the client's roots (its
/// `list_roots` is empty, reads fail) while a plugin granted read-only roots, in the same server,
/// reads them.
#[test]
fn a_plugin_without_a_roots_grant_sees_no_client_roots() {
    let tmp = tempdir();
    let project = dir_with_file(&tmp, "project", "secret\n");
    let config = config_file(
        tmp.path(),
        &format!(
            "[plugins.blind]\npath = {files}\nroots = \"none\"\n\n\
             [plugins.seeing]\npath = {files}\nroots = \"read-only\"\n",
            files = toml_str(&plugin_arg("files"))
        ),
    );
    let mut s = Server::start(&["--config", &path_str(&config)]);
    s.initialize_with_capabilities(LATEST_VERSION, roots_capability());
    answer_roots(&mut s, json!([{"uri": file_uri(&project)}]));

    let r = s.call_tool(
        "seeing_read_file",
        json!({"path": inside(&project, "a.txt")}),
    );
    assert!(ok_text(&r).contains("secret"), "{r}");

    assert!(listed_roots(&mut s, "blind_list_roots").is_empty());
    let r = s.call_tool(
        "blind_read_file",
        json!({"path": inside(&project, "a.txt")}),
    );
    assert!(is_tool_error(&r), "{r}");
    assert!(!tool_text(&r).contains("secret"), "{r}");
    let r = s.call_tool("blind_list_dir", json!({"path": path_str(&project)}));
    assert!(
        is_tool_error(&r) || !tool_text(&r).contains("project"),
        "{r}"
    );
}

/// Proves: when the client answers a later `roots/list` with an error, the roots it gave before
/// stay in force.
#[test]
fn an_error_answer_keeps_the_previous_roots() {
    let tmp = tempdir();
    let project = dir_with_file(&tmp, "project", "kept\n");
    let mut s = files_server_with_client_roots(&[]);
    answer_roots(&mut s, json!([{"uri": file_uri(&project)}]));
    let r = s.call_tool(
        "files_read_file",
        json!({"path": inside(&project, "a.txt")}),
    );
    assert!(ok_text(&r).contains("kept"), "{r}");

    s.notify("notifications/roots/list_changed", Value::Null);
    let req = s.wait_server_request("roots/list", default_timeout());
    s.respond_error(&req["id"], -32603, "roots are unavailable right now");
    assert!(
        s.wait_for_stderr("roots are unavailable right now", default_timeout()),
        "the failed roots/list should be logged:\n{}",
        s.stderr()
    );
    let r = s.call_tool(
        "files_read_file",
        json!({"path": inside(&project, "a.txt")}),
    );
    assert!(ok_text(&r).contains("kept"), "{r}");
}

/// Proves: when the client answers its first `roots/list` with an error, it has given no roots,
/// so the `--root` directories apply.
#[test]
fn a_first_error_answer_leaves_the_root_flag_in_force() {
    let tmp = tempdir();
    let project = dir_with_file(&tmp, "project", "server root\n");
    let mut s = files_server_with_client_roots(&["--root", &path_str(&project)]);
    let req = s.wait_server_request("roots/list", default_timeout());
    s.respond_error(&req["id"], -32601, "Method not found");
    let r = s.call_tool(
        "files_read_file",
        json!({"path": inside(&project, "a.txt")}),
    );
    assert!(ok_text(&r).contains("server root"), "{r}");
}

/// Proves: a client that declares `roots` but never answers `roots/list` does not block calls:
/// they go on (after a bounded wait) with the `--root` directories.
#[test]
fn a_client_that_never_answers_roots_does_not_block_calls() {
    let tmp = tempdir();
    let project = dir_with_file(&tmp, "project", "server root\n");
    let mut s = files_server_with_client_roots(&["--root", &path_str(&project)]);
    s.wait_server_request("roots/list", default_timeout());
    let r = s.call_tool(
        "files_read_file",
        json!({"path": inside(&project, "a.txt")}),
    );
    assert!(ok_text(&r).contains("server root"), "{r}");
}

/// `<tmp>/d0`, `<tmp>/d1`... each holding `a.txt` with `n<i>`.
fn numbered_dirs(tmp: &TempDir, n: usize) -> Vec<PathBuf> {
    (0..n)
        .map(|i| dir_with_file(tmp, &format!("d{i}"), &format!("n{i}\n")))
        .collect()
}

/// Proves: a call the client sends after it answered `roots/list` sees the roots of that answer
/// ("a changed root applies to the next call"). Twenty rounds of list_changed, answer, call.
#[test]
fn a_call_sent_after_the_roots_answer_sees_them() {
    let tmp = tempdir();
    let dirs = numbered_dirs(&tmp, 21);
    let mut s = files_server_with_client_roots(&[]);
    answer_roots(&mut s, json!([{"uri": file_uri(&dirs[0])}]));
    let mut stale = Vec::new();
    for (i, dir) in dirs.iter().enumerate().skip(1) {
        s.notify("notifications/roots/list_changed", Value::Null);
        answer_roots(&mut s, json!([{"uri": file_uri(dir)}]));
        let path = inside(dir, "a.txt");
        let r = s.call_tool("files_read_file", json!({"path": path}));
        if is_tool_error(&r) {
            stale.push(format!("round {i}: {}", tool_text(&r)));
        }
    }
    assert!(
        stale.is_empty(),
        "calls sent after the client's roots/list answer ran with the previous roots:\n{}",
        stale.join("\n")
    );
}

/// Proves: when two `roots/list` requests are outstanding and the client answers them one after
/// the other, its last answer is the one in force. Thirty rounds.
#[test]
fn the_last_roots_answer_wins() {
    let tmp = tempdir();
    let dirs = numbered_dirs(&tmp, 61);
    let mut s = files_server_with_client_roots(&[]);
    answer_roots(&mut s, json!([{"uri": file_uri(&dirs[0])}]));
    let mut lost = Vec::new();
    for i in (2..dirs.len()).step_by(2) {
        s.notify("notifications/roots/list_changed", Value::Null);
        s.notify("notifications/roots/list_changed", Value::Null);
        let first = s.wait_server_request("roots/list", default_timeout());
        let second = s.wait_server_request("roots/list", default_timeout());
        s.respond(
            &first["id"],
            json!({"roots": [{"uri": file_uri(&dirs[i - 1])}]}),
        );
        s.respond(
            &second["id"],
            json!({"roots": [{"uri": file_uri(&dirs[i])}]}),
        );
        // Both answers have been taken in (each logs its roots) before looking.
        for dir in [&dirs[i - 1], &dirs[i]] {
            let logged = format!("uri=\"{}\"", file_uri(dir));
            assert!(
                s.wait_for_stderr(&logged, default_timeout()),
                "no log line for {logged}"
            );
        }
        s.result("ping", Value::Null);
        let seen = listed_roots(&mut s, "files_list_roots");
        if seen != [path_str(&dirs[i])] {
            lost.push(format!(
                "round {i}: answered {} then {}, in force: {seen:?}",
                first["id"], second["id"]
            ));
        }
    }
    assert!(
        lost.is_empty(),
        "the client's last roots/list answer was not the one in force:\n{}",
        lost.join("\n")
    );
}

/// Proves: roots are seen at the paths the client named, as a person would type them: a
/// directory with a space (percent-encoded in the URI), a root nested in another (each path
/// reaches its own root's files), and a symbolic link (seen at the link's path, not its
/// target's). A plugin whose `dirs` grant sits at a root's very path keeps its grant there.
#[test]
fn roots_are_seen_at_the_paths_the_client_named() {
    let tmp = tempdir();
    let notes = dir_with_file(&tmp, "my notes", "outer\n");
    let nested = dir_with_file(&tmp, "my notes/inner", "inner\n");
    let elsewhere = dir_with_file(&tmp, "elsewhere", "behind the link\n");
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    let granted = dir_with_file(&tmp, "granted", "from the grant\n");
    let config = config_file(
        tmp.path(),
        &format!(
            "[plugins.files]\npath = {files}\nroots = \"read-only\"\n\n\
             [plugins.shadow]\npath = {files}\nroots = \"read-only\"\n\
             [[plugins.shadow.dirs]]\nhost = {granted}\nguest = {guest}\n",
            files = toml_str(&plugin_arg("files")),
            granted = toml_str(&path_str(&granted)),
            guest = toml_str(&path_str(&notes)),
        ),
    );
    let mut s = Server::start(&["--config", &path_str(&config)]);
    s.initialize_with_capabilities(LATEST_VERSION, roots_capability());
    let encoded = file_uri(&notes).replace(' ', "%20");
    answer_roots(
        &mut s,
        json!([
            {"uri": encoded},
            {"uri": file_uri(&nested)},
            {"uri": file_uri(&link)},
        ]),
    );
    assert_eq!(
        listed_roots(&mut s, "files_list_roots"),
        [path_str(&notes), path_str(&nested), path_str(&link)]
    );
    for (path, text) in [
        (inside(&notes, "a.txt"), "outer"),
        (inside(&nested, "a.txt"), "inner"),
        (inside(&link, "a.txt"), "behind the link"),
    ] {
        let r = s.call_tool("files_read_file", json!({"path": path}));
        assert!(ok_text(&r).contains(text), "{path}: {r}");
    }
    let r = s.call_tool(
        "files_read_file",
        json!({"path": inside(&elsewhere, "a.txt")}),
    );
    assert!(is_tool_error(&r), "the link's target is not a root: {r}");

    let r = s.call_tool("shadow_read_file", json!({"path": inside(&notes, "a.txt")}));
    assert!(ok_text(&r).contains("from the grant"), "{r}");
    assert!(
        s.wait_for_stderr("one of its `dirs` is at", default_timeout()),
        "the hidden root should be logged:\n{}",
        s.stderr()
    );
    let r = s.call_tool(
        "shadow_read_file",
        json!({"path": inside(&nested, "a.txt")}),
    );
    assert!(
        ok_text(&r).contains("inner"),
        "the nested root is its own: {r}"
    );
}
