//! Under attack: the latency of a trivial call to one plugin while other clients drive another
//! plugin's worst attack of each kind, as a ratio to the same call on a quiet server. The
//! attacks are those `tests/tests/hardening.rs` shows contained; here they are timed.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Context as _, Result};
use serde_json::{Value, json};

use crate::bench_config;
use crate::http::{HttpClient, HttpServer, Mode};
use crate::measure::Stats;
use crate::stdio::Call;

/// Clients attacking at once.
const ATTACKERS: usize = 2;

/// One attack: what it is, and the call an attacker repeats.
struct Attack {
    label: String,
    tool: &'static str,
    arguments: Value,
    /// Clients making the call at once.
    attackers: usize,
}

fn attacks(dir_entries: usize) -> Vec<Attack> {
    vec![
        Attack {
            label: "argument check: ^(a+)+$ on 50 kB".into(),
            tool: "hostile_regex",
            arguments: json!({ "s": format!("{}!", "a".repeat(50_000)) }),
            attackers: ATTACKERS,
        },
        Attack {
            label: "host call: open a FIFO".into(),
            tool: "hostile_open",
            arguments: json!({"path": "/data/pipe"}),
            attackers: ATTACKERS,
        },
        Attack {
            label: format!("host call: list {dir_entries} directory entries"),
            tool: "hostile_count_dir",
            arguments: json!({"path": "/data/big"}),
            attackers: ATTACKERS,
        },
        Attack {
            label: "host call: 4 GiB of random bytes".into(),
            tool: "hostile_random",
            arguments: json!({"bytes": 1u64 << 32}),
            attackers: ATTACKERS,
        },
        Attack {
            label: "answers past the output limit".into(),
            tool: "misbehave_output",
            arguments: json!({"bytes": 5_000_000}),
            attackers: ATTACKERS,
        },
        Attack {
            label: "list_changed storm".into(),
            tool: "hostile_announce",
            arguments: json!({}),
            attackers: ATTACKERS,
        },
        Attack {
            label: "16 clients: errors of 100 MiB".into(),
            tool: "hostile_huge_error",
            arguments: json!({"mib": 100}),
            attackers: 16,
        },
        Attack {
            label: "CPU: spin to the time limit".into(),
            tool: "misbehave_spin",
            arguments: json!({}),
            attackers: ATTACKERS,
        },
    ]
}

/// The quiet latency, and each attack's.
pub struct UnderAttack {
    pub quiet: Stats,
    pub rows: Vec<(String, Stats, u64)>,
}

impl UnderAttack {
    pub fn print(&self) {
        println!(
            "\nunder attack: hello_greet over HTTP (stateless) while {ATTACKERS} clients (unless the row says) attack another plugin"
        );
        println!(
            "{:<44} {:>9} {:>9} {:>9} {:>9}",
            "attack", "p50 µs", "p99 µs", "p50/quiet", "attacks"
        );
        let row = |label: &str, stats: &Stats, attacks: Option<u64>| {
            println!(
                "{label:<44} {:>9.1} {:>9.1} {:>8.2}x {:>9}",
                stats.p50_us,
                stats.p99_us,
                stats.p50_us / self.quiet.p50_us,
                attacks.map_or("-".to_string(), |n| n.to_string())
            );
        };
        row("(quiet)", &self.quiet, None);
        for (label, stats, attacks) in &self.rows {
            row(label, stats, Some(*attacks));
        }
    }

    pub fn json(&self) -> Value {
        json!({
            "quiet": self.quiet.json(),
            "attacks": self.rows.iter().map(|(label, stats, attacks)| json!({
                "attack": label,
                "stats": stats.json(),
                "p50_ratio": stats.p50_us / self.quiet.p50_us,
                "attack_calls": attacks,
            })).collect::<Vec<_>>(),
        })
    }

    /// The worst p50 ratio of any attack.
    pub fn worst_ratio(&self) -> f64 {
        self.rows
            .iter()
            .map(|(_, stats, _)| stats.p50_us / self.quiet.p50_us)
            .fold(0.0, f64::max)
    }
}

/// Serves hello, hostile and misbehave over HTTP; measures `calls` greets quiet, then under each
/// attack (one lists a directory of `dir_entries` empty files).
pub fn measure(
    palisade: &Path,
    plugin_dir: &Path,
    scratch: &Path,
    calls: usize,
    dir_entries: usize,
) -> Result<UnderAttack> {
    let data = scratch.join("attack-data");
    let big = data.join("big");
    std::fs::create_dir_all(&big)?;
    for n in 0..dir_entries {
        std::fs::File::create(big.join(format!("f{n:06}")))?;
    }
    let pipe = data.join("pipe");
    if !pipe.exists() {
        let status = std::process::Command::new("mkfifo")
            .arg(&pipe)
            .status()
            .context("mkfifo")?;
        anyhow::ensure!(status.success(), "mkfifo {} failed", pipe.display());
    }
    let mut config = bench_config(&[
        ("hello", plugin_dir.join("hello.wasm")),
        ("hostile", plugin_dir.join("hostile.wasm")),
        ("misbehave", plugin_dir.join("misbehave.wasm")),
    ])?;
    config.push_str(&format!(
        "[[plugins.hostile.dirs]]\nhost = {:?}\nguest = \"/data\"\n\n",
        data.display().to_string()
    ));
    // Spinning calls end at 500 ms rather than 30 s, so each attack round sees many of them.
    config = config.replace(
        "[plugins.misbehave.limits]\n",
        "[plugins.misbehave.limits]\ntimeout_ms = 500\n",
    );
    let config_path = scratch.join("attack.toml");
    std::fs::write(&config_path, config)?;
    let server = HttpServer::start(palisade, &config_path, &scratch.join("cache-attack"))?;
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let greet = Call::greet("hello_greet");
    tokio.block_on(async {
        let mut victim = HttpClient::connect(server.addr, Mode::Stateless).await?;
        for _ in 0..(calls / 10).clamp(10, 100) {
            victim.call(&greet).await?;
        }
        let quiet = timed(&mut victim, &greet, calls).await?;
        let mut rows = Vec::new();
        for attack in attacks(dir_entries) {
            eprintln!("  {} ...", attack.label);
            let stop = Arc::new(AtomicBool::new(false));
            let made = Arc::new(AtomicU64::new(0));
            let mut attackers = Vec::new();
            for _ in 0..attack.attackers {
                let mut client = HttpClient::connect(server.addr, Mode::Stateless).await?;
                let (stop, made) = (stop.clone(), made.clone());
                let (tool, arguments) = (attack.tool, attack.arguments.clone());
                attackers.push(tokio::spawn(async move {
                    while !stop.load(Ordering::Relaxed) {
                        // The answer is a refusal or an error: the point is what it costs.
                        let params = json!({"name": tool, "arguments": arguments, "_meta": {
                            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                            "io.modelcontextprotocol/clientCapabilities": {}}});
                        if client
                            .post_any("tools/call", Some(tool), params)
                            .await
                            .is_err()
                        {
                            // Refused at the HTTP level (a JSON-RPC error): try again shortly.
                            tokio::time::sleep(Duration::from_millis(5)).await;
                        }
                        made.fetch_add(1, Ordering::Relaxed);
                    }
                }));
            }
            // Let the attack reach its stride before measuring.
            tokio::time::sleep(Duration::from_millis(300)).await;
            let stats = timed(&mut victim, &greet, calls)
                .await
                .with_context(|| format!("the trivial call during the attack `{}`", attack.label));
            stop.store(true, Ordering::Relaxed);
            for attacker in attackers {
                let _ = attacker.await;
            }
            rows.push((attack.label, stats?, made.load(Ordering::Relaxed)));
        }
        anyhow::Ok(UnderAttack { quiet, rows })
    })
}

/// `calls` calls one after the other (the server's CPU time is not reported: the attackers'
/// share it).
async fn timed(client: &mut HttpClient, call: &Call, calls: usize) -> Result<Stats> {
    let mut samples = Vec::with_capacity(calls);
    for _ in 0..calls {
        samples.push(client.call(call).await?);
    }
    Ok(Stats::sequential(samples))
}
