//! Markdown notes as resources: every `*.md` file in the directory granted at `/notes` is the
//! resource `notes://<name>`, watched by the host for changes. `add_note` writes one.

use std::fs;
use std::io::ErrorKind;

use palisade_sdk::host::{self, ListKind};
use palisade_sdk::{
    Arguments, PluginError, ResourceInfo, ResourceTemplate, Tool, percent_encode, prefix_matches,
};
use schemars::JsonSchema;
use serde::Deserialize;

const DIR: &str = "/notes";
const MARKDOWN: &str = "text/markdown";

/// A plain file name: no path separators, no `..`, not hidden.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.contains(['/', '\\'])
        && !name.contains("..")
        && !name.starts_with('.')
}

fn uri(name: &str) -> String {
    format!("notes://{}", percent_encode(name))
}

fn path(name: &str) -> String {
    format!("{DIR}/{name}.md")
}

/// The notes' names and sizes, sorted by name; none if `/notes` is not granted.
fn notes() -> Vec<(String, u64)> {
    let Ok(entries) = fs::read_dir(DIR) else {
        return Vec::new();
    };
    let mut notes: Vec<(String, u64)> = entries
        .flatten()
        .filter_map(|entry| {
            let file_name = entry.file_name().into_string().ok()?;
            let name = file_name.strip_suffix(".md")?;
            let meta = fs::metadata(entry.path()).ok()?;
            (meta.is_file() && valid_name(name)).then(|| (name.to_string(), meta.len()))
        })
        .collect();
    notes.sort();
    notes
}

fn list_notes() -> Vec<ResourceInfo> {
    notes()
        .into_iter()
        .map(|(name, size)| {
            ResourceInfo::new(uri(&name), &name)
                .mime_type(MARKDOWN)
                .size(size)
                .file(path(&name))
        })
        .collect()
}

fn read_note(_uri: &str, vars: &Arguments) -> Result<String, PluginError> {
    let name = &vars["name"];
    let missing = || PluginError::not_found(format!("there is no note named `{name}`"));
    if !valid_name(name) {
        return Err(missing());
    }
    fs::read_to_string(path(name)).map_err(|e| match e.kind() {
        ErrorKind::NotFound => missing(),
        _ => PluginError::internal(format!("{}: {e}", path(name))),
    })
}

fn complete_name(typed: &str, _: &Arguments) -> Vec<String> {
    prefix_matches(typed, notes().into_iter().map(|(name, _)| name))
}

#[derive(Deserialize, JsonSchema)]
struct AddNote {
    /// The note's name: it is saved as `/notes/<name>.md` and read as `notes://<name>`.
    name: String,
    /// The note's text, in Markdown.
    text: String,
}

fn add_note(args: AddNote) -> Result<String, String> {
    if !valid_name(&args.name) {
        return Err(format!(
            "`{}` is not a note name: use a file name without `/`, `\\`, `..` or a leading `.`",
            args.name
        ));
    }
    let path = path(&args.name);
    fs::write(&path, &args.text).map_err(|e| {
        let hint = match e.kind() {
            ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem => {
                "; the notes directory is read-only (grant it with mode = \"read-write\")"
            }
            ErrorKind::NotFound => "; no directory is granted to this plugin at /notes",
            _ => "",
        };
        format!("could not write {path}: {e}{hint}")
    })?;
    let uri = uri(&args.name);
    host::notify_list_changed(ListKind::Resources);
    host::notify_resource_updated(&uri);
    Ok(format!("saved {uri} ({} bytes)", args.text.len()))
}

palisade_sdk::export_plugin! {
    resource_lister: list_notes,
    resource_templates: [
        ResourceTemplate::new("notes://{name}", "note", read_note)
            .title("Note")
            .description("A markdown note, by name")
            .mime_type(MARKDOWN)
            .complete("name", complete_name),
    ],
    tools: [
        Tool::new("add_note", add_note)
            .description("Save a markdown note as /notes/<name>.md, replacing one with that name")
            .idempotent(true)
            .open_world(false),
    ],
}
