//! `[tasks]`: how long tasks are kept, how often clients poll them, and how many may run.

use std::time::Duration;

use crate::config::TaskSettings;
use crate::config::file::TasksSection;
use crate::config::problems::Problems;

/// `[tasks]` checked; a field out of range is a problem and keeps its default.
pub(super) fn resolve(section: TasksSection, problems: &mut Problems<'_>) -> TaskSettings {
    let d = TaskSettings::default();
    let mut field = |name: &str, value, range, default| {
        problems.number_in("tasks", name, value, range, default)
    };
    TaskSettings {
        // A week at most: a result nobody fetched in a week is not waited for.
        ttl: Duration::from_secs(field(
            "ttl_s",
            section.ttl_s,
            60..=7 * 24 * 3600,
            d.ttl.as_secs(),
        )),
        poll_interval: Duration::from_millis(field(
            "poll_interval_ms",
            section.poll_interval_ms,
            10..=60_000,
            d.poll_interval.as_millis() as u64,
        )),
        running_per_client: field(
            "running_per_client",
            section.running_per_client,
            1..=1000,
            d.running_per_client,
        ),
        kept_bytes: field(
            "kept_mib",
            section.kept_mib,
            1..=64 * 1024,
            d.kept_bytes >> 20,
        ) << 20,
    }
}
