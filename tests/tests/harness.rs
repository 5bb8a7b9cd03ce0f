//! Checks of the harness itself, against scripted fake servers: a stdout line
//! that is not a valid MCP message must fail the test that reads it. Without
//! these, a lenient harness would let every other test pass vacuously.

use palisade_tests::*;
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use tempfile::TempDir;

const INIT_2025: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}"#;
const INIT_2024: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-11-05","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}"#;

/// A fake server that answers its first input line with `first` (lines), then
/// waits for EOF and prints `at_exit` (lines).
fn fake(first: &[&str], at_exit: &[&str]) -> (TempDir, PathBuf) {
    let dir = tempdir();
    let path = dir.path().join("fake-palisade");
    let quote = |l: &&str| format!("printf '%s\\n' '{}'\n", l.replace('\'', r"'\''"));
    let mut script = String::from("#!/bin/sh\nread -r line\n");
    script.extend(first.iter().map(quote));
    script.push_str("while read -r line; do :; done\n");
    script.extend(at_exit.iter().map(quote));
    write_file(&path, script);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, path)
}

fn start_fake(bin: &PathBuf) -> Server {
    Server::builder().bin(bin).no_default_cache_dir().start()
}

/// Runs `f`, which must panic; returns the panic message.
fn panic_message(f: impl FnOnce()) -> String {
    let err = catch_unwind(AssertUnwindSafe(f)).expect_err("the harness accepted a bad message");
    err.downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn a_line_that_is_not_json_fails() {
    let (_d, bin) = fake(&["starting up...", INIT_2025], &[]);
    let msg = panic_message(|| {
        start_fake(&bin).initialize(LATEST_VERSION);
    });
    assert!(
        msg.contains("not JSON") && msg.contains("starting up..."),
        "{msg}"
    );
}

#[test]
fn a_result_that_breaks_its_schema_fails() {
    let no_server_info =
        r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{}}}"#;
    let (_d, bin) = fake(&[no_server_info], &[]);
    let msg = panic_message(|| {
        start_fake(&bin).initialize(LATEST_VERSION);
    });
    assert!(msg.contains("InitializeResult"), "{msg}");
}

#[test]
fn a_message_is_checked_against_the_negotiated_version() {
    // An error response without an id is valid in 2025-11-25, not in 2024-11-05.
    let no_id = r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"x"}}"#;

    let (_d, bin) = fake(&[INIT_2025, no_id], &[]);
    let mut s = start_fake(&bin);
    s.initialize(LATEST_VERSION);
    let m = s.recv_timeout(secs(10)).expect("the fake's second line");
    assert_eq!(error_code(&m), Some(INVALID_REQUEST));

    let (_d, bin) = fake(&[INIT_2024, no_id], &[]);
    let msg = panic_message(|| {
        let mut s = start_fake(&bin);
        s.initialize("2024-11-05");
        s.recv_timeout(secs(10));
    });
    assert!(msg.contains("2024-11-05"), "{msg}");
}

#[test]
fn a_null_id_error_is_accepted_but_checked() {
    let ok = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;
    let (_d, bin) = fake(&[INIT_2025, ok], &[]);
    let mut s = start_fake(&bin);
    s.initialize(LATEST_VERSION);
    let m = s.recv_timeout(secs(10)).expect("the fake's second line");
    assert_eq!(m["id"], Value::Null);

    let bad = r#"{"jsonrpc":"2.0","id":null,"error":{"code":"-32700","message":"Parse error"}}"#;
    let (_d, bin) = fake(&[INIT_2025, bad], &[]);
    let msg = panic_message(|| {
        let mut s = start_fake(&bin);
        s.initialize(LATEST_VERSION);
        s.recv_timeout(secs(10));
    });
    assert!(msg.contains("schema"), "{msg}");
}

#[test]
fn a_result_nobody_asked_for_fails() {
    let stray = r#"{"jsonrpc":"2.0","id":42,"result":{}}"#;
    let (_d, bin) = fake(&[INIT_2025, stray], &[]);
    let msg = panic_message(|| {
        let mut s = start_fake(&bin);
        s.initialize(LATEST_VERSION);
        s.recv_timeout(secs(10));
    });
    assert!(msg.contains("no request of ours"), "{msg}");
}

#[test]
fn output_at_exit_is_checked_too() {
    let (_d, bin) = fake(&[INIT_2025], &["goodbye"]);
    let msg = panic_message(|| {
        let mut s = start_fake(&bin);
        s.initialize(LATEST_VERSION);
        s.close_stdin_and_wait(secs(30));
    });
    assert!(msg.contains("goodbye"), "{msg}");
}

#[test]
fn output_before_a_kill_is_checked_when_the_server_is_dropped() {
    let (_d, bin) = fake(&[INIT_2025, "oops"], &[]);
    let msg = panic_message(|| {
        let mut s = start_fake(&bin);
        s.initialize(LATEST_VERSION);
        std::thread::sleep(std::time::Duration::from_millis(500));
        drop(s);
    });
    assert!(msg.contains("oops"), "{msg}");
}

#[test]
fn a_valid_session_passes() {
    let (_d, bin) = fake(
        &[INIT_2025],
        &[r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#],
    );
    let mut s = start_fake(&bin);
    let init = s.initialize(LATEST_VERSION);
    assert_eq!(init["serverInfo"]["name"], json!("fake"));
    let status = s.close_stdin_and_wait(secs(30));
    assert!(status.success());
    let n = s
        .recv_timeout(secs(1))
        .expect("the notification written at exit");
    assert_eq!(n["method"], "notifications/tools/list_changed");
}
