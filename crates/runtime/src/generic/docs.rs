//! The WIT's doc comments, from the `package-docs` custom section a component may carry
//! (written by `wit-component` when it encodes a package, and by tools that add it to a built
//! component). Its format: one version byte (0 or 1), then JSON:
//! `{"worlds": {W: {"func_exports": {F: {"docs": ...}}, "interface_exports": {I: ...}}},
//!   "interfaces": {I: {"funcs": {F: {"docs": ...}}}}}`, where a function's entry is a string in
//! version 0. Read leniently: unknown keys are ignored, and a section that does not parse gives
//! no docs rather than failing the load.

use serde_json::Value as Json;

/// Largest section the host reads: docs are text, and this is far more than any WIT has.
pub const MAX_DOCS_BYTES: usize = 1 << 20;

/// The doc comments of one package, as JSON.
#[derive(Debug, Clone, Default)]
pub struct PackageDocs(Json);

impl PackageDocs {
    /// The docs in `component` (a component binary), if it has a readable `package-docs`
    /// section.
    pub fn read(component: &[u8]) -> Option<PackageDocs> {
        let section = custom_section(component, "package-docs")?;
        let (version, json) = section.split_first()?;
        if *version > 1 || json.len() > MAX_DOCS_BYTES {
            return None;
        }
        serde_json::from_slice(json).ok().map(PackageDocs)
    }

    /// The doc comment of the function `func` exported at the root of a world, or inside the
    /// exported interface `interface` (its name without package and version).
    pub fn function(&self, interface: Option<&str>, func: &str) -> Option<String> {
        let docs = &self.0;
        let in_worlds = |key: &str, path: &dyn Fn(&Json) -> Option<&Json>| {
            docs.get("worlds")?
                .as_object()?
                .values()
                .find_map(|world| path(world.get(key)?))
        };
        let entry = match interface {
            None => in_worlds("func_exports", &|exports| exports.get(func)),
            Some(interface) => docs
                .get("interfaces")
                .and_then(|i| i.get(interface)?.get("funcs")?.get(func))
                .or_else(|| {
                    in_worlds("interface_exports", &|exports| {
                        exports.get(interface)?.get("funcs")?.get(func)
                    })
                }),
        }?;
        let text = match entry {
            Json::String(text) => text.as_str(),
            other => other.get("docs")?.as_str()?,
        };
        Some(text.trim().to_string()).filter(|t| !t.is_empty())
    }
}

/// Descriptions of parameters written in a function's doc comment, one per line, in either of
/// the common forms: `` - `name`: text `` (or `*`, or `-` after the name) and `@param name text`.
pub fn param_docs(doc: &str) -> Vec<(String, String)> {
    doc.lines()
        .filter_map(|line| {
            let line = line.trim();
            if let Some(rest) = line.strip_prefix("@param ") {
                let (name, text) = rest.trim().split_once(char::is_whitespace)?;
                return Some((name.to_string(), text.trim().to_string()));
            }
            let rest = line
                .strip_prefix("- ")
                .or_else(|| line.strip_prefix("* "))?;
            let rest = rest.trim_start().strip_prefix('`')?;
            let (name, text) = rest.split_once('`')?;
            let text = text.trim_start().strip_prefix([':', '-'])?.trim();
            Some((name.to_string(), text.to_string()))
        })
        .filter(|(name, text)| !name.is_empty() && !text.is_empty())
        .collect()
}

/// The payload of the first top-level custom section named `name` of a wasm binary.
fn custom_section<'a>(wasm: &'a [u8], name: &str) -> Option<&'a [u8]> {
    let mut rest = wasm.get(8..)?;
    while let Some((&id, after_id)) = rest.split_first() {
        let (size, after_size) = leb_u32(after_id)?;
        let body = after_size.get(..size as usize)?;
        rest = &after_size[size as usize..];
        if id != 0 {
            continue;
        }
        let (name_len, after_len) = leb_u32(body)?;
        let section_name = after_len.get(..name_len as usize)?;
        if section_name == name.as_bytes() {
            return after_len.get(name_len as usize..);
        }
    }
    None
}

/// An unsigned LEB128 `u32` and what follows it.
fn leb_u32(bytes: &[u8]) -> Option<(u32, &[u8])> {
    let mut value: u32 = 0;
    for (i, byte) in bytes.iter().enumerate().take(5) {
        value |= u32::from(byte & 0x7f).checked_shl(7 * i as u32)?;
        if byte & 0x80 == 0 {
            return Some((value, &bytes[i + 1..]));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A component of only a custom section (name and payload under 16 KiB).
    fn with_section(name: &str, payload: &[u8]) -> Vec<u8> {
        let mut body = vec![name.len() as u8];
        body.extend_from_slice(name.as_bytes());
        body.extend_from_slice(payload);
        let mut wasm = b"\0asm\x0d\0\x01\0".to_vec();
        wasm.push(0);
        let len = body.len();
        wasm.extend([(len & 0x7f) as u8 | 0x80, (len >> 7) as u8]);
        wasm.extend(body);
        wasm
    }

    #[test]
    fn docs_are_found_for_root_and_interface_functions() {
        let json = br#"{"worlds":{"generic":{"func_exports":{"greet":{"docs":"Greets someone."}}}},
            "interfaces":{"numbers":{"funcs":{"add-u8":{"docs":"Adds two u8s."}}}}}"#;
        let mut payload = vec![1];
        payload.extend_from_slice(json);
        let docs = PackageDocs::read(&with_section("package-docs", &payload)).unwrap();
        assert_eq!(
            docs.function(None, "greet").as_deref(),
            Some("Greets someone.")
        );
        assert_eq!(
            docs.function(Some("numbers"), "add-u8").as_deref(),
            Some("Adds two u8s.")
        );
        assert_eq!(docs.function(Some("numbers"), "greet"), None);
        assert_eq!(docs.function(None, "add-u8"), None);
    }

    #[test]
    fn version_0_strings_and_inline_interfaces() {
        let json = br#"{"worlds":{"w":{"interface_exports":{"calc":{"funcs":{"add":"Adds."}}}}}}"#;
        let mut payload = vec![0];
        payload.extend_from_slice(json);
        let docs = PackageDocs::read(&with_section("package-docs", &payload)).unwrap();
        assert_eq!(docs.function(Some("calc"), "add").as_deref(), Some("Adds."));
    }

    #[test]
    fn unreadable_sections_give_no_docs() {
        assert!(PackageDocs::read(&with_section("package-docs", b"\x02{}")).is_none());
        assert!(PackageDocs::read(&with_section("package-docs", b"\x01{not json")).is_none());
        assert!(PackageDocs::read(&with_section("other", b"\x01{}")).is_none());
        // A section size past the end of the file.
        assert!(PackageDocs::read(b"\0asm\x0d\0\x01\0\0\x7f\x0cpackage-docs").is_none());
        assert!(PackageDocs::read(b"\0asm").is_none());
    }

    #[test]
    fn parameters_are_described_in_either_form() {
        let doc = "Moves a point.\n\n- `p`: the point\n* `dx` - how far\n@param dy how far down\n- not a param";
        assert_eq!(
            param_docs(doc),
            vec![
                ("p".into(), "the point".into()),
                ("dx".into(), "how far".into()),
                ("dy".into(), "how far down".into()),
            ]
        );
    }
}
