//! A plugin's sandbox: what it may touch ([`Grants`]), the client's roots as it sees them
//! ([`roots`]), the WASI context of one call built from both ([`wasi`]), and where its stdout
//! and stderr go ([`capture`]).

mod capture;
mod roots;
mod wasi;

use std::path::PathBuf;
use std::sync::Arc;

use crate::host_pattern::HostPattern;
use crate::secrets::Redactor;
use crate::spec::{DirGrant, RootsAccess, SecretGrant};
use crate::tls::TlsTrust;

pub use capture::OutputCapture;
pub use roots::{Root, RootDir};
pub use wasi::wasi_context;

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
    pub tls: TlsTrust,
    /// Host directories no plugin may reach whatever its grants (the compile cache): a root that
    /// holds one, or lies inside one, is not mapped.
    pub hidden: Arc<[PathBuf]>,
    /// What the plugin used of them, across its calls.
    pub usage: Arc<crate::usage::GrantUsage>,
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

/// A scratch directory of this test process, `sub` under it.
#[cfg(test)]
fn tempdir(sub: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("palisade-sandbox-test-{}", std::process::id()))
        .join(sub);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{AccessMode, RootsAt};

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
}
