//! `palisade status`: the cluster as Redis sees it: whether Redis answers and how fast, every
//! replica that said it was there within the last seconds, and the tasks running.

use std::fmt::Write;
use std::path::Path;
use std::time::Duration;

use anyhow::Context;

use super::presence::{self, SEEN_WITHIN};
use super::{Cluster, PingError};
use crate::config::{Config, FailPolicy};

/// `PING`s whose median is reported.
const PINGS: usize = 5;

/// The report for the configuration at `config_path`, and whether the cluster is healthy
/// (Redis answers; at least one replica is there).
pub async fn report(config_path: &Path) -> anyhow::Result<(String, bool)> {
    let config = Config::load(config_path)?;
    let Some(settings) = config.cluster else {
        return Ok((
            format!(
                "{}: no [cluster]: each server counts its own limits and keeps its own \
                 sessions\n",
                config_path.display()
            ),
            true,
        ));
    };
    let cluster = Cluster::lazy(settings).context("[cluster]")?;
    let settings = cluster.settings();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "cluster   {} ({}), prefix \"{}\", fail = \"{}\"",
        settings.url,
        if settings.tls() { "TLS" } else { "no TLS" },
        settings.prefix,
        match settings.fail {
            FailPolicy::Closed => "closed",
            FailPolicy::Open => "open",
        }
    );
    let mut round_trips = Vec::new();
    for _ in 0..PINGS {
        match cluster.ping().await {
            Ok(rtt) => round_trips.push(rtt),
            Err(e) => {
                let what = match e {
                    PingError::Refused(_) => "refuses this server",
                    PingError::Unavailable(_) => "does not answer",
                };
                let _ = writeln!(out, "redis     {what}: {e}");
                return Ok((out, false));
            }
        }
    }
    round_trips.sort();
    let _ = writeln!(
        out,
        "redis     answers: round trip {} (median of {PINGS} PINGs from here; fastest {})",
        millis(round_trips[PINGS / 2]),
        millis(round_trips[0])
    );
    let replicas = match presence::replicas(&cluster).await {
        Ok(replicas) => replicas,
        Err(why) => {
            let _ = writeln!(out, "replicas  cannot be listed: {why}");
            return Ok((out, false));
        }
    };
    let _ = writeln!(
        out,
        "replicas  {} seen in the last {} s",
        replicas.len(),
        SEEN_WITHIN.as_secs()
    );
    if !replicas.is_empty() {
        let now = presence::unix_seconds();
        let rows: Vec<[String; 5]> = replicas
            .iter()
            .map(|r| {
                [
                    r.replica.clone(),
                    r.version.clone(),
                    r.serving.clone(),
                    uptime(now.saturating_sub(r.started_unix)),
                    millis(Duration::from_micros(r.redis_round_trip_us)),
                ]
            })
            .collect();
        let header = ["REPLICA", "VERSION", "SERVING", "UP", "REDIS ROUND TRIP"].map(String::from);
        table(&mut out, header, &rows);
    }
    match super::tasks::running(&cluster).await {
        Ok(tasks) => {
            let _ = writeln!(out, "tasks     {} running", tasks.len());
            if !tasks.is_empty() {
                let now = crate::mcp::tasks::record::now_ms();
                let rows: Vec<[String; 5]> = tasks
                    .iter()
                    .map(|t| {
                        [
                            t.id.clone(),
                            t.tool.clone(),
                            t.status.as_str().to_string(),
                            uptime(now.saturating_sub(t.created_ms) / 1000),
                            t.runner.clone().unwrap_or_default(),
                        ]
                    })
                    .collect();
                let header = ["TASK", "TOOL", "STATUS", "RUNNING FOR", "REPLICA"].map(String::from);
                table(&mut out, header, &rows);
            }
        }
        Err(why) => {
            let _ = writeln!(out, "tasks     cannot be listed: {why}");
        }
    }
    let healthy = !replicas.is_empty();
    Ok((out, healthy))
}

/// Writes `rows` under `header`, each column as wide as its widest cell.
fn table(out: &mut String, header: [String; 5], rows: &[[String; 5]]) {
    let widths: Vec<usize> = (0..5)
        .map(|i| {
            std::iter::once(&header)
                .chain(rows)
                .map(|row| row[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in std::iter::once(&header).chain(rows) {
        let mut line = String::from(" ");
        for (cell, width) in row.iter().zip(&widths) {
            let _ = write!(line, " {cell:<width$} ");
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
}

fn millis(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn uptime(seconds: u64) -> String {
    match seconds {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m {:02}s", s / 60, s % 60),
        s => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}
