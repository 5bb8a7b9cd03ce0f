//! `[tasks]`: how long tasks are kept, how often clients poll them, and how many may run.

use std::ops::RangeInclusive;
use std::time::Duration;

use toml::Spanned;

use crate::config::TaskSettings;
use crate::config::file::TasksSection;
use crate::config::problems::{Problems, span};

/// `[tasks]` checked; a field out of range is a problem and keeps its default.
pub(super) fn resolve(section: TasksSection, problems: &mut Problems<'_>) -> TaskSettings {
    let d = TaskSettings::default();
    let mut field = |name: &str,
                     value: Option<Spanned<u64>>,
                     range: RangeInclusive<u64>,
                     default| {
        match value {
            Some(v) if !range.contains(v.get_ref()) => {
                problems.add(
                    span(&v),
                    format_args!(
                        "[tasks] {name} = {} is out of range\nhow to fix: use a number from {} \
                         to {}, or leave it out for the default ({default})",
                        v.get_ref(),
                        range.start(),
                        range.end()
                    ),
                );
                default
            }
            Some(v) => v.into_inner(),
            None => default,
        }
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
