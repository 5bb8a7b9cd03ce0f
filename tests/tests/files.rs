//! The files plugin and client roots: reading, listing and searching inside
//! `--root` directories (seen at their own paths, or at `/roots/<basename>` with
//! `--roots-at /roots`), and nothing outside them.

use palisade_tests::*;
use serde_json::json;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// `<tmp>/project` with a.txt, sub/b.txt and c.txt.
fn project() -> (TempDir, PathBuf) {
    let dir = tempdir();
    let root = dir.path().join("project");
    write_file(root.join("a.txt"), "alpha\nbeta\n");
    write_file(root.join("sub/b.txt"), "gamma\n");
    write_file(root.join("c.txt"), "hit one\nmiss\nhit two\nhit three\n");
    (dir, root)
}

/// Where plugins see `rel` inside `root`: at the same path as on the host.
fn at(root: &Path, rel: &str) -> String {
    match rel {
        "" => path_str(root),
        _ => format!("{}/{rel}", path_str(root)),
    }
}

fn files_server(root: &Path) -> Server {
    let mut s = Server::start(&["--plugin", &plugin_arg("files"), "--root", &path_str(root)]);
    s.initialize(LATEST_VERSION);
    s
}

#[test]
fn read_a_file_in_a_root() {
    let (_dir, root) = project();
    let mut s = files_server(&root);
    let r = s.call_tool("files_read_file", json!({"path": at(&root, "a.txt")}));
    assert!(ok_text(&r).contains("alpha\nbeta"), "{r}");
    let r = s.call_tool("files_read_file", json!({"path": at(&root, "sub/b.txt")}));
    assert!(ok_text(&r).contains("gamma"), "{r}");
}

#[test]
fn list_roots_and_directories() {
    let (_dir, root) = project();
    let mut s = files_server(&root);
    let r = s.call_tool("files_list_roots", json!({}));
    assert!(ok_text(&r).contains(&at(&root, "")), "{r}");

    let r = s.call_tool("files_list_dir", json!({"path": at(&root, "")}));
    let text = ok_text(&r);
    for entry in ["a.txt", "c.txt", "sub"] {
        assert!(
            text.contains(entry),
            "{entry} missing from the listing: {text}"
        );
    }
    assert!(!text.contains("b.txt"), "list_dir is not recursive: {text}");

    let r = s.call_tool("files_list_dir", json!({"path": at(&root, "sub")}));
    let text = ok_text(&r);
    assert!(text.contains("b.txt") && !text.contains("a.txt"), "{text}");
}

#[test]
fn search_finds_file_and_line() {
    let (_dir, root) = project();
    let mut s = files_server(&root);
    let r = s.call_tool(
        "files_search",
        json!({"path": at(&root, ""), "pattern": "beta"}),
    );
    let text = ok_text(&r);
    assert!(text.contains("a.txt:2"), "{text}");
    assert!(
        !text.contains("b.txt") && !text.contains("c.txt"),
        "only a.txt has beta: {text}"
    );

    let r = s.call_tool(
        "files_search",
        json!({"path": at(&root, ""), "pattern": "gamma"}),
    );
    assert!(
        ok_text(&r).contains("b.txt:1"),
        "search descends into sub/: {r}"
    );

    let r = s.call_tool(
        "files_search",
        json!({"path": at(&root, ""), "pattern": "hit"}),
    );
    let text = ok_text(&r);
    for line in ["c.txt:1", "c.txt:3", "c.txt:4"] {
        assert!(text.contains(line), "{line} missing: {text}");
    }
    assert!(!text.contains("c.txt:2"), "line 2 does not match: {text}");

    let r = s.call_tool(
        "files_search",
        json!({"path": at(&root, ""), "pattern": "hit", "max_results": 2}),
    );
    let text = ok_text(&r);
    assert_eq!(text.matches("c.txt:").count(), 2, "max_results 2: {text}");

    let r = s.call_tool(
        "files_search",
        json!({"path": at(&root, ""), "pattern": "no such words"}),
    );
    let text = ok_text(&r);
    assert!(!text.contains(".txt:"), "{text}");
}

#[test]
fn nothing_outside_the_roots_is_readable() {
    let (dir, root) = project();
    write_file(dir.path().join("secret.txt"), "top secret\n");
    std::os::unix::fs::symlink("/etc/passwd", root.join("passwd-link")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret.txt"), root.join("secret-link")).unwrap();
    let mut s = files_server(&root);

    for path in [
        "/etc/passwd",
        &at(&root, "../../etc/passwd"),
        &at(&root, "../secret.txt"),
        "../secret.txt",
        "/roots/project/a.txt",
        &at(&root, "passwd-link"),
        &at(&root, "secret-link"),
        &path_str(&dir.path().join("secret.txt")),
    ] {
        let r = s.call_tool("files_read_file", json!({"path": path}));
        assert!(
            is_tool_error(&r),
            "reading {path} must be a tool error: {r}"
        );
        let text = tool_text(&r);
        assert!(
            !text.contains("root:") && !text.contains("top secret"),
            "{path} leaked: {text}"
        );
    }
    for path in ["/", "/etc", &at(&root, "..")] {
        let r = s.call_tool("files_list_dir", json!({"path": path}));
        let text = tool_text(&r);
        assert!(
            is_tool_error(&r) || !(text.contains("passwd") || text.contains("secret.txt")),
            "listing {path} shows the host: {r}"
        );
    }
    let r = s.call_tool(
        "files_search",
        json!({"path": at(&root, ""), "pattern": "top secret"}),
    );
    // (The "no match" message repeats the pattern: look for a match line instead.)
    assert!(
        !tool_text(&r).contains("secret-link:"),
        "search followed a link out of the root: {r}"
    );

    // Still fine inside.
    let r = s.call_tool("files_read_file", json!({"path": at(&root, "a.txt")}));
    assert!(ok_text(&r).contains("alpha"), "{r}");
}

#[test]
fn missing_files_are_tool_errors() {
    let (_dir, root) = project();
    let mut s = files_server(&root);
    let r = s.call_tool("files_read_file", json!({"path": at(&root, "nope.txt")}));
    assert!(is_tool_error(&r), "{r}");
    let r = s.call_tool("files_list_dir", json!({"path": at(&root, "nope")}));
    assert!(is_tool_error(&r), "{r}");
}

#[test]
fn without_roots_access_the_root_is_invisible() {
    let (dir, root) = project();
    // The same plugin twice: once with read access to the roots, once without.
    let config = config_file(
        dir.path(),
        &format!(
            "[plugins.files]\npath = {p}\nroots = \"read-only\"\n\n[plugins.blind]\npath = {p}\nroots = \"none\"\n",
            p = toml_str(&plugin_arg("files")),
        ),
    );
    let mut s = Server::start(&["--config", &path_str(&config), "--root", &path_str(&root)]);
    s.initialize(LATEST_VERSION);

    let r = s.call_tool("files_read_file", json!({"path": at(&root, "a.txt")}));
    assert!(ok_text(&r).contains("alpha"), "with roots = read-only: {r}");

    let r = s.call_tool("blind_read_file", json!({"path": at(&root, "a.txt")}));
    assert!(
        is_tool_error(&r),
        "with roots = none the root must not be readable: {r}"
    );
    assert!(!tool_text(&r).contains("alpha"), "{r}");
    let r = s.call_tool("blind_list_roots", json!({}));
    assert!(
        !tool_text(&r).contains(&at(&root, "")),
        "with roots = none no root is listed: {r}"
    );
    let r = s.call_tool(
        "blind_search",
        json!({"path": at(&root, ""), "pattern": "beta"}),
    );
    assert!(!tool_text(&r).contains("a.txt:2"), "{r}");
}

#[test]
fn roots_at_slash_roots_shows_roots_under_roots_only() {
    let (dir, root) = project();
    write_file(dir.path().join("secret.txt"), "top secret\n");
    let mut s = Server::start(&[
        "--plugin",
        &plugin_arg("files"),
        "--root",
        &path_str(&root),
        "--roots-at",
        "/roots",
    ]);
    s.initialize(LATEST_VERSION);
    let r = s.call_tool("files_read_file", json!({"path": "/roots/project/a.txt"}));
    assert!(ok_text(&r).contains("alpha"), "{r}");
    let r = s.call_tool("files_list_roots", json!({}));
    let text = ok_text(&r);
    assert!(text.starts_with("/roots/project <- file://"), "{text}");
    for path in [
        at(&root, "a.txt"),
        "/roots/project/../secret.txt".to_string(),
        "/roots/../etc/passwd".to_string(),
    ] {
        let r = s.call_tool("files_read_file", json!({"path": path}));
        assert!(is_tool_error(&r), "{path} must be a tool error: {r}");
        assert!(!tool_text(&r).contains("top secret"), "{path} leaked: {r}");
    }
}
