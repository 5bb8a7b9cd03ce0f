//! The command line: help texts, `inspect`, plugin naming from `--plugin`,
//! and refusing to start on bad input.

use palisade_tests::*;
use serde_json::json;

fn run(args: &[&str]) -> RunOutput {
    run_palisade(args, false, secs(120))
}

#[test]
fn help_lists_the_subcommands() {
    let out = run(&["--help"]);
    assert!(out.success(), "{out}");
    for word in ["serve", "inspect", "compile"] {
        assert!(
            out.stdout.contains(word),
            "--help must mention {word}:\n{out}"
        );
    }
}

#[test]
fn serve_help_lists_its_options() {
    let out = run(&["serve", "--help"]);
    assert!(out.success(), "{out}");
    for opt in ["--config", "--plugin", "--root", "--cache-dir"] {
        assert!(
            out.stdout.contains(opt),
            "serve --help must mention {opt}:\n{out}"
        );
    }
}

#[test]
fn unknown_subcommand_or_option_fails() {
    let out = run(&["frobnicate"]);
    assert!(!out.success(), "{out}");
    assert!(
        out.stdout.trim().is_empty() || !out.stdout.contains("jsonrpc"),
        "{out}"
    );
    let out = run_palisade(&["serve", "--no-such-option"], true, secs(60));
    assert!(out.status.is_some() && !out.success(), "{out}");
}

#[test]
fn inspect_hello_shows_its_tools() {
    let out = run(&["inspect", &plugin_arg("hello")]);
    assert!(out.success(), "{out}");
    let text = &out.stdout;
    assert!(
        text.contains("tools"),
        "the exported interfaces must include tools:\n{out}"
    );
    for tool in ["greet", "echo"] {
        assert!(
            text.contains(tool),
            "inspect must list the tool {tool}:\n{out}"
        );
    }
    assert!(
        text.lines().any(|l| l.contains("wasi:")),
        "inspect must list the WASI imports:\n{out}"
    );
}

#[test]
fn inspect_files_shows_tools_and_filesystem_import() {
    let out = run(&["inspect", &plugin_arg("files")]);
    assert!(out.success(), "{out}");
    for tool in ["read_file", "list_dir", "search", "list_roots"] {
        assert!(
            out.stdout.contains(tool),
            "inspect must list the tool {tool}:\n{out}"
        );
    }
    assert!(
        out.stdout.lines().any(|l| l.contains("wasi:filesystem")),
        "files imports wasi:filesystem:\n{out}"
    );
}

#[test]
fn inspect_misbehave_shows_every_tool() {
    let out = run(&["inspect", &plugin_arg("misbehave")]);
    assert!(out.success(), "{out}");
    for tool in [
        "spin",
        "grow_memory",
        "panic",
        "recurse",
        "escape",
        "flood_stdout",
        "sleep",
        "env",
        "ok",
    ] {
        assert!(
            out.stdout.contains(tool),
            "inspect must list the tool {tool}:\n{out}"
        );
    }
}

/// Proves: `inspect` shows which parameters a tool mirrors into `Mcp-Param-*` headers, and says
/// when a tool's markings break the rules, so it is left out when served.
#[test]
fn inspect_shows_header_mirroring_and_broken_markings() {
    let out = run(&["inspect", &plugin_arg("conformance")]);
    assert!(out.success(), "{out}");
    assert!(
        out.stdout.contains("header: Mcp-Param-Region <- region"),
        "test_custom_header mirrors region:\n{out}"
    );
    let out = run(&["inspect", &plugin_arg("misbehave")]);
    assert!(out.success(), "{out}");
    // The tool's line and the indented lines under it.
    let bad: Vec<&str> = out
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("  bad_header:"))
        .take_while(|l| l.starts_with("  bad_header:") || l.starts_with("    "))
        .collect();
    assert!(!bad.is_empty(), "no bad_header tool:\n{out}");
    let bad = bad.join("\n");
    assert!(
        bad.contains("LEFT OUT when served") && bad.contains("string, integer, boolean"),
        "bad_header marks a number:\n{bad}"
    );
}

#[test]
fn inspect_refuses_what_is_not_a_component() {
    let dir = tempdir();
    let missing = dir.path().join("missing.wasm");
    let out = run(&["inspect", &path_str(&missing)]);
    assert!(!out.success(), "{out}");
    assert!(
        out.stderr.contains("missing.wasm"),
        "the error must name the file:\n{out}"
    );

    let text = dir.path().join("text.wasm");
    write_file(&text, "this is not WebAssembly\n");
    let out = run(&["inspect", &path_str(&text)]);
    assert!(!out.success(), "{out}");
    assert!(
        !out.stderr.trim().is_empty(),
        "an error must be explained on stderr:\n{out}"
    );
}

#[test]
fn a_plugin_is_named_after_its_file() {
    let dir = tempdir();
    let copy = copy_plugin("hello", dir.path().join("greeter.wasm"));
    let mut s = Server::start(&["--plugin", &path_str(&copy)]);
    s.initialize(LATEST_VERSION);
    let (tools, _) = s.list_all_tools();
    assert_eq!(tool_names(&tools), ["greeter_echo", "greeter_greet"]);
    let r = s.call_tool("greeter_greet", json!({"name": "file"}));
    assert_eq!(ok_text(&r), "Hello, file!");
}

#[test]
fn serve_refuses_a_missing_plugin_and_leaves_out_a_broken_one() {
    let dir = tempdir();
    let missing = dir.path().join("absent.wasm");
    // A missing file is a mistake on the command line: the start stops.
    assert_serve_refused(&["--plugin", &path_str(&missing)], "absent.wasm");

    let broken = dir.path().join("broken.wasm");
    write_file(&broken, b"\0asm\x01\0\0\0garbage");
    assert_plugin_refused(&["--plugin", &path_str(&broken)], "broken.wasm");
}

/// Proves: a `--root` given relative to the working directory is seen by plugins at its
/// absolute path, the path a person would say; `--roots-at /roots` puts it at
/// `/roots/<directory name>` instead.
#[test]
fn a_relative_root_is_seen_at_its_absolute_path() {
    let dir = tempdir();
    let root = dir.path().join("my-root");
    write_file(root.join("note.txt"), "noted\n");
    let files = plugin_arg("files");
    let mut s = Server::builder()
        .args(["--plugin", &files, "--root", "my-root"])
        .cwd(dir.path())
        .start();
    s.initialize(LATEST_VERSION);
    let r = s.call_tool(
        "files_read_file",
        json!({"path": format!("{}/note.txt", path_str(&root))}),
    );
    assert!(ok_text(&r).contains("noted"), "{r}");
    let r = s.call_tool("files_read_file", json!({"path": "my-root/note.txt"}));
    assert!(is_tool_error(&r), "a relative path names nothing: {r}");

    let mut s = Server::builder()
        .args([
            "--plugin",
            &files,
            "--root",
            "my-root",
            "--roots-at",
            "/roots",
        ])
        .cwd(dir.path())
        .start();
    s.initialize(LATEST_VERSION);
    let r = s.call_tool(
        "files_read_file",
        json!({"path": "/roots/my-root/note.txt"}),
    );
    assert!(ok_text(&r).contains("noted"), "{r}");

    let out = run(&["serve", "--plugin", &files, "--roots-at", "/mnt"]);
    assert!(!out.success(), "{out}");
    assert!(out.stderr.contains("host-paths"), "{out}");
}

/// Proves: `palisade compile` fills the cache that `serve` then loads from (a plugin or a whole
/// configuration), says when there was nothing left to do, and refuses to run without plugins.
#[test]
fn compile_fills_the_cache_serve_uses() {
    let cache = tempdir();
    let cache_dir = path_str(cache.path());
    let hello = plugin_arg("hello");
    let out = run(&["compile", &hello, "--cache-dir", &cache_dir]);
    assert!(out.success(), "{out}");
    assert!(out.stdout.contains("hello: compiled in"), "{out}");
    let out = run(&["compile", &hello, "--cache-dir", &cache_dir]);
    assert!(out.stdout.contains("hello: already compiled"), "{out}");

    let dir = tempdir();
    let config = config_file(
        dir.path(),
        &format!("[plugins.greeter]\npath = {}\n", toml_str(&hello)),
    );
    let out = run(&[
        "compile",
        "--config",
        &path_str(&config),
        "--cache-dir",
        &cache_dir,
    ]);
    assert!(out.stdout.contains("greeter: already compiled"), "{out}");

    let mut s = Server::start(&["--plugin", &hello, "--cache-dir", &cache_dir]);
    s.initialize(LATEST_VERSION);
    s.wait_ready();
    assert!(
        s.stderr().contains("loaded compiled component from cache")
            && !s.stderr().contains("compiling component"),
        "{}",
        s.stderr()
    );

    let out = run(&["compile", "--cache-dir", &cache_dir]);
    assert!(!out.success(), "{out}");
    assert!(out.stderr.contains("nothing to compile"), "{out}");

    // One broken component does not stop the others; the run fails naming it.
    let broken = dir.path().join("broken.wasm");
    write_file(&broken, b"\0asm\x01\0\0\0garbage");
    let prompts = plugin_arg("prompts");
    let out = run(&[
        "compile",
        &path_str(&broken),
        &prompts,
        "--cache-dir",
        &cache_dir,
    ]);
    assert!(!out.success(), "{out}");
    assert!(out.stdout.contains("prompts: compiled in"), "{out}");
    assert!(
        out.stdout.contains("broken: ") && out.stdout.contains("is not a valid component"),
        "{out}"
    );
    assert!(
        out.stderr.contains("1 of 2 plugins could not be compiled"),
        "{out}"
    );
}
