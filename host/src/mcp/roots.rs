//! The client's roots (`roots/list`) as directories for plugins.

use std::path::PathBuf;

use serde_json::Value;

use crate::runtime::{Root, RootDir, RootsAt};

/// The server's own roots (`--root` and `[server] roots`, for clients that give none), and where
/// plugins see any root.
#[derive(Debug, Clone, Default)]
pub struct ServedRoots {
    /// The server's own roots.
    pub own: Vec<Root>,
    /// Where plugins see them, and the client's.
    pub at: RootsAt,
}

/// The usable roots of a `roots/list` result, placed as `at` says. A root that is not a
/// `file://` URI, does not exist or is not a directory is skipped with a log line saying why.
pub fn from_client(result: &Value, at: RootsAt) -> Vec<Root> {
    let Some(list) = result.get("roots").and_then(Value::as_array) else {
        tracing::warn!("roots/list answer without a `roots` array; keeping no client roots");
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in list {
        let Some(uri) = entry.get("uri").and_then(Value::as_str) else {
            tracing::warn!(%entry, "root skipped: no `uri`");
            continue;
        };
        match directory_of(uri) {
            Ok((named_path, host_path)) => found.push(RootDir {
                uri: uri.to_string(),
                name: entry.get("name").and_then(Value::as_str).map(String::from),
                named_path,
                host_path,
            }),
            Err(why) => tracing::warn!(uri, "root skipped: {why}"),
        }
    }
    let roots = Root::assign(found, at);
    for root in &roots {
        tracing::info!(uri = root.uri, guest_path = root.guest_path, "client root");
    }
    roots
}

/// The existing host directory a root URI names: the path as named (the URI's own `.` and `..`
/// are gone already), and canonical.
fn directory_of(uri: &str) -> Result<(PathBuf, PathBuf), String> {
    let url = url::Url::parse(uri).map_err(|e| format!("not a URI: {e}"))?;
    if url.scheme() != "file" {
        return Err(format!(
            "only file:// roots can be opened, not {}://",
            url.scheme()
        ));
    }
    if url
        .host_str()
        .is_some_and(|h| !h.is_empty() && h != "localhost")
    {
        return Err("a file:// URI naming another host".into());
    }
    let path = url
        .to_file_path()
        .map_err(|()| "not a local file path".to_string())?;
    let canonical = std::fs::canonicalize(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !canonical.is_dir() {
        return Err(format!("{} is not a directory", path.display()));
    }
    Ok((path, canonical))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_existing_file_directories_become_roots() {
        let dir = std::env::temp_dir();
        let canonical = std::fs::canonicalize(&dir).unwrap();
        let uri = url::Url::from_directory_path(&canonical)
            .unwrap()
            .to_string();
        let file = canonical.join("palisade-roots-test-file");
        std::fs::write(&file, "x").unwrap();
        let file_uri = url::Url::from_file_path(&file).unwrap().to_string();
        let roots = from_client(
            &json!({ "roots": [
                { "uri": uri, "name": "tmp" },
                { "uri": "https://example.com/repo" },
                { "uri": "file:///does/not/exist" },
                { "uri": file_uri },
                { "name": "no uri" },
            ]}),
            RootsAt::UnderRoots,
        );
        std::fs::remove_file(&file).unwrap();
        assert_eq!(roots.len(), 1);
        assert_eq!(roots[0].host_path, canonical);
        assert_eq!(roots[0].name.as_deref(), Some("tmp"));
        assert!(roots[0].guest_path.starts_with("/roots/"));
    }

    #[test]
    fn a_root_is_seen_at_the_path_the_client_named() {
        let base =
            std::env::temp_dir().join(format!("palisade-roots-named-{}", std::process::id()));
        let notes = base.join("my notes");
        std::fs::create_dir_all(&notes).unwrap();
        let link = base.join("link");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&notes, &link).unwrap();
        let uri = |p: &std::path::Path| url::Url::from_directory_path(p).unwrap().to_string();
        let roots = from_client(
            &json!({ "roots": [
                { "uri": uri(&notes) },
                { "uri": uri(&link), "name": "linked" },
                { "uri": format!("{}/../my%20notes", uri(&link).trim_end_matches('/')) },
            ]}),
            RootsAt::HostPaths,
        );
        std::fs::remove_dir_all(&base).unwrap();
        let guest: Vec<&str> = roots.iter().map(|r| r.guest_path.as_str()).collect();
        // A URI's own `..` goes when it is parsed: the third names the first again.
        assert_eq!(
            guest,
            [notes.to_str().unwrap(), link.to_str().unwrap()],
            "{roots:?}"
        );
        assert_eq!(roots[0].name.as_deref(), Some("my notes"));
        assert_eq!(roots[1].name.as_deref(), Some("linked"));
        assert_eq!(roots[0].host_path, roots[1].host_path);
    }
}
