//! Read-only file tools. The plugin uses plain `std::fs`: it reaches only the directories the
//! host preopened (client roots at their own paths, granted directories at their guest paths).

mod search;

use std::fs;
use std::io::{self, Read};
use std::path::Path;

use palisade_sdk::{NoArgs, Tool, ToolResult, host};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

const MIB: u64 = 1024 * 1024;

#[derive(Deserialize, JsonSchema)]
struct ReadFile {
    /// The file's path, as the plugin sees it (such as `/home/me/project/README.md`).
    path: String,
    /// The largest file to read, in bytes; larger files are refused.
    #[serde(default = "one_mib")]
    #[schemars(range(min = 1))]
    max_bytes: u64,
}

fn one_mib() -> u64 {
    MIB
}

fn read_file(args: ReadFile) -> ToolResult {
    match read_text(Path::new(&args.path), args.max_bytes) {
        Ok(text) => ToolResult::text(text),
        Err(message) => ToolResult::error(message),
    }
}

fn read_text(path: &Path, max_bytes: u64) -> Result<String, String> {
    let shown = path.display();
    let file = fs::File::open(path).map_err(|e| io_message(path, &e))?;
    // Read one byte more than allowed, so a file that grew since `metadata` cannot slip through.
    let mut bytes = Vec::new();
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| io_message(path, &e))?;
    if bytes.len() as u64 > max_bytes {
        let size = fs::metadata(path)
            .map(|m| m.len())
            .unwrap_or(bytes.len() as u64);
        return Err(format!(
            "{shown}: the file is {size} bytes, more than max_bytes ({max_bytes}); pass a larger max_bytes to read it"
        ));
    }
    if bytes.contains(&0) {
        return Err(format!(
            "{shown}: not a text file (it contains NUL bytes); read_file only reads text"
        ));
    }
    String::from_utf8(bytes).map_err(|_| {
        format!("{shown}: not a text file (it is not valid UTF-8); read_file only reads text")
    })
}

#[derive(Deserialize, JsonSchema)]
struct ListDir {
    /// The directory's path, as the plugin sees it.
    path: String,
}

#[derive(Serialize, JsonSchema)]
struct Listing {
    path: String,
    entries: Vec<Entry>,
}

#[derive(Serialize, JsonSchema)]
struct Entry {
    name: String,
    /// `file`, `dir`, `symlink` (one the plugin cannot follow) or `other`.
    kind: &'static str,
    /// The size in bytes, for files.
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
}

fn list_dir(args: ListDir) -> ToolResult {
    let path = Path::new(&args.path);
    let entries = match read_entries(path) {
        Ok(entries) => entries,
        Err(e) => return ToolResult::error(io_message(path, &e)),
    };
    let text = if entries.is_empty() {
        format!("{} is empty", args.path)
    } else {
        entries
            .iter()
            .map(Entry::line)
            .collect::<Vec<_>>()
            .join("\n")
    };
    let listing = Listing {
        path: args.path,
        entries,
    };
    ToolResult::text(text).structured_content(to_json(&listing))
}

fn read_entries(path: &Path) -> io::Result<Vec<Entry>> {
    let mut entries = Vec::new();
    for entry in fs::read_dir(path)? {
        let entry = entry?;
        // Follow symlinks where the sandbox allows; otherwise describe the link itself.
        let meta = fs::metadata(entry.path()).or_else(|_| entry.metadata())?;
        let (kind, size) = if meta.is_dir() {
            ("dir", None)
        } else if meta.is_file() {
            ("file", Some(meta.len()))
        } else if meta.is_symlink() {
            // Dangling, or pointing outside the sandbox.
            ("symlink", None)
        } else {
            ("other", None)
        };
        entries.push(Entry {
            name: entry.file_name().to_string_lossy().into_owned(),
            kind,
            size,
        });
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}

impl Entry {
    fn line(&self) -> String {
        match (self.kind, self.size) {
            ("dir", _) => format!("dir   {}/", self.name),
            (kind, Some(size)) => format!("{kind:<5} {} ({size} bytes)", self.name),
            (kind, None) => format!("{kind:<5} {}", self.name),
        }
    }
}

#[derive(Serialize, JsonSchema)]
struct Roots {
    roots: Vec<RootInfo>,
}

#[derive(Serialize, JsonSchema)]
struct RootInfo {
    uri: String,
    name: Option<String>,
    /// Where this plugin sees the root.
    guest_path: String,
    writable: bool,
}

fn list_roots(_: NoArgs) -> ToolResult {
    let roots: Vec<RootInfo> = host::list_roots()
        .into_iter()
        .map(|r| RootInfo {
            uri: r.uri,
            name: r.name,
            guest_path: r.guest_path,
            writable: r.writable,
        })
        .collect();
    let text = if roots.is_empty() {
        "no roots: the client shared none, or none is granted to this plugin".to_string()
    } else {
        roots
            .iter()
            .map(RootInfo::line)
            .collect::<Vec<_>>()
            .join("\n")
    };
    ToolResult::text(text).structured_content(to_json(&Roots { roots }))
}

impl RootInfo {
    fn line(&self) -> String {
        let access = if self.writable {
            "writable"
        } else {
            "read-only"
        };
        let name = self
            .name
            .as_deref()
            .map(|n| format!(" \"{n}\""))
            .unwrap_or_default();
        format!("{} <- {}{name} ({access})", self.guest_path, self.uri)
    }
}

/// `<path>: <OS error>`, the form every tool here reports failures in.
fn io_message(path: &Path, error: &io::Error) -> String {
    format!("{}: {error}", path.display())
}

fn to_json(value: &impl Serialize) -> serde_json::Value {
    // Our own plain structs always serialize; `Null` would only hide a bug, never plugin input.
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}

palisade_sdk::export_plugin! {
    tools: [
        Tool::new("read_file", read_file)
            .description("Read a text file (up to max_bytes, 1 MiB by default)")
            .read_only(true),
        Tool::new("list_dir", list_dir)
            .description("List a directory: each entry's name, kind (file, dir) and size, sorted by name")
            .output_schema::<Listing>()
            .read_only(true),
        Tool::new("search", search::search)
            .description("Find lines containing a plain-text pattern in the files under a path; answers `file:line: text` lines")
            .read_only(true),
        Tool::new("list_roots", list_roots)
            .description("List the client's directories this plugin may use, with the paths it sees them at")
            .output_schema::<Roots>()
            .read_only(true),
    ],
}
