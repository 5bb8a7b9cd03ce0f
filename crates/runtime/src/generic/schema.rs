//! JSON Schemas (2020-12) of a generic export's arguments and result, made from its WIT types so
//! that a value matches the schema exactly when [`value`](super::value) can convert it.

use serde_json::{Map, Value as Json, json};

use super::types::{Signature, WitType};
use super::value::{cases, signed_range, unsigned_max};

/// Which way a value goes: an argument may leave out an `option` field; a result always has
/// every field (`null` for none) and may hold a float that is not finite (`null`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Way {
    In,
    Out,
}

/// Descriptions of the parts of a function, from the WIT's doc comments.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParamDocs {
    /// Per parameter, by name.
    pub params: Vec<(String, String)>,
}

/// The input schema: an object with one property per parameter.
pub fn input(signature: &Signature, docs: &ParamDocs) -> Json {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (name, ty) in &signature.params {
        let mut schema = of(ty, Way::In);
        if let Some((_, doc)) = docs.params.iter().find(|(n, _)| n == name) {
            describe(&mut schema, doc);
        }
        properties.insert(name.clone(), schema);
        if !matches!(ty, WitType::Option(_)) {
            required.push(Json::String(name.clone()));
        }
    }
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// The output schema of what a call returns when it succeeds, or `None` for a function without
/// a result (or whose result is `result<_, E>`): a record as the object itself, anything else as
/// `{"result": ...}` (MCP wants an object).
pub fn output(signature: &Signature) -> Option<Json> {
    let ty = success_type(signature.result.as_ref()?)?;
    Some(match ty {
        WitType::Record(_) => of(ty, Way::Out),
        _ => json!({
            "type": "object",
            "properties": {"result": of(ty, Way::Out)},
            "required": ["result"],
            "additionalProperties": false,
        }),
    })
}

/// The type of a successful answer: the `ok` of a top-level `result` (whose `err` becomes a
/// tool error), else the result itself.
pub fn success_type(result: &WitType) -> Option<&WitType> {
    match result {
        WitType::Result { ok, .. } => ok.as_deref(),
        other => Some(other),
    }
}

fn describe(schema: &mut Json, doc: &str) {
    if let Json::Object(map) = schema {
        map.insert("description".into(), Json::String(doc.to_string()));
    }
}

fn of(ty: &WitType, way: Way) -> Json {
    match ty {
        WitType::Bool => json!({"type": "boolean"}),
        WitType::S8 | WitType::S16 | WitType::S32 | WitType::S64 => {
            let (min, max) = signed_range(ty);
            json!({"type": "integer", "minimum": min, "maximum": max, "format": ty.wit()})
        }
        WitType::U8 | WitType::U16 | WitType::U32 | WitType::U64 => {
            json!({"type": "integer", "minimum": 0, "maximum": unsigned_max(ty), "format": ty.wit()})
        }
        WitType::F32 | WitType::F64 => match way {
            // f32's range is checked on conversion: a bound here would have to be a rounded
            // decimal of f32::MAX.
            Way::In => json!({"type": "number", "format": ty.wit()}),
            Way::Out => json!({"type": ["number", "null"], "format": ty.wit(),
                "description": "null when the value is NaN or infinite"}),
        },
        WitType::Char => json!({"type": "string", "minLength": 1, "maxLength": 1}),
        WitType::String => json!({"type": "string"}),
        WitType::List(item) if **item == WitType::U8 => {
            json!({"type": "string", "contentEncoding": "base64"})
        }
        WitType::List(item) => json!({"type": "array", "items": of(item, way)}),
        WitType::Record(fields) => {
            let properties: Map<String, Json> = fields
                .iter()
                .map(|(name, ty)| (name.clone(), of(ty, way)))
                .collect();
            let required: Vec<&String> = fields
                .iter()
                .filter(|(_, ty)| way == Way::Out || !matches!(ty, WitType::Option(_)))
                .map(|(name, _)| name)
                .collect();
            json!({
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": false,
            })
        }
        WitType::Tuple(types) => json!({
            "type": "array",
            "prefixItems": types.iter().map(|t| of(t, way)).collect::<Vec<_>>(),
            "items": false,
            "minItems": types.len(),
            "maxItems": types.len(),
        }),
        WitType::Option(some) => json!({"anyOf": [of(some, way), {"type": "null"}]}),
        WitType::Enum(names) => json!({"type": "string", "enum": names}),
        WitType::Variant(_) | WitType::Result { .. } => {
            let branches: Vec<Json> = cases(ty)
                .into_iter()
                .map(|(name, payload)| match payload {
                    None => json!({"const": name}),
                    Some(payload) => json!({
                        "type": "object",
                        "properties": {name: of(payload, way)},
                        "required": [name],
                        "additionalProperties": false,
                    }),
                })
                .collect();
            json!({"oneOf": branches})
        }
        WitType::Flags(names) => json!({
            "type": "array",
            "items": {"type": "string", "enum": names},
            "uniqueItems": true,
        }),
        // No value matches: a generic tool never has a handle (its function is left out).
        WitType::Handle => json!({"not": {}, "description": "a resource"}),
    }
}
