//! The client's roots (MCP roots, or `--root` directories) as plugins see them: their guest
//! paths, unique and under `roots_at` when set.

use std::path::PathBuf;

use anyhow::{Context as _, Result};

use crate::spec::RootsAt;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::tempdir;

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
}
