//! A bare-bones HTTP GET over wasi:http's outgoing-handler, for the test plugins that reach
//! a host (misbehave, generic-service).

use wasi::http::outgoing_handler;
use wasi::http::types::{ErrorCode, Fields, Method, OutgoingRequest, Scheme};
use wasi::io::streams::StreamError;

/// The most of a body that is read.
const BODY_CAP: usize = 64 * 1024;

/// Splits `url` into scheme, authority and path with query.
fn parse(url: &str) -> Result<(Scheme, &str, &str), String> {
    let (scheme, rest) = if let Some(rest) = url.strip_prefix("http://") {
        (Scheme::Http, rest)
    } else if let Some(rest) = url.strip_prefix("https://") {
        (Scheme::Https, rest)
    } else {
        return Err("not an http:// or https:// URL".into());
    };
    let rest = rest.split('#').next().unwrap_or(rest);
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    if authority.is_empty() {
        return Err("the URL has no host".into());
    }
    Ok((scheme, authority, path))
}

/// A wasi:http error code in its `Debug` form, without the type name: `HttpRequestDenied`,
/// `DnsError(DnsErrorPayload { .. })`.
fn describe(e: &ErrorCode) -> String {
    let text = format!("{e:?}");
    match text.strip_prefix("ErrorCode::") {
        Some(rest) => rest.to_string(),
        None => text,
    }
}

/// The status and up to [`BODY_CAP`] bytes of the body. Errors carry the wasi:http
/// `ErrorCode` as [`describe`] writes it.
pub fn get(url: &str) -> Result<(u16, Vec<u8>), String> {
    let (scheme, authority, path) = parse(url)?;
    // A path such as `?q` needs its leading slash.
    let path = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/{path}")
    };

    let request = OutgoingRequest::new(Fields::new());
    request
        .set_method(&Method::Get)
        .map_err(|()| "cannot set the method")?;
    request
        .set_scheme(Some(&scheme))
        .map_err(|()| "cannot set the scheme")?;
    request
        .set_authority(Some(authority))
        .map_err(|()| format!("invalid authority `{authority}`"))?;
    request
        .set_path_with_query(Some(&path))
        .map_err(|()| format!("invalid path `{path}`"))?;

    let future = outgoing_handler::handle(request, None).map_err(|e| describe(&e))?;
    future.subscribe().block();
    let response = match future.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(e))) => return Err(describe(&e)),
        Some(Err(())) => return Err("the response was already taken".into()),
        None => return Err("the response is not ready after waiting for it".into()),
    };
    let status = response.status();

    // Declared in this order so they drop in reverse: a stream before its body, a body before
    // its response, as the component model requires of child resources.
    let body = response
        .consume()
        .map_err(|()| "cannot take the response body")?;
    let stream = body
        .stream()
        .map_err(|()| "cannot open the response body")?;
    let mut bytes = Vec::new();
    while bytes.len() < BODY_CAP {
        match stream.blocking_read((BODY_CAP - bytes.len()) as u64) {
            Ok(chunk) => bytes.extend_from_slice(&chunk),
            Err(StreamError::Closed) => break,
            Err(StreamError::LastOperationFailed(e)) => {
                return Err(format!("reading the body failed: {}", e.to_debug_string()));
            }
        }
    }
    Ok((status, bytes))
}
