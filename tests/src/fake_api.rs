//! A web API on loopback for the plugins that call one (fetch, github, weather, the SDKs' HTTP
//! clients): each test says how it answers, and reads back what it was sent. Over plain HTTP, or
//! over TLS (rustls) with a certificate the test made.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// A request the API received.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    /// The path with its query.
    pub path: String,
    /// Header names in lower case, in the order sent.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Seen {
    /// The first value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The path without its query.
    pub fn route(&self) -> &str {
        self.path.split('?').next().unwrap_or("")
    }

    /// The value of query parameter `name`, percent-decoded (`+` as a space).
    pub fn query(&self, name: &str) -> Option<String> {
        let query = self.path.split_once('?')?.1;
        query.split('&').find_map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(key) == name).then(|| decode(value))
        })
    }

    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn body_json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("the body is not JSON ({e}): {}", self.body_text()))
    }
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// How the API answers one request.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// How long to wait before answering.
    pub delay: Duration,
}

impl Reply {
    pub fn new(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Reply {
        Reply {
            status,
            headers: vec![("content-type".into(), content_type.into())],
            body: body.into(),
            delay: Duration::ZERO,
        }
    }

    pub fn json(status: u16, value: serde_json::Value) -> Reply {
        Reply::new(status, "application/json", value.to_string())
    }

    pub fn text(body: &str) -> Reply {
        Reply::new(200, "text/plain; charset=utf-8", body)
    }

    pub fn html(body: &str) -> Reply {
        Reply::new(200, "text/html; charset=utf-8", body)
    }

    pub fn redirect(status: u16, location: &str) -> Reply {
        let mut reply = Reply::new(status, "text/plain", "moved");
        reply.headers.push(("location".into(), location.into()));
        reply
    }

    pub fn not_found() -> Reply {
        Reply::json(404, serde_json::json!({ "message": "Not Found" }))
    }

    pub fn after(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }
}

type Route = dyn Fn(&Seen) -> Reply + Send + Sync;

/// The API: a thread per connection, one request per connection.
pub struct FakeApi {
    port: u16,
    scheme: &'static str,
    seen: Arc<Mutex<Vec<Seen>>>,
    /// TLS handshakes that failed, with rustls's reason (a client that did not trust us).
    handshake_failures: Arc<Mutex<Vec<String>>>,
}

impl FakeApi {
    /// Starts the API on 127.0.0.1; `route` answers each request. It lives as long as the test
    /// process.
    pub fn start(route: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> FakeApi {
        FakeApi::listen(None, Arc::new(route))
    }

    /// [`FakeApi::start`] over HTTPS, with the certificate and key of PEM files `cert` and `key`
    /// (see `loopback_tls_certificate`).
    pub fn start_tls(
        cert: &Path,
        key: &Path,
        route: impl Fn(&Seen) -> Reply + Send + Sync + 'static,
    ) -> FakeApi {
        let chain = CertificateDer::pem_file_iter(cert)
            .expect("read the certificate")
            .collect::<Result<Vec<_>, _>>()
            .expect("a PEM certificate");
        let key = PrivateKeyDer::from_pem_file(key).expect("a PEM private key");
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("ring's protocol versions")
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .expect("a usable certificate and key");
        FakeApi::listen(Some(Arc::new(config)), Arc::new(route))
    }

    fn listen(tls: Option<Arc<rustls::ServerConfig>>, route: Arc<Route>) -> FakeApi {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("local address").port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let handshake_failures = Arc::new(Mutex::new(Vec::new()));
        let scheme = if tls.is_some() { "https" } else { "http" };
        let (log, failures) = (seen.clone(), handshake_failures.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
                let (route, log, tls) = (route.clone(), log.clone(), tls.clone());
                let failures = failures.clone();
                std::thread::spawn(move || match tls {
                    None => {
                        serve(stream, &*route, &log);
                    }
                    Some(config) => {
                        let Ok(connection) = rustls::ServerConnection::new(config) else {
                            return;
                        };
                        let mut tls = rustls::StreamOwned::new(connection, stream);
                        while tls.conn.is_handshaking() {
                            if let Err(e) = tls.conn.complete_io(&mut tls.sock) {
                                failures.lock().unwrap().push(e.to_string());
                                return;
                            }
                        }
                        let tls = serve(tls, &*route, &log);
                        if let Some(mut tls) = tls {
                            tls.conn.send_close_notify();
                            let _ = tls.flush();
                        }
                    }
                });
            }
        });
        FakeApi {
            port,
            scheme,
            seen,
            handshake_failures,
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:PORT` (or `https://`) followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}://127.0.0.1:{}{path}", self.scheme, self.port)
    }

    /// The `network` grant for this API.
    pub fn grant(&self) -> String {
        format!("{}://127.0.0.1:{}", self.scheme, self.port)
    }

    /// Why TLS handshakes failed so far (a client that refused the certificate).
    pub fn handshake_failures(&self) -> Vec<String> {
        self.handshake_failures.lock().unwrap().clone()
    }

    /// Every request received so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// The last request received.
    pub fn last(&self) -> Seen {
        self.seen().pop().expect("the API has received no request")
    }
}

/// Answers one request on `stream`; gives the stream back once answered.
fn serve<S: Read + Write>(stream: S, route: &Route, log: &Mutex<Vec<Seen>>) -> Option<S> {
    let mut reader = BufReader::new(stream);
    let seen = read_request(&mut reader)?;
    log.lock().unwrap().push(seen.clone());
    let reply = route(&seen);
    std::thread::sleep(reply.delay);
    let out = reader.get_mut();
    let mut head = format!("HTTP/1.1 {} X\r\n", reply.status);
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "content-length: {}\r\nconnection: close\r\n\r\n",
        reply.body.len()
    ));
    let _ = out.write_all(head.as_bytes());
    let _ = out.write_all(&reply.body);
    let _ = out.flush();
    Some(reader.into_inner())
}

fn read_request(reader: &mut impl BufRead) -> Option<Seen> {
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let body = if let Some(length) = header("content-length") {
        let mut body = vec![0; length.parse().ok()?];
        reader.read_exact(&mut body).ok()?;
        body
    } else if header("transfer-encoding").is_some_and(|t| t.eq_ignore_ascii_case("chunked")) {
        read_chunked(reader)?
    } else {
        Vec::new()
    };
    Some(Seen {
        method,
        path,
        headers,
        body,
    })
}

fn read_chunked(reader: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        reader.read_line(&mut size).ok()?;
        let size = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
        let mut chunk = vec![0; size + 2];
        reader.read_exact(&mut chunk).ok()?;
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(&chunk[..size]);
    }
}
