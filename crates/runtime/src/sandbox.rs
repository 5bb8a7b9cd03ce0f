//! The WASI context of one call: exactly the grants of the configuration, nothing else.

use std::collections::VecDeque;
use std::io;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use anyhow::{Context as _, Result};
use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

use crate::{AccessMode, DirGrant, HostPattern, Redactor, RootsAccess, RootsAt, SecretGrant};

/// A directory of the client's (an MCP root, or a `--root` directory), as plugins see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// The root's URI as the client gave it.
    pub uri: String,
    /// The client's name for it.
    pub name: Option<String>,
    /// Where it is on the host.
    pub host_path: PathBuf,
    /// Where plugins see it: the path the client named (see [`RootsAt`]).
    pub guest_path: String,
}

/// A directory to serve as a root, before it has a place inside plugins.
#[derive(Debug, Clone)]
pub struct RootDir {
    /// The root's URI as the client gave it.
    pub uri: String,
    /// The client's name for it.
    pub name: Option<String>,
    /// The absolute path the client named (symbolic links left as they are).
    pub named_path: PathBuf,
    /// The same directory, canonical.
    pub host_path: PathBuf,
}

impl Root {
    /// Roots for host directories, placed as `at` says.
    pub fn from_dirs(dirs: &[PathBuf], at: RootsAt) -> Result<Vec<Root>> {
        let mut found = Vec::new();
        for dir in dirs {
            let host_path = std::fs::canonicalize(dir)
                .with_context(|| format!("root {}: cannot resolve the path", dir.display()))?;
            anyhow::ensure!(
                host_path.is_dir(),
                "root {} is not a directory",
                dir.display()
            );
            let absolute = std::path::absolute(dir)
                .with_context(|| format!("root {}: cannot resolve the path", dir.display()))?;
            // `..` cannot be taken out without asking the file system; the canonical path can.
            let has_parent = absolute
                .components()
                .any(|c| c == std::path::Component::ParentDir);
            found.push(RootDir {
                uri: file_uri(&host_path),
                name: None,
                named_path: if has_parent {
                    host_path.clone()
                } else {
                    absolute
                },
                host_path,
            });
        }
        Ok(Root::assign(found, at))
    }

    /// Gives each directory its guest path, in the order given, so the same roots always land
    /// at the same paths. A directory whose place is taken already is left out, with a log line.
    pub fn assign(found: Vec<RootDir>, at: RootsAt) -> Vec<Root> {
        let mut roots: Vec<Root> = Vec::new();
        for dir in found {
            let base: String = dir
                .host_path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "root".to_string())
                .chars()
                .map(|c| if c == '/' || c.is_control() { '_' } else { c })
                .collect();
            let guest_path = match at {
                RootsAt::HostPaths => {
                    let path = guest_form(&dir.named_path);
                    if roots.iter().any(|r| r.guest_path == path) {
                        tracing::info!(uri = dir.uri, "root skipped: given twice");
                        continue;
                    }
                    path
                }
                RootsAt::UnderRoots => {
                    let mut path = format!("/roots/{base}");
                    let mut n = 2;
                    while roots.iter().any(|r| r.guest_path == path) {
                        path = format!("/roots/{base}-{n}");
                        n += 1;
                    }
                    path
                }
            };
            roots.push(Root {
                uri: dir.uri,
                name: Some(dir.name.unwrap_or(base)),
                host_path: dir.host_path,
                guest_path,
            });
        }
        roots
    }
}

/// An absolute host path as a plugin names it: `/` between the parts, no trailing `/`, and the
/// rare part that is not UTF-8 shown with U+FFFD (WASI paths are strings; the preopen still
/// reaches the right directory).
fn guest_form(path: &std::path::Path) -> String {
    let parts: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(part) => Some(part.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    format!("/{}", parts.join("/"))
}

/// `file://` URI of an absolute path, percent-encoding what a URI path cannot hold.
fn file_uri(path: &std::path::Path) -> String {
    let mut uri = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

/// What a plugin may touch, from its configuration.
#[derive(Debug, Clone, Default)]
pub struct Grants {
    /// Host directories preopened for the plugin.
    pub dirs: Vec<DirGrant>,
    /// Whether the client's roots are preopened, and how.
    pub roots: RootsAccess,
    /// Environment variables, with their values.
    pub env: Vec<(String, String)>,
    /// `wasi:config` values, by key.
    pub config: Vec<(String, String)>,
    /// Secrets, read through `wasi:config` like `config`.
    pub secrets: Vec<SecretGrant>,
    /// Hides the secrets in what the host writes about the plugin.
    pub redactor: Redactor,
    /// Hosts it may reach over `wasi:http`.
    pub network: Arc<[HostPattern]>,
    /// Whom its HTTPS trusts.
    pub tls: crate::TlsTrust,
    /// Host directories no plugin may reach whatever its grants (the compile cache): a root that
    /// holds one, or lies inside one, is not mapped.
    pub hidden: Arc<[PathBuf]>,
}

impl Grants {
    /// The roots this plugin sees: all of them, less any that would reach a hidden directory
    /// and any at the very path of one of its own directories (the grant wins).
    pub(crate) fn visible_roots<'a>(&'a self, roots: &'a [Root]) -> impl Iterator<Item = &'a Root> {
        roots
            .iter()
            .filter(|_| self.roots != RootsAccess::None)
            .filter(|r| {
                let hides = |h: &PathBuf| h.starts_with(&r.host_path) || r.host_path.starts_with(h);
                !self.hidden.iter().any(hides)
            })
            .filter(|r| !self.has_dir_at(r))
    }

    /// Roots this plugin does not see because one of its directories is at the same path.
    fn shadowed_roots<'a>(&'a self, roots: &'a [Root]) -> impl Iterator<Item = &'a Root> {
        roots
            .iter()
            .filter(|_| self.roots != RootsAccess::None)
            .filter(|r| self.has_dir_at(r))
    }

    /// Whether one of the plugin's own directories is at `root`'s very path.
    fn has_dir_at(&self, root: &Root) -> bool {
        self.dirs.iter().any(|d| d.guest == root.guest_path)
    }
}

impl Grants {
    /// The host file behind `guest_path` (a path the plugin sees), if it lies in a granted
    /// directory or root. The path is taken apart, never resolved on the host, so `..` or a
    /// path outside the grants gives `None`.
    pub fn host_path(&self, guest_path: &str, roots: &[Root]) -> Option<PathBuf> {
        use std::path::Component;
        let guest = std::path::Path::new(guest_path);
        if !guest.is_absolute()
            || guest
                .components()
                .any(|c| !matches!(c, Component::RootDir | Component::Normal(_)))
        {
            return None;
        }
        let dirs = self
            .dirs
            .iter()
            .map(|d| (d.guest.as_str(), std::fs::canonicalize(&d.host).ok()));
        let roots = self
            .visible_roots(roots)
            .map(|r| (r.guest_path.as_str(), Some(r.host_path.clone())));
        dirs.chain(roots)
            .filter_map(|(prefix, host)| Some((guest.strip_prefix(prefix).ok()?, host?)))
            // The longest prefix wins, as in the plugin's own view of nested preopens.
            .min_by_key(|(rest, _)| rest.components().count())
            .map(|(rest, host)| host.join(rest))
    }
}

/// Most random bytes one `get-random-bytes` may ask for: programs ask for a seed or a key, and
/// a larger request traps rather than make the host allocate it.
pub const MAX_RANDOM_BYTES: u64 = 1 << 20;

/// Builds the WASI context for one call: only the granted directories, roots and environment
/// variables; no arguments, no sockets, no name lookup, no stdin; stdout and stderr go to the
/// host's log. (HTTP is decided per request, see `network`.)
pub fn wasi_context(
    grants: &Grants,
    roots: &[Root],
    stdout: OutputCapture,
    stderr: OutputCapture,
) -> Result<WasiCtx> {
    let mut builder = WasiCtxBuilder::new();
    builder
        .stdout(stdout)
        .stderr(stderr)
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false)
        // wasmtime-wasi builds the bytes in host memory before copying them into the plugin's.
        .max_random_size(MAX_RANDOM_BYTES)
        .envs(&grants.env);
    for secret in grants.secrets.iter().filter(|s| s.as_env) {
        builder.env(&secret.name, secret.value.expose());
    }
    for dir in &grants.dirs {
        builder
            .preopened_dir(
                &dir.host,
                &dir.guest,
                perms(dir.mode == AccessMode::ReadWrite),
            )
            .map_err(anyhow::Error::from)
            .with_context(|| {
                format!(
                    "cannot open granted directory {} (for {})",
                    dir.host.display(),
                    dir.guest
                )
            })?;
    }
    for root in grants.shadowed_roots(roots) {
        tracing::warn!(
            root = root.uri,
            "the root is not shown to this plugin: one of its `dirs` is at {} already; \
             set [server] roots_at = \"/roots\" or move the grant",
            root.guest_path
        );
    }
    if grants.roots != RootsAccess::None {
        let perms = perms(grants.roots == RootsAccess::ReadWrite);
        for root in grants.visible_roots(roots) {
            builder
                .preopened_dir(&root.host_path, &root.guest_path, perms)
                .map_err(anyhow::Error::from)
                .with_context(|| format!("cannot open root {}", root.host_path.display()))?;
        }
    }
    Ok(builder.build())
}

fn perms(writable: bool) -> FsPerms {
    if writable {
        FsPerms::ReadWrite
    } else {
        FsPerms::ReadOnly
    }
}

/// Bytes of one stream that are logged per call; the rest is counted and dropped, so a plugin
/// cannot flood the log.
const MAX_LOGGED_BYTES: usize = 64 << 10;
/// Longest line logged as one event.
const MAX_LINE: usize = 4 << 10;
/// How much of stderr is kept to explain a panic.
const TAIL_BYTES: usize = 4 << 10;

/// A plugin's stdout or stderr: written to the host log line by line, tagged with the plugin's
/// name, never to the MCP stream.
#[derive(Clone)]
pub struct OutputCapture {
    plugin: Arc<str>,
    stream: &'static str,
    redactor: Redactor,
    state: Arc<Mutex<CaptureState>>,
}

#[derive(Default)]
struct CaptureState {
    line: Vec<u8>,
    logged: usize,
    dropped: usize,
    tail: VecDeque<u8>,
}

impl OutputCapture {
    /// Captures the `stream` (stdout or stderr) of `plugin` into the host's log.
    pub fn new(plugin: Arc<str>, stream: &'static str, redactor: Redactor) -> OutputCapture {
        OutputCapture {
            plugin,
            stream,
            redactor,
            state: Arc::default(),
        }
    }

    fn write(&self, buf: &[u8]) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        for &b in buf {
            if state.tail.len() == TAIL_BYTES {
                state.tail.pop_front();
            }
            state.tail.push_back(b);
        }
        for &b in buf {
            if b == b'\n' || state.line.len() >= MAX_LINE {
                self.emit(&mut state);
            }
            if b != b'\n' {
                state.line.push(b);
            }
        }
    }

    fn emit(&self, state: &mut CaptureState) {
        let line = std::mem::take(&mut state.line);
        if state.logged + line.len() > MAX_LOGGED_BYTES {
            state.dropped += line.len() + 1;
            return;
        }
        state.logged += line.len() + 1;
        tracing::info!(
            target: "palisade::plugin",
            plugin = %self.plugin,
            stream = self.stream,
            "{}",
            crate::log_safe(&self.redactor.redact(&String::from_utf8_lossy(&line)))
        );
    }

    /// Logs what is left of the last line and a note of what was dropped; returns the tail.
    /// The next call of a kept instance (`reuse`) starts with its own allowance and tail.
    pub fn finish(&self) -> String {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if !state.line.is_empty() {
            self.emit(&mut state);
        }
        if state.dropped > 0 {
            tracing::warn!(
                target: "palisade::plugin",
                plugin = %self.plugin,
                stream = self.stream,
                "{} bytes of output not logged (more than {} KiB in one call)",
                state.dropped,
                MAX_LOGGED_BYTES >> 10
            );
            state.dropped = 0;
        }
        state.logged = 0;
        let tail: Vec<u8> = state.tail.drain(..).collect();
        self.redactor
            .redact(&String::from_utf8_lossy(&tail))
            .into_owned()
    }
}

impl IsTerminal for OutputCapture {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for OutputCapture {
    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

impl AsyncWrite for OutputCapture {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.write(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guest_paths_map_to_host_files_only_inside_grants() {
        let tmp = std::env::temp_dir();
        let host = std::fs::canonicalize(&tmp).unwrap();
        let grants = Grants {
            dirs: vec![DirGrant {
                host: tmp.clone(),
                guest: "/notes".into(),
                mode: AccessMode::ReadOnly,
            }],
            roots: RootsAccess::None,
            ..Grants::default()
        };
        assert_eq!(
            grants.host_path("/notes/a.md", &[]),
            Some(host.join("a.md"))
        );
        assert_eq!(grants.host_path("/notes/../etc/passwd", &[]), None);
        assert_eq!(grants.host_path("/other/a.md", &[]), None);
        assert_eq!(grants.host_path("notes/a.md", &[]), None);
        let roots = Root::from_dirs(std::slice::from_ref(&tmp), RootsAt::HostPaths).unwrap();
        let inside_root = format!("{}/x", roots[0].guest_path);
        // Roots count only for a plugin granted them.
        assert_eq!(grants.host_path(&inside_root, &roots), None);
        let granted = Grants {
            roots: RootsAccess::ReadOnly,
            ..grants
        };
        assert_eq!(
            granted.host_path(&inside_root, &roots),
            Some(host.join("x"))
        );
        // A root that holds the compile cache is given to no plugin.
        let cache_inside = Grants {
            hidden: Arc::new([host.join("palisade-cache")]),
            ..granted
        };
        assert_eq!(cache_inside.host_path(&inside_root, &roots), None);
        assert_eq!(cache_inside.visible_roots(&roots).count(), 0);
    }

    #[test]
    fn roots_get_unique_guest_paths() {
        let a = tempdir("a/x");
        let b = tempdir("b/x");
        let roots = Root::from_dirs(&[a.clone(), b.clone()], RootsAt::UnderRoots).unwrap();
        assert_eq!(roots[0].guest_path, "/roots/x");
        assert_eq!(roots[1].guest_path, "/roots/x-2");
        assert!(roots[0].uri.starts_with("file:///"));
        assert!(Root::from_dirs(&[a.join("missing")], RootsAt::UnderRoots).is_err());
    }

    #[test]
    fn roots_at_host_paths_keep_the_path_the_user_named() {
        let a = tempdir("named/a");
        let link = a.parent().unwrap().join("link-to-a");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&a, &link).unwrap();
        let dotted = a.join("..").join("a");
        let roots = Root::from_dirs(
            &[a.clone(), link.clone(), a.join("."), dotted],
            RootsAt::HostPaths,
        )
        .unwrap();
        let canonical = std::fs::canonicalize(&a).unwrap();
        // The symbolic link stays the path the user gave; `a/.` is `a` given twice; `..` is
        // resolved on the host, which gives `a`'s canonical path.
        let guest: Vec<&str> = roots.iter().map(|r| r.guest_path.as_str()).collect();
        let mut expected = vec![
            a.to_str().unwrap().to_string(),
            link.to_str().unwrap().to_string(),
        ];
        if canonical != a {
            expected.push(canonical.to_str().unwrap().to_string());
        }
        assert_eq!(guest, expected);
        assert!(roots.iter().all(|r| r.host_path == canonical));
        assert_eq!(roots[0].name.as_deref(), Some("a"));
    }

    #[test]
    fn a_directory_grant_wins_over_a_root_at_the_same_path() {
        let a = tempdir("shadow/a");
        let roots = Root::from_dirs(std::slice::from_ref(&a), RootsAt::HostPaths).unwrap();
        let grants = Grants {
            dirs: vec![DirGrant {
                host: tempdir("shadow/other"),
                guest: roots[0].guest_path.clone(),
                mode: AccessMode::ReadOnly,
            }],
            roots: RootsAccess::ReadWrite,
            ..Grants::default()
        };
        assert_eq!(grants.visible_roots(&roots).count(), 0);
        assert_eq!(grants.shadowed_roots(&roots).count(), 1);
        let file = format!("{}/f", roots[0].guest_path);
        assert_eq!(
            grants.host_path(&file, &roots),
            Some(
                std::fs::canonicalize(tempdir("shadow/other"))
                    .unwrap()
                    .join("f")
            )
        );
    }

    #[test]
    fn capture_keeps_a_tail_and_caps_the_log() {
        let capture = OutputCapture::new("t".into(), "stderr", Redactor::default());
        let big = vec![b'x'; MAX_LOGGED_BYTES * 2];
        capture.write(&big);
        capture.write(b"\nlast words\n");
        assert!(capture.state.lock().unwrap().logged <= MAX_LOGGED_BYTES);
        let tail = capture.finish();
        assert!(tail.ends_with("last words\n"));
        assert!(tail.len() <= TAIL_BYTES);
    }

    #[test]
    fn each_call_of_a_kept_instance_has_its_own_allowance_and_tail() {
        let capture = OutputCapture::new("t".into(), "stderr", Redactor::default());
        capture.write(&vec![b'x'; MAX_LOGGED_BYTES * 2]);
        capture.write(b"\nfirst call\n");
        capture.finish();
        capture.write(b"second call\n");
        let state = capture.state.lock().unwrap();
        assert_eq!(state.logged, "second call\n".len(), "logged, not dropped");
        drop(state);
        assert_eq!(capture.finish(), "second call\n");
    }

    fn tempdir(sub: &str) -> PathBuf {
        let dir = std::env::temp_dir()
            .join(format!("palisade-sandbox-test-{}", std::process::id()))
            .join(sub);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
