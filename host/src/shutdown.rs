//! Graceful shutdown: on SIGTERM (or Ctrl-C) the server stops accepting, tells `/readyz` it is
//! stopping, ends the streams that only wait for notifications (clients reconnect elsewhere),
//! lets calls in flight finish within the grace period, flushes what it exports, and exits.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::config::DEFAULT_SHUTDOWN_GRACE;

/// Whether the server is stopping, and a way to wait for it.
#[derive(Clone)]
pub struct Shutdown {
    stopping: CancellationToken,
    grace_ms: Arc<AtomicU64>,
    /// When stopping began.
    began: Arc<std::sync::OnceLock<std::time::Instant>>,
}

impl Default for Shutdown {
    fn default() -> Self {
        Shutdown {
            stopping: CancellationToken::new(),
            grace_ms: Arc::new(AtomicU64::new(DEFAULT_SHUTDOWN_GRACE.as_millis() as u64)),
            began: Arc::default(),
        }
    }
}

impl Shutdown {
    /// How long calls in flight may take to finish once stopping.
    pub fn grace(&self) -> Duration {
        Duration::from_millis(self.grace_ms.load(Ordering::Relaxed))
    }

    /// Sets [`Shutdown::grace`] (`[server] shutdown_grace_s`).
    pub fn set_grace(&self, grace: Duration) {
        self.grace_ms.store(
            grace.as_millis().min(u64::MAX as u128) as u64,
            Ordering::Relaxed,
        );
    }

    /// From now on the server is stopping.
    pub fn begin(&self) {
        let _ = self.began.set(std::time::Instant::now());
        self.stopping.cancel();
    }

    /// What is left of the grace period (all of it before stopping began).
    pub fn grace_left(&self) -> Duration {
        match self.began.get() {
            Some(began) => self.grace().saturating_sub(began.elapsed()),
            None => self.grace(),
        }
    }

    /// Whether it is.
    pub fn is_stopping(&self) -> bool {
        self.stopping.is_cancelled()
    }

    /// Resolves once the server is stopping.
    pub async fn stopping(&self) {
        self.stopping.cancelled().await
    }
}

/// Resolves at the first SIGTERM or SIGINT (Ctrl-C); never, when no handler can be installed.
pub async fn signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(mut term), Ok(mut int)) => tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = int.recv() => "SIGINT",
            },
            _ => {
                tracing::warn!("cannot listen for SIGTERM: the server stops only when killed");
                std::future::pending().await
            }
        }
    }
    #[cfg(not(unix))]
    {
        match tokio::signal::ctrl_c().await {
            Ok(()) => "Ctrl-C",
            Err(_) => std::future::pending().await,
        }
    }
}

/// Stops `shutdown` at the first SIGTERM or SIGINT; a second one exits at once (an operator
/// pressing Ctrl-C again does not wait for the grace period).
pub fn stop_on_signal(shutdown: Shutdown) {
    tokio::spawn(async move {
        let first = signal().await;
        tracing::info!(
            grace_s = shutdown.grace().as_secs(),
            "{first}: stopping; calls in flight may finish within the grace period (signal again to exit now)"
        );
        shutdown.begin();
        let second = signal().await;
        tracing::warn!("{second} again: exiting now");
        std::process::exit(130);
    });
}

/// Waits until `in_flight` says nothing is left, or `grace` has passed; returns whether
/// everything finished.
pub async fn drain(grace: Duration, in_flight: impl Fn() -> usize) -> bool {
    let deadline = tokio::time::Instant::now() + grace;
    loop {
        if in_flight() == 0 {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grace_period_is_one_period_from_when_stopping_began() {
        let shutdown = Shutdown::default();
        shutdown.set_grace(Duration::from_secs(30));
        assert_eq!(shutdown.grace_left(), Duration::from_secs(30));
        shutdown.begin();
        std::thread::sleep(Duration::from_millis(20));
        let left = shutdown.grace_left();
        assert!(
            left < Duration::from_secs(30) && left > Duration::from_secs(29),
            "{left:?}"
        );
        shutdown.set_grace(Duration::ZERO);
        assert_eq!(shutdown.grace_left(), Duration::ZERO);
    }
}
