//! Replicas behind one load balancer, sharing one Redis (`[cluster]`): the connection
//! (here), the limits every replica counts together (`limits.rs`), the changes plugins report
//! on one replica heard on every other (`bus.rs`), the tasks every replica reads (`tasks.rs`),
//! each replica's presence (`presence.rs`) and `palisade status` (`status.rs`).
//!
//! Redis is reached through one multiplexed connection that reconnects by itself; every
//! command waits at most `timeout_ms`, so a Redis that is down or slow costs a call that long,
//! never a hang.

pub mod bus;
pub mod limits;
pub mod presence;
pub mod sessions;
/// `palisade status`.
pub mod status;
pub mod tasks;

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{ErrorKind, IntoConnectionInfo, RedisError};

use crate::config::ClusterSettings;

/// Why Redis gave no answer; the text is for clients and logs (no address, no password).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unavailable(String);

/// This replica's connection to the cluster's Redis.
pub struct Cluster {
    settings: ClusterSettings,
    /// For connections of their own (subscriptions).
    client: redis::Client,
    redis: ConnectionManager,
    /// This replica's name among the others (host name and process id).
    pub replica: Arc<str>,
}

impl Cluster {
    /// Connects to Redis and checks it answers. A Redis that refuses the credentials stops the
    /// start (that never fixes itself); one that cannot be reached is logged and retried, and
    /// calls meet the failure policy until it answers.
    pub async fn connect(settings: ClusterSettings) -> anyhow::Result<Arc<Cluster>> {
        let cluster = Cluster::lazy(settings)?;
        match cluster.ping().await {
            Ok(rtt) => tracing::info!(
                redis = cluster.settings.url.as_str(),
                replica = &*cluster.replica,
                round_trip_us = rtt.as_micros() as u64,
                "joined the cluster"
            ),
            Err(PingError::Refused(why)) => anyhow::bail!(
                "[cluster] Redis at {} refused this server: {why}\nhow to fix: check the \
                 password (password_env, password_file or the URL) and the user",
                cluster.settings.url
            ),
            Err(PingError::Unavailable(why)) => tracing::warn!(
                redis = cluster.settings.url.as_str(),
                "Redis does not answer yet ({why}); retrying. Until it does, calls are {}",
                match cluster.settings.fail {
                    crate::config::FailPolicy::Closed => "refused ([cluster] fail = \"closed\")",
                    crate::config::FailPolicy::Open =>
                        "let in under this replica's own limits ([cluster] fail = \"open\")",
                }
            ),
        }
        Ok(Arc::new(cluster))
    }

    /// A connection made on first use.
    pub fn lazy(settings: ClusterSettings) -> anyhow::Result<Cluster> {
        let client = client(&settings).context("[cluster] redis")?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(settings.timeout))
            .set_response_timeout(Some(settings.timeout))
            // Reconnecting is retried on every command after a failure; a few quick tries
            // each time keep a restarted Redis from costing more than a moment.
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_millis(500));
        let redis = ConnectionManager::new_lazy_with_config(client.clone(), config)
            .context("[cluster] redis")?;
        Ok(Cluster {
            replica: replica_name().into(),
            settings,
            client,
            redis,
        })
    }

    /// The settings it was made with.
    pub fn settings(&self) -> &ClusterSettings {
        &self.settings
    }

    /// `PREFIX:a:b`: every key of this deployment starts with its prefix.
    pub fn key(&self, rest: &str) -> String {
        format!("{}:{rest}", self.settings.prefix)
    }

    /// A connection handle for one command (a clone of the one multiplexed connection).
    fn connection(&self) -> ConnectionManager {
        self.redis.clone()
    }

    /// Runs `command` against Redis, waiting at most the configured timeout.
    pub async fn run<T, F>(&self, command: F) -> Result<T, Unavailable>
    where
        F: AsyncFnOnce(&mut ConnectionManager) -> redis::RedisResult<T>,
    {
        let mut connection = self.connection();
        match tokio::time::timeout(self.settings.timeout, command(&mut connection)).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(Unavailable(describe(&e))),
            Err(_) => Err(Unavailable(format!(
                "Redis did not answer within {} ms",
                self.settings.timeout.as_millis()
            ))),
        }
    }

    /// One `PING`'s round trip.
    pub async fn ping(&self) -> Result<Duration, PingError> {
        let started = Instant::now();
        let mut connection = self.connection();
        let answer = tokio::time::timeout(
            self.settings.timeout,
            redis::cmd("PING").query_async::<String>(&mut connection),
        )
        .await;
        match answer {
            Ok(Ok(_)) => Ok(started.elapsed()),
            Ok(Err(e)) if refused(&e) => Err(PingError::Refused(describe(&e))),
            Ok(Err(e)) => Err(PingError::Unavailable(describe(&e))),
            Err(_) => Err(PingError::Unavailable(format!(
                "no answer within {} ms",
                self.settings.timeout.as_millis()
            ))),
        }
    }
}

/// Why a `PING` failed.
#[derive(Debug)]
pub enum PingError {
    /// Redis answered, refusing us (credentials, permissions).
    Refused(String),
    /// No answer.
    Unavailable(String),
}

impl std::fmt::Display for PingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PingError::Refused(why) | PingError::Unavailable(why) => f.write_str(why),
        }
    }
}

fn client(settings: &ClusterSettings) -> redis::RedisResult<redis::Client> {
    let mut info = settings.url.as_str().into_connection_info()?;
    if let Some(password) = &settings.password {
        let redis = info.redis_settings().clone().set_password(password);
        info = info.set_redis_settings(redis);
    }
    match &settings.ca_pem {
        Some(pem) => redis::Client::build_with_tls(
            info,
            redis::TlsCertificates {
                client_tls: None,
                root_cert: Some(pem.clone()),
            },
        ),
        None => redis::Client::open(info),
    }
}

/// Whether Redis refused us, as opposed to not answering.
fn refused(e: &RedisError) -> bool {
    matches!(e.kind(), ErrorKind::AuthenticationFailed)
        || e.code()
            .is_some_and(|code| matches!(code, "NOAUTH" | "WRONGPASS" | "NOPERM" | "ERR"))
}

/// A Redis error in a few words, without addresses or credentials.
fn describe(e: &RedisError) -> String {
    if e.is_timeout() {
        "Redis did not answer in time".into()
    } else if e.is_connection_refusal() {
        "Redis refused the connection (is it running?)".into()
    } else if e.is_io_error() || e.is_connection_dropped() {
        "Redis cannot be reached".into()
    } else if let Some(code) = e.code() {
        format!("Redis answered {code}")
    } else {
        format!("Redis: {:?}", e.kind())
    }
}

/// This replica's name: the host's (a pod's name, in Kubernetes) and the process id.
fn replica_name() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty() && h.len() <= 128 && !h.contains(char::is_whitespace))
        .unwrap_or_else(|| "palisade".into());
    format!("{host}-{}", std::process::id())
}
