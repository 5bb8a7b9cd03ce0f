//! Accepting HTTP connections under limits: how many at once (in all and per peer address), and
//! how long a client may take to send a request's headers. A client that opens connections
//! without end, or sends one byte a second, is cut off instead of holding the server's memory
//! and tasks. (The body's own deadline is a layer on the router, see `super::serve`.)

use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Result;
use axum::Router;
use axum::extract::ConnectInfo;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt as _;

use super::client_address::{ClientAddress, TrustedProxies};
use crate::shutdown::{self, Shutdown};

/// Connections open at once, from every client (`[server.http] max_connections`).
pub const MAX_CONNECTIONS: usize = 1024;
/// Connections open at once from one address (`[server.http] max_connections_per_address`).
pub const MAX_CONNECTIONS_PER_PEER: usize = 128;

/// How many connections may be open, and whose forwarding headers are believed.
#[derive(Debug, Clone)]
pub struct ConnectionLimits {
    /// From every client together.
    pub total: usize,
    /// From one TCP peer; a trusted proxy's connections count toward `total` only.
    pub per_address: usize,
    /// Whose forwarding headers name the client, and whose connections never give way.
    pub trusted_proxies: TrustedProxies,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            total: MAX_CONNECTIONS,
            per_address: MAX_CONNECTIONS_PER_PEER,
            trusted_proxies: TrustedProxies::default(),
        }
    }
}

/// Open connections: counted by peer address, and those still waiting for their first
/// request's headers, oldest first, which give way when a cap is reached.
#[derive(Default)]
struct Open {
    total: usize,
    by_peer: HashMap<IpAddr, usize>,
    /// Every counted connection, by id, with its peer.
    live: HashMap<u64, IpAddr>,
    /// Connections without a complete request yet (ids grow: oldest first), with what closes
    /// them; a trusted proxy's are not here.
    waiting: BTreeMap<u64, (IpAddr, CancellationToken)>,
    next_id: u64,
}

impl Open {
    /// Uncounts connection `id`, if it still counts.
    fn release(&mut self, id: u64) {
        self.waiting.remove(&id);
        let Some(peer) = self.live.remove(&id) else {
            return;
        };
        self.total -= 1;
        if let Some(n) = self.by_peer.get_mut(&peer) {
            *n -= 1;
            if *n == 0 {
                self.by_peer.remove(&peer);
            }
        }
    }

    /// Closes the oldest connection still waiting for its headers, from `peer` or (`None`)
    /// from anyone; false when none is waiting.
    fn evict_oldest(&mut self, peer: Option<IpAddr>) -> bool {
        let Some(id) = self
            .waiting
            .iter()
            .find(|(_, (from, _))| peer.is_none_or(|p| p == *from))
            .map(|(id, _)| *id)
        else {
            return false;
        };
        if let Some((_, closing)) = self.waiting.get(&id) {
            closing.cancel();
        }
        self.release(id);
        true
    }
}

/// A connection counted in [`Open`] until dropped; closed early if `closing` is cancelled.
struct Admitted {
    open: Arc<Mutex<Open>>,
    id: u64,
    closing: CancellationToken,
    /// Set once its first request's headers are in: it no longer gives way.
    served: AtomicBool,
}

impl Admitted {
    /// Its first request arrived: from now on it is refused room before it gives way.
    fn headers_complete(&self) {
        if !self.served.swap(true, Ordering::Relaxed) {
            self.open.lock().waiting.remove(&self.id);
        }
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.open.lock().release(self.id);
    }
}

/// Counts a connection from `peer`, making room when a cap is reached by closing the oldest
/// connection that has not finished its first request's headers (of the same address for its
/// cap, of anyone for the total); `None` when no such connection is left to close. A slow
/// client then takes its own room, never the room of clients that send requests.
fn admit(open: &Arc<Mutex<Open>>, peer: IpAddr, limits: &ConnectionLimits) -> Option<Admitted> {
    let trusted = limits.trusted_proxies.trusts(peer);
    let mut counts = open.lock();
    if !trusted && counts.by_peer.get(&peer).copied().unwrap_or(0) >= limits.per_address {
        counts.evict_oldest(Some(peer)).then_some(())?;
    }
    if counts.total >= limits.total {
        counts.evict_oldest(None).then_some(())?;
    }
    let id = counts.next_id;
    counts.next_id += 1;
    counts.total += 1;
    *counts.by_peer.entry(peer).or_default() += 1;
    counts.live.insert(id, peer);
    let closing = CancellationToken::new();
    if !trusted {
        counts.waiting.insert(id, (peer, closing.clone()));
    }
    Some(Admitted {
        open: open.clone(),
        id,
        closing,
        served: AtomicBool::new(trusted),
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
    limits: ConnectionLimits,
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
        let Some(admitted) = admit(&open, peer.ip().to_canonical(), &limits) else {
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
        let proxies = limits.trusted_proxies.clone();
        let admitted = Arc::new(admitted);
        tokio::spawn(async move {
            let counted = admitted.clone();
            // Called once a request's head is in: the connection stops giving way.
            let service = hyper::service::service_fn(move |mut request| {
                counted.headers_complete();
                let client = proxies.client_of(peer.ip(), request.headers());
                request.extensions_mut().insert(ConnectInfo(peer));
                request.extensions_mut().insert(ClientAddress(client));
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
                // Room for another client: dropped, which closes the socket.
                () = admitted.closing.cancelled() => {
                    tracing::debug!(%peer, "connection closed to make room: no request after its headers' time");
                    Ok(())
                }
            };
            if let Err(e) = ended {
                tracing::debug!(%peer, "connection ended: {e}");
            }
            drop(admitted);
        });
    }
    drop(listener);
    let still_open = || open.lock().total;
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

    fn limits(total: usize, per_address: usize, trusted: &[&str]) -> ConnectionLimits {
        ConnectionLimits {
            total,
            per_address,
            trusted_proxies: TrustedProxies::new(
                trusted.iter().map(|n| n.parse().unwrap()).collect(),
            ),
        }
    }

    #[test]
    fn at_a_cap_a_connection_without_a_request_gives_way_one_with_one_does_not() {
        let open = Arc::new(Mutex::new(Open::default()));
        let limits = limits(1024, 3, &[]);
        let peer: IpAddr = "127.0.0.7".parse().unwrap();
        let held: Vec<Admitted> = (0..3)
            .map(|_| admit(&open, peer, &limits).unwrap())
            .collect();
        held[1].headers_complete();
        // The oldest still waiting for headers gives way, not the one that sent a request.
        let fourth = admit(&open, peer, &limits).unwrap();
        assert!(held[0].closing.is_cancelled());
        assert!(!held[1].closing.is_cancelled());
        held[2].headers_complete();
        fourth.headers_complete();
        assert!(
            admit(&open, peer, &limits).is_none(),
            "nothing left to give way"
        );
        let other: IpAddr = "127.0.0.8".parse().unwrap();
        assert!(
            admit(&open, other, &limits).is_some(),
            "another peer still gets in"
        );
        drop((held, fourth));
        assert_eq!(open.lock().total, 0, "every admission was given back");
        assert!(open.lock().live.is_empty() && open.lock().waiting.is_empty());
    }

    #[test]
    fn a_trusted_proxy_counts_toward_the_total_only() {
        let open = Arc::new(Mutex::new(Open::default()));
        let limits = limits(4, 1, &["127.0.0.1/32"]);
        let proxy: IpAddr = "127.0.0.1".parse().unwrap();
        let slow: IpAddr = "127.0.0.9".parse().unwrap();
        let _slow = admit(&open, slow, &limits).unwrap();
        let proxied: Vec<Admitted> = (0..3)
            .map(|_| admit(&open, proxy, &limits).unwrap())
            .collect();
        // The total is reached: the slow client's connection gives way, the proxy's never do.
        let more = admit(&open, proxy, &limits).unwrap();
        assert!(_slow.closing.is_cancelled());
        assert!(proxied.iter().all(|c| !c.closing.is_cancelled()));
        assert!(admit(&open, proxy, &limits).is_none());
        drop((proxied, more));
    }
}
