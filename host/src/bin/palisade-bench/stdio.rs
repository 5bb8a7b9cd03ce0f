//! A palisade server over stdio, and the client side of its JSON-RPC.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use serde_json::{Value, json};

/// A trivial `tools/call`: a tool, its arguments, and the first text block it must answer.
#[derive(Clone)]
pub struct Call {
    pub tool: String,
    pub arguments: Value,
    pub expect: Expect,
}

/// What a call's first content block must hold; a wrong answer stops the benchmark.
#[derive(Clone)]
pub enum Expect {
    Text(String),
    Length(usize),
}

impl Call {
    pub fn greet(tool: &str) -> Call {
        Call {
            tool: tool.into(),
            arguments: json!({"name": "bench"}),
            expect: Expect::Text("Hello, bench!".into()),
        }
    }

    pub fn params(&self) -> Value {
        json!({"name": self.tool, "arguments": self.arguments})
    }

    /// Checks a `tools/call` result.
    pub fn check(&self, result: &Value) -> Result<()> {
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        let ok = result["isError"] != json!(true)
            && match &self.expect {
                Expect::Text(expected) => text == expected,
                Expect::Length(n) => text.len() == *n,
            };
        if !ok {
            let mut shown = result.to_string();
            shown.truncate(300);
            bail!("{} answered {shown}", self.tool);
        }
        Ok(())
    }
}

/// `palisade-bench serve` (`palisade serve` plus the baseline tools) with `config` and the
/// compile cache `cache`, no file watching, warnings only on stderr; stdio unless more
/// arguments say otherwise.
pub fn serve_command(palisade: &Path, config: &Path, cache: &Path) -> Command {
    let mut command = Command::new(palisade);
    command
        .args(["serve", "--config"])
        .arg(config)
        .arg("--cache-dir")
        .arg(cache)
        .env("RUST_LOG", "warn")
        .stderr(Stdio::inherit());
    command
}

/// How long [`StdioServer::call_when_ready`] waits for a plugin still loading.
const LOADING_PATIENCE: Duration = Duration::from_secs(600);

/// How long a server may take to exit once its stdin closes; then it is killed, with all it
/// started (a peer's command may leave a process behind that never reads stdin).
const EXIT_PATIENCE: Duration = Duration::from_secs(3);

/// The benchmark's server over stdio, in a 2025-11-25 session.
pub struct StdioServer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    /// The server leads a process group of its own (peers do), killed whole if it lingers.
    group: bool,
}

impl StdioServer {
    /// Starts the server and opens a session.
    pub fn start(palisade: &Path, config: &Path, cache: &Path) -> Result<StdioServer> {
        StdioServer::spawn(serve_command(palisade, config, cache))
            .with_context(|| format!("starting {}", palisade.display()))
    }

    /// Starts another MCP server, `command_line` run by `sh -c`, and opens a session.
    pub fn start_peer(command_line: &str) -> Result<StdioServer> {
        use std::os::unix::process::CommandExt as _;
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(command_line)
            .stderr(Stdio::inherit())
            .process_group(0);
        let mut server = StdioServer::spawn(command)
            .with_context(|| format!("starting the peer `{command_line}`"))?;
        server.group = true;
        Ok(server)
    }

    fn spawn(mut command: Command) -> Result<StdioServer> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let mut server = StdioServer {
            stdin: child.stdin.take().context("stdin")?,
            stdout: BufReader::new(child.stdout.take().context("stdout")?),
            child,
            next_id: 0,
            group: false,
        };
        server.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "palisade-bench", "version": "0"}}),
        )?;
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(server)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Closes stdin and waits for the server to exit, at most [`EXIT_PATIENCE`]; then kills it
    /// (and, for a peer, every process of its group) and says so.
    pub fn stop(self) {
        let StdioServer {
            mut child,
            stdin,
            group,
            ..
        } = self;
        drop(stdin);
        let deadline = Instant::now() + EXIT_PATIENCE;
        // std has no wait with a timeout: look every few milliseconds until the deadline.
        while Instant::now() < deadline {
            match child.try_wait() {
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                Ok(Some(_)) | Err(_) => return,
            }
        }
        eprintln!(
            "palisade-bench: process {} did not exit within {} s of its stdin closing: killed",
            child.id(),
            EXIT_PATIENCE.as_secs()
        );
        if group {
            // kill(1) takes a negative id for the group, without an unsafe libc call.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
        }
        let _ = child.kill();
        let _ = child.wait();
    }

    fn send(&mut self, message: &Value) -> Result<()> {
        writeln!(self.stdin, "{message}")?;
        self.stdin.flush()?;
        Ok(())
    }

    /// Sends a request, returns its id.
    fn send_request(&mut self, method: &str, params: &Value) -> Result<u64> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        Ok(id)
    }

    /// The next response (notifications are skipped): its id and its result.
    fn next_response(&mut self, method: &str) -> Result<(u64, Value)> {
        let mut line = String::new();
        loop {
            line.clear();
            if self.stdout.read_line(&mut line)? == 0 {
                bail!("the server closed stdout");
            }
            let mut message: Value = serde_json::from_str(&line)?;
            let Some(id) = message["id"].as_u64() else {
                continue;
            };
            if let Some(error) = message.get("error") {
                bail!("{method} failed: {error}");
            }
            return Ok((id, message["result"].take()));
        }
    }

    pub fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        let id = self.send_request(method, &params)?;
        loop {
            let (got, result) = self.next_response(method)?;
            if got == id {
                return Ok(result);
            }
        }
    }

    /// One `tools/call`, checked; its latency.
    pub fn call(&mut self, call: &Call) -> Result<Duration> {
        let started = Instant::now();
        let result = self.request("tools/call", call.params())?;
        let elapsed = started.elapsed();
        call.check(&result)?;
        Ok(elapsed)
    }

    /// One `tools/call`, checked, made again while the plugin is still loading: on a slow or
    /// busy machine a compile can outlast the call's `timeout_ms`, which the call waits at
    /// most. Its time until answered.
    pub fn call_when_ready(&mut self, call: &Call) -> Result<Duration> {
        let started = Instant::now();
        loop {
            let result = self.request("tools/call", call.params())?;
            let loading = result["isError"] == json!(true)
                && result["content"][0]["text"]
                    .as_str()
                    .is_some_and(|t| t.contains("is still loading"));
            if !loading || started.elapsed() > LOADING_PATIENCE {
                call.check(&result)?;
                return Ok(started.elapsed());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// One `tools/call` that must answer without an error, whatever its text (another server's
    /// tool may word its greeting differently); its latency.
    pub fn call_unchecked(&mut self, call: &Call) -> Result<Duration> {
        let started = Instant::now();
        let result = self.request("tools/call", call.params())?;
        let elapsed = started.elapsed();
        if result["isError"] == json!(true) {
            let mut shown = result.to_string();
            shown.truncate(300);
            bail!("{} answered {shown}", call.tool);
        }
        Ok(elapsed)
    }

    /// `count` calls with `in_flight` of them sent ahead of their answers: each call's latency,
    /// and the wall time of them all.
    pub fn pipelined(
        &mut self,
        call: &Call,
        in_flight: usize,
        count: usize,
    ) -> Result<(Vec<Duration>, Duration)> {
        let params = call.params();
        let started = Instant::now();
        let mut sent_at = HashMap::new();
        let mut latencies = Vec::with_capacity(count);
        let mut sent = 0;
        while sent < count.min(in_flight) {
            sent_at.insert(self.send_request("tools/call", &params)?, Instant::now());
            sent += 1;
        }
        while latencies.len() < count {
            let (id, result) = self.next_response("tools/call")?;
            let Some(at) = sent_at.remove(&id) else {
                continue;
            };
            latencies.push(at.elapsed());
            call.check(&result)?;
            if sent < count {
                sent_at.insert(self.send_request("tools/call", &params)?, Instant::now());
                sent += 1;
            }
        }
        Ok((latencies, started.elapsed()))
    }
}
