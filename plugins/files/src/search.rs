//! `search`: a recursive plain-substring search, like a small `grep -rnF`.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use palisade_sdk::{ToolResult, host};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::{MIB, io_message};

/// Files larger than this are skipped: searching them would take long and they are rarely text.
const MAX_FILE_BYTES: u64 = 16 * MIB;
/// Matching lines are cut to this many characters.
const MAX_LINE_CHARS: usize = 300;

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Search {
    /// A directory to search recursively, or a single file.
    path: String,
    /// The text to look for (plain text, case-sensitive).
    #[schemars(length(min = 1))]
    pattern: String,
    /// Stop after this many matching lines.
    #[serde(default = "hundred")]
    #[schemars(range(min = 1))]
    max_results: u32,
}

fn hundred() -> u32 {
    100
}

/// What one search found, and what it could not look at.
struct Found {
    lines: Vec<String>,
    limit: usize,
    unreadable: usize,
    cancelled: bool,
}

pub(crate) fn search(args: Search) -> ToolResult {
    if args.pattern.is_empty() {
        return ToolResult::error("pattern must not be empty");
    }
    let root = Path::new(&args.path);
    if let Err(e) = fs::metadata(root) {
        return ToolResult::error(io_message(root, &e));
    }
    let mut found = Found {
        lines: Vec::new(),
        limit: args.max_results as usize,
        unreadable: 0,
        cancelled: false,
    };
    found.walk(root.to_path_buf(), &args.pattern);
    found.into_result(&args)
}

impl Found {
    fn full(&self) -> bool {
        self.lines.len() >= self.limit || self.cancelled
    }

    /// Depth-first, in name order, with an explicit stack: deep trees cannot exhaust the guest's
    /// call stack. Symlinks are not followed, so link cycles cannot loop.
    fn walk(&mut self, root: PathBuf, pattern: &str) {
        let mut stack = vec![root];
        while let Some(path) = stack.pop() {
            if self.full() {
                return;
            }
            let Ok(meta) = fs::symlink_metadata(&path) else {
                self.unreadable += 1;
                continue;
            };
            if meta.is_file() {
                if meta.len() <= MAX_FILE_BYTES {
                    self.search_file(&path, pattern);
                }
            } else if meta.is_dir() {
                self.cancelled = host::is_cancelled();
                match sorted_children(&path) {
                    // Reversed, so the stack pops them in name order.
                    Ok(children) => stack.extend(children.into_iter().rev()),
                    Err(_) => self.unreadable += 1,
                }
            }
        }
    }

    fn search_file(&mut self, path: &Path, pattern: &str) {
        let Ok(file) = fs::File::open(path) else {
            self.unreadable += 1;
            return;
        };
        let mut reader = BufReader::new(file);
        if looks_binary(&mut reader) {
            return;
        }
        for (index, line) in reader.split(b'\n').enumerate() {
            let Ok(line) = line else {
                self.unreadable += 1;
                return;
            };
            // Lossy: one stray byte should not hide the rest of a file.
            let line = String::from_utf8_lossy(&line);
            if line.contains(pattern) {
                let text: String = line
                    .trim_end_matches('\r')
                    .chars()
                    .take(MAX_LINE_CHARS)
                    .collect();
                self.lines
                    .push(format!("{}:{}: {text}", path.display(), index + 1));
                if self.full() {
                    return;
                }
            }
        }
    }

    fn into_result(self, args: &Search) -> ToolResult {
        let mut notes = Vec::new();
        if self.cancelled {
            notes.push("(cancelled)".to_string());
        } else if self.lines.len() >= self.limit {
            notes.push(format!("(stopped at max_results = {})", self.limit));
        }
        if self.unreadable > 0 {
            notes.push(format!(
                "({} files or directories could not be read)",
                self.unreadable
            ));
        }
        let mut text = if self.lines.is_empty() {
            format!("no lines contain `{}` under {}", args.pattern, args.path)
        } else {
            self.lines.join("\n")
        };
        for note in notes {
            text.push('\n');
            text.push_str(&note);
        }
        ToolResult::text(text)
    }
}

fn sorted_children(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut children = fs::read_dir(dir)?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<std::io::Result<Vec<_>>>()?;
    children.sort();
    Ok(children)
}

/// A NUL byte in the first 8 KiB marks a binary file, as `grep` and `git` judge it.
fn looks_binary(reader: &mut BufReader<fs::File>) -> bool {
    match reader.fill_buf() {
        Ok(head) => head[..head.len().min(8192)].contains(&0),
        Err(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_matching_lines_and_skips_binary_files() {
        let dir =
            std::env::temp_dir().join(format!("palisade-files-search-{}", std::process::id()));
        fs::create_dir_all(&dir).expect("mkdir");
        fs::write(dir.join("b.txt"), "needle one\nhay\nneedle two\n").expect("write");
        fs::write(dir.join("bin"), b"needle\0").expect("write");
        let mut found = Found {
            lines: Vec::new(),
            limit: 10,
            unreadable: 0,
            cancelled: false,
        };
        // No host in native tests, so no walk (it checks for cancellation): files one by one.
        found.search_file(&dir.join("b.txt"), "needle");
        found.search_file(&dir.join("bin"), "needle");
        assert_eq!(found.lines.len(), 2);
        assert!(found.lines[1].ends_with("b.txt:3: needle two"));
        fs::remove_dir_all(&dir).expect("cleanup");
    }
}
