//! The client's roots (`roots/list`) as directories for plugins.

use std::path::PathBuf;

use serde_json::Value;

use crate::runtime::Root;

/// The usable roots of a `roots/list` result. A root that is not a `file://` URI, does not exist
/// or is not a directory is skipped with a log line saying why.
pub fn from_client(result: &Value) -> Vec<Root> {
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
            Ok(path) => {
                let name = entry.get("name").and_then(Value::as_str).map(String::from);
                found.push((uri.to_string(), name, path));
            }
            Err(why) => tracing::warn!(uri, "root skipped: {why}"),
        }
    }
    let roots = Root::assign(found);
    for root in &roots {
        tracing::info!(uri = root.uri, guest_path = root.guest_path, "client root");
    }
    roots
}

/// The existing host directory a root URI names.
fn directory_of(uri: &str) -> Result<PathBuf, String> {
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
    let path = std::fs::canonicalize(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !path.is_dir() {
        return Err(format!("{} is not a directory", path.display()));
    }
    Ok(path)
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
        let roots = from_client(&json!({ "roots": [
            { "uri": uri, "name": "tmp" },
            { "uri": "https://example.com/repo" },
            { "uri": "file:///does/not/exist" },
            { "uri": file_uri },
            { "name": "no uri" },
        ]}));
        std::fs::remove_file(&file).unwrap();
        assert_eq!(roots.len(), 1);
        assert_eq!(roots[0].host_path, canonical);
        assert_eq!(roots[0].name.as_deref(), Some("tmp"));
        assert!(roots[0].guest_path.starts_with("/roots/"));
    }
}
