//! The last lines of each plugin's log, for the operator's console: what the plugin said itself
//! (`host.log`, its stdout and stderr: the target `palisade::plugin`) and what the host said
//! about it (an event with a `plugin` field), kept apart so a plugin's words are never shown as
//! the host's. A `tracing` layer fills it, once a console is served; it is bounded per plugin
//! and in plugins.

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use parking_lot::Mutex;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::Context;

/// Lines kept per plugin.
pub const LINES_PER_PLUGIN: usize = 200;
/// Longest line kept, in bytes; a plugin's line may be 4 KiB.
pub const MAX_LINE: usize = 1024;
/// Plugins with a log kept; past it, new plugins' lines are not kept.
pub const MAX_PLUGINS: usize = 256;

/// The target the runtime logs a plugin's own words under.
const PLUGIN_TARGET: &str = "palisade::plugin";

/// Who said a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speaker {
    /// The plugin itself: `host.log`, or a line it wrote to stdout or stderr.
    Plugin,
    /// Palisade, about the plugin (loaded, stopped, a request refused).
    Host,
}

/// One line of a plugin's log.
#[derive(Debug, Clone)]
pub struct LogLine {
    /// When it was logged.
    pub at: SystemTime,
    /// Its level.
    pub level: Level,
    /// Who said it.
    pub speaker: Speaker,
    /// `stdout` or `stderr` for what the plugin wrote there.
    pub stream: Option<String>,
    /// The text, cut to [`MAX_LINE`].
    pub text: String,
}

/// Every plugin's last lines.
#[derive(Default)]
pub struct LogTail {
    plugins: Mutex<HashMap<Arc<str>, VecDeque<LogLine>>>,
}

impl LogTail {
    /// `plugin`'s last lines, newest first.
    pub fn lines(&self, plugin: &str) -> Vec<LogLine> {
        self.plugins
            .lock()
            .get(plugin)
            .map(|lines| lines.iter().rev().cloned().collect())
            .unwrap_or_default()
    }

    fn push(&self, plugin: &str, line: LogLine) {
        let mut plugins = self.plugins.lock();
        let room = plugins.len() < MAX_PLUGINS;
        let lines = match plugins.get_mut(plugin) {
            Some(lines) => lines,
            None if room => plugins.entry(plugin.into()).or_default(),
            None => return,
        };
        if lines.len() == LINES_PER_PLUGIN {
            lines.pop_front();
        }
        lines.push_back(line);
    }
}

/// Whether lines are kept: only once a console is served, so a server without one pays
/// nothing for them.
static KEEPING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Keeps plugins' lines from now on (the console is served).
pub fn keep() {
    KEEPING.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// The process's tail, which the layer installed by `serve::init_logging` fills.
pub fn tail() -> &'static LogTail {
    static TAIL: OnceLock<LogTail> = OnceLock::new();
    TAIL.get_or_init(LogTail::default)
}

/// The layer that keeps plugins' lines in [`tail`]: events at info and above with a `plugin`
/// field.
pub fn layer<S>() -> impl tracing_subscriber::Layer<S>
where
    S: Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
{
    use tracing_subscriber::Layer as _;
    // The filter's answer is cached per callsite, so it looks only at what never changes;
    // whether lines are kept is checked per event.
    TailLayer.with_filter(tracing_subscriber::filter::filter_fn(|meta| {
        meta.is_event() && *meta.level() <= Level::INFO && meta.fields().field("plugin").is_some()
    }))
}

struct TailLayer;

impl<S: Subscriber> tracing_subscriber::Layer<S> for TailLayer {
    fn on_event(&self, event: &Event<'_>, _cx: Context<'_, S>) {
        if !KEEPING.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        let Some(plugin) = fields.plugin else {
            return;
        };
        let speaker = if event.metadata().target() == PLUGIN_TARGET {
            Speaker::Plugin
        } else {
            Speaker::Host
        };
        let mut text = fields.message;
        for (name, value) in fields.others {
            let _ = write!(text, " {name}={value}");
        }
        if text.len() > MAX_LINE {
            text.truncate(text.floor_char_boundary(MAX_LINE));
            text.push('…');
        }
        tail().push(
            &plugin,
            LogLine {
                at: SystemTime::now(),
                level: *event.metadata().level(),
                speaker,
                stream: fields.stream,
                text,
            },
        );
    }
}

#[derive(Default)]
struct Fields {
    plugin: Option<String>,
    stream: Option<String>,
    message: String,
    others: Vec<(&'static str, String)>,
}

impl Fields {
    fn set(&mut self, name: &'static str, text: String) {
        // A name recorded with `?` comes quoted; plugin names and streams never hold quotes.
        let bare = || text.trim_matches('"').to_string();
        match name {
            "plugin" => self.plugin = Some(bare()),
            "stream" => self.stream = Some(bare()),
            "message" => self.message = text,
            name if self.others.len() < 8 => self.others.push((name, text)),
            _ => {}
        }
    }
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.set(field.name(), value.to_string());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.set(field.name(), format!("{value:?}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing_subscriber::layer::SubscriberExt as _;

    #[test]
    fn plugin_lines_are_kept_apart_from_the_hosts_and_bounded() {
        keep();
        let subscriber = tracing_subscriber::registry().with(layer());
        tracing::subscriber::with_default(subscriber, || {
            for i in 0..LINES_PER_PLUGIN + 5 {
                tracing::info!(target: "palisade::plugin", plugin = "tail-test", "said {i}");
            }
            tracing::warn!(plugin = "tail-test", "plugin stopped: fuel");
            tracing::info!(target: "palisade::plugin", plugin = %"tail-test", stream = "stderr", "{}", "x".repeat(5000));
            tracing::debug!(target: "palisade::plugin", plugin = "tail-test", "not kept");
            tracing::info!("no plugin: not kept");
        });
        let lines = tail().lines("tail-test");
        assert_eq!(lines.len(), LINES_PER_PLUGIN);
        assert_eq!(lines[0].speaker, Speaker::Plugin);
        assert_eq!(lines[0].stream.as_deref(), Some("stderr"));
        assert!(lines[0].text.len() <= MAX_LINE + 3);
        assert_eq!(lines[1].speaker, Speaker::Host);
        assert_eq!(lines[1].text, "plugin stopped: fuel");
        assert_eq!(lines[2].text, format!("said {}", LINES_PER_PLUGIN + 4));
        assert!(lines.iter().all(|l| l.text != "not kept"));
    }
}
