//! The stateless revision (2026-07-28): what a request says about itself in `_meta`, and what
//! every result says back.

use serde_json::{Map, Value, json};

use crate::mcp::jsonrpc::{INVALID_PARAMS, RpcError};
use crate::mcp::session::logging::{LEVEL_NAMES, parse_level};
use crate::mcp::version::ProtocolVersion;
use crate::runtime::bindings::host::LogLevel;

/// `_meta` key: the revision the request is made in.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: what the client can do, per request.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: who the client is.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the least important log level the client wants.
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of results: who the server is.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key: the `subscriptions/listen` request a notification belongs to.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The HTTP headers did not match the body (or were missing or malformed).
pub const HEADER_MISMATCH: i64 = -32020;
/// The request needs a capability the client did not declare.
pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
/// The request's protocol version is not served.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// Methods that exist only in the stateless revision: a request for one is stateless even without
/// `_meta`, so it gets the stateless error for a missing `_meta`.
const STATELESS_ONLY_METHODS: [&str; 2] = ["server/discover", "subscriptions/listen"];

/// Every method a stateless request may name; anything else is `-32601` before `_meta` is read.
pub const STATELESS_METHODS: [&str; 13] = [
    "server/discover",
    "subscriptions/listen",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
];

/// Whether the stateless revision has `method`.
pub fn is_stateless_method(method: &str) -> bool {
    STATELESS_METHODS.contains(&method)
}

/// The version a request names in `_meta`, when it names one as a string.
pub fn requested_version(params: &Map<String, Value>) -> Option<&str> {
    params.get("_meta")?.get(META_PROTOCOL_VERSION)?.as_str()
}

/// Whether `method` does not exist in `requested`, a version served statelessly. Checked before
/// the rest of `_meta`, so an unknown method is `-32601` whatever else is wrong with the
/// request; under a version not served, the version is what is wrong.
pub fn unknown_method(method: &str, requested: Option<&str>) -> bool {
    requested
        .and_then(ProtocolVersion::parse_stateless)
        .is_some()
        && !is_stateless_method(method)
}

/// How long clients may reuse a list or discovery result. Lists change only on reloads, which
/// `subscriptions/listen` announces.
pub const LIST_TTL_MS: u64 = 60_000;

/// Whether a request (not in an HTTP+SSE session) is served statelessly: it names its version in
/// `_meta`, or calls a method only the stateless revision has.
pub fn is_stateless_request(method: &str, params: &Map<String, Value>) -> bool {
    STATELESS_ONLY_METHODS.contains(&method)
        || params
            .get("_meta")
            .and_then(|m| m.get(META_PROTOCOL_VERSION))
            .is_some()
}

/// What a stateless request says about itself in `_meta`.
#[derive(Debug, Clone)]
pub struct RequestMeta {
    /// The version as sent; see [`RequestMeta::version`].
    pub requested: String,
    /// The client's capabilities for this request, an object.
    pub capabilities: Value,
    /// The least severe log message the client wants for this request; `None`: no log messages.
    pub log_level: Option<LogLevel>,
}

impl RequestMeta {
    /// Reads `_meta`; a missing or malformed required field is `-32602` (HTTP 400).
    pub fn parse(params: &Map<String, Value>) -> Result<RequestMeta, RpcError> {
        let meta = params
            .get("_meta")
            .and_then(Value::as_object)
            .ok_or_else(|| {
                malformed(
                    "params._meta is missing: a 2026-07-28 request carries its protocol version \
                     and client capabilities there",
                )
            })?;
        let requested = meta
            .get(META_PROTOCOL_VERSION)
            .and_then(Value::as_str)
            .ok_or_else(|| {
                malformed(format!(
                    "params._meta[\"{META_PROTOCOL_VERSION}\"] must be a string"
                ))
            })?;
        let capabilities = meta
            .get(META_CLIENT_CAPABILITIES)
            .filter(|c| c.is_object())
            .ok_or_else(|| {
                malformed(format!(
                    "params._meta[\"{META_CLIENT_CAPABILITIES}\"] must be an object (empty when the client has none)"
                ))
            })?;
        let log_level = match meta.get(META_LOG_LEVEL) {
            None | Some(Value::Null) => None,
            Some(level) => Some(level.as_str().and_then(parse_level).ok_or_else(|| {
                malformed(format!(
                    "params._meta[\"{META_LOG_LEVEL}\"] must be one of {LEVEL_NAMES}"
                ))
            })?),
        };
        Ok(RequestMeta {
            requested: requested.to_string(),
            capabilities: capabilities.clone(),
            log_level,
        })
    }

    /// The requested version, if this server serves it statelessly; `-32022` otherwise.
    pub fn version(&self) -> Result<ProtocolVersion, RpcError> {
        ProtocolVersion::parse_stateless(&self.requested)
            .ok_or_else(|| unsupported_version(&self.requested))
    }

    /// The client's declared capability `name`, if any.
    pub fn capability(&self, name: &str) -> Option<&Value> {
        self.capabilities.get(name).filter(|c| c.is_object())
    }
}

fn malformed(message: impl Into<String>) -> RpcError {
    RpcError::new(INVALID_PARAMS, message)
}

/// `UnsupportedProtocolVersionError`: what we serve statelessly, and what was asked.
pub fn unsupported_version(requested: &str) -> RpcError {
    let supported: Vec<&str> = ProtocolVersion::STATELESS
        .iter()
        .map(|v| v.as_str())
        .collect();
    RpcError::new(
        UNSUPPORTED_PROTOCOL_VERSION,
        format!(
            "Unsupported protocol version `{requested}`: this server serves {} per request, and \
             {} after an initialize handshake",
            supported.join(", "),
            ProtocolVersion::WITH_SESSIONS
                .map(|v| v.as_str())
                .join(", ")
        ),
    )
    .with_data(json!({ "supported": supported, "requested": requested }))
}

/// Who may cache a result: shared caches only when it is the same for every client.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CacheScope {
    /// Any cache may keep the result: every client sees the same.
    Public,
    /// Only the client's own cache may keep it: what it sees depends on its token.
    Private,
}

/// Completes a result of the stateless revision: `resultType`, the server's identity, and for
/// cacheable methods how long it stays fresh and who may cache it.
pub fn finish_result(method: &str, result: &mut Value, lists: CacheScope) {
    let Some(fields) = result.as_object_mut() else {
        return;
    };
    fields
        .entry("resultType")
        .or_insert_with(|| "complete".into());
    let meta = fields
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(meta) = meta.as_object_mut() {
        meta.insert(META_SERVER_INFO.into(), server_info());
    }
    if fields.get("resultType").and_then(Value::as_str) != Some("complete") {
        // Interim results are not cacheable and carry no hints.
        return;
    }
    let hints = match method {
        "server/discover" | "tools/list" | "prompts/list" | "resources/templates/list" => {
            Some((LIST_TTL_MS, lists))
        }
        // Listed live from the plugins (their files change), and read content is whatever the
        // plugin returns now: fresh only at once, and never shared.
        "resources/list" => Some((0, lists)),
        "resources/read" => Some((0, CacheScope::Private)),
        _ => None,
    };
    if let Some((ttl, scope)) = hints {
        fields.insert("ttlMs".into(), ttl.into());
        let scope = match scope {
            CacheScope::Public => "public",
            CacheScope::Private => "private",
        };
        fields.insert("cacheScope".into(), scope.into());
    }
}

/// The server's name and version, as results carry them.
pub fn server_info() -> Value {
    json!({ "name": "palisade", "title": "Palisade", "version": env!("CARGO_PKG_VERSION") })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(meta: Value) -> Map<String, Value> {
        json!({ "_meta": meta }).as_object().unwrap().clone()
    }

    #[test]
    fn required_meta_fields_are_checked_in_order() {
        let err = |p: Map<String, Value>| RequestMeta::parse(&p).unwrap_err().code;
        assert_eq!(err(Map::new()), INVALID_PARAMS);
        assert_eq!(
            err(params(json!({ META_CLIENT_CAPABILITIES: {} }))),
            INVALID_PARAMS
        );
        assert_eq!(
            err(params(json!({ META_PROTOCOL_VERSION: "2026-07-28" }))),
            INVALID_PARAMS
        );
        assert_eq!(
            err(params(json!({ META_PROTOCOL_VERSION: "2026-07-28",
                META_CLIENT_CAPABILITIES: {}, META_LOG_LEVEL: "loud" }))),
            INVALID_PARAMS
        );
        let meta = RequestMeta::parse(&params(json!({
            META_PROTOCOL_VERSION: "1999-01-01",
            META_CLIENT_CAPABILITIES: { "sampling": {} },
            META_LOG_LEVEL: "warning",
        })))
        .unwrap();
        assert_eq!(meta.log_level, Some(LogLevel::Warning));
        assert!(meta.capability("sampling").is_some());
        assert!(meta.capability("elicitation").is_none());
        let unsupported = meta.version().unwrap_err();
        assert_eq!(unsupported.code, UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(
            unsupported.data,
            Some(json!({ "supported": ["2026-07-28"], "requested": "1999-01-01" }))
        );
    }

    #[test]
    fn results_get_their_type_identity_and_cache_hints() {
        let mut list = json!({ "tools": [] });
        finish_result("tools/list", &mut list, CacheScope::Public);
        assert_eq!(list["resultType"], "complete");
        assert_eq!(list["ttlMs"], LIST_TTL_MS);
        assert_eq!(list["cacheScope"], "public");
        assert_eq!(list["_meta"][META_SERVER_INFO]["name"], "palisade");
        let mut read = json!({ "contents": [] });
        finish_result("resources/read", &mut read, CacheScope::Public);
        assert_eq!(read["cacheScope"], "private");
        let mut interim = json!({ "resultType": "input_required", "requestState": "s" });
        finish_result("resources/read", &mut interim, CacheScope::Public);
        assert!(interim.get("ttlMs").is_none());
        let mut call = json!({ "content": [] });
        finish_result("tools/call", &mut call, CacheScope::Public);
        assert!(call.get("ttlMs").is_none());
        assert_eq!(call["resultType"], "complete");
    }
}
