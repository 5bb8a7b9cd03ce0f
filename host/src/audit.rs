//! The audit log: one JSON line per tool call, appended to a file that is rotated at a size cap.
//!
//! Lines are written as each call ends, under a lock, without buffering: a line is on disk (in
//! the OS's cache) before the client has the result, and a crash loses nothing already answered.
//!
//! Nothing is lost silently: once a line cannot be written (disk full, file gone), calls are
//! refused until the log can be written again, when a line records how many were refused
//! (unless the operator chose `fail_open`, which serves calls unlogged and says so in the
//! server's log).

use parking_lot::Mutex;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use anyhow::{Context as _, Result};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::config::{AuditArguments, AuditConfig, OAuthSubject};

/// One finished tool call, as the audit log records it (and the metrics count it).
pub struct AuditRecord<'a> {
    /// Who called: a token's name, `stdio`, or an anonymous client's address.
    pub client: &'a str,
    /// Who the caller's OAuth access token speaks for, when it had one.
    pub oauth: Option<&'a OAuthSubject>,
    /// The trace the call is part of (W3C trace id), when it is in one.
    pub trace_id: Option<&'a str>,
    /// `None` when the tool is unknown to this client.
    pub plugin: Option<&'a str>,
    /// The public name the client called.
    pub tool: &'a str,
    /// The arguments, logged hashed or in full as `[audit] arguments` says.
    pub arguments: &'a Value,
    /// `ok`, `tool-error`, `limit`, `stopped`, `declined`, `not-confirmed`, `unknown-tool`,
    /// `invalid-arguments`, `cancelled`, `host-error`: a fixed set (a metrics label).
    pub outcome: &'static str,
    /// The limit or the reason, for outcomes other than `ok`.
    pub detail: Option<&'a str>,
    /// The limit that stopped the call (`fuel`, `memory`, `time`, ...), if one did; counted by
    /// the metrics (the log has it in `detail`).
    pub limit: Option<&'static str>,
    /// Fuel the call burned.
    pub fuel_used: u64,
    /// Where the instance that ran it came from (`new`, `built-ahead`, `kept`); `None` if none
    /// ran it.
    pub instance: Option<&'static str>,
    /// How long the call took.
    pub duration: Duration,
}

/// A line about a task (see [`AuditLog::record_task`]).
pub struct TaskLine<'a> {
    /// Who made the request.
    pub client: &'a str,
    /// Who the task belongs to.
    pub owner: &'a str,
    /// The plugin that runs it.
    pub plugin: &'a str,
    /// The tool called, by its public name.
    pub tool: &'a str,
    /// The task's id.
    pub id: &'a str,
    /// Its status now.
    pub status: &'a str,
    /// `task-created`, `task-input`, `task-cancelled` or `task-ended`.
    pub event: &'a str,
    /// Why it ended, for `task-ended`.
    pub detail: Option<&'a str>,
}

/// The audit log: one JSON line per tool call, rotated by size.
pub struct AuditLog {
    config: AuditConfig,
    file: Mutex<Open>,
    /// The last write failed: the file is opened again before the next one.
    failing: AtomicBool,
    /// Calls refused since then.
    refused: AtomicU64,
}

/// Why a call is refused while the audit log cannot be written. The path stays in the server's
/// log; the client is told only what happened.
#[derive(Debug, thiserror::Error)]
#[error(
    "the server cannot write its audit log, so it refuses calls until it can; the operator \
     sees why in the server's log"
)]
pub struct AuditUnavailable;

struct Open {
    file: File,
    size: u64,
}

impl AuditLog {
    /// How arguments are written, as configured.
    pub fn arguments(&self) -> AuditArguments {
        self.config.arguments
    }

    /// Opens (or creates, readable only by the operator) the log file.
    pub fn open(config: AuditConfig) -> Result<AuditLog> {
        let open = open(&config.path)?;
        Ok(AuditLog {
            config,
            file: Mutex::new(open),
            failing: AtomicBool::new(false),
            refused: AtomicU64::new(0),
        })
    }

    /// Whether a call may run: the log can take its line, or the operator chose to fail open.
    /// After a failed write, this tries the file again, and on success records how many calls
    /// were refused meanwhile.
    pub fn admit_call(&self) -> Result<(), AuditUnavailable> {
        if self.config.fail_open || !self.failing.load(Ordering::Relaxed) {
            return Ok(());
        }
        let refused = self.refused.load(Ordering::Relaxed);
        let line = json!({
            "time": humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            "outcome": "audit-gap",
            "detail": format!("{refused} calls refused while the audit log could not be written"),
        });
        if self.write_line(&line) {
            self.refused.fetch_sub(refused, Ordering::Relaxed);
            tracing::info!(path = %self.config.path.display(), refused, "the audit log can be written again; serving calls");
            Ok(())
        } else {
            self.refused.fetch_add(1, Ordering::Relaxed);
            Err(AuditUnavailable)
        }
    }

    /// The settings it was opened with.
    pub fn config(&self) -> &AuditConfig {
        &self.config
    }

    /// Writes `record`; when the log cannot be written, the call is refused unless `fail_open`.
    pub fn record(&self, record: &AuditRecord<'_>) {
        let arguments = match self.config.arguments {
            AuditArguments::Full => json!({ "arguments": record.arguments }),
            AuditArguments::Hash => json!({
                "arguments_sha256": hex::encode(Sha256::digest(record.arguments.to_string())),
            }),
        };
        let mut line = json!({
            "time": humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            "client": record.client,
            "plugin": record.plugin,
            "tool": record.tool,
            "outcome": record.outcome,
            "fuel_used": record.fuel_used,
            "duration_ms": record.duration.as_secs_f64() * 1000.0,
        });
        if let (Some(instance), Some(map)) = (record.instance, line.as_object_mut()) {
            map.insert("instance".into(), instance.into());
        }
        if let (Some(detail), Some(map)) = (record.detail, line.as_object_mut()) {
            map.insert("detail".into(), detail.into());
        }
        if let (Some(trace_id), Some(map)) = (record.trace_id, line.as_object_mut()) {
            map.insert("trace_id".into(), trace_id.into());
        }
        if let (Some(who), Some(map)) = (record.oauth, line.as_object_mut()) {
            map.insert("subject".into(), who.subject.clone().into());
            if let Some(client_id) = &who.client_id {
                map.insert("client_id".into(), client_id.clone().into());
            }
        }
        if let (Value::Object(map), Value::Object(args)) = (&mut line, arguments) {
            map.extend(args);
        }
        self.write_line(&line);
    }

    /// Writes what a user decided when a plugin reached for a host or an environment variable it
    /// was not granted (`ask = true`): `grant-once`, `grant-always`, `grant-denied`, or
    /// `grant-unasked` (nobody could be asked; `detail` says why).
    pub fn record_grant(
        &self,
        client: &str,
        plugin: &str,
        kind: &str,
        grant: &str,
        outcome: &str,
        detail: Option<&str>,
    ) {
        let mut line = json!({
            "time": humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            "client": client,
            "plugin": plugin,
            "outcome": outcome,
            "grant": { "kind": kind, "name": grant },
        });
        if let (Some(detail), Some(map)) = (detail, line.as_object_mut()) {
            map.insert("detail".into(), detail.into());
        }
        self.write_line(&line);
    }

    /// Writes what happened to a task: `task-created`, `task-input` (the client answered its
    /// questions), `task-cancelled`, or `task-ended` (with its status). The task's call has
    /// its own line when it ends, like any call.
    pub fn record_task(&self, line: &TaskLine<'_>) {
        let mut out = json!({
            "time": humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            "client": line.client,
            "owner": line.owner,
            "plugin": line.plugin,
            "tool": line.tool,
            "outcome": line.event,
            "task": { "id": line.id, "status": line.status },
        });
        if let (Some(detail), Some(map)) = (line.detail, out.as_object_mut()) {
            map.insert("detail".into(), detail.into());
        }
        self.write_line(&out);
    }

    /// Writes what an operator did in the console (`operator-answered`, `operator-revoked`,
    /// `operator-cancelled`) to `target`, with the operator's identity. False when the line
    /// could not be written: the console then says the action was not recorded.
    pub fn record_operator(
        &self,
        operator: &str,
        action: &str,
        target: Value,
        detail: Option<&str>,
    ) -> bool {
        let mut line = json!({
            "time": humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            "operator": operator,
            "outcome": action,
            "target": target,
        });
        if let (Some(detail), Some(map)) = (detail, line.as_object_mut()) {
            map.insert("detail".into(), detail.into());
        }
        self.write_line(&line)
    }

    /// Writes one line; false (with the reason in the server's log) when it cannot.
    fn write_line(&self, line: &Value) -> bool {
        let mut text = line.to_string();
        text.push('\n');
        match self.write(text.as_bytes()) {
            Ok(()) => {
                self.failing.store(false, Ordering::Relaxed);
                true
            }
            Err(e) => {
                if self.failing.swap(true, Ordering::Relaxed) {
                    // Said already, when it started failing.
                    tracing::debug!("the audit log still cannot be written: {e:#}");
                    return false;
                }
                let then = if self.config.fail_open {
                    "serving calls unlogged ([audit] fail_open)"
                } else {
                    "refusing calls until it can be written"
                };
                tracing::error!(path = %self.config.path.display(), "cannot write the audit log, {then}: {e:#}");
                false
            }
        }
    }

    fn write(&self, line: &[u8]) -> Result<()> {
        let mut open = self.file.lock();
        if self.failing.load(Ordering::Relaxed) {
            // The file may have been moved, replaced or repaired meanwhile.
            *open = self::open(&self.config.path)?;
        }
        if open.size > 0 && open.size + line.len() as u64 > self.config.max_bytes {
            rotate(&self.config.path, self.config.keep)?;
            *open = self::open(&self.config.path)?;
        }
        open.file.write_all(line)?;
        open.size += line.len() as u64;
        Ok(())
    }
}

fn open(path: &Path) -> Result<Open> {
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options
        .open(path)
        .with_context(|| format!("cannot open the audit log {}", path.display()))?;
    let size = file.metadata()?.len();
    Ok(Open { file, size })
}

/// `PATH` becomes `PATH.1`, `PATH.1` becomes `PATH.2`, ... and `PATH.keep` is dropped.
fn rotate(path: &Path, keep: u32) -> Result<()> {
    let numbered = |n: u32| -> PathBuf {
        let mut p = path.as_os_str().to_owned();
        p.push(format!(".{n}"));
        p.into()
    };
    if keep == 0 {
        std::fs::remove_file(path)?;
        return Ok(());
    }
    let _ = std::fs::remove_file(numbered(keep));
    for n in (1..keep).rev() {
        let from = numbered(n);
        if from.exists() {
            std::fs::rename(&from, numbered(n + 1))?;
        }
    }
    std::fs::rename(path, numbered(1))
        .with_context(|| format!("cannot rotate the audit log {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record<'a>(args: &'a Value) -> AuditRecord<'a> {
        AuditRecord {
            client: "alice",
            oauth: None,
            trace_id: None,
            plugin: Some("files"),
            tool: "files_read_file",
            arguments: args,
            outcome: "ok",
            detail: None,
            limit: None,
            fuel_used: 1234,
            instance: Some("new"),
            duration: Duration::from_millis(3),
        }
    }

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("palisade-audit-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn lines_are_json_with_hashed_arguments_by_default() {
        let path = dir("hash").join("audit.jsonl");
        let log = AuditLog::open(AuditConfig {
            path: path.clone(),
            max_bytes: 1 << 20,
            keep: 2,
            arguments: AuditArguments::Hash,
            fail_open: false,
        })
        .unwrap();
        let args = json!({ "path": "/secret/plan.txt" });
        log.record(&record(&args));
        let text = std::fs::read_to_string(&path).unwrap();
        let line: Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(line["client"], "alice");
        assert_eq!(line["outcome"], "ok");
        assert_eq!(line["fuel_used"], 1234);
        assert_eq!(line["instance"], "new");
        assert_eq!(line["arguments_sha256"].as_str().unwrap().len(), 64);
        assert!(!text.contains("secret"), "arguments leaked: {text}");
    }

    #[test]
    fn the_file_rotates_at_its_cap_keeping_n() {
        let path = dir("rotate").join("audit.jsonl");
        let log = AuditLog::open(AuditConfig {
            path: path.clone(),
            max_bytes: 600,
            keep: 2,
            arguments: AuditArguments::Full,
            fail_open: false,
        })
        .unwrap();
        let args = json!({ "n": 1 });
        for _ in 0..40 {
            log.record(&record(&args));
        }
        let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        let one = PathBuf::from(format!("{}.1", path.display()));
        let two = PathBuf::from(format!("{}.2", path.display()));
        let three = PathBuf::from(format!("{}.3", path.display()));
        assert!(size(&path) <= 600 && size(&path) > 0);
        assert!(size(&one) > 0 && size(&one) <= 600);
        assert!(size(&two) > 0);
        assert!(!three.exists(), "keeps only 2");
        let all = std::fs::read_to_string(&one).unwrap();
        for line in all.lines() {
            serde_json::from_str::<Value>(line).expect("whole lines only");
        }
    }

    #[cfg(unix)]
    #[test]
    fn calls_are_refused_while_the_log_cannot_be_written() {
        let dir = dir("full");
        let path = dir.join("audit.jsonl");
        // Every write to /dev/full fails as on a full disk.
        std::os::unix::fs::symlink("/dev/full", &path).unwrap();
        let config = |fail_open| AuditConfig {
            path: path.clone(),
            max_bytes: 1 << 20,
            keep: 2,
            arguments: AuditArguments::Hash,
            fail_open,
        };
        let log = AuditLog::open(config(false)).unwrap();
        assert!(log.admit_call().is_ok(), "nothing failed yet");
        let args = json!({});
        log.record(&record(&args));
        assert!(log.admit_call().is_err());
        assert!(log.admit_call().is_err());
        let message = log.admit_call().unwrap_err().to_string();
        assert!(!message.contains("/dev/full") && !message.contains(&*dir.to_string_lossy()));

        // Space again: the next call is served, after a line saying what was refused.
        std::fs::remove_file(&path).unwrap();
        assert!(log.admit_call().is_ok());
        log.record(&record(&args));
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[0]["outcome"], "audit-gap");
        assert!(
            lines[0]["detail"]
                .as_str()
                .unwrap()
                .starts_with("3 calls refused"),
            "{text}"
        );
        assert_eq!(lines[1]["outcome"], "ok");

        let open = dir.join("open.jsonl");
        std::os::unix::fs::symlink("/dev/full", &open).unwrap();
        let log = AuditLog::open(AuditConfig {
            path: open,
            ..config(true)
        })
        .unwrap();
        log.record(&record(&args));
        assert!(log.admit_call().is_ok(), "fail_open serves calls unlogged");
    }
}
