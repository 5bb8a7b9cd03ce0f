//! The operator's console: a web page, served by the server itself, that shows what its plugins
//! do and lets an operator steer them (answer grant questions, revoke grants, stop calls and
//! tasks). It is for operators only, and it never gives a plugin or an MCP client anything.
//!
//! Where it is served: at `/console` on the MCP HTTP listener when `[console] operators` names
//! someone, and on an address of its own with `--console ADDR` (`[console] listen`), which prints
//! a one-time login link on stderr (the laptop case, where MCP is on stdio).
//!
//! - `auth.rs`: who may use it (operators' tokens, the one-time link) and login sessions (an
//!   HTTP-only, same-site cookie; a CSRF token per login).
//! - `guard.rs`: what every request passes: the `Host` check, rate limits, security headers
//!   (a strict Content-Security-Policy), and the `Ctx` a page gets.
//! - `pages/`: the pages, rendered on the server (maud escapes everything spliced in);
//!   `actions.rs`: what a form posts; `live.rs`: the SSE stream that tells open pages to
//!   refresh; `charts.rs`: the SVG charts; `assets/`: the one stylesheet and script, embedded.

mod actions;
mod assets;
mod auth;
mod charts;
mod guard;
mod live;
mod pages;
#[cfg(test)]
mod tests;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context as _, Result};
use axum::Router;
use axum::routing::{get, post};

use crate::cluster::Cluster;
use crate::config::ConsoleConfig;
use crate::mcp::Server;
use crate::oauth::OAuth;
use crate::transport::http::guard::AllowList;

pub(crate) use guard::Ctx;

/// The console's state: the server it shows, who may log in, and who is logged in.
pub struct Console {
    server: Arc<Server>,
    operators: Vec<Arc<str>>,
    logins: auth::Logins,
    limits: guard::RateLimits,
    /// Host names the `Host` header may name besides loopback (`[server.http] allowed_hosts`).
    allow: AllowList,
    /// The other replicas, with `[cluster]`.
    cluster: Option<Arc<Cluster>>,
    started: Instant,
    streams: live::Streams,
}

impl std::fmt::Debug for Console {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Console")
            .field("operators", &self.operators)
            .finish_non_exhaustive()
    }
}

impl Console {
    /// The console of `server`, for the operators `config` names.
    pub fn new(
        server: Arc<Server>,
        config: &ConsoleConfig,
        allowed_hosts: Vec<String>,
        cluster: Option<Arc<Cluster>>,
    ) -> Arc<Console> {
        server
            .grant_questions
            .let_operators_answer(config.question_wait);
        // What the console shows is kept from now on; a server without one pays nothing for it.
        server.activity.keep();
        crate::telemetry::log_tail::keep();
        Arc::new(Console {
            server,
            operators: config.operators.clone(),
            logins: auth::Logins::default(),
            limits: guard::RateLimits::default(),
            allow: AllowList {
                hosts: allowed_hosts,
                origins: Vec::new(),
            },
            cluster,
            started: Instant::now(),
            streams: live::Streams::default(),
        })
    }

    /// The console's routes, each checking its caller; `oauth`: the MCP listener's access
    /// token checks, so that operators named `oauth:SUBJECT` can log in there.
    pub fn router(self: &Arc<Console>, oauth: Option<Arc<OAuth>>) -> Router {
        let state = guard::State {
            console: self.clone(),
            oauth,
        };
        Router::new()
            .route("/console", get(pages::overview::page))
            .route("/console/", get(pages::overview::page))
            .route("/console/plugins/{name}", get(pages::plugin::page))
            .route("/console/grants", get(pages::grants::page))
            .route("/console/calls", get(pages::calls::page))
            .route("/console/sessions", get(pages::sessions::page))
            .route("/console/events", get(live::events))
            .route("/console/login", get(auth::login_page).post(auth::log_in))
            .route("/console/logout", post(auth::log_out))
            .route("/console/grants/answer", post(actions::answer))
            .route("/console/grants/revoke", post(actions::revoke))
            .route("/console/calls/cancel", post(actions::cancel_call))
            .route("/console/tasks/cancel", post(actions::cancel_task))
            .route("/console/assets/{file}", get(assets::serve))
            .fallback(guard::not_found)
            .layer(axum::middleware::from_fn_with_state(
                state.clone(),
                guard::check_request,
            ))
            // A form is a few fields; nothing the console takes is bigger.
            .layer(axum::extract::DefaultBodyLimit::max(guard::MAX_FORM_BYTES))
            // A panic in a page is a 500, not a dropped connection.
            .layer(tower_http::catch_panic::CatchPanicLayer::new())
            .with_state(state)
    }

    /// Serves the console alone on `listen` and prints its one-time login link on stderr;
    /// returns once it is bound (a taken address stops the server's start).
    pub async fn serve_alone(self: &Arc<Console>, listen: SocketAddr) -> Result<SocketAddr> {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .with_context(|| format!("cannot serve the console on {listen}"))?;
        let address = listener.local_addr()?;
        let code = self.logins.new_link()?;
        // On stderr, as Jupyter does: whoever can read the server's output may log in, once.
        eprintln!(
            "palisade: console at http://{address}/console/login?code={code} (the link logs in \
             once; restart the server for another)"
        );
        if !address.ip().is_loopback() {
            tracing::warn!(
                %address,
                "the console listens beyond this machine: its link and its cookie travel in the \
                 clear unless a TLS proxy is in front"
            );
        }
        let app = self.router(None);
        let shutdown = self.server.shutdown.clone();
        tokio::spawn(async move {
            let limits = crate::transport::http::conn::ConnectionLimits::default();
            if let Err(e) = crate::transport::http::conn::serve(
                listener,
                app,
                std::time::Duration::from_secs(10),
                limits,
                shutdown,
            )
            .await
            {
                tracing::error!("the console stopped: {e:#}");
            }
        });
        Ok(address)
    }
}
