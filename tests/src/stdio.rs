//! The server under test over stdio: starting it, sending, receiving and validating every line.

use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use std::io::{BufRead, BufReader, Read, Write};

use crate::*;

// ---------------------------------------------------------------------------
// The server under test
// ---------------------------------------------------------------------------

pub(crate) enum Line {
    /// A complete line (without its `\n`).
    Complete(Vec<u8>),
    /// Bytes at the end of the stream that no `\n` terminated.
    Partial(Vec<u8>),
    Eof,
}

pub(crate) enum Recv {
    Msg(Value),
    Timeout,
    Closed,
}

/// How to start a server: `palisade serve <args>`.
/// Spawns `cmd`, retrying while the program is "text file busy": a script a test has just written
/// can still be open for writing in a child another test thread forked before its exec.
pub fn spawn_retrying(cmd: &mut Command) -> std::io::Result<Child> {
    let mut attempts = 0;
    loop {
        match cmd.spawn() {
            Err(e) if e.raw_os_error() == Some(26) && attempts < 50 => {
                attempts += 1;
                thread::sleep(Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

pub struct ServerBuilder {
    pub(crate) bin: Option<PathBuf>,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) default_cache_dir: bool,
}

impl ServerBuilder {
    /// Runs this program instead of `palisade` (for checks of the harness itself).
    pub fn bin(mut self, program: impl AsRef<Path>) -> Self {
        self.bin = Some(program.as_ref().to_path_buf());
        self
    }
    pub fn arg(mut self, a: impl AsRef<OsStr>) -> Self {
        self.args
            .push(a.as_ref().to_str().expect("UTF-8 argument").to_string());
        self
    }
    pub fn args<S: AsRef<OsStr>>(mut self, args: impl IntoIterator<Item = S>) -> Self {
        for a in args {
            self = self.arg(a);
        }
        self
    }
    /// Adds an environment variable for the server process.
    pub fn env(mut self, k: &str, v: &str) -> Self {
        self.env.push((k.to_string(), v.to_string()));
        self
    }
    /// The server's working directory (default: the test's).
    pub fn cwd(mut self, dir: impl AsRef<Path>) -> Self {
        self.cwd = Some(dir.as_ref().to_path_buf());
        self
    }
    /// Do not add `--cache-dir <shared cache>` (e.g. to test `cache_dir` from a config file).
    pub fn no_default_cache_dir(mut self) -> Self {
        self.default_cache_dir = false;
        self
    }

    pub fn start(self) -> Server {
        let bin = self.bin.clone().unwrap_or_else(palisade_bin);
        let mut cmd = Command::new(&bin);
        cmd.arg("serve").args(&self.args);
        let gives_cache_dir = self
            .args
            .iter()
            .any(|a| a == "--cache-dir" || a.starts_with("--cache-dir="));
        if self.default_cache_dir && !gives_cache_dir {
            cmd.arg("--cache-dir").arg(shared_cache_dir());
        }
        cmd.env("RUST_LOG", "info");
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        if let Some(cwd) = &self.cwd {
            cmd.current_dir(cwd);
        }
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = spawn_retrying(&mut cmd)
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));

        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut buf = Vec::new();
                match reader.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(Line::Eof);
                        return;
                    }
                    Ok(_) => {
                        let line = if buf.last() == Some(&b'\n') {
                            buf.pop();
                            Line::Complete(buf)
                        } else {
                            Line::Partial(buf)
                        };
                        if tx.send(line).is_err() {
                            return;
                        }
                    }
                }
            }
        });

        let stderr_buf = Arc::new(Mutex::new(Vec::new()));
        let mut stderr = child.stderr.take().unwrap();
        let sink = stderr_buf.clone();
        thread::spawn(move || {
            let mut chunk = [0u8; 8192];
            loop {
                match stderr.read(&mut chunk) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => sink.lock().unwrap().extend_from_slice(&chunk[..n]),
                }
            }
        });

        Server {
            child,
            stdin,
            lines: rx,
            stdout_closed: false,
            stderr: stderr_buf,
            next_id: 1,
            pending: HashMap::new(),
            version: LATEST_VERSION.to_string(),
            negotiated: None,
            stateless_used: false,
            stateless_answered: false,
            inbox: VecDeque::new(),
            notifications: Vec::new(),
            timeout: default_timeout(),
            transcript: VecDeque::new(),
            exited: None,
        }
    }
}

/// A running `palisade serve`, spoken to over its stdin/stdout.
pub struct Server {
    pub(crate) child: Child,
    pub(crate) stdin: Option<ChildStdin>,
    pub(crate) lines: Receiver<Line>,
    pub(crate) stdout_closed: bool,
    pub(crate) stderr: Arc<Mutex<Vec<u8>>>,
    pub(crate) next_id: i64,
    /// Requests sent and not answered yet: id (as JSON text) -> method, and whether the request
    /// is one of the stateless revision (its response is validated against that schema).
    pub(crate) pending: HashMap<String, (String, bool)>,
    /// The protocol version whose schema validates what the server sends.
    pub(crate) version: String,
    pub(crate) negotiated: Option<String>,
    /// Whether a request of the stateless revision (2026-07-28) was sent.
    pub(crate) stateless_used: bool,
    /// Whether a request of the stateless revision was answered (the first may wait for the
    /// plugins to load).
    pub(crate) stateless_answered: bool,
    /// Validated messages received but not consumed yet.
    pub(crate) inbox: VecDeque<Value>,
    /// Notifications that arrived while waiting for a response.
    pub notifications: Vec<Value>,
    /// Default wait for a response.
    pub timeout: Duration,
    /// The last messages each way, for failure reports.
    pub(crate) transcript: VecDeque<String>,
    pub(crate) exited: Option<ExitStatus>,
}

impl Server {
    /// `palisade serve <args>` with the [shared](shared_cache_dir) `--cache-dir` unless `args` has one.
    pub fn start(args: &[&str]) -> Server {
        Server::builder().args(args).start()
    }

    pub fn builder() -> ServerBuilder {
        ServerBuilder {
            bin: None,
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            default_cache_dir: true,
        }
    }

    /// Everything the server wrote on stderr so far.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }

    /// Waits (bounded) until stderr contains `needle`; returns whether it did.
    pub fn wait_for_stderr(&self, needle: &str, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut exited_at: Option<Instant> = None;
        loop {
            if self.stderr().contains(needle) {
                return true;
            }
            // A server that exited (a refused configuration) prints nothing more: give its
            // last output a moment to be read, rather than wait out the whole timeout.
            if exited_at.is_none() && self.has_exited() {
                exited_at = Some(Instant::now());
            }
            let gave_up = exited_at.is_some_and(|at| at.elapsed() > Duration::from_millis(500));
            if Instant::now() >= deadline || gave_up {
                return false;
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// Whether the server process has ended (a zombie not yet waited for counts). Linux reads
    /// /proc; elsewhere this says no and waits fall back to their timeouts.
    fn has_exited(&self) -> bool {
        if !cfg!(target_os = "linux") {
            return false;
        }
        match std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())) {
            // "PID (comm) STATE ...": the state follows the last ')'.
            Ok(stat) => stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
            Err(_) => true,
        }
    }

    /// Waits (bounded) until the server has loaded its plugins (they load in the background
    /// once it answers); fails the test if it never does.
    pub fn wait_ready(&self) {
        if !self.wait_for_stderr("plugins ready", startup_timeout()) {
            self.fail("the plugins never finished loading");
        }
    }

    /// The protocol version the server answered to `initialize`, if any.
    pub fn negotiated_version(&self) -> Option<&str> {
        self.negotiated.as_deref()
    }

    /// Fails the test with `msg`, the recent transcript and the server's stderr.
    #[track_caller]
    pub fn fail(&self, msg: impl std::fmt::Display) -> ! {
        panic!("{msg}\n{}", self.diagnostics());
    }

    pub(crate) fn diagnostics(&self) -> String {
        let stderr = self.stderr();
        let tail: String = {
            let chars: Vec<char> = stderr.chars().collect();
            let start = chars.len().saturating_sub(6000);
            chars[start..].iter().collect()
        };
        let transcript: Vec<&str> = self.transcript.iter().map(|s| s.as_str()).collect();
        format!(
            "--- last messages (-> sent, <- received) ---\n{}\n--- server stderr (tail) ---\n{}",
            transcript.join("\n"),
            tail
        )
    }

    pub(crate) fn record(&mut self, dir: &str, text: &str) {
        let mut t: String = text.chars().take(1500).collect();
        if t.len() < text.len() {
            t.push_str(" [...]");
        }
        self.transcript.push_back(format!("{dir} {t}"));
        while self.transcript.len() > 40 {
            self.transcript.pop_front();
        }
    }

    // -- sending ------------------------------------------------------------

    /// Writes `line` and a newline to the server's stdin, as is. If the line is
    /// a well-formed request, its id is remembered so that its result can be
    /// validated (use ids that `send_request` does not: strings, or >= 1000000).
    pub fn send_raw(&mut self, line: &str) {
        self.send_bytes(line.as_bytes());
    }

    /// [`send_raw`](Self::send_raw) for a line that need not be UTF-8.
    pub fn send_bytes(&mut self, line: &[u8]) {
        let messages = match serde_json::from_slice::<Value>(line) {
            Ok(Value::Array(batch)) => batch,
            Ok(single) => vec![single],
            Err(_) => Vec::new(),
        };
        for m in &messages {
            if let (Some(id), Some(Value::String(method))) = (m.get("id"), m.get("method"))
                && (id.is_string() || id.is_i64() || id.is_u64())
            {
                let stateless = is_stateless_message(m);
                self.stateless_used |= stateless;
                self.pending.insert(id_key(id), (method.clone(), stateless));
            }
        }
        self.record("->", &String::from_utf8_lossy(line));
        let Some(stdin) = self.stdin.as_mut() else {
            self.fail("send after stdin was closed");
        };
        let res = stdin
            .write_all(line)
            .and_then(|_| stdin.write_all(b"\n"))
            .and_then(|_| stdin.flush());
        if let Err(e) = res {
            self.fail(format!(
                "cannot write to the server's stdin ({e}): has it exited?"
            ));
        }
    }

    pub(crate) fn send_json(&mut self, msg: &Value) {
        let line = serde_json::to_string(msg).unwrap();
        self.send_raw(&line);
    }

    /// Sends a notification. `params` `Value::Null` means no params.
    pub fn notify(&mut self, method: &str, params: Value) {
        let mut msg = json!({"jsonrpc": "2.0", "method": method});
        if !params.is_null() {
            msg["params"] = params;
        }
        self.send_json(&msg);
    }

    /// Sends a request without waiting; returns its id. `params` `Value::Null` means no params.
    pub fn send_request(&mut self, method: &str, params: Value) -> Value {
        let id = json!(self.next_id);
        self.next_id += 1;
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            msg["params"] = params;
        }
        if method == "initialize" {
            // Until the answer arrives, validate against the requested version.
            let requested = msg["params"]["protocolVersion"].as_str().unwrap_or("");
            self.version = if SUPPORTED_VERSIONS.contains(&requested) {
                requested.to_string()
            } else {
                LATEST_VERSION.to_string()
            };
        }
        let line = serde_json::to_string(&msg).unwrap();
        self.send_raw(&line);
        id
    }

    /// Sends a request and waits (default timeout) for its response; returns the whole response.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let timeout = self.timeout;
        self.request_timeout(method, params, timeout)
    }

    pub fn request_timeout(&mut self, method: &str, params: Value, timeout: Duration) -> Value {
        let id = self.send_request(method, params);
        self.wait_response(&id, timeout)
    }

    /// Sends a request and returns its `result`; fails on an error response.
    pub fn result(&mut self, method: &str, params: Value) -> Value {
        let resp = self.request(method, params);
        self.expect_result(resp)
    }

    /// The `result` of a response; fails the test on an error response.
    #[track_caller]
    pub fn expect_result(&self, resp: Value) -> Value {
        match resp.get("result") {
            Some(r) => r.clone(),
            None => self.fail(format!("expected a result, got {resp}")),
        }
    }

    /// The `error` of a response; fails the test on a result.
    #[track_caller]
    pub fn expect_error(&self, resp: &Value) -> Value {
        match resp.get("error") {
            Some(e) => e.clone(),
            None => self.fail(format!("expected an error response, got {resp}")),
        }
    }

    /// `initialize` with `version`, then `notifications/initialized`; returns the result.
    pub fn initialize(&mut self, version: &str) -> Value {
        let resp = self.request_timeout(
            "initialize",
            json!({
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "palisade-tests", "version": env!("CARGO_PKG_VERSION")}
            }),
            startup_timeout(),
        );
        let result = self.expect_result(resp);
        self.notify("notifications/initialized", Value::Null);
        result
    }

    /// `tools/call`; returns the whole response.
    pub fn call_tool_response(&mut self, name: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
    }

    /// `tools/call`; returns the `CallToolResult` (fails on a JSON-RPC error).
    pub fn call_tool(&mut self, name: &str, arguments: Value) -> Value {
        let resp = self.call_tool_response(name, arguments);
        self.expect_result(resp)
    }

    /// Every tool, following `nextCursor` until the end; also returns the page sizes.
    pub fn list_all_tools(&mut self) -> (Vec<Value>, Vec<usize>) {
        let mut tools = Vec::new();
        let mut pages = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..1000 {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => Value::Null,
            };
            let result = self.result("tools/list", params);
            let page = result["tools"].as_array().cloned().unwrap_or_default();
            pages.push(page.len());
            tools.extend(page);
            match result.get("nextCursor") {
                None | Some(Value::Null) => return (tools, pages),
                Some(Value::String(c)) => cursor = Some(c.clone()),
                Some(other) => self.fail(format!("nextCursor is not a string: {other}")),
            }
        }
        self.fail("tools/list pagination did not end after 1000 pages");
    }

    // -- receiving ----------------------------------------------------------

    pub(crate) fn next_message(&mut self, deadline: Instant) -> Recv {
        if self.stdout_closed {
            return Recv::Closed;
        }
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(wait) {
            Ok(Line::Complete(bytes)) => Recv::Msg(self.accept_line(bytes)),
            Ok(Line::Partial(bytes)) => {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                self.record("<-", &text);
                self.fail(format!(
                    "the server's stdout ended with a line that no newline terminated: {text}"
                ));
            }
            Ok(Line::Eof) | Err(RecvTimeoutError::Disconnected) => {
                self.stdout_closed = true;
                Recv::Closed
            }
            Err(RecvTimeoutError::Timeout) => Recv::Timeout,
        }
    }

    /// Parses and validates one stdout line; fails the test if it is not a valid message.
    pub(crate) fn accept_line(&mut self, bytes: Vec<u8>) -> Value {
        let text = match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                let lossy = String::from_utf8_lossy(e.as_bytes()).into_owned();
                self.record("<-", &lossy);
                self.fail(format!("stdout line is not UTF-8: {lossy}"));
            }
        };
        self.record("<-", &text);
        let msg: Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => self.fail(format!("stdout line is not JSON ({e}): {text}")),
        };
        if let Err(e) = self.validate_message(&msg) {
            self.fail(format!(
                "stdout line fails the MCP schema: {e}\nline: {text}"
            ));
        }
        msg
    }

    pub(crate) fn validate_message(&mut self, msg: &Value) -> Result<(), String> {
        let version = self.version.clone();
        if let Some(batch) = msg.as_array() {
            // Batches exist only in 2025-03-26, and only as the answer to a batch of ours.
            if version != "2025-03-26" {
                return Err(format!("a batch response under protocol {version}"));
            }
            validate_batch_response(&version, msg)?;
            return batch.iter().try_for_each(|m| self.validate_message(m));
        }
        let Some(obj) = msg.as_object() else {
            return Err("neither a JSON object nor a batch".into());
        };
        let (result_def, error_def) = response_definitions(&version);
        // The response to a request of the stateless revision: that revision's schema.
        if !obj.contains_key("method")
            && let Some(id) = obj.get("id")
            && let Some((method, true)) = self.pending.get(&id_key(id)).cloned()
        {
            self.pending.remove(&id_key(id));
            self.stateless_answered = true;
            return validate_stateless_response(&method, msg)
                .map_err(|e| format!("response to {method} (2026-07-28): {e}"));
        }
        if obj.contains_key("method") {
            if obj.contains_key("id") {
                if self.stateless_only() {
                    return Err(
                        "the server sent a request, but no initialize-based session exists: in \
                         2026-07-28 a server asks through input_required results"
                            .into(),
                    );
                }
                validate_against(&version, "JSONRPCMessage", msg)?;
                validate_against(&version, "JSONRPCRequest", msg)?;
                return validate_against(&version, "ServerRequest", msg);
            }
            let stateless = || {
                validate_against(STATELESS_VERSION, "JSONRPCNotification", msg)?;
                // The tasks extension's own notification is in its own schema.
                if obj.get("method") == Some(&json!("notifications/tasks")) {
                    return validate_against(TASKS_EXTENSION_SCHEMA, "TaskStatusNotification", msg);
                }
                validate_against(STATELESS_VERSION, "ServerNotification", msg)
            };
            if self.stateless_only() {
                return stateless().map_err(|e| format!("(2026-07-28) {e}"));
            }
            let with_sessions = validate_against(&version, "JSONRPCMessage", msg)
                .and_then(|()| validate_against(&version, "JSONRPCNotification", msg))
                .and_then(|()| validate_against(&version, "ServerNotification", msg));
            // Beside a session, a notification may belong to a stateless request.
            match with_sessions {
                Err(e) if self.stateless_used => {
                    stateless().map_err(|m| format!("{e}; and under 2026-07-28: {m}"))
                }
                other => other,
            }
        } else if obj.contains_key("error") {
            if obj.get("id") == Some(&Value::Null) {
                validate_null_id_error(&version, msg)?;
            } else {
                validate_against(&version, "JSONRPCMessage", msg)?;
                validate_against(&version, error_def, msg)?;
            }
            if let Some(id) = obj.get("id") {
                self.pending.remove(&id_key(id));
            }
            Ok(())
        } else if obj.contains_key("result") {
            validate_against(&version, "JSONRPCMessage", msg)?;
            validate_against(&version, result_def, msg)?;
            let (method, _) = self.pending.remove(&id_key(&obj["id"])).ok_or_else(|| {
                format!("a result for id {} which no request of ours has (or had already been answered)", obj["id"])
            })?;
            let def = result_definition(&method, &obj["result"]);
            validate_against(&version, def, &obj["result"])
                .map_err(|e| format!("result of {method}: {e}"))?;
            if method == "initialize"
                && let Some(v) = obj["result"]["protocolVersion"].as_str()
            {
                self.negotiated = Some(v.to_string());
                if SUPPORTED_VERSIONS.contains(&v) {
                    self.version = v.to_string();
                }
            }
            Ok(())
        } else {
            validate_against(&version, "JSONRPCMessage", msg).and(Err(
                "neither a request, a notification nor a response".into(),
            ))
        }
    }

    /// Whether only requests of the stateless revision were sent: no `initialize` (answered or
    /// not), so nothing the server sends may belong to a session.
    pub(crate) fn stateless_only(&self) -> bool {
        self.stateless_used
            && self.negotiated.is_none()
            && !self
                .pending
                .values()
                .any(|(m, stateless)| m == "initialize" && !stateless)
    }

    pub(crate) fn is_response_to(msg: &Value, id: &Value) -> bool {
        msg.get("method").is_none() && msg.get("id") == Some(id)
    }

    pub(crate) fn file_away(&mut self, msg: Value) {
        if msg.get("method").is_some() && msg.get("id").is_none() {
            self.notifications.push(msg);
        } else {
            self.inbox.push_back(msg);
        }
    }

    /// Waits for the response to request `id`. Other messages arriving meanwhile
    /// are kept (responses for [`recv_timeout`](Self::recv_timeout) and
    /// `wait_response`, notifications in [`notifications`](Self::notifications)).
    pub fn wait_response(&mut self, id: &Value, timeout: Duration) -> Value {
        if let Some(pos) = self.inbox.iter().position(|m| Self::is_response_to(m, id)) {
            return self.inbox.remove(pos).unwrap();
        }
        let deadline = Instant::now() + timeout;
        loop {
            match self.next_message(deadline) {
                Recv::Msg(m) if Self::is_response_to(&m, id) => return m,
                Recv::Msg(m) => self.file_away(m),
                Recv::Timeout => {
                    self.fail(format!("no response to request id {id} within {timeout:?}"))
                }
                Recv::Closed => {
                    thread::sleep(Duration::from_millis(200));
                    let status = self.child.try_wait().ok().flatten();
                    self.fail(format!(
                        "the server closed stdout before answering request id {id} (exit status: {status:?})"
                    ))
                }
            }
        }
    }

    /// Waits `wait` and fails if a response to `id` arrives meanwhile (or was kept).
    pub fn expect_no_response(&mut self, id: &Value, wait: Duration) {
        if self.inbox.iter().any(|m| Self::is_response_to(m, id)) {
            self.fail(format!("got a response to request id {id}, expected none"));
        }
        let deadline = Instant::now() + wait;
        loop {
            match self.next_message(deadline) {
                Recv::Msg(m) if Self::is_response_to(&m, id) => self.fail(format!(
                    "got a response to request id {id}, expected none: {m}"
                )),
                Recv::Msg(m) => self.file_away(m),
                Recv::Timeout | Recv::Closed => return,
            }
        }
    }

    /// The next message not consumed yet, waiting at most `wait`; `None` on
    /// timeout or when stdout has closed (see [`stdout_closed`](Self::stdout_closed)).
    pub fn recv_timeout(&mut self, wait: Duration) -> Option<Value> {
        if let Some(m) = self.inbox.pop_front() {
            return Some(m);
        }
        match self.next_message(Instant::now() + wait) {
            Recv::Msg(m) => Some(m),
            Recv::Timeout | Recv::Closed => None,
        }
    }

    /// Whether the server's stdout has reached its end.
    pub fn stdout_closed(&self) -> bool {
        self.stdout_closed
    }

    // -- server requests ----------------------------------------------------
    //
    // Requests the server sends the client (such as `roots/list`) are validated as
    // `ServerRequest`s and kept in the inbox, like responses, until a test takes them here.
    // Notifications waited for here are looked up in `notifications` first.

    /// `initialize` declaring the client `capabilities` (such as `{"roots": {"listChanged": true}}`),
    /// then `notifications/initialized`; returns the result.
    pub fn initialize_with_capabilities(&mut self, version: &str, capabilities: Value) -> Value {
        let resp = self.request_timeout(
            "initialize",
            json!({
                "protocolVersion": version,
                "capabilities": capabilities,
                "clientInfo": {"name": "palisade-tests", "version": env!("CARGO_PKG_VERSION")}
            }),
            startup_timeout(),
        );
        let result = self.expect_result(resp);
        self.notify("notifications/initialized", Value::Null);
        result
    }

    pub(crate) fn is_server_request(msg: &Value, method: &str) -> bool {
        msg.get("id").is_some() && msg.get("method").and_then(Value::as_str) == Some(method)
    }

    /// Waits for the server's next request with `method` (one already received comes first) and
    /// takes it: the whole message, with `id` and `params`. Other messages arriving meanwhile are
    /// kept, as [`wait_response`](Self::wait_response) keeps them. Fails on timeout.
    pub fn wait_server_request(&mut self, method: &str, timeout: Duration) -> Value {
        if let Some(pos) = self
            .inbox
            .iter()
            .position(|m| Self::is_server_request(m, method))
        {
            return self.inbox.remove(pos).unwrap();
        }
        let deadline = Instant::now() + timeout;
        loop {
            match self.next_message(deadline) {
                Recv::Msg(m) if Self::is_server_request(&m, method) => return m,
                Recv::Msg(m) => self.file_away(m),
                Recv::Timeout => self.fail(format!(
                    "the server sent no {method} request within {timeout:?}"
                )),
                Recv::Closed => self.fail(format!(
                    "the server closed stdout before sending a {method} request"
                )),
            }
        }
    }

    /// Waits `wait` and fails if the server sends a request with `method` meanwhile (or sent one
    /// that is still kept).
    pub fn expect_no_server_request(&mut self, method: &str, wait: Duration) {
        if let Some(m) = self
            .inbox
            .iter()
            .find(|m| Self::is_server_request(m, method))
        {
            self.fail(format!(
                "the server sent a {method} request, expected none: {m}"
            ));
        }
        let deadline = Instant::now() + wait;
        loop {
            match self.next_message(deadline) {
                Recv::Msg(m) if Self::is_server_request(&m, method) => self.fail(format!(
                    "the server sent a {method} request, expected none: {m}"
                )),
                Recv::Msg(m) => self.file_away(m),
                Recv::Timeout | Recv::Closed => return,
            }
        }
    }

    /// Answers the server's request `id` with `result`.
    pub fn respond(&mut self, id: &Value, result: Value) {
        self.send_json(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    /// Answers the server's request `id` with a JSON-RPC error.
    pub fn respond_error(&mut self, id: &Value, code: i64, message: &str) {
        self.send_json(&json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": code, "message": message}
        }));
    }

    /// Waits for a notification with `method` (one already kept in
    /// [`notifications`](Self::notifications) comes first) and takes it. Other messages arriving
    /// meanwhile are kept. Fails on timeout.
    pub fn wait_notification(&mut self, method: &str, timeout: Duration) -> Value {
        match self.wait_notification_where(method, |_| true, timeout) {
            Some(notification) => notification,
            None => self.fail(format!(
                "no {method} notification within {timeout:?} (or stdout closed first)"
            )),
        }
    }

    // -- end of server requests ---------------------------------------------

    // -- ending -------------------------------------------------------------

    /// Kills the server (no validation of what follows).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        if let Ok(status) = self.child.wait() {
            self.exited = Some(status);
        }
        self.stdin = None;
    }

    /// Closes stdin and waits (bounded) for the server to exit, then reads and
    /// validates whatever it wrote up to its end; those messages (notifications
    /// too) stay available, in order, through `recv_timeout` / `wait_response`.
    /// Fails if it does not exit in time.
    pub fn close_stdin_and_wait(&mut self, timeout: Duration) -> ExitStatus {
        self.stdin = None;
        self.record("->", "[stdin closed]");
        let deadline = Instant::now() + timeout;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() >= deadline => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    self.fail(format!(
                        "the server did not exit within {timeout:?} after stdin closed"
                    ));
                }
                Ok(None) => thread::sleep(Duration::from_millis(20)),
                Err(e) => self.fail(format!("waiting for the server: {e}")),
            }
        };
        self.exited = Some(status);
        self.drain_stdout(secs(10), true);
        status
    }

    /// Reads stdout to its end (bounded), validating every complete line.
    pub(crate) fn drain_stdout(&mut self, wait: Duration, partial_is_error: bool) {
        let deadline = Instant::now() + wait;
        while !self.stdout_closed {
            let wait = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(wait) {
                Ok(Line::Complete(bytes)) => {
                    let m = self.accept_line(bytes);
                    self.inbox.push_back(m);
                }
                Ok(Line::Partial(bytes)) => {
                    if partial_is_error {
                        let text = String::from_utf8_lossy(&bytes).into_owned();
                        self.fail(format!(
                            "the server's stdout ended with a line that no newline terminated: {text}"
                        ));
                    }
                }
                Ok(Line::Eof) | Err(RecvTimeoutError::Disconnected) => self.stdout_closed = true,
                Err(RecvTimeoutError::Timeout) => return,
            }
        }
    }

    /// Waits (bounded) for the server to exit by itself (after a signal, say); fails if it
    /// does not.
    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() >= deadline => {
                    self.fail(format!("the server did not exit within {timeout:?}"));
                }
                Ok(None) => thread::sleep(Duration::from_millis(20)),
                Err(e) => self.fail(format!("waiting for the server: {e}")),
            }
        };
        self.exited = Some(status);
        status
    }

    /// Sends the server `signal` (`TERM`, `INT`).
    pub fn signal(&self, signal: &str) {
        send_signal(self.child.id(), signal);
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The exit status, once the server has exited through `close_stdin_and_wait` or `kill`.
    pub fn exit_status(&self) -> Option<ExitStatus> {
        self.exited
    }
}

/// Sends process `pid` the signal `signal` (`TERM`, `STOP`...).
pub fn send_signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([format!("-{signal}"), pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{signal} {pid} failed");
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.exited.is_none() {
            self.stdin = None;
            let _ = self.child.kill();
            self.exited = self.child.wait().ok();
        }
        if thread::panicking() {
            eprintln!("{}", self.diagnostics());
            return;
        }
        // Whatever the server wrote before it was stopped must be valid too.
        // (A partial last line is ignored here: the kill may have cut it.)
        self.drain_stdout(secs(5), false);
    }
}
