//! What happened lately, kept in memory for the operator's console: the last calls, and an hour
//! of per-minute figures (calls, errors, latency, limit hits), for the whole server and per
//! plugin; and the signal that something the console shows has changed. Calls are kept only
//! once a console is served.
//!
//! Everything here is bounded: [`RECENT_CALLS`] calls in all and [`RECENT_PER_PLUGIN`] per
//! plugin, [`MINUTES`] minutes, [`MAX_PLUGINS`] plugins (a plugin past it is only in the
//! server's figures), and a call's text fields cut to [`MAX_FIELD`] bytes.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use sha2::{Digest, Sha256};
use tokio::sync::broadcast;

use crate::audit::AuditRecord;
use crate::config::AuditArguments;

/// Calls kept for the server's list of recent calls.
pub const RECENT_CALLS: usize = 500;
/// Calls kept per plugin, so a quiet plugin's last calls are not pushed out by a busy one.
pub const RECENT_PER_PLUGIN: usize = 100;
/// Minutes of figures kept: the console's charts show the last hour.
pub const MINUTES: usize = 60;
/// Plugins with figures of their own; a configuration has far fewer.
pub const MAX_PLUGINS: usize = 256;
/// Longest client name, tool name, detail or argument text kept, in bytes.
pub const MAX_FIELD: usize = 2048;

/// The limit kinds the console charts; `rate` takes in every admission refusal.
pub const LIMIT_KINDS: [&str; 5] = ["fuel", "time", "memory", "output", "rate"];

/// Latency buckets: bucket `i` holds calls up to `FIRST_BUCKET * GROWTH^i`, from 50 µs to
/// about 8 minutes, each 25% wider than the last (so a percentile is within 25%).
const BUCKETS: usize = 72;
const FIRST_BUCKET_US: f64 = 50.0;
const GROWTH: f64 = 1.25;

/// What the console shows changed: its pages that show it refresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    /// A call started or ended.
    Calls,
    /// A plugin's state changed (loaded, failed, reloading).
    Plugins,
    /// A grant question was asked or answered, a grant remembered or revoked.
    Grants,
    /// A session started or ended.
    Sessions,
    /// A task started, changed or ended.
    Tasks,
}

impl Topic {
    /// Its name, as the console's pages list what they show.
    pub fn name(self) -> &'static str {
        match self {
            Topic::Calls => "calls",
            Topic::Plugins => "plugins",
            Topic::Grants => "grants",
            Topic::Sessions => "sessions",
            Topic::Tasks => "tasks",
        }
    }
}

/// One call that ended.
#[derive(Debug, Clone)]
pub struct CallRecord {
    /// When it ended.
    pub at: SystemTime,
    /// Who called: a token's name, `stdio`, an address.
    pub client: String,
    /// The plugin, when the tool was known.
    pub plugin: Option<Arc<str>>,
    /// The tool's public name.
    pub tool: String,
    /// As the audit log says it (`ok`, `tool-error`, `limit`, ...).
    pub outcome: &'static str,
    /// The limit that stopped it.
    pub limit: Option<&'static str>,
    /// Why it failed, when it did.
    pub detail: Option<String>,
    /// From its request to its answer.
    pub duration: Duration,
    /// Fuel it burned.
    pub fuel: u64,
    /// Its arguments as the audit log writes them (in full, or a SHA-256), or nothing without
    /// an audit log.
    pub arguments: Option<String>,
}

impl CallRecord {
    /// Whether it counts as an error in the figures: anything but a plain answer.
    pub fn failed(&self) -> bool {
        self.outcome != "ok"
    }
}

/// One minute's figures.
#[derive(Clone)]
struct Minute {
    /// Minutes since the epoch; a slot holding an older minute is empty.
    at: u64,
    calls: u32,
    errors: u32,
    limits: [u32; LIMIT_KINDS.len()],
    latency: [u32; BUCKETS],
}

impl Minute {
    fn empty(at: u64) -> Minute {
        Minute {
            at,
            calls: 0,
            errors: 0,
            limits: [0; LIMIT_KINDS.len()],
            latency: [0; BUCKETS],
        }
    }

    /// The latency under which `share` of the minute's calls answered.
    fn percentile(&self, share: f64) -> Option<Duration> {
        let total: u64 = self.latency.iter().map(|&n| u64::from(n)).sum();
        if total == 0 {
            return None;
        }
        let wanted = ((total as f64) * share).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, &n) in self.latency.iter().enumerate() {
            seen += u64::from(n);
            if seen >= wanted {
                return Some(Duration::from_micros(bucket_top_us(i) as u64));
            }
        }
        None
    }
}

fn bucket_top_us(i: usize) -> f64 {
    FIRST_BUCKET_US * GROWTH.powi(i as i32)
}

fn bucket_of(duration: Duration) -> usize {
    let us = duration.as_secs_f64() * 1e6;
    if us <= FIRST_BUCKET_US {
        return 0;
    }
    let i = ((us / FIRST_BUCKET_US).ln() / GROWTH.ln()).ceil() as usize;
    i.min(BUCKETS - 1)
}

/// One minute's figures as the console draws them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MinuteFigures {
    /// Minutes since the epoch.
    pub at: u64,
    /// Calls that ended.
    pub calls: u32,
    /// Of them, those that did not answer plainly.
    pub errors: u32,
    /// Median latency, when there were calls.
    pub p50: Option<Duration>,
    /// 99th percentile latency.
    pub p99: Option<Duration>,
    /// Limit hits, in the order of [`LIMIT_KINDS`].
    pub limits: [u32; LIMIT_KINDS.len()],
}

/// An hour of figures, oldest minute first, the current one last.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    /// Exactly [`MINUTES`] minutes.
    pub minutes: Vec<MinuteFigures>,
}

impl Figures {
    /// Calls, errors, limit hits (by kind) over the hour.
    pub fn totals(&self) -> (u64, u64, [u64; LIMIT_KINDS.len()]) {
        let mut limits = [0u64; LIMIT_KINDS.len()];
        let (mut calls, mut errors) = (0u64, 0u64);
        for m in &self.minutes {
            calls += u64::from(m.calls);
            errors += u64::from(m.errors);
            for (total, n) in limits.iter_mut().zip(m.limits) {
                *total += u64::from(n);
            }
        }
        (calls, errors, limits)
    }
}

/// The figures and recent calls of the server, or of one plugin.
struct History {
    minutes: Vec<Minute>,
    recent: VecDeque<Arc<CallRecord>>,
    keep: usize,
}

impl History {
    fn new(keep: usize) -> History {
        History {
            minutes: vec![Minute::empty(0); MINUTES],
            recent: VecDeque::new(),
            keep,
        }
    }

    fn add(&mut self, call: &Arc<CallRecord>, minute: u64) {
        let slot = &mut self.minutes[(minute % MINUTES as u64) as usize];
        if slot.at != minute {
            *slot = Minute::empty(minute);
        }
        slot.calls += 1;
        slot.errors += u32::from(call.failed());
        if let Some(kind) = call.limit.map(limit_column) {
            slot.limits[kind] += 1;
        }
        slot.latency[bucket_of(call.duration)] += 1;
        if self.recent.len() == self.keep {
            self.recent.pop_back();
        }
        self.recent.push_front(call.clone());
    }

    fn figures(&self, now_minute: u64) -> Figures {
        let minutes = (0..MINUTES as u64)
            .rev()
            .map(|ago| {
                let at = now_minute.saturating_sub(ago);
                let slot = &self.minutes[(at % MINUTES as u64) as usize];
                if slot.at != at {
                    return MinuteFigures {
                        at,
                        ..Default::default()
                    };
                }
                MinuteFigures {
                    at,
                    calls: slot.calls,
                    errors: slot.errors,
                    p50: slot.percentile(0.5),
                    p99: slot.percentile(0.99),
                    limits: slot.limits,
                }
            })
            .collect();
        Figures { minutes }
    }
}

/// Which chart column a limit's kind (`CallError::kind`) is counted in.
fn limit_column(kind: &str) -> usize {
    match kind {
        "fuel" => 0,
        "time" => 1,
        "memory" => 2,
        "output" => 3,
        _ => 4,
    }
}

struct Kept {
    all: History,
    plugins: HashMap<Arc<str>, History>,
}

/// Recent calls, an hour of figures, and the console's change signal.
pub struct Activity {
    kept: Mutex<Kept>,
    /// How calls' arguments may be shown: as the audit log writes them, or not at all.
    arguments: Option<AuditArguments>,
    changes: broadcast::Sender<Topic>,
    /// Whether calls are kept: only once a console is served, so a server without one pays
    /// nothing per call here.
    keeping: AtomicBool,
}

impl std::fmt::Debug for Activity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Activity").finish_non_exhaustive()
    }
}

impl Activity {
    /// Keeps calls, their arguments shown as `arguments` says (the audit log's setting; `None`:
    /// never shown).
    pub fn new(arguments: Option<AuditArguments>) -> Activity {
        Activity {
            kept: Mutex::new(Kept {
                all: History::new(RECENT_CALLS),
                plugins: HashMap::new(),
            }),
            arguments,
            changes: broadcast::channel(64).0,
            keeping: AtomicBool::new(false),
        }
    }

    /// Keeps calls from now on (the console is served).
    pub fn keep(&self) {
        self.keeping.store(true, Ordering::Relaxed);
    }

    /// Records a call that ended, as the audit log has it.
    pub fn record(&self, call: &AuditRecord<'_>) {
        if !self.keeping.load(Ordering::Relaxed) {
            return;
        }
        let arguments = self.arguments.map(|how| match how {
            AuditArguments::Full => cut(call.arguments.to_string()),
            AuditArguments::Hash => format!(
                "sha256 {}",
                hex::encode(Sha256::digest(call.arguments.to_string()))
            ),
        });
        let record = Arc::new(CallRecord {
            at: SystemTime::now(),
            client: cut(call.client.to_string()),
            plugin: call.plugin.map(Arc::from),
            tool: cut(call.tool.to_string()),
            outcome: call.outcome,
            limit: call.limit,
            detail: call.detail.map(|d| cut(d.to_string())),
            duration: call.duration,
            fuel: call.fuel_used,
            arguments,
        });
        let minute = minute_now();
        {
            let mut kept = self.kept.lock();
            kept.all.add(&record, minute);
            if let Some(plugin) = &record.plugin {
                let room = kept.plugins.len() < MAX_PLUGINS;
                match kept.plugins.get_mut(&**plugin) {
                    Some(history) => history.add(&record, minute),
                    None if room => {
                        let mut history = History::new(RECENT_PER_PLUGIN);
                        history.add(&record, minute);
                        kept.plugins.insert(plugin.clone(), history);
                    }
                    None => {}
                }
            }
        }
        self.changed(Topic::Calls);
    }

    /// The last calls, newest first: of `plugin`, or of every plugin.
    pub fn recent(&self, plugin: Option<&str>) -> Vec<Arc<CallRecord>> {
        let kept = self.kept.lock();
        let history = match plugin {
            None => Some(&kept.all),
            Some(plugin) => kept.plugins.get(plugin),
        };
        history
            .map(|h| h.recent.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The last hour's figures: of `plugin`, or of the whole server.
    pub fn figures(&self, plugin: Option<&str>) -> Figures {
        let now = minute_now();
        let kept = self.kept.lock();
        match plugin {
            None => kept.all.figures(now),
            Some(plugin) => kept
                .plugins
                .get(plugin)
                .map(|h| h.figures(now))
                .unwrap_or_else(|| History::new(0).figures(now)),
        }
    }

    /// Tells the console's open pages that `topic` changed.
    pub fn changed(&self, topic: Topic) {
        // Nobody listening is fine: no console is open.
        let _ = self.changes.send(topic);
    }

    /// Hears what changes from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Topic> {
        self.changes.subscribe()
    }
}

fn minute_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() / 60)
        .unwrap_or_default()
}

/// `text`, cut to [`MAX_FIELD`] bytes at a character boundary.
fn cut(mut text: String) -> String {
    if text.len() > MAX_FIELD {
        text.truncate(text.floor_char_boundary(MAX_FIELD));
        text.push('…');
    }
    text
}

/// A JSON value's text, as [`Activity`] keeps arguments (for tests).
#[cfg(test)]
fn shown(value: &serde_json::Value) -> String {
    cut(value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn call<'a>(
        plugin: Option<&'a str>,
        outcome: &'static str,
        ms: u64,
        args: &'a Value,
    ) -> AuditRecord<'a> {
        AuditRecord {
            client: "alice",
            oauth: None,
            trace_id: None,
            plugin,
            tool: "t",
            arguments: args,
            outcome,
            detail: None,
            limit: (outcome == "limit").then_some("fuel"),
            fuel_used: 7,
            instance: None,
            duration: Duration::from_millis(ms),
        }
    }

    #[test]
    fn calls_are_counted_per_minute_with_their_percentiles_and_limits() {
        let activity = Activity::new(None);
        activity.keep();
        let args = json!({});
        for ms in 1..=100 {
            activity.record(&call(Some("p"), "ok", ms, &args));
        }
        activity.record(&call(Some("p"), "limit", 5, &args));
        activity.record(&call(Some("q"), "tool-error", 5, &args));
        let all = activity.figures(None);
        assert_eq!(all.minutes.len(), MINUTES);
        let (calls, errors, limits) = all.totals();
        assert_eq!((calls, errors, limits[0]), (102, 2, 1));
        let now = all.minutes.last().unwrap();
        let p50 = now.p50.unwrap().as_secs_f64() * 1e3;
        let p99 = now.p99.unwrap().as_secs_f64() * 1e3;
        assert!((45.0..=65.0).contains(&p50), "p50 {p50} ms");
        assert!((95.0..=125.0).contains(&p99), "p99 {p99} ms");
        let (q_calls, q_errors, _) = activity.figures(Some("q")).totals();
        assert_eq!((q_calls, q_errors), (1, 1));
        assert_eq!(activity.figures(Some("none")).totals().0, 0);
    }

    #[test]
    fn recent_calls_are_bounded_and_newest_first() {
        let activity = Activity::new(Some(AuditArguments::Hash));
        activity.keep();
        let args = json!({"secret": "x"});
        for _ in 0..RECENT_CALLS + 10 {
            activity.record(&call(Some("p"), "ok", 1, &args));
        }
        activity.record(&call(Some("q"), "ok", 2, &args));
        let recent = activity.recent(None);
        assert_eq!(recent.len(), RECENT_CALLS);
        assert_eq!(recent[0].plugin.as_deref(), Some("q"));
        assert_eq!(activity.recent(Some("p")).len(), RECENT_PER_PLUGIN);
        let shown = recent[0].arguments.as_deref().unwrap();
        assert!(
            shown.starts_with("sha256 ") && !shown.contains("secret"),
            "{shown}"
        );
    }

    #[test]
    fn long_fields_are_cut() {
        let long = "é".repeat(MAX_FIELD);
        let text = shown(&Value::String(long));
        assert!(text.len() <= MAX_FIELD + '…'.len_utf8(), "{}", text.len());
    }
}
