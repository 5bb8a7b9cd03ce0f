//! Component values of a generic export, and their JSON forms.
//!
//! Arguments arrive as the JSON object of a `tools/call` (already checked against the schema
//! [`schema`](super::schema) made from the same types); results leave as JSON. The forms, the
//! same both ways (docs/generic-components.md):
//!
//! | WIT | JSON |
//! |---|---|
//! | `bool` | `true` / `false` |
//! | `u8`..`s64` | an integer in the type's range |
//! | `f32`, `f64` | a number (a result that is NaN or infinite is `null`) |
//! | `char` | a string of one character |
//! | `string` | a string |
//! | `list<u8>` | a base64 string (standard alphabet, padded) |
//! | `list<T>` | an array |
//! | `record` | an object, one property per field; `option` fields may be left out |
//! | `tuple<...>` | an array of exactly its length |
//! | `option<T>` | `T`, or `null` for none |
//! | `enum` | the case's name |
//! | `variant`, `result` | the case's name alone when it has no payload, else `{"case": payload}` |
//! | `flags` | an array of the names that are set |

use base64::Engine as _;
use serde_json::{Map, Number, Value as Json};

use super::types::WitType;

/// A component value, shaped by its [`WitType`] (which carries the names).
#[allow(missing_docs)] // Unnamed variants are the WIT types of their names.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Bool(bool),
    /// Any signed integer type.
    Signed(i64),
    /// Any unsigned integer type.
    Unsigned(u64),
    F32(f32),
    F64(f64),
    Char(char),
    String(String),
    /// A `list<u8>`.
    Bytes(Vec<u8>),
    List(Vec<Value>),
    /// A record's fields or a tuple's items, in order.
    Fields(Vec<Value>),
    /// A variant, enum, option (`none` 0, `some` 1) or result (`ok` 0, `err` 1): the case's
    /// index and payload.
    Case(u32, Option<Box<Value>>),
    /// Which of the flags are set, in declaration order.
    Flags(Vec<bool>),
    /// A resource handle the plugin returned (its index in the plugin's table; never used).
    Handle(u32),
}

/// An argument that does not fit its parameter's type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("argument `{path}`: {problem}")]
pub struct ArgumentError {
    /// Where in the arguments: `point.x`, `items[2]`, `shape.circle`.
    pub path: String,
    /// What is wrong, naming the expected type.
    pub problem: String,
}

/// The values of `params` from the arguments object of a call.
pub fn arguments(params: &[(String, WitType)], args: &Json) -> Result<Vec<Value>, ArgumentError> {
    let Json::Object(object) = args else {
        return Err(ArgumentError {
            path: String::new(),
            problem: format!("the arguments must be an object, got {}", kind(args)),
        });
    };
    if let Some(unknown) = object.keys().find(|k| !params.iter().any(|(n, _)| n == *k)) {
        return Err(ArgumentError {
            path: unknown.clone(),
            problem: "no such parameter".into(),
        });
    }
    params
        .iter()
        .map(|(name, ty)| field(object, name, ty, name))
        .collect()
}

/// The field `name` of `object` (a parameter or a record field): an `option` may be missing.
fn field(
    object: &Map<String, Json>,
    name: &str,
    ty: &WitType,
    path: &str,
) -> Result<Value, ArgumentError> {
    match object.get(name) {
        Some(json) => from_json(ty, json, path),
        None if matches!(ty, WitType::Option(_)) => Ok(Value::Case(0, None)),
        None => Err(ArgumentError {
            path: path.to_string(),
            problem: format!("missing; expected {}", expected(ty)),
        }),
    }
}

/// Converts `json` to a value of `ty`; `path` names it in errors.
pub fn from_json(ty: &WitType, json: &Json, path: &str) -> Result<Value, ArgumentError> {
    let wrong = || ArgumentError {
        path: path.to_string(),
        problem: format!("expected {}, got {}", expected(ty), kind(json)),
    };
    let problem = |problem: String| ArgumentError {
        path: path.to_string(),
        problem,
    };
    Ok(match ty {
        WitType::Bool => Value::Bool(json.as_bool().ok_or_else(wrong)?),
        WitType::S8 | WitType::S16 | WitType::S32 | WitType::S64 => {
            let (min, max) = signed_range(ty);
            match json.as_i64() {
                Some(n) if (min..=max).contains(&n) => Value::Signed(n),
                _ => return Err(wrong()),
            }
        }
        WitType::U8 | WitType::U16 | WitType::U32 | WitType::U64 => match json.as_u64() {
            Some(n) if n <= unsigned_max(ty) => Value::Unsigned(n),
            _ => return Err(wrong()),
        },
        WitType::F32 => match json.as_f64() {
            // `as` rounds to the nearest f32; only a value past f32's range would be infinite.
            Some(n) if (n as f32).is_finite() => Value::F32(n as f32),
            _ => return Err(wrong()),
        },
        WitType::F64 => Value::F64(json.as_f64().ok_or_else(wrong)?),
        WitType::Char => {
            let text = json.as_str().ok_or_else(wrong)?;
            let mut chars = text.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Value::Char(c),
                _ => return Err(wrong()),
            }
        }
        WitType::String => Value::String(json.as_str().ok_or_else(wrong)?.to_string()),
        WitType::List(item) if **item == WitType::U8 => {
            let text = json.as_str().ok_or_else(wrong)?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|e| problem(format!("expected base64 (list<u8>): {e}")))?;
            Value::Bytes(bytes)
        }
        WitType::List(item) => Value::List(
            json.as_array()
                .ok_or_else(wrong)?
                .iter()
                .enumerate()
                .map(|(i, j)| from_json(item, j, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        WitType::Record(fields) => {
            let object = json.as_object().ok_or_else(wrong)?;
            if let Some(unknown) = object.keys().find(|k| !fields.iter().any(|(n, _)| n == *k)) {
                return Err(problem(format!("the record has no field `{unknown}`")));
            }
            Value::Fields(
                fields
                    .iter()
                    .map(|(name, ty)| field(object, name, ty, &format!("{path}.{name}")))
                    .collect::<Result<_, _>>()?,
            )
        }
        WitType::Tuple(types) => {
            let items = json.as_array().ok_or_else(wrong)?;
            if items.len() != types.len() {
                return Err(wrong());
            }
            Value::Fields(
                types
                    .iter()
                    .zip(items)
                    .enumerate()
                    .map(|(i, (ty, j))| from_json(ty, j, &format!("{path}[{i}]")))
                    .collect::<Result<_, _>>()?,
            )
        }
        WitType::Option(some) => match json {
            Json::Null => Value::Case(0, None),
            _ => Value::Case(1, Some(Box::new(from_json(some, json, path)?))),
        },
        WitType::Enum(names) => {
            let name = json.as_str().ok_or_else(wrong)?;
            match names.iter().position(|n| n == name) {
                Some(i) => Value::Case(index(i), None),
                None => return Err(wrong()),
            }
        }
        WitType::Variant(_) | WitType::Result { .. } => {
            let cases = cases(ty);
            let (name, payload) = match json {
                Json::String(name) => (name.as_str(), None),
                Json::Object(o) if o.len() == 1 => {
                    let (name, payload) = o.iter().next().ok_or_else(wrong)?;
                    (name.as_str(), Some(payload))
                }
                _ => return Err(wrong()),
            };
            let Some(i) = cases.iter().position(|(n, _)| *n == name) else {
                return Err(problem(format!(
                    "no case `{name}`; expected {}",
                    expected(ty)
                )));
            };
            let at = format!("{path}.{name}");
            let payload = match (cases[i].1, payload) {
                (None, None) => None,
                (Some(ty), Some(json)) => Some(Box::new(from_json(ty, json, &at)?)),
                (None, Some(_)) => {
                    return Err(problem(format!(
                        "case `{name}` takes no payload: give \"{name}\""
                    )));
                }
                (Some(ty), None) => {
                    return Err(problem(format!(
                        "case `{name}` needs a payload: give {{\"{name}\": {}}}",
                        expected(ty)
                    )));
                }
            };
            Value::Case(index(i), payload)
        }
        WitType::Flags(names) => {
            let mut set = vec![false; names.len()];
            for (i, item) in json.as_array().ok_or_else(wrong)?.iter().enumerate() {
                let name = item.as_str();
                let Some(at) = names.iter().position(|n| Some(n.as_str()) == name) else {
                    return Err(ArgumentError {
                        path: format!("{path}[{i}]"),
                        problem: format!("expected one of {}, got {}", quoted(names), kind(item)),
                    });
                };
                if std::mem::replace(&mut set[at], true) {
                    return Err(problem(format!("flag `{}` given twice", names[at])));
                }
            }
            Value::Flags(set)
        }
        WitType::Handle => return Err(problem("a resource cannot be given as JSON".into())),
    })
}

/// The JSON form of `value`, a value of `ty`.
pub fn to_json(ty: &WitType, value: &Value) -> Json {
    match (ty, value) {
        (_, Value::Bool(b)) => Json::Bool(*b),
        (_, Value::Signed(n)) => Json::from(*n),
        (_, Value::Unsigned(n)) => Json::from(*n),
        (_, Value::F32(n)) => Number::from_f64(f64::from(*n)).map_or(Json::Null, Json::Number),
        (_, Value::F64(n)) => Number::from_f64(*n).map_or(Json::Null, Json::Number),
        (_, Value::Char(c)) => Json::String(c.to_string()),
        (_, Value::String(s)) => Json::String(s.clone()),
        (_, Value::Bytes(b)) => Json::String(base64::engine::general_purpose::STANDARD.encode(b)),
        (_, Value::Handle(_)) => Json::Null,
        (WitType::List(item), Value::List(items)) => {
            Json::Array(items.iter().map(|v| to_json(item, v)).collect())
        }
        (WitType::Record(fields), Value::Fields(values)) => Json::Object(
            fields
                .iter()
                .zip(values)
                .map(|((name, ty), v)| (name.clone(), to_json(ty, v)))
                .collect(),
        ),
        (WitType::Tuple(types), Value::Fields(values)) => Json::Array(
            types
                .iter()
                .zip(values)
                .map(|(ty, v)| to_json(ty, v))
                .collect(),
        ),
        (WitType::Option(some), Value::Case(_, payload)) => {
            payload.as_ref().map_or(Json::Null, |v| to_json(some, v))
        }
        (WitType::Enum(names), Value::Case(i, _)) => names
            .get(*i as usize)
            .map_or(Json::Null, |n| Json::String(n.clone())),
        (WitType::Variant(_) | WitType::Result { .. }, Value::Case(i, payload)) => {
            let cases = cases(ty);
            let Some((name, case_ty)) = cases.get(*i as usize) else {
                return Json::Null;
            };
            match (case_ty, payload) {
                (Some(ty), Some(v)) => {
                    Json::Object(Map::from_iter([(name.to_string(), to_json(ty, v))]))
                }
                _ => Json::String(name.to_string()),
            }
        }
        (WitType::Flags(names), Value::Flags(set)) => Json::Array(
            names
                .iter()
                .zip(set)
                .filter(|(_, on)| **on)
                .map(|(n, _)| Json::String(n.clone()))
                .collect(),
        ),
        // The lifting code builds values along the same type: a mismatch is a host bug, shown
        // rather than hidden.
        _ => Json::String(format!("<a value that is not a {}>", ty.wit())),
    }
}

/// The cases of a variant or result, with their payload types.
pub fn cases(ty: &WitType) -> Vec<(&str, Option<&WitType>)> {
    match ty {
        WitType::Variant(cases) => cases
            .iter()
            .map(|(n, t)| (n.as_str(), t.as_ref()))
            .collect(),
        WitType::Result { ok, err } => vec![("ok", ok.as_deref()), ("err", err.as_deref())],
        _ => Vec::new(),
    }
}

/// The range of a signed integer type.
pub fn signed_range(ty: &WitType) -> (i64, i64) {
    match ty {
        WitType::S8 => (i8::MIN.into(), i8::MAX.into()),
        WitType::S16 => (i16::MIN.into(), i16::MAX.into()),
        WitType::S32 => (i32::MIN.into(), i32::MAX.into()),
        _ => (i64::MIN, i64::MAX),
    }
}

/// The largest value of an unsigned integer type.
pub fn unsigned_max(ty: &WitType) -> u64 {
    match ty {
        WitType::U8 => u8::MAX.into(),
        WitType::U16 => u16::MAX.into(),
        WitType::U32 => u32::MAX.into(),
        _ => u64::MAX,
    }
}

/// What a value of `ty` looks like in JSON, for error messages.
fn expected(ty: &WitType) -> String {
    match ty {
        WitType::Bool => "true or false (bool)".into(),
        WitType::S8 | WitType::S16 | WitType::S32 | WitType::S64 => {
            let (min, max) = signed_range(ty);
            format!("an integer from {min} to {max} ({})", ty.wit())
        }
        WitType::U8 | WitType::U16 | WitType::U32 | WitType::U64 => {
            format!("an integer from 0 to {} ({})", unsigned_max(ty), ty.wit())
        }
        WitType::F32 => "a number within f32's range (f32)".into(),
        WitType::F64 => "a number (f64)".into(),
        WitType::Char => "a string of exactly one character (char)".into(),
        WitType::String => "a string".into(),
        WitType::List(item) if **item == WitType::U8 => "a base64 string (list<u8>)".into(),
        WitType::List(item) => format!("an array ({})", WitType::List(item.clone()).wit()),
        WitType::Record(_) => "an object (record)".into(),
        WitType::Tuple(types) => format!("an array of {} items ({})", types.len(), ty.wit()),
        WitType::Option(some) => format!("{} or null", expected(some)),
        WitType::Enum(names) => format!("one of {}", quoted(names)),
        WitType::Variant(_) | WitType::Result { .. } => {
            let shapes: Vec<String> = cases(ty)
                .iter()
                .map(|(name, payload)| match payload {
                    None => format!("\"{name}\""),
                    Some(_) => format!("{{\"{name}\": ...}}"),
                })
                .collect();
            format!("one of {}", shapes.join(", "))
        }
        WitType::Flags(names) => format!("an array of distinct names from {}", quoted(names)),
        WitType::Handle => "a resource".into(),
    }
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What kind of JSON value `json` is, for error messages: a number itself (it is short),
/// never a string or array (they may be large).
fn kind(json: &Json) -> String {
    match json {
        Json::Null => "null".into(),
        Json::Bool(b) => b.to_string(),
        Json::Number(n) => n.to_string(),
        Json::String(_) => "a string".into(),
        Json::Array(_) => "an array".into(),
        Json::Object(_) => "an object".into(),
    }
}

/// A case index: WIT caps cases far below `u32::MAX`.
fn index(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests;
