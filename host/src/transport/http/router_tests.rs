//! The router in process, as axum's own tests drive theirs: a request in, the response out, no
//! socket. The end-to-end HTTP tests (tests/tests/http*.rs) cover the same paths over TCP.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode, header};
use serde_json::{Value, json};
use tower::ServiceExt as _;

use super::guard::AllowList;
use super::streams::ServerHistory;
use super::{AppState, HttpOptions, router};
use crate::catalog::{Catalog, HostTool};
use crate::config::AccessConfig;
use crate::config::access::{Scope, Token, sha256};
use crate::mcp::Server;
use crate::mcp::stateless::input_round::StateSettings;
use crate::mcp::stateless::request_state::StateKey;
use crate::runtime::bindings::tools::{CallResult, Tool};

const TOKEN: &str = "a-token-of-the-tests";

/// One tool compiled into the host, so a token's scope covers something served.
fn noop_tool() -> HostTool {
    HostTool {
        owner: "in-host",
        tool: Tool {
            name: "noop".into(),
            title: None,
            description: Some("Does nothing".into()),
            input_schema: r#"{"type":"object"}"#.into(),
            output_schema: None,
            annotations: None,
            task_support: crate::runtime::bindings::tools::TaskSupport::Forbidden,
            icons: Vec::new(),
            meta: None,
        },
        run: |_| CallResult {
            content: Vec::new(),
            structured_content: None,
            is_error: false,
            meta: None,
        },
    }
}

/// The router of a server serving one in-host tool, with or without a token.
fn app(with_token: bool) -> axum::Router {
    app_and_server(with_token).0
}

/// [`app`], and the server behind it.
fn app_and_server(with_token: bool) -> (axum::Router, Arc<Server>) {
    let mut access = AccessConfig::default();
    if with_token {
        access.tokens.push(Token {
            name: "ci".into(),
            sha256: sha256(TOKEN),
            scope: Arc::new(Scope::all()),
        });
    }
    let catalog = Catalog::new(Vec::new(), vec![noop_tool()]).unwrap();
    let settings = StateSettings {
        key: StateKey::from_secret(&"k".repeat(32)).unwrap(),
        ttl: Duration::from_secs(60),
    };
    let server = Server::new(
        catalog,
        50,
        Default::default(),
        access,
        settings,
        crate::grants::UserGrants::beside(None),
        Default::default(),
    );
    let options = HttpOptions {
        listen: "127.0.0.1:0".parse().unwrap(),
        allow: AllowList::default(),
        idle_timeout: Duration::from_secs(60),
        max_body_bytes: 1 << 20,
        header_timeout: Duration::from_secs(5),
        body_timeout: Duration::from_secs(5),
        max_sessions: 4,
        max_sessions_per_client: 2,
        connections: Default::default(),
    };
    let app = router(Arc::new(AppState {
        server: server.clone(),
        options,
        sessions: Mutex::new(HashMap::new()),
        sse_2024: Mutex::new(HashMap::new()),
        history: ServerHistory::default(),
        oauth: None,
        shared: None,
    }));
    (app, server)
}

fn post(body: &Value) -> axum::http::request::Builder {
    Request::post("/mcp")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .extension(ConnectInfo(SocketAddr::from(([127, 0, 0, 1], 50000))))
        .extension(body.clone())
}

/// Sends `request` (its JSON body taken from the extension `post` left, `Host` a loopback one
/// unless it has its own) through the router.
async fn send(
    app: axum::Router,
    mut request: axum::http::request::Builder,
) -> (StatusCode, HeaderMapAndBody) {
    if !request
        .headers_ref()
        .is_some_and(|h| h.contains_key(header::HOST))
    {
        request = request.header(header::HOST, "127.0.0.1:8080");
    }
    let body = request
        .extensions_ref()
        .and_then(|e| e.get::<Value>().cloned())
        .map(|v| Body::from(v.to_string()))
        .unwrap_or_else(Body::empty);
    let response = app.oneshot(request.body(body).unwrap()).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    let json = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, HeaderMapAndBody { headers, json })
}

struct HeaderMapAndBody {
    headers: axum::http::HeaderMap,
    json: Value,
}

fn initialize() -> Value {
    json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": { "name": "router-test", "version": "1" } } })
}

#[tokio::test]
async fn a_foreign_origin_is_refused_before_the_body_is_read() {
    let request = post(&json!("not even JSON-RPC")).header(header::ORIGIN, "https://evil.example");
    let (status, answer) = send(app(false), request).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(
        answer.json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Origin"),
        "{}",
        answer.json
    );
}

#[tokio::test]
async fn readyz_says_loading_then_degraded_then_stopping_without_naming_plugins() {
    let (app, server) = app_and_server(true);
    let ready = || Request::get("/readyz").header(header::HOST, "127.0.0.1:8080");
    // No token needed: load balancers probe it.
    let (status, answer) = send(app.clone(), ready()).await;
    assert_eq!(
        (status, answer.json.clone()),
        (StatusCode::OK, json!({"status": "ready"}))
    );
    server.loading.begin(vec![crate::mcp::Pending {
        name: "slow".into(),
        prefix: "slow".into(),
        wait: Duration::from_secs(1),
    }]);
    let (status, answer) = send(app.clone(), ready()).await;
    assert_eq!(
        (status, answer.json.clone()),
        (
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"status": "loading"})
        )
    );
    let (_, detail) = crate::transport::health::readiness(&server, true);
    assert_eq!(detail["loading"], json!(["slow"]));
    // Loaded, but not served: it failed.
    server.loading.finished("slow");
    let (status, answer) = send(app.clone(), ready()).await;
    assert_eq!(
        (status, answer.json.clone()),
        (StatusCode::OK, json!({"status": "degraded"}))
    );
    let (_, detail) = crate::transport::health::readiness(&server, true);
    assert_eq!(detail["failed"], json!(["slow"]));
    server.shutdown.begin();
    let (status, answer) = send(app, ready()).await;
    assert_eq!(
        (status, answer.json),
        (
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"status": "stopping"})
        )
    );
}

#[tokio::test]
async fn a_rebound_host_is_refused() {
    let request = post(&initialize()).header(header::HOST, "attacker.example");
    let (status, _) = send(app(false), request).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn tokens_are_checked_by_the_middleware_for_every_route() {
    for uri in ["/mcp", "/messages?sessionId=x"] {
        let request = post(&initialize()).uri(uri);
        let (status, answer) = send(app(true), request).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{uri}");
        assert!(
            answer.headers.contains_key(header::WWW_AUTHENTICATE),
            "{uri}"
        );
    }
    let wrong = post(&initialize()).header(header::AUTHORIZATION, "Bearer not-it");
    assert_eq!(send(app(true), wrong).await.0, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn the_caller_reaches_the_handler_and_names_the_session() {
    let app = app(true);
    let request = post(&initialize()).header(header::AUTHORIZATION, format!("Bearer {TOKEN}"));
    let (status, answer) = send(app.clone(), request).await;
    assert_eq!(status, StatusCode::OK, "{}", answer.json);
    assert_eq!(answer.json["result"]["protocolVersion"], "2025-11-25");
    let session = answer.headers["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    // The session belongs to the token: deleting it needs the same token.
    let delete = |auth: Option<String>| {
        let mut request = Request::delete("/mcp")
            .header(header::HOST, "localhost")
            .header("mcp-session-id", &session)
            .extension(ConnectInfo(SocketAddr::from(([127, 0, 0, 1], 50001))));
        if let Some(auth) = auth {
            request = request.header(header::AUTHORIZATION, auth);
        }
        request
    };
    assert_eq!(
        send(app.clone(), delete(None)).await.0,
        StatusCode::UNAUTHORIZED
    );
    let (status, _) = send(app.clone(), delete(Some(format!("Bearer {TOKEN}")))).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
}

#[tokio::test]
async fn a_cors_preflight_is_answered_without_the_caller_checks() {
    let request = Request::options("/mcp")
        .header(header::HOST, "127.0.0.1:8080")
        .header(header::ORIGIN, "http://localhost:5173")
        .header(header::ACCESS_CONTROL_REQUEST_METHOD, "POST")
        .extension(ConnectInfo(SocketAddr::from(([127, 0, 0, 1], 50002))));
    let (status, answer) = send(app(true), request).await;
    assert!(status.is_success(), "{status}");
    assert_eq!(
        answer.headers[header::ACCESS_CONTROL_ALLOW_ORIGIN],
        "http://localhost:5173"
    );
}

#[tokio::test]
async fn get_without_a_session_is_not_allowed() {
    let request = Request::get("/mcp")
        .header(header::HOST, "127.0.0.1:8080")
        .header(header::ACCEPT, "text/event-stream")
        .extension(ConnectInfo(SocketAddr::from(([127, 0, 0, 1], 50003))));
    let (status, answer) = send(app(false), request).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(answer.headers[header::ALLOW], "POST");
}
