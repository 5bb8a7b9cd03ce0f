//! The benchmark suite runs end to end (`palisade-bench --quick`) and reports every measurement
//! it promises. Its numbers are not checked here: timing belongs in the benchmark, not in
//! pass/fail tests.

use std::process::Command;

use palisade_tests::*;
use serde_json::Value;

/// Runs `palisade-bench ARGS --plugin-dir target/plugins --json FILE`, checks it succeeded and
/// printed every heading of `headings`; its report.
fn run_bench(args: &[&str], headings: &[&str]) -> Value {
    let bench = palisade_bin().with_file_name("palisade-bench");
    assert!(
        bench.is_file(),
        "{} is missing: cargo build --workspace",
        bench.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("bench.json");
    let output = Command::new(&bench)
        .args(args)
        .arg("--plugin-dir")
        .arg(plugin_path("hello").parent().unwrap())
        .arg("--json")
        .arg(&json_path)
        .current_dir(repo_root())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "palisade-bench {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for heading in headings {
        assert!(stdout.contains(heading), "no `{heading}` in:\n{stdout}");
    }
    serde_json::from_slice(&std::fs::read(&json_path).unwrap()).unwrap()
}

#[test]
fn the_benchmark_suite_reports_every_measurement() {
    let report = run_bench(
        &[
            "--quick",
            "--plugins",
            "1,3",
            "--primes-below",
            "20000",
            "--calls",
            "64",
        ],
        &[
            "tools/call of a trivial tool",
            "large payloads",
            "start-up",
            "resident memory",
            "fuel metering",
            "under attack",
            "targets",
        ],
    );
    let loops = report["loops"].as_array().unwrap();
    let names: Vec<(String, u64)> = loops
        .iter()
        .map(|l| {
            (
                l["loop"].as_str().unwrap().to_string(),
                l["clients"].as_u64().unwrap(),
            )
        })
        .collect();
    for (name, clients) in [
        ("stdio", 1),
        ("stdio", 16),
        ("HTTP session", 1),
        ("HTTP session", 16),
        ("HTTP stateless", 1),
        ("HTTP stateless", 16),
    ] {
        assert!(
            names.contains(&(name.to_string(), clients)),
            "no {name} x{clients} in {names:?}"
        );
    }
    let positive = |v: &Value, what: &str| {
        let n = v
            .as_f64()
            .unwrap_or_else(|| panic!("{what} is not a number: {v}"));
        assert!(n > 0.0 && n.is_finite(), "{what} = {n}");
    };
    for l in loops {
        for side in ["sandboxed", "native"] {
            for field in [
                "calls_per_sec",
                "p50_us",
                "p99_us",
                "server_cpu_us_per_call",
            ] {
                positive(&l[side][field], &format!("{} {side} {field}", l["loop"]));
            }
        }
        positive(&l["p50_ratio"], "p50_ratio");
        positive(&l["throughput_ratio"], "throughput_ratio");
    }
    positive(
        &report["payloads"]["tool_1mib"]["sandboxed"]["p50_us"],
        "1 MiB tool",
    );
    positive(
        &report["payloads"]["tool_1mib"]["native"]["p50_us"],
        "1 MiB native tool",
    );
    positive(
        &report["payloads"]["resource_read_1mib"]["p50_us"],
        "1 MiB resource read",
    );
    positive(&report["fuel"]["fuel_used"], "fuel used");
    positive(&report["fuel"]["metered_ms"], "metered");
    positive(&report["fuel"]["unmetered_ms"], "unmetered");
    let starts: Vec<u64> = report["startup"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            positive(&s["empty_cache_initialize_ms"], "empty cache initialize");
            positive(
                &s["empty_cache_all_ready_ms"],
                "empty cache, every plugin ready",
            );
            positive(&s["warm_cache_ms"], "warm cache start");
            s["plugins"].as_u64().unwrap()
        })
        .collect();
    assert_eq!(starts, [1, 3]);
    for field in ["idle_stdio", "idle_http", "peak_http_16_clients"] {
        positive(&report["rss_bytes"][field], field);
    }
    // What the idle memory is made of: the kinds add up to the whole.
    let makeup = &report["rss_bytes"]["idle_stdio_make_up"];
    for kind in ["plugin_code", "server_binary", "anonymous"] {
        positive(&makeup[kind], kind);
    }
    let kinds: u64 = ["plugin_code", "server_binary", "anonymous", "other"]
        .iter()
        .map(|k| makeup[k].as_u64().unwrap())
        .sum();
    assert_eq!(kinds, makeup["total"].as_u64().unwrap(), "{makeup}");
    positive(
        &report["under_attack"]["quiet"]["p50_us"],
        "quiet p50 before the attacks",
    );
    let attacks = report["under_attack"]["attacks"].as_array().unwrap();
    assert_eq!(attacks.len(), 8, "every attack measured: {attacks:?}");
    for attack in attacks {
        positive(&attack["stats"]["p50_us"], "p50 under attack");
        positive(&attack["attack_calls"], "attack calls made");
    }
    assert!(!report["targets"].as_array().unwrap().is_empty());
}

/// `palisade-bench languages` runs end to end, with another MCP server as its peer (here
/// Palisade itself, serving the Rust example, behind a command that does not exit when its
/// stdin closes), and reports every row it promises.
#[test]
fn the_languages_benchmark_reports_every_row_and_the_peer() {
    let palisade = palisade_bin();
    let dir = tempfile::tempdir().unwrap();
    let peer_config = config_file(
        dir.path(),
        &format!(
            "[plugins.hello]\npath = {}\n",
            toml_str(&plugin_arg("hello"))
        ),
    );
    // The peer's command lingers after its server exits, as a server that ignores stdin's end
    // would: palisade-bench must kill it (all of it: the `sleep` holds the output pipes this
    // test reads to their end) rather than wait.
    let peer = format!(
        "RUST_LOG=warn {} serve --no-watch --config {} --cache-dir {}; sleep 600",
        path_str(&palisade),
        path_str(&peer_config),
        path_str(&dir.path().join("peer-cache"))
    );
    let report = run_bench(
        &[
            "languages",
            "--calls",
            "20",
            "--warmup",
            "2",
            "--starts",
            "1",
            "--many",
            "2",
            "--peer",
            &peer,
            "--peer-tool",
            "Rust=hello_greet",
        ],
        &[
            "start-up",
            "per call",
            "resident memory",
            "against the peer",
        ],
    );
    let labels: Vec<&str> = report["per_call"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "Rust",
            "Python",
            "JavaScript",
            "Go",
            "C",
            "C++",
            "Zig",
            "Python, no SDK",
            "JavaScript, no SDK",
            "Rust, 2 ms apart",
            "Python, 2 ms apart",
            "JavaScript, 2 ms apart",
            "Go, 2 ms apart",
            "C, 2 ms apart",
            "C++, 2 ms apart",
            "Zig, 2 ms apart",
            "Rust, made on call",
            "Python, made on call",
            "JavaScript, made on call",
            "Go, made on call",
            "C, made on call",
            "C++, made on call",
            "Zig, made on call",
            "Rust, reused",
            "Python, reused",
            "JavaScript, reused",
            "Go, reused",
            "C, reused",
            "C++, reused",
            "Zig, reused",
            "peer Rust",
            "native, 2 ms apart"
        ]
    );
    let ratios = report["peer_ratios"].as_array().unwrap();
    assert_eq!(ratios.len(), 1, "{ratios:?}");
    assert_eq!(ratios[0]["language"], "Rust");
    assert!(ratios[0]["peer_p50_us"].as_f64().unwrap() > 0.0);
    assert!(
        report["many_plugins"]["empty_all_called_ms"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert!(report["rss_idle_reused"]["plugin_code"].as_u64().unwrap() > 0);
}
