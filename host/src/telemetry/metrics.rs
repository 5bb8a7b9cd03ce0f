//! Prometheus metrics: what every call cost (fuel, time), what stopped it (limits, refusals),
//! and what is open and loaded now. Labels come only from the configuration and the catalog
//! (plugin and tool names, fixed sets of outcomes, limits and reasons), never from what a
//! client sends, and the number of (plugin, tool) series is capped: a client cannot grow the
//! server's memory or a scrape through labels.

use parking_lot::Mutex;
use std::collections::HashSet;
use std::sync::{Arc, OnceLock};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};

use crate::audit::AuditRecord;
use crate::runtime::CacheCounts;

/// Each configured plugin and its load state (`ready`, `loading`, `failed`), read at a scrape.
pub type PluginStates = Box<dyn Fn() -> Vec<(Arc<str>, &'static str)> + Send + Sync>;

/// Sessions open by transport, read at a scrape.
pub type SessionCounts = Box<dyn Fn() -> Vec<(&'static str, u64)> + Send + Sync>;
/// Tasks running, by plugin and status (`working`, `input_required`), read at a scrape.
pub type TaskCounts = Box<dyn Fn() -> Vec<(String, &'static str, u64)> + Send + Sync>;

/// Distinct (plugin, tool) pairs given series of their own; later ones share `tool="(other)"`.
const MAX_TOOL_SERIES: usize = 2000;

/// The label sets.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    plugin: String,
    tool: String,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabels {
    plugin: String,
    tool: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LimitLabels {
    plugin: String,
    limit: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct InstanceLabels {
    plugin: String,
    source: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TaskLabels {
    plugin: String,
    status: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: &'static str,
}

/// Why a client was refused, as the `reason` label says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// No token, or one that is not valid (HTTP 401).
    Unauthenticated,
    /// A token whose scope does not cover the request (HTTP 403).
    Scope,
    /// A rate limit or a fuel budget (`limits.calls_per_minute*`, `fuel_per_second`).
    Rate,
    /// The user declined a `confirm = true` tool, or could not be asked.
    ConfirmDeclined,
    /// Too many sessions open (HTTP 429).
    Sessions,
    /// A `Host` or `Origin` not allowed (HTTP 403).
    Origin,
}

impl Refusal {
    fn label(self) -> &'static str {
        match self {
            Refusal::Unauthenticated => "unauthenticated",
            Refusal::Scope => "scope",
            Refusal::Rate => "rate",
            Refusal::ConfirmDeclined => "confirm_declined",
            Refusal::Sessions => "sessions",
            Refusal::Origin => "origin",
        }
    }
}

/// Every metric the server keeps, and the registry a scrape encodes.
pub struct Metrics {
    registry: Registry,
    calls: Family<CallLabels, Counter>,
    durations: Family<ToolLabels, Histogram>,
    fuel: Family<ToolLabels, Counter>,
    limit_hits: Family<LimitLabels, Counter>,
    instances: Family<InstanceLabels, Counter>,
    refusals: Family<ReasonLabels, Counter>,
    tasks_ended: Family<TaskLabels, Counter>,
    streams_open: Gauge,
    /// The (plugin, tool) pairs that have series.
    tool_series: Mutex<HashSet<(String, String)>>,
    live: Arc<LiveState>,
}

fn duration_histogram() -> Histogram {
    // 0.5 ms to about 2 min: a native call to a call that hits a long timeout.
    Histogram::new(exponential_buckets(0.0005, 4.0, 10))
}

impl Metrics {
    /// The metrics, registered; live state (sessions, plugins, the cache) is read at each scrape
    /// once [`Metrics::watch`] says where from.
    pub fn new() -> Arc<Metrics> {
        let mut registry = Registry::with_prefix("palisade");
        let calls = Family::<CallLabels, Counter>::default();
        registry.register(
            "tool_calls",
            "Tool calls, by plugin, tool and outcome (ok, tool-error, limit, declined, ...)",
            calls.clone(),
        );
        let durations =
            Family::<ToolLabels, Histogram>::new_with_constructor(duration_histogram as fn() -> _);
        registry.register_with_unit(
            "tool_call_duration",
            "Time from a tool call's arrival to its answer",
            Unit::Seconds,
            durations.clone(),
        );
        let fuel = Family::<ToolLabels, Counter>::default();
        registry.register(
            "fuel_consumed",
            "Fuel (WebAssembly instructions, roughly) burned by tool calls",
            fuel.clone(),
        );
        let limit_hits = Family::<LimitLabels, Counter>::default();
        registry.register(
            "limit_hits",
            "Calls stopped or refused by a limit (fuel, memory, time, output, concurrency, fuel_budget, client_rate, rate)",
            limit_hits.clone(),
        );
        let instances = Family::<InstanceLabels, Counter>::default();
        registry.register(
            "tool_call_instances",
            "Instances tool calls ran in, by plugin and where each came from (new: made for the call, built-ahead: made before it came, kept: the client's from an earlier call)",
            instances.clone(),
        );
        let refusals = Family::<ReasonLabels, Counter>::default();
        registry.register(
            "refusals",
            "Requests refused, by reason (unauthenticated, scope, rate, confirm_declined, sessions, origin)",
            refusals.clone(),
        );
        let tasks_ended = Family::<TaskLabels, Counter>::default();
        registry.register(
            "tasks_ended",
            "Tasks that ended, by plugin and status (completed, failed, cancelled)",
            tasks_ended.clone(),
        );
        let streams_open = Gauge::default();
        registry.register(
            "streams_open",
            "SSE streams open to clients",
            streams_open.clone(),
        );
        let live = Arc::new(LiveState::default());
        registry.register_collector(Box::new(live.clone()));
        Arc::new(Metrics {
            registry,
            calls,
            durations,
            fuel,
            limit_hits,
            instances,
            refusals,
            tasks_ended,
            streams_open,
            tool_series: Mutex::new(HashSet::new()),
            live,
        })
    }

    /// Where a scrape reads the live state: the plugins' states and the compile cache's
    /// counts.
    pub fn watch(&self, plugins: PluginStates, cache: CacheCounts) {
        let _ = self.live.plugins.set(plugins);
        let _ = self.live.cache.set(cache);
    }

    /// How a scrape counts the sessions open, by transport (the transport says).
    pub fn count_sessions(&self, sessions: SessionCounts) {
        let _ = self.live.sessions.set(sessions);
    }

    /// How a scrape counts the tasks running.
    pub fn count_tasks(&self, tasks: TaskCounts) {
        let _ = self.live.tasks.set(tasks);
    }

    /// Counts a task of `plugin` that ended `status` (`completed`, `failed`, `cancelled`).
    pub fn record_task_end(&self, plugin: &str, status: &'static str) {
        self.tasks_ended
            .get_or_create(&TaskLabels {
                plugin: plugin.to_string(),
                status,
            })
            .inc();
    }

    /// Counts one finished call (the record the audit log writes): the call, its time and fuel,
    /// the limit that stopped it, and a refusal when it was one (a rate limit, a fuel budget, a
    /// declined confirmation).
    pub fn record_call(&self, call: &AuditRecord<'_>) {
        let (plugin, tool) = match call.plugin {
            Some(plugin) => self.tool_labels(plugin, call.tool),
            None => (String::new(), "(unknown)".to_string()),
        };
        self.calls
            .get_or_create(&CallLabels {
                plugin: plugin.clone(),
                tool: tool.clone(),
                outcome: call.outcome,
            })
            .inc();
        let labels = ToolLabels {
            plugin: plugin.clone(),
            tool,
        };
        self.durations
            .get_or_create(&labels)
            .observe(call.duration.as_secs_f64());
        if call.fuel_used > 0 {
            self.fuel.get_or_create(&labels).inc_by(call.fuel_used);
        }
        if let Some(source) = call.instance {
            (self.instances)
                .get_or_create(&InstanceLabels {
                    plugin: plugin.clone(),
                    source,
                })
                .inc();
        }
        if let Some(limit) = call.limit {
            self.limit_hits
                .get_or_create(&LimitLabels { plugin, limit })
                .inc();
        }
        match (call.outcome, call.limit) {
            ("declined" | "not-confirmed", _) => self.record_refusal(Refusal::ConfirmDeclined),
            (_, Some("rate" | "client_rate" | "fuel_budget")) => self.record_refusal(Refusal::Rate),
            _ => {}
        }
    }

    /// Counts one refusal.
    pub fn record_refusal(&self, why: Refusal) {
        self.refusals
            .get_or_create(&ReasonLabels {
                reason: why.label(),
            })
            .inc();
    }

    /// An SSE stream opened; it counts as open until the guard is dropped.
    pub fn stream_opened(self: &Arc<Self>) -> StreamOpen {
        self.streams_open.inc();
        StreamOpen(self.clone())
    }

    /// The metrics in the OpenMetrics text format.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            tracing::warn!("cannot encode the metrics: {e}");
        }
        text
    }

    /// The labels of `tool` of `plugin`, or a shared `(other)` series once the cap is reached.
    fn tool_labels(&self, plugin: &str, tool: &str) -> (String, String) {
        let key = (plugin.to_string(), tool.to_string());
        let mut series = self.tool_series.lock();
        if series.contains(&key) || series.len() < MAX_TOOL_SERIES {
            series.insert(key.clone());
            key
        } else {
            (key.0, "(other)".to_string())
        }
    }
}

/// Holds one SSE stream in `palisade_streams_open`.
pub struct StreamOpen(Arc<Metrics>);

impl Drop for StreamOpen {
    fn drop(&mut self) {
        self.0.streams_open.dec();
    }
}

/// What a scrape reads as it is: sessions open, plugins by load state, the compile cache.
#[derive(Default)]
struct LiveState {
    plugins: OnceLock<PluginStates>,
    cache: OnceLock<CacheCounts>,
    sessions: OnceLock<SessionCounts>,
    tasks: OnceLock<TaskCounts>,
}

impl std::fmt::Debug for LiveState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveState").finish_non_exhaustive()
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TransportLabels {
    transport: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PluginStateLabels {
    plugin: String,
    state: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CacheLabels {
    result: &'static str,
}

impl Collector for LiveState {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        if let Some(sessions) = self.sessions.get() {
            let mut metric = encoder.encode_descriptor(
                "sessions_open",
                "Client sessions open, by transport",
                None,
                prometheus_client::metrics::MetricType::Gauge,
            )?;
            for (transport, open) in sessions() {
                let labels = TransportLabels { transport };
                ConstGauge::new(open as i64).encode(metric.encode_family(&labels)?)?;
            }
        }
        if let Some(cache) = self.cache.get() {
            let (hits, misses) = cache.get();
            let mut metric = encoder.encode_descriptor(
                "compile_cache_lookups",
                "Plugin loads served from the compile cache (hit) or compiled (miss)",
                None,
                prometheus_client::metrics::MetricType::Counter,
            )?;
            for (result, count) in [("hit", hits), ("miss", misses)] {
                ConstCounter::new(count).encode(metric.encode_family(&CacheLabels { result })?)?;
            }
        }
        if let Some(tasks) = self.tasks.get() {
            let mut metric = encoder.encode_descriptor(
                "tasks_running",
                "Tasks not ended yet, by plugin and status (working, input_required)",
                None,
                prometheus_client::metrics::MetricType::Gauge,
            )?;
            for (plugin, status, count) in tasks() {
                let labels = TaskLabels { plugin, status };
                ConstGauge::new(count as i64).encode(metric.encode_family(&labels)?)?;
            }
        }
        if let Some(plugins) = self.plugins.get() {
            let mut metric = encoder.encode_descriptor(
                "plugin_state",
                "Each configured plugin's load state: 1 for the state it is in (ready, loading, failed)",
                None,
                prometheus_client::metrics::MetricType::Gauge,
            )?;
            for (plugin, state) in plugins() {
                let labels = PluginStateLabels {
                    plugin: plugin.to_string(),
                    state,
                };
                ConstGauge::new(1).encode(metric.encode_family(&labels)?)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn record<'a>(
        plugin: Option<&'a str>,
        tool: &'a str,
        outcome: &'static str,
        limit: Option<&'static str>,
        fuel_used: u64,
    ) -> AuditRecord<'a> {
        static NO_ARGUMENTS: serde_json::Value = serde_json::Value::Null;
        AuditRecord {
            client: "c",
            oauth: None,
            trace_id: None,
            plugin,
            tool,
            arguments: &NO_ARGUMENTS,
            outcome,
            detail: None,
            limit,
            fuel_used,
            instance: plugin.map(|_| "built-ahead"),
            duration: Duration::from_millis(2),
        }
    }

    #[test]
    fn calls_limits_and_refusals_are_counted_under_bounded_labels() {
        let metrics = Metrics::new();
        let call = |plugin: Option<&'static str>, tool: &'static str, outcome, limit| {
            record(plugin, tool, outcome, limit, 1000)
        };
        metrics.record_call(&call(Some("hello"), "hello_greet", "ok", None));
        metrics.record_call(&call(Some("hello"), "hello_greet", "ok", None));
        metrics.record_call(&call(
            Some("misbehave"),
            "misbehave_spin",
            "limit",
            Some("fuel"),
        ));
        metrics.record_call(&call(
            None,
            "anything-a-client-made-up",
            "unknown-tool",
            None,
        ));
        metrics.record_refusal(Refusal::Unauthenticated);
        let stream = metrics.stream_opened();
        let text = metrics.encode();
        for line in [
            r#"palisade_tool_calls_total{plugin="hello",tool="hello_greet",outcome="ok"} 2"#,
            r#"palisade_tool_calls_total{plugin="misbehave",tool="misbehave_spin",outcome="limit"} 1"#,
            r#"palisade_tool_calls_total{plugin="",tool="(unknown)",outcome="unknown-tool"} 1"#,
            r#"palisade_fuel_consumed_total{plugin="hello",tool="hello_greet"} 2000"#,
            r#"palisade_limit_hits_total{plugin="misbehave",limit="fuel"} 1"#,
            r#"palisade_tool_call_instances_total{plugin="hello",source="built-ahead"} 2"#,
            r#"palisade_refusals_total{reason="unauthenticated"} 1"#,
            r#"palisade_tool_call_duration_seconds_count{plugin="hello",tool="hello_greet"} 2"#,
            "palisade_streams_open 1",
            "# EOF",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
        }
        assert!(!text.contains("made-up"), "{text}");
        drop(stream);
        assert!(metrics.encode().contains("palisade_streams_open 0"));
    }

    #[test]
    fn tool_series_are_capped() {
        let metrics = Metrics::new();
        for i in 0..MAX_TOOL_SERIES + 10 {
            let tool = format!("t{i}");
            metrics.record_call(&record(Some("p"), &tool, "ok", None, 0));
        }
        let text = metrics.encode();
        assert!(
            text.contains(
                r#"palisade_tool_calls_total{plugin="p",tool="(other)",outcome="ok"} 10"#
            )
        );
        assert_eq!(
            text.matches("palisade_tool_calls_total{").count(),
            MAX_TOOL_SERIES + 1
        );
    }
}
