//! HTTP requests from a plugin, over `wasi:http`: to the hosts the plugin's `network` grant
//! lists, and nowhere else (the host refuses the rest).
//!
//! ```no_run
//! use palisade_sdk::http;
//!
//! # fn run() -> Result<(), http::Error> {
//! let issues: serde_json::Value = http::get("https://api.github.com/repos/o/r/issues")
//!     .header("accept", "application/vnd.github+json")
//!     .bearer(&palisade_sdk::secret("GITHUB_TOKEN")?)
//!     .send()?
//!     .error_for_status()?
//!     .json()?;
//!
//! let created = http::post("https://api.example.com/v1/notes")
//!     .json(&serde_json::json!({ "text": "hello" }))
//!     .timeout(std::time::Duration::from_secs(5))
//!     .send()?;
//! # Ok(()) }
//! ```
//!
//! - **Redirects** are followed (up to 5 by default, [`Request::max_redirects`]); every hop is a
//!   new request the host checks against the grant, and a hop to another host drops the
//!   `authorization` and `cookie` headers.
//! - **Timeouts**: one deadline for the whole exchange, headers and body, 30 s by default
//!   ([`Request::timeout`]); the call's own time limit still applies.
//! - **Size**: [`Response::bytes`], [`Response::text`] and [`Response::json`] read at most
//!   [`DEFAULT_MAX_BODY`] (10 MiB) unless [`Request::max_body`] says otherwise; a larger body is
//!   an error, never cut short silently. [`Response::read`] streams it in pieces instead.
//! - **Errors** say what to do: a host without a grant names the `network` entry to add.

use std::fmt;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use wasi::clocks::monotonic_clock;
use wasi::http::outgoing_handler;
use wasi::http::types::{
    ErrorCode, Fields, IncomingBody, IncomingResponse, Method, OutgoingBody, OutgoingRequest,
    RequestOptions, Scheme,
};
use wasi::io::poll;
use wasi::io::streams::{InputStream, StreamError};

/// The most of a response body [`Response::bytes`] reads unless told otherwise: 10 MiB.
pub const DEFAULT_MAX_BODY: usize = 10 << 20;
/// How long a whole exchange may take unless told otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// How many redirects are followed unless told otherwise.
pub const DEFAULT_MAX_REDIRECTS: u32 = 5;

/// The largest piece written to or read from a stream at once; `wasi:http` hosts accept
/// 4096 bytes per blocking write.
const CHUNK: usize = 4096;

/// Starts a `GET` request.
pub fn get(url: impl Into<String>) -> Request {
    Request::new("GET", url)
}

/// Starts a `POST` request.
pub fn post(url: impl Into<String>) -> Request {
    Request::new("POST", url)
}

/// Starts a `PUT` request.
pub fn put(url: impl Into<String>) -> Request {
    Request::new("PUT", url)
}

/// Starts a `PATCH` request.
pub fn patch(url: impl Into<String>) -> Request {
    Request::new("PATCH", url)
}

/// Starts a `DELETE` request.
pub fn delete(url: impl Into<String>) -> Request {
    Request::new("DELETE", url)
}

/// What went wrong, for programs; [`Error`]'s message says it for people.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The URL cannot be requested: not http(s), no host, a bad header.
    InvalidRequest,
    /// The host refused the request: the plugin has no grant for that host.
    NotGranted,
    /// The name resolves to a loopback or private address, which a name grant does not cover.
    LocalAddress,
    /// The deadline passed.
    Timeout,
    /// The body is larger than allowed.
    TooLarge,
    /// The server answered with an error status ([`Response::error_for_status`]).
    Status,
    /// More redirects than allowed, or one without a usable `location`.
    Redirect,
    /// The body is not what it was read as: not UTF-8, not the JSON expected.
    Decode,
    /// Connecting, sending or receiving failed.
    Transport,
    /// A secret the request needed was not given ([`crate::secret`]).
    MissingSecret,
}

/// A failed request, with a message that says what to do about it.
#[derive(Debug, Clone)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    status: Option<u16>,
}

impl Error {
    fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            status: None,
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// A request that needed a secret the plugin was not given.
    pub(crate) fn missing_secret(message: String) -> Error {
        Error::new(ErrorKind::MissingSecret, message)
    }

    /// The response's status, for an [`ErrorKind::Status`] error.
    pub fn status(&self) -> Option<u16> {
        self.status
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// So tools returning `Result<_, String>` can use `?` on requests.
impl From<Error> for String {
    fn from(e: Error) -> String {
        e.message
    }
}

impl From<Error> for crate::PluginError {
    fn from(e: Error) -> crate::PluginError {
        crate::PluginError::internal(e.message)
    }
}

/// A request being built; [`send`](Request::send) sends it.
#[derive(Debug, Clone)]
#[must_use = "a request does nothing until it is sent"]
pub struct Request {
    method: String,
    url: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    timeout: Duration,
    max_body: usize,
    max_redirects: u32,
}

impl Request {
    /// A request with any method (`GET`, `POST`, `HEAD`, ...).
    pub fn new(method: impl Into<String>, url: impl Into<String>) -> Request {
        Request {
            method: method.into(),
            url: url.into(),
            headers: Vec::new(),
            body: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            max_body: DEFAULT_MAX_BODY,
            max_redirects: DEFAULT_MAX_REDIRECTS,
        }
    }

    /// Adds a header; a name given twice is sent twice.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Request {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sets `authorization: Bearer TOKEN`.
    pub fn bearer(self, token: &str) -> Request {
        self.header("authorization", format!("Bearer {token}"))
    }

    /// Appends `name=value` pairs to the URL's query, percent-encoded.
    pub fn query<K: AsRef<str>, V: AsRef<str>>(mut self, pairs: &[(K, V)]) -> Request {
        for (name, value) in pairs {
            let separator = if self.url.contains('?') { '&' } else { '?' };
            self.url.push(separator);
            self.url.push_str(&crate::percent_encode(name.as_ref()));
            self.url.push('=');
            self.url.push_str(&crate::percent_encode(value.as_ref()));
        }
        self
    }

    /// Sends these bytes as the body.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Request {
        self.body = body.into();
        self
    }

    /// Sends `value` as a JSON body, with `content-type: application/json`.
    pub fn json<T: Serialize + ?Sized>(self, value: &T) -> Request {
        // Serializing to a vector fails only for maps with non-string keys: send what there is
        // and let the server refuse it rather than panicking in the plugin.
        let body = serde_json::to_vec(value).unwrap_or_default();
        self.header("content-type", "application/json").body(body)
    }

    /// Sends `pairs` as an `application/x-www-form-urlencoded` body.
    pub fn form<K: AsRef<str>, V: AsRef<str>>(self, pairs: &[(K, V)]) -> Request {
        let body: Vec<String> = pairs
            .iter()
            .map(|(k, v)| {
                format!(
                    "{}={}",
                    crate::percent_encode(k.as_ref()),
                    crate::percent_encode(v.as_ref())
                )
            })
            .collect();
        self.header("content-type", "application/x-www-form-urlencoded")
            .body(body.join("&"))
    }

    /// How long the whole exchange may take, redirects and body included (default 30 s).
    pub fn timeout(mut self, timeout: Duration) -> Request {
        self.timeout = timeout;
        self
    }

    /// The most bytes of body [`Response::bytes`] and friends read (default 10 MiB).
    pub fn max_body(mut self, bytes: usize) -> Request {
        self.max_body = bytes;
        self
    }

    /// How many redirects are followed (default 5); 0 returns the redirect itself.
    pub fn max_redirects(mut self, redirects: u32) -> Request {
        self.max_redirects = redirects;
        self
    }

    /// Sends the request and waits for the response's status and headers, following
    /// redirects. The body is read when asked for.
    pub fn send(self) -> Result<Response, Error> {
        let deadline = Deadline::after(self.timeout);
        let mut hop = self;
        let mut redirects = 0;
        loop {
            let response = send_once(&hop, &deadline)?;
            let Some(next) = redirect(&hop, &response)? else {
                return Ok(response);
            };
            if redirects == hop.max_redirects {
                if hop.max_redirects == 0 {
                    return Ok(response);
                }
                return Err(Error::new(
                    ErrorKind::Redirect,
                    format!(
                        "{} {}: more than {} redirects (allow more with .max_redirects)",
                        hop.method, hop.url, hop.max_redirects
                    ),
                ));
            }
            redirects += 1;
            hop = next;
        }
    }
}

/// The request a redirect response asks for, if it is one.
fn redirect(request: &Request, response: &Response) -> Result<Option<Request>, Error> {
    let status = response.status;
    if !matches!(status, 301 | 302 | 303 | 307 | 308) {
        return Ok(None);
    }
    let Some(location) = response.header("location") else {
        return Ok(None);
    };
    let url = resolve(&request.url, location).map_err(|why| {
        Error::new(
            ErrorKind::Redirect,
            format!("{}: redirected to `{location}`, {why}", request.url),
        )
    })?;
    let mut next = request.clone();
    // As browsers do: 303, and 301/302 after a POST, become a GET without a body.
    if status == 303 || (matches!(status, 301 | 302) && request.method == "POST") {
        next.method = "GET".into();
        next.body.clear();
        next.headers
            .retain(|(name, _)| !name.eq_ignore_ascii_case("content-type"));
    }
    // Credentials meant for one origin do not follow the request to another.
    if origin(&url) != origin(&request.url) {
        next.headers.retain(|(name, _)| {
            !["authorization", "cookie", "proxy-authorization"]
                .iter()
                .any(|secret| name.eq_ignore_ascii_case(secret))
        });
    }
    next.url = url;
    Ok(Some(next))
}

/// A URL's scheme and authority.
fn origin(url: &str) -> Option<(&str, String)> {
    let parts = Url::parse(url).ok()?;
    Some((parts.scheme, parts.authority.to_ascii_lowercase()))
}

/// `location` resolved against `base`: absolute, scheme-relative, absolute-path or relative.
fn resolve(base: &str, location: &str) -> Result<String, String> {
    let location = location.trim();
    if location.starts_with("http://") || location.starts_with("https://") {
        return Ok(location.to_string());
    }
    let base = Url::parse(base)?;
    if let Some(rest) = location.strip_prefix("//") {
        return Ok(format!("{}://{rest}", base.scheme));
    }
    if location.contains("://") {
        return Err("which is not an http(s) URL".into());
    }
    let prefix = format!("{}://{}", base.scheme, base.authority);
    let path = base.path.split('?').next().unwrap_or("/");
    if location.starts_with('/') {
        Ok(format!("{prefix}{location}"))
    } else if location.starts_with('?') {
        Ok(format!("{prefix}{path}{location}"))
    } else {
        let directory = &path[..path.rfind('/').map_or(0, |i| i + 1)];
        Ok(format!("{prefix}{directory}{location}"))
    }
}

/// An http(s) URL in the three parts `wasi:http` takes.
struct Url<'a> {
    scheme: &'a str,
    authority: &'a str,
    /// The path and query, starting with `/`; the fragment is left out.
    path: String,
}

impl<'a> Url<'a> {
    fn parse(url: &'a str) -> Result<Url<'a>, String> {
        let (scheme, rest) = url
            .split_once("://")
            .filter(|(scheme, _)| *scheme == "http" || *scheme == "https")
            .ok_or("not an http:// or https:// URL")?;
        let rest = rest.split('#').next().unwrap_or(rest);
        let (authority, path) = match rest.find(['/', '?']) {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if authority.is_empty() {
            return Err("the URL has no host".into());
        }
        if authority.contains('@') {
            return Err("user names and passwords in URLs are not sent: use a header".into());
        }
        let path = if path.starts_with('/') {
            path.to_string()
        } else {
            format!("/{path}")
        };
        Ok(Url {
            scheme,
            authority,
            path,
        })
    }

    /// The `network` entry that grants this URL, as the host writes it.
    fn grant(&self) -> String {
        let https = self.scheme == "https";
        let authority = self.authority.to_ascii_lowercase();
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if !port.contains(']') => (host.to_string(), Some(port.to_string())),
            _ => (authority.clone(), None),
        };
        match (https, port.as_deref()) {
            (true, None | Some("443")) => host,
            (true, Some(port)) => format!("{host}:{port}"),
            (false, None | Some("80")) => format!("http://{host}"),
            (false, Some(port)) => format!("http://{host}:{port}"),
        }
    }
}

/// The instant an exchange must be over by.
#[derive(Debug, Clone, Copy)]
struct Deadline(monotonic_clock::Instant);

impl Deadline {
    fn after(timeout: Duration) -> Deadline {
        let nanos = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
        Deadline(monotonic_clock::now().saturating_add(nanos))
    }

    /// Nanoseconds left, at least 1 so a passed deadline still times out rather than waiting
    /// forever.
    fn left(&self) -> u64 {
        self.0.saturating_sub(monotonic_clock::now()).max(1)
    }

    fn passed(&self) -> bool {
        monotonic_clock::now() >= self.0
    }
}

/// One request, no redirects followed.
fn send_once(request: &Request, deadline: &Deadline) -> Result<Response, Error> {
    let what = format!("{} {}", request.method, request.url);
    let invalid = |why: String| Error::new(ErrorKind::InvalidRequest, format!("{what}: {why}"));
    let url = Url::parse(&request.url).map_err(invalid)?;

    let mut pairs: Vec<(String, Vec<u8>)> = request
        .headers
        .iter()
        .map(|(name, value)| (name.to_ascii_lowercase(), value.clone().into_bytes()))
        .collect();
    // A known length rather than chunks: some APIs refuse chunked requests.
    if !request.body.is_empty() && !pairs.iter().any(|(name, _)| name == "content-length") {
        pairs.push((
            "content-length".into(),
            request.body.len().to_string().into_bytes(),
        ));
    }
    let headers = Fields::from_list(&pairs)
        .map_err(|e| invalid(format!("a header is not allowed ({e:?})")))?;
    let outgoing = OutgoingRequest::new(headers);
    let method = match request.method.to_ascii_uppercase().as_str() {
        "GET" => Method::Get,
        "HEAD" => Method::Head,
        "POST" => Method::Post,
        "PUT" => Method::Put,
        "DELETE" => Method::Delete,
        "CONNECT" => Method::Connect,
        "OPTIONS" => Method::Options,
        "TRACE" => Method::Trace,
        "PATCH" => Method::Patch,
        other => Method::Other(other.to_string()),
    };
    outgoing
        .set_method(&method)
        .map_err(|()| invalid(format!("`{}` is not a method", request.method)))?;
    let scheme = if url.scheme == "https" {
        Scheme::Https
    } else {
        Scheme::Http
    };
    outgoing
        .set_scheme(Some(&scheme))
        .map_err(|()| invalid("the scheme is not allowed".into()))?;
    outgoing
        .set_authority(Some(url.authority))
        .map_err(|()| invalid(format!("`{}` is not a valid host", url.authority)))?;
    outgoing
        .set_path_with_query(Some(&url.path))
        .map_err(|()| invalid(format!("`{}` is not a valid path", url.path)))?;

    // Every phase gets what is left of the one deadline; the body reads check it too.
    let options = RequestOptions::new();
    let left = deadline.left();
    // A host may not support a timeout; the body reads still keep the deadline.
    let _ = options.set_connect_timeout(Some(left));
    let _ = options.set_first_byte_timeout(Some(left));
    let _ = options.set_between_bytes_timeout(Some(left));

    let body = outgoing
        .body()
        .map_err(|()| invalid("the request body was already taken".into()))?;
    let future =
        outgoing_handler::handle(outgoing, Some(options)).map_err(|e| failure(&what, &url, &e))?;
    write_body(&body, &request.body).map_err(|why| {
        Error::new(
            ErrorKind::Transport,
            format!("{what}: sending the body failed: {why}"),
        )
    })?;
    OutgoingBody::finish(body, None).map_err(|e| failure(&what, &url, &e))?;

    let ready = future.subscribe();
    let timer = monotonic_clock::subscribe_instant(deadline.0);
    poll::poll(&[&ready, &timer]);
    drop(timer);
    drop(ready);
    let response = match future.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(e))) => return Err(failure(&what, &url, &e)),
        Some(Err(())) => {
            return Err(Error::new(
                ErrorKind::Transport,
                format!("{what}: the response was already taken"),
            ));
        }
        None => return Err(timed_out(&what, request.timeout)),
    };
    Response::new(response, request, what, *deadline)
}

fn write_body(body: &OutgoingBody, bytes: &[u8]) -> Result<(), String> {
    if bytes.is_empty() {
        return Ok(());
    }
    let stream = body.write().map_err(|()| "cannot open the body")?;
    for chunk in bytes.chunks(CHUNK) {
        stream
            .blocking_write_and_flush(chunk)
            .map_err(|e| stream_error(&e))?;
    }
    Ok(())
}

fn stream_error(e: &StreamError) -> String {
    match e {
        StreamError::Closed => "the connection closed".into(),
        StreamError::LastOperationFailed(e) => e.to_debug_string(),
    }
}

fn timed_out(what: &str, timeout: Duration) -> Error {
    Error::new(
        ErrorKind::Timeout,
        format!(
            "{what}: no complete answer within {:.1} s (allow longer with .timeout)",
            timeout.as_secs_f64()
        ),
    )
}

/// A `wasi:http` error code in words, naming the grant to add when the host refused.
fn failure(what: &str, url: &Url<'_>, e: &ErrorCode) -> Error {
    let (kind, why) = match e {
        ErrorCode::HttpRequestDenied => (
            ErrorKind::NotGranted,
            format!(
                "host not granted: add `network = [\"{}\"]` to the plugin's section of the \
                 server's configuration",
                url.grant()
            ),
        ),
        ErrorCode::DestinationIpProhibited => (
            ErrorKind::LocalAddress,
            format!(
                "{} resolves to a loopback or private address, which a name's grant does not \
                 cover: grant the address itself",
                url.authority
            ),
        ),
        ErrorCode::ConnectionTimeout
        | ErrorCode::ConnectionReadTimeout
        | ErrorCode::ConnectionWriteTimeout
        | ErrorCode::HttpResponseTimeout => (ErrorKind::Timeout, "timed out".to_string()),
        ErrorCode::DnsError(payload) => (
            ErrorKind::Transport,
            format!(
                "cannot resolve the host's name ({})",
                payload.rcode.as_deref().unwrap_or("no answer")
            ),
        ),
        ErrorCode::ConnectionRefused => (ErrorKind::Transport, "connection refused".to_string()),
        ErrorCode::HttpRequestUriInvalid => (ErrorKind::InvalidRequest, "invalid URL".to_string()),
        other => {
            let text = format!("{other:?}");
            let text = text
                .strip_prefix("ErrorCode::")
                .unwrap_or(&text)
                .to_string();
            (ErrorKind::Transport, text)
        }
    };
    Error::new(kind, format!("{what}: {why}"))
}

/// A response: its status and headers, and a body read when asked for.
pub struct Response {
    // Declared in this order so they drop in reverse of how they were made: the stream before
    // its body, the body before its response, as the component model requires of child
    // resources.
    stream: InputStream,
    _body: IncomingBody,
    _response: IncomingResponse,
    status: u16,
    headers: Vec<(String, String)>,
    url: String,
    what: String,
    deadline: Deadline,
    timeout: Duration,
    max_body: usize,
    read: usize,
}

impl fmt::Debug for Response {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Response")
            .field("status", &self.status)
            .field("url", &self.url)
            .field("headers", &self.headers)
            .finish_non_exhaustive()
    }
}

impl Response {
    fn new(
        response: IncomingResponse,
        request: &Request,
        what: String,
        deadline: Deadline,
    ) -> Result<Response, Error> {
        let headers = response
            .headers()
            .entries()
            .into_iter()
            .map(|(name, value)| (name, String::from_utf8_lossy(&value).into_owned()))
            .collect();
        let transport = |why: &str| Error::new(ErrorKind::Transport, format!("{what}: {why}"));
        let body = response
            .consume()
            .map_err(|()| transport("cannot take the response body"))?;
        let stream = body
            .stream()
            .map_err(|()| transport("cannot open the response body"))?;
        Ok(Response {
            stream,
            _body: body,
            status: response.status(),
            _response: response,
            headers,
            url: request.url.clone(),
            what,
            deadline,
            timeout: request.timeout,
            max_body: request.max_body,
            read: 0,
        })
    }

    /// The status code.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The URL that answered: the request's, or where its redirects led.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The first value of a header, by name in any case.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Every header, names in lower case, in the order received.
    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }

    /// The response itself when its status is below 400; otherwise an [`ErrorKind::Status`]
    /// error with the status and the start of the body, which usually says why.
    pub fn error_for_status(mut self) -> Result<Response, Error> {
        if self.status < 400 {
            return Ok(self);
        }
        self.max_body = self.max_body.min(512);
        let excerpt = match self.read_all() {
            Ok(bytes) => String::from_utf8_lossy(&bytes).trim().to_string(),
            Err(e) if e.kind == ErrorKind::TooLarge => "(a long body)".to_string(),
            Err(_) => String::new(),
        };
        let mut message = format!("{}: the server answered {}", self.what, self.status);
        if !excerpt.is_empty() {
            message.push_str(": ");
            message.push_str(&excerpt);
        }
        Err(Error {
            kind: ErrorKind::Status,
            message,
            status: Some(self.status),
        })
    }

    /// The next piece of the body, `None` at its end. Pieces count against the body limit.
    pub fn read(&mut self) -> Result<Option<Vec<u8>>, Error> {
        loop {
            match self.stream.read(CHUNK as u64 * 16) {
                Ok(chunk) if chunk.is_empty() => {}
                Ok(chunk) => {
                    self.read += chunk.len();
                    if self.read > self.max_body {
                        return Err(Error::new(
                            ErrorKind::TooLarge,
                            format!(
                                "{}: the body is larger than {} bytes (allow more with .max_body)",
                                self.what, self.max_body
                            ),
                        ));
                    }
                    return Ok(Some(chunk));
                }
                Err(StreamError::Closed) => return Ok(None),
                Err(e) => {
                    return Err(Error::new(
                        ErrorKind::Transport,
                        format!(
                            "{}: reading the body failed: {}",
                            self.what,
                            stream_error(&e)
                        ),
                    ));
                }
            }
            if self.deadline.passed() {
                return Err(timed_out(&self.what, self.timeout));
            }
            let ready = self.stream.subscribe();
            let timer = monotonic_clock::subscribe_instant(self.deadline.0);
            poll::poll(&[&ready, &timer]);
        }
    }

    fn read_all(&mut self) -> Result<Vec<u8>, Error> {
        let mut bytes = Vec::new();
        while let Some(chunk) = self.read()? {
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    }

    /// The whole body.
    pub fn bytes(mut self) -> Result<Vec<u8>, Error> {
        self.read_all()
    }

    /// The whole body as text; it must be UTF-8.
    pub fn text(mut self) -> Result<String, Error> {
        let bytes = self.read_all()?;
        String::from_utf8(bytes).map_err(|_| {
            Error::new(
                ErrorKind::Decode,
                format!("{}: the body is not UTF-8 text", self.what),
            )
        })
    }

    /// The whole body, parsed as JSON into `T` (`serde_json::Value` for any JSON).
    pub fn json<T: DeserializeOwned>(mut self) -> Result<T, Error> {
        let bytes = self.read_all()?;
        serde_json::from_slice(&bytes).map_err(|e| {
            Error::new(
                ErrorKind::Decode,
                format!("{}: the body is not the JSON expected: {e}", self.what),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_resolve_against_the_request() {
        let base = "https://api.example.com/v1/items?page=2";
        assert_eq!(
            resolve(base, "https://other.example/x").unwrap(),
            "https://other.example/x"
        );
        assert_eq!(
            resolve(base, "//cdn.example.com/a").unwrap(),
            "https://cdn.example.com/a"
        );
        assert_eq!(
            resolve(base, "/v2/items").unwrap(),
            "https://api.example.com/v2/items"
        );
        assert_eq!(
            resolve(base, "other").unwrap(),
            "https://api.example.com/v1/other"
        );
        assert_eq!(
            resolve(base, "?page=3").unwrap(),
            "https://api.example.com/v1/items?page=3"
        );
        assert!(resolve(base, "ftp://example.com/").is_err());
    }

    #[test]
    fn the_grant_named_in_errors_is_the_one_the_host_takes() {
        let grant = |url| Url::parse(url).unwrap().grant();
        assert_eq!(grant("https://API.example.com/x"), "api.example.com");
        assert_eq!(grant("https://api.example.com:443/"), "api.example.com");
        assert_eq!(
            grant("https://api.example.com:8443"),
            "api.example.com:8443"
        );
        assert_eq!(grant("http://127.0.0.1:8080/v1"), "http://127.0.0.1:8080");
        assert_eq!(grant("http://example.com"), "http://example.com");
        assert_eq!(grant("http://[::1]:9000/"), "http://[::1]:9000");
        assert_eq!(grant("http://[::1]/"), "http://[::1]");
    }

    #[test]
    fn urls_split_into_what_wasi_http_takes() {
        let url = Url::parse("https://example.com?q=1#top").unwrap();
        assert_eq!((url.scheme, url.authority), ("https", "example.com"));
        assert_eq!(url.path, "/?q=1");
        assert!(Url::parse("ftp://example.com/").is_err());
        assert!(Url::parse("https:///path").is_err());
        assert!(Url::parse("https://user:pw@example.com/").is_err());
    }

    #[test]
    fn query_pairs_are_percent_encoded() {
        let request = get("https://example.com/search?x=1").query(&[("q", "a b&c"), ("n", "2")]);
        assert_eq!(
            request.url,
            "https://example.com/search?x=1&q=a%20b%26c&n=2"
        );
    }
}
