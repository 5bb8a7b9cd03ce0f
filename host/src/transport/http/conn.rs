//! Accepting HTTP connections under limits: how many at once (in all and per peer address), and
//! how long a client may take to send a request's headers. A client that opens connections
//! without end, or sends one byte a second, is cut off instead of holding the server's memory
//! and tasks. (The body's own deadline is a layer on the router, see `super::serve`.)

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use axum::Router;
use axum::extract::ConnectInfo;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tower::ServiceExt as _;

use crate::shutdown::{self, Shutdown};

/// Connections open at once, from every client.
pub const MAX_CONNECTIONS: usize = 1024;
/// Connections open at once from one address.
pub const MAX_CONNECTIONS_PER_PEER: usize = 128;

/// Open connections, by peer address.
#[derive(Default)]
struct Open {
    total: usize,
    by_peer: HashMap<IpAddr, usize>,
}

/// A connection counted in [`Open`] until dropped.
struct Admitted {
    open: Arc<Mutex<Open>>,
    peer: IpAddr,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        open.total -= 1;
        if let Some(n) = open.by_peer.get_mut(&self.peer) {
            *n -= 1;
            if *n == 0 {
                open.by_peer.remove(&self.peer);
            }
        }
    }
}

fn admit(open: &Arc<Mutex<Open>>, peer: IpAddr) -> Option<Admitted> {
    let mut counts = open.lock().unwrap_or_else(|e| e.into_inner());
    let from_peer = counts.by_peer.get(&peer).copied().unwrap_or(0);
    if counts.total >= MAX_CONNECTIONS || from_peer >= MAX_CONNECTIONS_PER_PEER {
        return None;
    }
    counts.total += 1;
    *counts.by_peer.entry(peer).or_default() += 1;
    Some(Admitted {
        open: open.clone(),
        peer,
    })
}

/// Serves `app` on every connection `listener` accepts, within the limits above; a connection
/// whose request headers take longer than `header_timeout` (or that sits idle that long between
/// requests) is closed. Requests carry their peer's address (`ConnectInfo<SocketAddr>`).
///
/// Once `shutdown` says the server is stopping, no connection is accepted; each open one ends
/// after the response in progress (idle ones at once), and this returns when all have, or when
/// the grace period is over.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    header_timeout: Duration,
    shutdown: Shutdown,
) -> Result<()> {
    let open = Arc::new(Mutex::new(Open::default()));
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = shutdown.stopping() => break,
        };
        let (tcp, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors, say: wait rather than spin.
                tracing::warn!("accepting a connection failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Some(admitted) = admit(&open, peer.ip()) else {
            tracing::warn!(%peer, "connection refused: too many open connections");
            drop(tcp);
            continue;
        };
        // Small messages should not wait for Nagle's algorithm.
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!("cannot set TCP_NODELAY: {e}");
        }
        let app = app.clone();
        let stopping = shutdown.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |mut request| {
                request.extensions_mut().insert(ConnectInfo(peer));
                app.clone().oneshot(request)
            });
            let connection = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .serve_connection(TokioIo::new(tcp), service);
            let mut connection = std::pin::pin!(connection);
            let ended = tokio::select! {
                ended = connection.as_mut() => ended,
                () = stopping.stopping() => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(e) = ended {
                tracing::debug!(%peer, "connection ended: {e}");
            }
            drop(admitted);
        });
    }
    drop(listener);
    let still_open = || open.lock().unwrap_or_else(|e| e.into_inner()).total;
    tracing::info!(
        connections = still_open(),
        "no longer accepting connections; finishing the requests in flight"
    );
    if shutdown::drain(shutdown.grace(), still_open).await {
        tracing::info!("every request in flight finished; stopped");
    } else {
        tracing::warn!(
            connections = still_open(),
            "the grace period is over: closing the connections still open"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_are_capped_per_peer_and_come_back() {
        let open = Arc::new(Mutex::new(Open::default()));
        let peer: IpAddr = "127.0.0.7".parse().unwrap();
        let held: Vec<Admitted> = (0..MAX_CONNECTIONS_PER_PEER)
            .map(|_| admit(&open, peer).unwrap())
            .collect();
        assert!(admit(&open, peer).is_none());
        let other: IpAddr = "127.0.0.8".parse().unwrap();
        assert!(admit(&open, other).is_some(), "another peer still gets in");
        drop(held);
        assert!(admit(&open, peer).is_some());
        assert_eq!(
            open.lock().unwrap().total,
            0,
            "every admission was given back"
        );
    }
}
