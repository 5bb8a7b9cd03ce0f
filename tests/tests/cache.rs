//! The compiled-component cache: the first start compiles, later starts with
//! the same cache directory load from it, each component gets its own entry.

use palisade_tests::*;
use serde_json::json;
use std::path::Path;

const COMPILING: &str = "compiling component";
const LOADED: &str = "loaded compiled component from cache";

/// Starts `palisade serve <args>`, uses every plugin once, shuts it down
/// cleanly and returns its stderr.
fn run_session(args: &[&str], cwd: Option<&Path>) -> String {
    let mut b = Server::builder().args(args);
    if let Some(cwd) = cwd {
        b = b.cwd(cwd);
    }
    if !args.contains(&"--cache-dir") {
        b = b.no_default_cache_dir();
    }
    let mut s = b.start();
    s.initialize(LATEST_VERSION);
    // Compiling happens in the background: a list waits for it only a moment.
    s.wait_ready();
    let (tools, _) = s.list_all_tools();
    let names = tool_names(&tools);
    if names.iter().any(|n| n == "hello_greet") {
        let r = s.call_tool("hello_greet", json!({"name": "cache"}));
        assert_eq!(ok_text(&r), "Hello, cache!");
    }
    if names.iter().any(|n| n == "files_list_roots") {
        let r = s.call_tool("files_list_roots", json!({}));
        assert!(!is_tool_error(&r), "{r}");
    }
    let status = s.close_stdin_and_wait(secs(60));
    assert_eq!(status.code(), Some(0), "{status}");
    s.stderr()
}

fn dir_is_non_empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some())
}

#[test]
fn second_start_loads_from_the_cache() {
    let dir = tempdir();
    let cache = dir.path().join("cache");
    let hello = plugin_arg("hello");
    let args = ["--plugin", hello.as_str(), "--cache-dir", &path_str(&cache)];

    let first = run_session(&args, None);
    assert!(
        first.contains(COMPILING),
        "an empty cache means compiling:\n{first}"
    );
    assert!(
        !first.contains(LOADED),
        "nothing can come from an empty cache:\n{first}"
    );
    assert!(
        dir_is_non_empty(&cache),
        "the compiled component must be stored in {}",
        cache.display()
    );

    let second = run_session(&args, None);
    assert!(
        second.contains(LOADED),
        "the second start must use the cache:\n{second}"
    );
    assert!(
        !second.contains(COMPILING),
        "the second start must not compile again:\n{second}"
    );
}

#[test]
fn each_component_has_its_own_cache_entry() {
    let dir = tempdir();
    let cache = path_str(&dir.path().join("cache"));
    let root = dir.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    let hello = plugin_arg("hello");
    let files = plugin_arg("files");

    let first = run_session(&["--plugin", &hello, "--cache-dir", &cache], None);
    assert!(first.contains(COMPILING), "{first}");

    // hello comes from the cache, files is new and must be compiled; both must work
    // (a wrong cache hit would give files the code of hello).
    let second = run_session(
        &[
            "--plugin",
            &hello,
            "--plugin",
            &files,
            "--root",
            &path_str(&root),
            "--cache-dir",
            &cache,
        ],
        None,
    );
    assert_eq!(
        second.matches(LOADED).count(),
        1,
        "hello from the cache:\n{second}"
    );
    assert_eq!(
        second.matches(COMPILING).count(),
        1,
        "files compiled:\n{second}"
    );
}

#[test]
fn cache_dir_from_the_config_file() {
    let dir = tempdir();
    let conf_dir = dir.path().join("conf");
    let config = config_file(
        &conf_dir,
        &format!(
            "[server]\ncache_dir = \"compiled\"\n\n[plugins.hello]\npath = {}\n",
            toml_str(&plugin_arg("hello"))
        ),
    );
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let args = ["--config", &path_str(&config)];

    let first = run_session(&args, Some(&elsewhere));
    assert!(first.contains(COMPILING), "{first}");
    assert!(
        dir_is_non_empty(&conf_dir.join("compiled")),
        "cache_dir is relative to the config file's directory"
    );
    assert!(
        !elsewhere.join("compiled").exists(),
        "not to the working directory"
    );

    let second = run_session(&args, Some(&elsewhere));
    assert!(
        second.contains(LOADED) && !second.contains(COMPILING),
        "{second}"
    );
}
