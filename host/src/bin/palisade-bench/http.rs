//! A palisade server over HTTP, and MCP clients for Streamable HTTP: a 2025-11-25 session (with
//! its GET event stream open, as clients of that revision keep it) and stateless 2026-07-28
//! requests answered in JSON.

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpStream;

use crate::stdio::{Call, serve_command};

/// The benchmark's server (`palisade-bench serve --http`) on a free local port.
pub struct HttpServer {
    child: Child,
    pub addr: SocketAddr,
}

impl HttpServer {
    pub fn start(palisade: &Path, config: &Path, cache: &Path) -> Result<HttpServer> {
        let addr = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
        let child = serve_command(palisade, config, cache)
            .arg("--http")
            .arg(addr.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {}", palisade.display()))?;
        let mut server = HttpServer { child, addr };
        let started = Instant::now();
        while std::net::TcpStream::connect(addr).is_err() {
            if let Some(status) = server.child.try_wait()? {
                bail!("the HTTP server exited: {status}");
            }
            if started.elapsed() > Duration::from_secs(120) {
                bail!("the HTTP server did not listen on {addr} within two minutes");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(server)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How a client speaks MCP over Streamable HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `initialize`, then requests in the session (`Mcp-Session-Id`), with the session's GET
    /// event stream open.
    Session,
    /// MCP 2026-07-28: every request stands alone, its version in `_meta` and the headers.
    Stateless,
}

/// One client: its own connection (and, in a session, a second one for the event stream).
pub struct HttpClient {
    addr: SocketAddr,
    mode: Mode,
    sender: SendRequest<Full<Bytes>>,
    session: Option<String>,
    next_id: u64,
    _stream: Option<tokio::task::JoinHandle<()>>,
}

async fn connect(addr: SocketAddr) -> Result<SendRequest<Full<Bytes>>> {
    let tcp = TcpStream::connect(addr).await?;
    tcp.set_nodelay(true)?;
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(sender)
}

impl HttpClient {
    pub async fn connect(addr: SocketAddr, mode: Mode) -> Result<HttpClient> {
        let mut client = HttpClient {
            addr,
            mode,
            sender: connect(addr).await?,
            session: None,
            next_id: 0,
            _stream: None,
        };
        if mode == Mode::Session {
            let (response, session) = client
                .post(
                    "initialize",
                    None,
                    json!({"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "palisade-bench", "version": "0"}}),
                )
                .await?;
            response.get("result").context("initialize failed")?;
            client.session = Some(session.context("no Mcp-Session-Id")?);
            client
                .notify(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .await?;
            client._stream = Some(client.open_event_stream().await?);
        }
        Ok(client)
    }

    fn request(&self, method: Method, body: Bytes) -> Result<Request<Full<Bytes>>> {
        let version = match self.mode {
            Mode::Session => "2025-11-25",
            Mode::Stateless => "2026-07-28",
        };
        let mut request = Request::builder()
            .method(method)
            .uri("/mcp")
            .header("host", self.addr.to_string())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", version);
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        Ok(request.body(Full::new(body))?)
    }

    async fn notify(&mut self, message: Value) -> Result<()> {
        let request = self.request(Method::POST, message.to_string().into())?;
        // A connection finishing the previous exchange takes new requests once ready.
        self.sender.ready().await?;
        let response = self.sender.send_request(request).await?;
        if response.status() != StatusCode::ACCEPTED {
            bail!("a notification got HTTP {}", response.status());
        }
        response.into_body().collect().await?;
        Ok(())
    }

    /// Opens the session's GET event stream on a connection of its own and reads it until the
    /// client is dropped.
    async fn open_event_stream(&self) -> Result<tokio::task::JoinHandle<()>> {
        let mut sender = connect(self.addr).await?;
        let request = self.request(Method::GET, Bytes::new())?;
        let response = sender.send_request(request).await?;
        if response.status() != StatusCode::OK {
            bail!("the GET event stream got HTTP {}", response.status());
        }
        let mut body = response.into_body();
        Ok(tokio::spawn(async move {
            let _sender = sender;
            while let Some(Ok(_frame)) = body.frame().await {}
        }))
    }

    /// POSTs one request; its response (from JSON or from an event stream) and the session id
    /// the server gave, if any.
    async fn post(
        &mut self,
        method: &str,
        name: Option<&str>,
        params: Value,
    ) -> Result<(Value, Option<String>)> {
        self.next_id += 1;
        let id = self.next_id;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut request = self.request(Method::POST, message.to_string().into())?;
        if self.mode == Mode::Stateless {
            let headers = request.headers_mut();
            headers.insert("mcp-method", method.parse()?);
            if let Some(name) = name {
                headers.insert("mcp-name", name.parse()?);
            }
        }
        // A connection finishing the previous exchange takes new requests once ready.
        self.sender.ready().await?;
        let response = self.sender.send_request(request).await?;
        let status = response.status();
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let streamed = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let body = response.into_body().collect().await?.to_bytes();
        if status != StatusCode::OK {
            bail!(
                "{method} got HTTP {status}: {}",
                String::from_utf8_lossy(&body)
            );
        }
        let answer = if streamed {
            // The last `data:` line carrying our id is the response; the rest are notifications.
            std::str::from_utf8(&body)?
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
                .find(|m| m["id"] == json!(id))
                .context("the event stream ended without the response")?
        } else {
            serde_json::from_slice(&body)?
        };
        Ok((answer, session))
    }

    /// One request whose answer does not matter (an attack in `attack`): its response.
    pub async fn post_any(
        &mut self,
        method: &str,
        name: Option<&str>,
        params: Value,
    ) -> Result<Value> {
        Ok(self.post(method, name, params).await?.0)
    }

    /// One `tools/call`, checked; its latency.
    pub async fn call(&mut self, call: &Call) -> Result<Duration> {
        let mut params = call.params();
        if self.mode == Mode::Stateless {
            params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                     "io.modelcontextprotocol/clientCapabilities": {}});
        }
        let started = Instant::now();
        let (response, _) = self.post("tools/call", Some(&call.tool), params).await?;
        let elapsed = started.elapsed();
        match response.get("result") {
            Some(result) => call.check(result)?,
            None => bail!("tools/call {} failed: {response}", call.tool),
        }
        Ok(elapsed)
    }
}

/// `clients` each make `per_client` calls of `call` at once: every latency, and the wall time.
pub async fn concurrent(
    clients: &mut [HttpClient],
    call: &Call,
    per_client: usize,
) -> Result<(Vec<Duration>, Duration)> {
    let started = Instant::now();
    let runs = clients.iter_mut().map(|client| async move {
        let mut latencies = Vec::with_capacity(per_client);
        for _ in 0..per_client {
            latencies.push(client.call(call).await?);
        }
        anyhow::Ok(latencies)
    });
    let results = futures_util::future::join_all(runs).await;
    let wall = started.elapsed();
    let mut latencies = Vec::new();
    for result in results {
        latencies.extend(result?);
    }
    Ok((latencies, wall))
}
