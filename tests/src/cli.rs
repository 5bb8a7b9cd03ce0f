//! One-shot runs of the CLI.

use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use std::io::Read;

use crate::*;

// ---------------------------------------------------------------------------
// One-shot runs of the CLI
// ---------------------------------------------------------------------------

/// What a finished (or timed-out and killed) `palisade` run produced.
#[derive(Debug)]
pub struct RunOutput {
    /// `None` when the run was killed at the timeout.
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
}

impl RunOutput {
    pub fn success(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }
}

impl std::fmt::Display for RunOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "status: {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

/// Runs `palisade serve <args> --cache-dir <fresh dir>` and expects it to refuse to start: it
/// exits (stdin stays open, so it cannot just be waiting for input), with a failure status,
/// nothing on stdout, and `needle` on stderr. Returns the run's output for further checks.
pub fn assert_serve_refused(args: &[&str], needle: &str) -> RunOutput {
    let cache = tempdir();
    let mut full = vec!["serve"];
    full.extend_from_slice(args);
    let cache_arg = path_str(cache.path());
    full.extend_from_slice(&["--cache-dir", &cache_arg]);
    let out = run_palisade(&full, true, secs(120));
    assert!(
        out.status.is_some(),
        "the server did not exit: {args:?}\n{out}"
    );
    assert!(
        !out.success(),
        "the server must refuse to start: {args:?}\n{out}"
    );
    assert!(
        out.stdout.trim().is_empty(),
        "nothing may be written on stdout:\n{out}"
    );
    assert!(
        out.stderr.contains(needle),
        "stderr must mention {needle:?}:\n{out}"
    );
    out
}

/// Runs `palisade serve <args>` and expects it to refuse a plugin and serve on: plugins load
/// in the background once the server answers, so one that fails is reported on stderr (with
/// `needle`) and left out, and the server keeps answering. Returns the running server.
pub fn assert_plugin_refused(args: &[&str], needle: &str) -> Server {
    let mut s = Server::start(args);
    s.initialize(LATEST_VERSION);
    if !s.wait_for_stderr("plugins ready", startup_timeout()) {
        s.fail("the plugins never finished loading");
    }
    if !s.stderr().contains(needle) {
        s.fail(format!("stderr must mention {needle:?}"));
    }
    s.result("ping", serde_json::json!({}));
    s
}

/// Runs `palisade <args>` to its end (killed after `timeout`). With
/// `keep_stdin_open`, stdin is a pipe held open for the whole run (so that a
/// `serve` that should have refused to start hangs instead of seeing EOF);
/// otherwise stdin is empty.
pub fn run_palisade(args: &[&str], keep_stdin_open: bool, timeout: Duration) -> RunOutput {
    run_palisade_in(args, None, keep_stdin_open, timeout)
}

/// [`run_palisade`] with a working directory.
pub fn run_palisade_in(
    args: &[&str],
    cwd: Option<&Path>,
    keep_stdin_open: bool,
    timeout: Duration,
) -> RunOutput {
    let bin = palisade_bin();
    let mut cmd = Command::new(&bin);
    cmd.args(args)
        .env("RUST_LOG", "info")
        .stdin(if keep_stdin_open {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(cwd) = cwd {
        cmd.current_dir(cwd);
    }
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
    // Held open until the run ends.
    let _stdin = child.stdin.take();
    wait_for_output(child, timeout)
}

/// Runs `palisade <args>` in `cwd` with `env` added, `stdin` as its whole input (the answers to
/// its questions), to its end (killed after `timeout`).
pub fn run_palisade_with(
    args: &[&str],
    cwd: &Path,
    env: &[(&str, &str)],
    stdin: &str,
    timeout: Duration,
) -> RunOutput {
    use std::io::Write as _;
    let bin = palisade_bin();
    let mut cmd = Command::new(&bin);
    cmd.args(args)
        .current_dir(cwd)
        .env("RUST_LOG", "info")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_string();
    thread::spawn(move || {
        let _ = input.write_all(stdin.as_bytes());
    });
    wait_for_output(child, timeout)
}

/// Collects a started child's stdout and stderr until it exits, killing it after `timeout`
/// (`status` is then `None`).
pub(crate) fn wait_for_output(mut child: Child, timeout: Duration) -> RunOutput {
    let collect = |mut r: Box<dyn Read + Send>| {
        thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = collect(Box::new(child.stdout.take().unwrap()));
    let err = collect(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait().unwrap() {
            Some(s) => break Some(s),
            None if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            None => thread::sleep(Duration::from_millis(20)),
        }
    };
    RunOutput {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// Runs `command` to its end and fails the test, with its output, unless it succeeds: a build
/// step or another program's own tests. `what` names it in the failure.
pub fn run_to_success(what: &str, command: &mut Command) {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\n--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
