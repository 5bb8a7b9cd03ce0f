//! What a plugin's JSON Schema may cost the host. Every `tools/call` validates its arguments
//! against the tool's input schema on the server's own threads, so the plugin that wrote the
//! schema must not be able to make that slow: schemas are checked at load, and one the host
//! cannot validate cheaply gets its tool left out, with the reason.
//!
//! The bound: a schema's text is at most [`MAX_SCHEMA_BYTES`]; written out with every `$ref`
//! replaced by what it points to, it has at most [`MAX_EXPANDED_NODES`] values (which bounds the
//! work per value of the arguments, `anyOf` branches included); references are local and never
//! circular; and its patterns are few, short, and run by a linear-time engine (see
//! [`validator`]), so no pattern can backtrack.

use std::collections::HashMap;

use serde_json::Value;

/// Longest schema text accepted.
pub const MAX_SCHEMA_BYTES: usize = 64 << 10;
/// Values in the schema with every `$ref` expanded.
pub const MAX_EXPANDED_NODES: u64 = 20_000;
/// Nesting of the schema's JSON.
pub const MAX_DEPTH: usize = 48;
/// `pattern`s and `patternProperties` keys in one schema.
pub const MAX_PATTERNS: usize = 64;
/// Longest pattern.
pub const MAX_PATTERN_BYTES: usize = 1024;
/// Compiled size of one pattern (the `regex` crate's NFA), and its lazy DFA's cache.
const PATTERN_SIZE_LIMIT: usize = 256 << 10;
const PATTERN_DFA_LIMIT: usize = 256 << 10;

/// Why a tool's schema is refused: too large, too costly to check, or not a schema the validator takes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SchemaRefused(pub String);

/// Why a schema's text is refused before it is parsed.
pub fn check_size(text: &str) -> Result<(), SchemaRefused> {
    if text.len() > MAX_SCHEMA_BYTES {
        return Err(SchemaRefused(format!(
            "it is {} bytes, over the {MAX_SCHEMA_BYTES} bytes a schema may have",
            text.len()
        )));
    }
    Ok(())
}

/// Why a parsed schema is refused, for the warning that names its tool.
pub fn check(schema: &Value) -> Result<(), SchemaRefused> {
    expanded_size(schema).map_err(SchemaRefused)
}

fn expanded_size(schema: &Value) -> Result<(), String> {
    let mut walk = Walk {
        root: schema,
        expanded: HashMap::new(),
        patterns: 0,
    };
    let nodes = walk.nodes(schema, 0)?;
    if nodes > MAX_EXPANDED_NODES {
        return Err(format!(
            "with its references expanded it has {nodes} values, over {MAX_EXPANDED_NODES}: \
             validating arguments against it would cost too much"
        ));
    }
    Ok(())
}

/// A validator for a schema that passed [`check`]: draft 2020-12, patterns run by the `regex`
/// crate (linear time, size-limited; lookaround and backreferences are refused), formats not
/// checked (the specification makes them annotations; checking `format: regex` would compile
/// what the client sent).
pub fn validator(schema: &Value) -> Result<jsonschema::Validator, SchemaRefused> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(false)
        .with_pattern_options(
            jsonschema::PatternOptions::regex()
                .size_limit(PATTERN_SIZE_LIMIT)
                .dfa_size_limit(PATTERN_DFA_LIMIT),
        )
        .build(schema)
        .map_err(|e| {
            SchemaRefused(format!(
                "not a JSON Schema the server can check cheaply: {e}"
            ))
        })
}

struct Walk<'a> {
    root: &'a Value,
    /// Expanded size of each reference target: `None` while it is being expanded (a cycle).
    expanded: HashMap<String, Option<u64>>,
    patterns: usize,
}

impl<'a> Walk<'a> {
    /// The values in `value` with references expanded.
    fn nodes(&mut self, value: &'a Value, depth: usize) -> Result<u64, String> {
        if depth > MAX_DEPTH {
            return Err(format!("it nests deeper than {MAX_DEPTH} levels"));
        }
        let mut total: u64 = 1;
        match value {
            Value::Array(items) => {
                for item in items {
                    total = total.saturating_add(self.nodes(item, depth + 1)?);
                }
            }
            Value::Object(map) => {
                for (key, item) in map {
                    match key.as_str() {
                        "$ref" => total = total.saturating_add(self.reference(item)?),
                        "$dynamicRef" | "$recursiveRef" => {
                            return Err(format!("`{key}` is not supported; use a local `$ref`"));
                        }
                        "pattern" => self.pattern(item)?,
                        "patternProperties" => {
                            if let Value::Object(patterns) = item {
                                for pattern in patterns.keys() {
                                    self.pattern(&Value::String(pattern.clone()))?;
                                }
                            }
                        }
                        _ => {}
                    }
                    total = total.saturating_add(self.nodes(item, depth + 1)?);
                }
            }
            _ => {}
        }
        Ok(total)
    }

    fn pattern(&mut self, pattern: &Value) -> Result<(), String> {
        self.patterns += 1;
        if self.patterns > MAX_PATTERNS {
            return Err(format!("it has more than {MAX_PATTERNS} patterns"));
        }
        if let Value::String(p) = pattern
            && p.len() > MAX_PATTERN_BYTES
        {
            return Err(format!(
                "a pattern of {} bytes, over {MAX_PATTERN_BYTES}",
                p.len()
            ));
        }
        Ok(())
    }

    /// The expanded size of what the reference `target` points to.
    fn reference(&mut self, target: &Value) -> Result<u64, String> {
        let Value::String(target) = target else {
            return Err("a `$ref` that is not a string".into());
        };
        let pointer = match target.as_str() {
            "" | "#" => "",
            t => t
                .strip_prefix('#')
                .filter(|p| p.starts_with('/'))
                .ok_or_else(|| format!("`$ref: {t}` is not a local reference (`#` or `#/...`)"))?,
        };
        match self.expanded.get(pointer) {
            Some(Some(size)) => return Ok(*size),
            Some(None) => return Err(format!("`$ref: {target}` refers to itself")),
            None => {}
        }
        let decoded = percent_decode(pointer);
        let Some(value) = self.root.pointer(&decoded) else {
            return Err(format!("`$ref: {target}` points to nothing"));
        };
        self.expanded.insert(pointer.to_string(), None);
        let size = self.nodes(value, 0)?;
        self.expanded.insert(pointer.to_string(), Some(size));
        Ok(size)
    }
}

/// JSON Pointers in a URI fragment are percent-encoded.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn checked(schema: &Value) -> Result<(), SchemaRefused> {
        check_size(&schema.to_string())?;
        check(schema)?;
        validator(schema).map(|_| ())
    }

    #[test]
    fn ordinary_schemas_pass() {
        let schema = json!({
            "type": "object",
            "$defs": {"tag": {"type": "string", "pattern": "^[a-z]+$"}},
            "properties": {
                "name": {"type": "string", "maxLength": 100},
                "tags": {"type": "array", "items": {"$ref": "#/$defs/tag"}},
                "mode": {"anyOf": [{"const": "a"}, {"const": "b"}]}
            },
            "required": ["name"]
        });
        checked(&schema).unwrap();
    }

    #[test]
    fn costly_schemas_are_refused_with_a_reason() {
        let cases = [
            (json!({"$ref": "#"}), "refers to itself"),
            (
                json!({"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/b"}]}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}),
                "refers to itself",
            ),
            (
                json!({"$ref": "https://example.com/s.json"}),
                "not a local reference",
            ),
            (json!({"$dynamicRef": "#x"}), "not supported"),
            (json!({"pattern": "(a|a)*\\1"}), "cheaply"),
            (json!({"pattern": "(?=a)"}), "cheaply"),
            (json!({"pattern": "a{1000}{1000}"}), "cheaply"),
            (
                json!({"pattern": "a".repeat(2000)}),
                "pattern of 2000 bytes",
            ),
        ];
        for (schema, why) in cases {
            let err = checked(&schema).unwrap_err();
            assert!(err.0.contains(why), "{schema}: {err}");
        }
        // Each level refers twice to the next: 2^30 values once expanded, from a small text.
        let mut defs = serde_json::Map::new();
        for i in 0..30 {
            let next = format!("#/$defs/d{}", i + 1);
            defs.insert(
                format!("d{i}"),
                json!({"anyOf": [{"$ref": next}, {"$ref": next}]}),
            );
        }
        defs.insert("d30".into(), json!({"type": "string"}));
        let bomb = json!({"$defs": defs, "$ref": "#/$defs/d0"});
        assert!(checked(&bomb).unwrap_err().0.contains("expanded"));

        let many: Vec<Value> = (0..100)
            .map(|i| json!({"pattern": format!("^a{i}")}))
            .collect();
        assert!(
            checked(&json!({"anyOf": many}))
                .unwrap_err()
                .0
                .contains("patterns")
        );

        let mut deep = json!({"type": "string"});
        for _ in 0..60 {
            deep = json!({"items": deep});
        }
        assert!(checked(&deep).unwrap_err().0.contains("deeper"));

        let big = json!({"description": "x".repeat(MAX_SCHEMA_BYTES)});
        assert!(checked(&big).unwrap_err().0.contains("bytes"));
    }

    #[test]
    fn patterns_run_in_linear_time() {
        // Catastrophic for a backtracking engine on a non-matching input.
        let schema = json!({"type": "string", "pattern": "^(a+)+$"});
        checked(&schema).unwrap();
        let validator = validator(&schema).unwrap();
        let input = Value::String(format!("{}!", "a".repeat(100_000)));
        // A backtracking engine would not finish this in the age of the universe.
        assert!(!validator.is_valid(&input));
        assert!(validator.is_valid(&Value::String("aaaa".into())));
    }
}
