//! The console's routes in process, as axum's own tests drive theirs: who is let in, what every
//! answer carries, and that a flood from one address or of live pages is bounded. The browser
//! test (tests/tests/console.rs) drives the same routes through Chromium.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode, header};
use tower::ServiceExt as _;

use super::Console;
use crate::catalog::Catalog;
use crate::config::access::{Scope, Token, sha256};
use crate::config::{AccessConfig, ConsoleConfig};
use crate::mcp::Server;
use crate::mcp::stateless::input_round::StateSettings;
use crate::mcp::stateless::request_state::StateKey;

const ALICE: &str = "alice-operator-token";
const BOB: &str = "bob-client-token-xyz";

fn console() -> (axum::Router, Arc<Console>) {
    let mut access = AccessConfig::default();
    for (name, token) in [("alice", ALICE), ("bob", BOB)] {
        access.tokens.push(Token {
            name: name.into(),
            sha256: sha256(token),
            scope: Arc::new(Scope::all()),
        });
    }
    let server = Server::new(
        Catalog::new(Vec::new(), Vec::new()).unwrap(),
        50,
        Default::default(),
        access,
        StateSettings {
            key: StateKey::from_secret(&"k".repeat(32)).unwrap(),
            ttl: Duration::from_secs(60),
        },
        crate::grants::UserGrants::beside(None),
        Default::default(),
    );
    let config = ConsoleConfig {
        operators: vec!["alice".into()],
        ..ConsoleConfig::default()
    };
    let console = Console::new(server, &config, Vec::new(), None);
    (console.router(None), console)
}

fn get(path: &str, token: Option<&str>, from: [u8; 4]) -> Request<Body> {
    let mut request = Request::get(path).header(header::HOST, "127.0.0.1:7777");
    if let Some(token) = token {
        request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    let mut request = request.body(Body::empty()).unwrap();
    request
        .extensions_mut()
        .insert(ConnectInfo(SocketAddr::from((from, 40000))));
    request
}

async fn status(app: &axum::Router, request: Request<Body>) -> StatusCode {
    app.clone().oneshot(request).await.unwrap().status()
}

#[tokio::test]
async fn only_operators_are_let_in_and_every_answer_carries_the_policy() {
    let (app, _) = console();
    let me = [127, 0, 0, 1];
    assert_eq!(
        status(&app, get("/console", None, me)).await,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        status(&app, get("/console", Some("nope"), me)).await,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        status(&app, get("/console", Some(BOB), me)).await,
        StatusCode::FORBIDDEN
    );
    let answer = app
        .clone()
        .oneshot(get("/console", Some(ALICE), me))
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    let headers = answer.headers();
    assert_eq!(headers[header::CONTENT_SECURITY_POLICY], super::guard::CSP);
    assert_eq!(headers[header::X_FRAME_OPTIONS], "DENY");
    assert_eq!(headers[header::CACHE_CONTROL], "no-store");
    let mut rebound = get("/console", Some(ALICE), me);
    rebound
        .headers_mut()
        .insert(header::HOST, "attacker.example".parse().unwrap());
    assert_eq!(status(&app, rebound).await, StatusCode::FORBIDDEN);
    // A bearer token may act without a CSRF token (no browser sends one by itself); a login's
    // cookie may not.
    let mut forged = Request::post("/console/calls/cancel")
        .header(header::HOST, "127.0.0.1:7777")
        .header(header::COOKIE, "palisade_console=forged")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from("id=1"))
        .unwrap();
    forged
        .extensions_mut()
        .insert(ConnectInfo(SocketAddr::from((me, 40000))));
    assert_eq!(status(&app, forged).await, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn one_address_flooding_is_held_back_and_others_are_not() {
    let (app, _) = console();
    let flood = [10, 0, 0, 9];
    let mut refused = 0;
    for _ in 0..260 {
        if status(&app, get("/console/assets/console.css", None, flood)).await
            == StatusCode::TOO_MANY_REQUESTS
        {
            refused += 1;
        }
    }
    assert!(refused >= 50, "{refused} of 260 refused");
    let other = get("/console/assets/console.css", None, [10, 0, 0, 10]);
    assert_eq!(status(&app, other).await, StatusCode::OK);
}

#[tokio::test]
async fn live_pages_are_bounded() {
    let (app, _) = console();
    let mut open = Vec::new();
    for i in 0..super::live::MAX_STREAMS {
        // Addresses of their own, so the rate limit is not what answers.
        let answer = app
            .clone()
            .oneshot(get(
                "/console/events",
                Some(ALICE),
                [10, 1, (i / 200) as u8, i as u8],
            ))
            .await
            .unwrap();
        assert_eq!(answer.status(), StatusCode::OK);
        open.push(answer);
    }
    let past = get("/console/events", Some(ALICE), [10, 2, 0, 1]);
    assert_eq!(status(&app, past).await, StatusCode::SERVICE_UNAVAILABLE);
    open.pop();
    let again = get("/console/events", Some(ALICE), [10, 2, 0, 2]);
    assert_eq!(
        status(&app, again).await,
        StatusCode::OK,
        "a closed page gives its place back"
    );
}
