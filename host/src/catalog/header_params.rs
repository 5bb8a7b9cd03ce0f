//! `x-mcp-header` (MCP 2026-07-28): tool parameters a plugin marks to be mirrored into
//! `Mcp-Param-{name}` HTTP headers, so load balancers and gateways can route on them.
//!
//! A tool whose markings break the specification's rules is left out of the catalog (clients
//! would drop it anyway); the rules are checked here, once, when the plugin loads.

use serde_json::{Map, Value};

/// One marked parameter: where its value sits in the arguments, and its header's name part.
#[derive(Debug, Clone, PartialEq)]
pub struct HeaderParam {
    /// Property names from the arguments object down to the value.
    pub path: Vec<String>,
    /// `Region` for `Mcp-Param-Region`.
    pub name: String,
    /// The type the header value is checked against.
    pub kind: ParamKind,
}

/// The primitive types a marked parameter may have.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamKind {
    /// A JSON string.
    String,
    /// A JSON integer.
    Integer,
    /// `true` or `false`.
    Boolean,
}

/// Keywords whose values are data, not schemas: an `x-mcp-header` key inside them is not a
/// marking.
const DATA_KEYWORDS: [&str; 4] = ["enum", "const", "default", "examples"];

/// Why the `x-mcp-header` markings of an input schema are refused (the tool is then left out).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidHeaderParams(pub String);

/// The marked parameters of an input schema, or why the markings are invalid.
pub fn header_params(schema: &Map<String, Value>) -> Result<Vec<HeaderParam>, InvalidHeaderParams> {
    marked_params(schema).map_err(InvalidHeaderParams)
}

fn marked_params(schema: &Map<String, Value>) -> Result<Vec<HeaderParam>, String> {
    let mut found = Vec::new();
    walk(schema, Some(Vec::new()), &mut found)?;
    let mut seen: Vec<String> = Vec::new();
    for param in &found {
        let lower = param.name.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Err(format!(
                "x-mcp-header `{}` is used twice (names are compared without case)",
                param.name
            ));
        }
        seen.push(lower);
    }
    Ok(found)
}

/// Visits a schema object. `chain` is the property path when the schema is reachable from the
/// root through `properties` alone, and `None` once anything else was passed through.
fn walk(
    schema: &Map<String, Value>,
    chain: Option<Vec<String>>,
    found: &mut Vec<HeaderParam>,
) -> Result<(), String> {
    for (key, value) in schema {
        match key.as_str() {
            "x-mcp-header" => found.push(marking(schema, value, chain.as_deref())?),
            "properties" => {
                if let Value::Object(properties) = value {
                    for (name, sub) in properties {
                        let chain = chain.as_ref().map(|c| {
                            let mut c = c.clone();
                            c.push(name.clone());
                            c
                        });
                        if let Value::Object(sub) = sub {
                            walk(sub, chain, found)?;
                        }
                    }
                }
            }
            k if DATA_KEYWORDS.contains(&k) => {}
            _ => walk_unreachable(value, found)?,
        }
    }
    Ok(())
}

/// Visits every schema nested in `value` (under `items`, `anyOf`, `$defs`, ...): a marking there
/// is not statically reachable.
fn walk_unreachable(value: &Value, found: &mut Vec<HeaderParam>) -> Result<(), String> {
    match value {
        Value::Object(schema) => walk(schema, None, found),
        Value::Array(items) => items.iter().try_for_each(|v| walk_unreachable(v, found)),
        _ => Ok(()),
    }
}

fn marking(
    schema: &Map<String, Value>,
    value: &Value,
    chain: Option<&[String]>,
) -> Result<HeaderParam, String> {
    let name = value
        .as_str()
        .ok_or("an x-mcp-header value must be a string")?;
    if name.is_empty() || !name.bytes().all(is_tchar) {
        return Err(format!(
            "x-mcp-header `{}` is not an HTTP field name (letters, digits and !#$%&'*+-.^_`|~)",
            name.escape_debug()
        ));
    }
    let path = match chain {
        Some(path) if !path.is_empty() => path.to_vec(),
        _ => {
            return Err(format!(
                "x-mcp-header `{name}` marks a schema not reachable from the root through \
                 `properties` alone (not under items, anyOf, $ref and the like)"
            ));
        }
    };
    let kind = match schema.get("type").and_then(Value::as_str) {
        Some("string") => ParamKind::String,
        Some("integer") => ParamKind::Integer,
        Some("boolean") => ParamKind::Boolean,
        _ => {
            return Err(format!(
                "x-mcp-header `{name}` marks a parameter whose type is not one of string, \
                 integer, boolean"
            ));
        }
    };
    Ok(HeaderParam {
        path,
        name: name.to_string(),
        kind,
    })
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

impl HeaderParam {
    /// The value the header must carry for `arguments`: `None` when the arguments have no
    /// (non-null) value there, so no header is expected.
    pub fn expected(&self, arguments: &Value) -> Option<Value> {
        let mut at = arguments;
        for key in &self.path {
            at = at.get(key)?;
        }
        (!at.is_null()).then(|| at.clone())
    }

    /// Whether `header` (already decoded) carries `value`. Integers compare as numbers, so
    /// `42.0` matches `42`.
    pub fn matches(&self, header: &str, value: &Value) -> bool {
        match (self.kind, value) {
            (ParamKind::String, Value::String(s)) => header == s,
            (ParamKind::Boolean, Value::Bool(b)) => header == if *b { "true" } else { "false" },
            (ParamKind::Integer, Value::Number(n)) => {
                match (header.trim().parse::<f64>(), n.as_f64()) {
                    (Ok(h), Some(n)) => h == n,
                    _ => false,
                }
            }
            // The body has another type than the schema says: validation reports it.
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn params(schema: Value) -> Result<Vec<HeaderParam>, String> {
        header_params(schema.as_object().unwrap()).map_err(|e| e.0)
    }

    #[test]
    fn markings_on_reachable_primitives_are_found() {
        let found = params(json!({
            "type": "object",
            "properties": {
                "region": { "type": "string", "x-mcp-header": "Region" },
                "query": { "type": "string" },
                "opts": { "type": "object", "properties": {
                    "limit": { "type": "integer", "x-mcp-header": "Limit" },
                    "dry": { "type": "boolean", "x-mcp-header": "Dry-Run" }
                }},
                // A property named like the keyword is a property, not a marking.
                "x-mcp-header": { "type": "string", "default": { "x-mcp-header": "no" } }
            }
        }))
        .unwrap();
        let names: Vec<(String, &str)> = found
            .iter()
            .map(|p| (p.path.join("."), p.name.as_str()))
            .collect();
        let names: Vec<(&str, &str)> = names.iter().map(|(p, n)| (p.as_str(), *n)).collect();
        assert_eq!(
            names,
            [
                ("opts.dry", "Dry-Run"),
                ("opts.limit", "Limit"),
                ("region", "Region")
            ]
        );
    }

    #[test]
    fn broken_markings_are_refused_with_the_reason() {
        let cases = [
            (json!({ "type": "number", "x-mcp-header": "N" }), "type"),
            (json!({ "type": "object", "x-mcp-header": "O" }), "type"),
            (
                json!({ "type": "string", "x-mcp-header": "" }),
                "field name",
            ),
            (
                json!({ "type": "string", "x-mcp-header": "a b" }),
                "field name",
            ),
            (
                json!({ "type": "string", "x-mcp-header": "a\nb" }),
                "field name",
            ),
            (json!({ "type": "string", "x-mcp-header": 7 }), "string"),
        ];
        for (property, why) in cases {
            let err =
                params(json!({ "type": "object", "properties": { "p": property } })).unwrap_err();
            assert!(err.contains(why), "{err}");
        }
        let unreachable = [
            json!({ "type": "object", "properties": { "a": { "type": "array",
                "items": { "type": "string", "x-mcp-header": "A" } } } }),
            json!({ "type": "object", "anyOf": [ { "properties": {
                "a": { "type": "string", "x-mcp-header": "A" } } } ] }),
            json!({ "type": "object", "$defs": { "d": { "type": "string", "x-mcp-header": "D" } } }),
            json!({ "type": "object", "x-mcp-header": "Root" }),
        ];
        for schema in unreachable {
            assert!(params(schema).unwrap_err().contains("reachable"));
        }
        let twice = json!({ "type": "object", "properties": {
            "a": { "type": "string", "x-mcp-header": "Name" },
            "b": { "type": "string", "x-mcp-header": "NAME" } } });
        assert!(params(twice).unwrap_err().contains("twice"));
    }

    #[test]
    fn header_values_match_the_body() {
        let p = |kind| HeaderParam {
            path: vec!["a".into(), "b".into()],
            name: "X".into(),
            kind,
        };
        let args = json!({ "a": { "b": 42 } });
        assert_eq!(p(ParamKind::Integer).expected(&args), Some(json!(42)));
        assert_eq!(p(ParamKind::Integer).expected(&json!({ "a": {} })), None);
        assert_eq!(
            p(ParamKind::Integer).expected(&json!({ "a": { "b": null } })),
            None
        );
        assert!(p(ParamKind::Integer).matches("42", &json!(42)));
        assert!(p(ParamKind::Integer).matches("42.0", &json!(42)));
        assert!(!p(ParamKind::Integer).matches("43", &json!(42)));
        assert!(p(ParamKind::Boolean).matches("true", &json!(true)));
        assert!(!p(ParamKind::Boolean).matches("True", &json!(true)));
        assert!(p(ParamKind::String).matches("us-west1", &json!("us-west1")));
        assert!(!p(ParamKind::String).matches("42", &json!(42)));
    }
}
