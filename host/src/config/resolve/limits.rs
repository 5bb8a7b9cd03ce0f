//! `[plugins.NAME.limits]` and `reuse`: what a plugin's calls may spend, and whether its
//! instances serve more than one call.

use std::ops::Range;

use toml::Spanned;

use crate::config::file::{LimitsSection, ReuseSetting};
use crate::config::problems::span;
use crate::runtime::{Limits, Reuse};

/// The most questions one call may be allowed to ask: past a few, a prompt flood, not a dialogue.
const MAX_QUESTIONS_PER_CALL: u64 = 1000;

/// The longest a task may be allowed to run, in seconds: a week.
const MAX_TASK_TIMEOUT_S: u64 = 7 * 24 * 3600;

/// Calls one reused instance serves by default before it is replaced.
const DEFAULT_REUSE_CALLS: u32 = 1000;

/// A problem of one field: its name under the plugin, where it is, and what is wrong.
pub(super) type FieldProblem = (&'static str, Option<Range<usize>>, String);

/// The limits with defaults filled in, and the problems of the fields (each is left at its
/// default).
pub(super) fn resolve_limits(l: LimitsSection) -> (Limits, Vec<FieldProblem>) {
    let d = Limits::default();
    let mut problems = Vec::new();
    let mut field = |name: &'static str, value: Option<Spanned<u64>>, default: u64| match value {
        Some(v) if *v.get_ref() == 0 => {
            problems.push((
                name,
                span(&v),
                "= 0 would refuse every call\nhow to fix: give a positive number, or leave it \
                 out for the default"
                    .to_string(),
            ));
            (default, None)
        }
        Some(v) => (*v.get_ref(), span(&v)),
        None => (default, None),
    };
    let (fuel_per_call, _) = field("fuel_per_call", l.fuel_per_call, d.fuel_per_call);
    let (fuel_per_second, _) = field("fuel_per_second", l.fuel_per_second, d.fuel_per_second);
    let (fuel_burst, _) = field("fuel_burst", l.fuel_burst, d.fuel_burst);
    let (timeout_ms, _) = field("timeout_ms", l.timeout_ms, d.timeout_ms);
    let (memory_mib, memory_at) = field("memory_mib", l.memory_mib, d.memory_bytes >> 20);
    let (output_kib, _) = field("output_kib", l.output_kib, d.output_bytes >> 10);
    let (calls_per_minute, _) = field("calls_per_minute", l.calls_per_minute, d.calls_per_minute);
    let (per_client, _) = field(
        "calls_per_minute_per_client",
        l.calls_per_minute_per_client,
        d.calls_per_minute_per_client,
    );
    let (concurrent_calls, concurrent_at) =
        field("concurrent_calls", l.concurrent_calls, d.concurrent_calls);
    let (task_timeout_s, task_timeout_at) =
        field("task_timeout_s", l.task_timeout_s, d.task_timeout_ms / 1000);
    let (task_fuel, _) = field("task_fuel", l.task_fuel, d.task_fuel);
    let (running_tasks, _) = field("running_tasks", l.running_tasks, d.running_tasks);
    let (cores, _) = field("cores", l.cores, d.cores);
    let mut limits = Limits {
        fuel_per_call,
        fuel_per_second,
        fuel_burst,
        timeout_ms,
        memory_bytes: memory_mib.saturating_mul(1 << 20),
        output_bytes: output_kib.saturating_mul(1 << 10),
        calls_per_minute,
        calls_per_minute_per_client: per_client,
        concurrent_calls,
        questions_per_call: d.questions_per_call,
        task_timeout_ms: task_timeout_s.saturating_mul(1000),
        task_fuel,
        running_tasks,
        cores,
    };
    if task_timeout_s > MAX_TASK_TIMEOUT_S {
        problems.push((
            "task_timeout_s",
            task_timeout_at,
            format!(
                "is above {MAX_TASK_TIMEOUT_S} (a week): a task that long outlives any client \
                 waiting for it\nhow to fix: use at most {MAX_TASK_TIMEOUT_S}"
            ),
        ));
        limits.task_timeout_ms = d.task_timeout_ms;
    }
    if let Some(questions) = l.questions_per_call {
        if *questions.get_ref() > MAX_QUESTIONS_PER_CALL {
            problems.push((
                "questions_per_call",
                span(&questions),
                format!(
                    "is above {MAX_QUESTIONS_PER_CALL}: no user answers that many questions from \
                     one tool call\nhow to fix: use at most {MAX_QUESTIONS_PER_CALL}"
                ),
            ));
        } else {
            limits.questions_per_call = questions.into_inner();
        }
    }
    if limits.memory_bytes > 4 << 30 {
        problems.push((
            "memory_mib",
            memory_at,
            "is above 4096 MiB, the most a 32-bit wasm memory can use\nhow to fix: use at most \
             4096"
                .into(),
        ));
        limits.memory_bytes = d.memory_bytes;
    }
    if limits.concurrent_calls > crate::config::model::MAX_CONCURRENT_CALLS {
        let most = crate::config::model::MAX_CONCURRENT_CALLS;
        problems.push((
            "concurrent_calls",
            concurrent_at,
            format!(
                "is above {most}, half the server's instance pool: one plugin could take every \
                 instance from the others\nhow to fix: use at most {most}"
            ),
        ));
        limits.concurrent_calls = d.concurrent_calls;
    }
    (limits, problems)
}

/// `reuse`, `reuse_calls` and `reuse_memory_mib` as the runtime takes them.
pub(super) fn resolve_reuse(
    setting: Option<Spanned<ReuseSetting>>,
    calls: Option<Spanned<u32>>,
    memory_mib: Option<Spanned<u64>>,
    limits: &Limits,
) -> Result<Reuse, FieldProblem> {
    const NEEDS_REUSE: &str = "applies only with reuse = \"per-client\"\nhow to fix: add reuse \
                               = \"per-client\", or remove it";
    if setting.as_ref().map(Spanned::get_ref) != Some(&ReuseSetting::PerClient) {
        return match (calls, memory_mib) {
            (None, None) => Ok(Reuse::Never),
            (Some(calls), _) => Err(("reuse_calls", span(&calls), NEEDS_REUSE.into())),
            (None, Some(mib)) => Err(("reuse_memory_mib", span(&mib), NEEDS_REUSE.into())),
        };
    }
    if let Some(zero) = calls.as_ref().filter(|c| *c.get_ref() == 0) {
        return Err((
            "reuse_calls",
            span(zero),
            "= 0 would keep no instance\nhow to fix: give a positive number, or remove `reuse`"
                .into(),
        ));
    }
    let memory_bytes = match memory_mib {
        Some(mib) if *mib.get_ref() == 0 => {
            return Err((
                "reuse_memory_mib",
                span(&mib),
                "= 0 would keep no instance\nhow to fix: give a positive number, or leave it out \
                 for the default"
                    .into(),
            ));
        }
        Some(mib) if mib.get_ref().saturating_mul(1 << 20) > limits.memory_bytes => {
            let most = limits.memory_bytes >> 20;
            return Err((
                "reuse_memory_mib",
                span(&mib),
                format!(
                    "is above limits.memory_mib ({most} MiB): no instance can grow past it\nhow \
                     to fix: use at most {most}"
                ),
            ));
        }
        Some(mib) => mib.into_inner() << 20,
        None => limits.memory_bytes / 2,
    };
    Ok(Reuse::PerClient {
        calls: calls.map_or(DEFAULT_REUSE_CALLS, Spanned::into_inner),
        memory_bytes,
    })
}

/// `ready_instances`: how many never-used instances the plugin keeps ready (see the runtime's
/// `ready.rs`); with `reuse = "per-client"` none are, and setting it is a mistake.
pub(super) fn resolve_ready(
    setting: Option<Spanned<u64>>,
    reuse: Reuse,
) -> Result<usize, FieldProblem> {
    let most = crate::runtime::MOST_READY_INSTANCES;
    match setting {
        None if reuse == Reuse::Never => Ok(crate::runtime::DEFAULT_READY_INSTANCES),
        None => Ok(0),
        Some(n) if reuse != Reuse::Never => Err((
            "ready_instances",
            span(&n),
            "applies only to fresh instances: with reuse = \"per-client\" a client's calls \
             share one\nhow to fix: remove it, or remove `reuse`"
                .into(),
        )),
        Some(n) if *n.get_ref() > most as u64 => Err((
            "ready_instances",
            span(&n),
            format!(
                "is above {most}: ready instances hold pool slots and memory the calls of \
                 other plugins need\nhow to fix: use at most {most}"
            ),
        )),
        Some(n) => Ok(n.into_inner() as usize),
    }
}
