//! [`Value`]s to and from wasmtime's dynamic values ([`Val`]), along the [`WitType`]s that give
//! them their names and sizes.
//!
//! A generic call lowers its arguments and lifts its result with wasmtime's own dynamic calling
//! (`Func::call_async`), whose lifting is bounded by the store's hostcall fuel
//! (`copy_bound.rs`).

use wasmtime::component::Val;

use super::types::WitType;
use super::value::{Value, cases};

/// Why a value and its type did not match.
#[derive(Debug, thiserror::Error)]
#[error("a value of type `{wit}` {why}")]
pub struct Mismatch {
    wit: String,
    why: &'static str,
}

fn mismatch(ty: &WitType, why: &'static str) -> Mismatch {
    Mismatch { wit: ty.wit(), why }
}

/// `value`, a value of `ty`, as wasmtime's value.
pub fn to_val(ty: &WitType, value: &Value) -> Result<Val, Mismatch> {
    let wrong = || mismatch(ty, "does not have this type's shape");
    let narrow = || mismatch(ty, "is out of the type's range");
    Ok(match (ty, value) {
        (WitType::Bool, Value::Bool(b)) => Val::Bool(*b),
        (WitType::S8, Value::Signed(n)) => Val::S8(i8::try_from(*n).map_err(|_| narrow())?),
        (WitType::S16, Value::Signed(n)) => Val::S16(i16::try_from(*n).map_err(|_| narrow())?),
        (WitType::S32, Value::Signed(n)) => Val::S32(i32::try_from(*n).map_err(|_| narrow())?),
        (WitType::S64, Value::Signed(n)) => Val::S64(*n),
        (WitType::U8, Value::Unsigned(n)) => Val::U8(u8::try_from(*n).map_err(|_| narrow())?),
        (WitType::U16, Value::Unsigned(n)) => Val::U16(u16::try_from(*n).map_err(|_| narrow())?),
        (WitType::U32, Value::Unsigned(n)) => Val::U32(u32::try_from(*n).map_err(|_| narrow())?),
        (WitType::U64, Value::Unsigned(n)) => Val::U64(*n),
        (WitType::F32, Value::F32(n)) => Val::Float32(*n),
        (WitType::F64, Value::F64(n)) => Val::Float64(*n),
        (WitType::Char, Value::Char(c)) => Val::Char(*c),
        (WitType::String, Value::String(s)) => Val::String(s.clone()),
        (WitType::List(_), Value::Bytes(bytes)) => {
            Val::List(bytes.iter().map(|b| Val::U8(*b)).collect())
        }
        (WitType::List(item), Value::List(items)) => Val::List(
            items
                .iter()
                .map(|v| to_val(item, v))
                .collect::<Result<_, _>>()?,
        ),
        (WitType::Record(fields), Value::Fields(values)) if fields.len() == values.len() => {
            Val::Record(
                fields
                    .iter()
                    .zip(values)
                    .map(|((name, ty), v)| Ok((name.clone(), to_val(ty, v)?)))
                    .collect::<Result<_, Mismatch>>()?,
            )
        }
        (WitType::Tuple(types), Value::Fields(values)) if types.len() == values.len() => {
            Val::Tuple(
                types
                    .iter()
                    .zip(values)
                    .map(|(ty, v)| to_val(ty, v))
                    .collect::<Result<_, _>>()?,
            )
        }
        (WitType::Option(_), Value::Case(0, None)) => Val::Option(None),
        (WitType::Option(some), Value::Case(1, Some(v))) => {
            Val::Option(Some(Box::new(to_val(some, v)?)))
        }
        (WitType::Enum(names), Value::Case(i, None)) => {
            Val::Enum(names.get(*i as usize).ok_or_else(wrong)?.clone())
        }
        (WitType::Result { .. }, Value::Case(i, payload)) => {
            let payload = case_payload(ty, *i, payload.as_deref())?;
            match i {
                0 => Val::Result(Ok(payload)),
                _ => Val::Result(Err(payload)),
            }
        }
        (WitType::Variant(_), Value::Case(i, payload)) => {
            let name = cases(ty)
                .get(*i as usize)
                .map(|(n, _)| n.to_string())
                .ok_or_else(wrong)?;
            Val::Variant(name, case_payload(ty, *i, payload.as_deref())?)
        }
        (WitType::Flags(names), Value::Flags(set)) if names.len() == set.len() => Val::Flags(
            names
                .iter()
                .zip(set)
                .filter(|(_, on)| **on)
                .map(|(n, _)| n.clone())
                .collect(),
        ),
        (WitType::Handle, _) => return Err(mismatch(ty, "is a resource, which is never passed")),
        _ => return Err(wrong()),
    })
}

/// The payload type of case `i` of the variant or result `ty` (`None`: the case has none).
fn case_type(ty: &WitType, i: u32) -> Result<Option<&WitType>, Mismatch> {
    cases(ty)
        .get(i as usize)
        .map(|(_, payload)| *payload)
        .ok_or_else(|| mismatch(ty, "has no such case"))
}

/// The payload of case `i` of the variant or result `ty`, as wasmtime's value.
fn case_payload(
    ty: &WitType,
    i: u32,
    payload: Option<&Value>,
) -> Result<Option<Box<Val>>, Mismatch> {
    match (case_type(ty, i)?, payload) {
        (None, None) => Ok(None),
        (Some(case_ty), Some(v)) => Ok(Some(Box::new(to_val(case_ty, v)?))),
        _ => Err(mismatch(ty, "has a payload its case does not")),
    }
}

/// wasmtime's value `val`, of type `ty`, as ours.
pub fn from_val(ty: &WitType, val: Val) -> Result<Value, Mismatch> {
    let wrong = || mismatch(ty, "came back in another shape");
    let case_index = |name: &str| {
        cases(ty)
            .iter()
            .position(|(n, _)| *n == name)
            .map(|i| i as u32)
            .ok_or_else(wrong)
    };
    Ok(match (ty, val) {
        (_, Val::Bool(b)) => Value::Bool(b),
        (_, Val::S8(n)) => Value::Signed(n.into()),
        (_, Val::S16(n)) => Value::Signed(n.into()),
        (_, Val::S32(n)) => Value::Signed(n.into()),
        (_, Val::S64(n)) => Value::Signed(n),
        (_, Val::U8(n)) => Value::Unsigned(n.into()),
        (_, Val::U16(n)) => Value::Unsigned(n.into()),
        (_, Val::U32(n)) => Value::Unsigned(n.into()),
        (_, Val::U64(n)) => Value::Unsigned(n),
        (_, Val::Float32(n)) => Value::F32(n),
        (_, Val::Float64(n)) => Value::F64(n),
        (_, Val::Char(c)) => Value::Char(c),
        (_, Val::String(s)) => Value::String(s),
        (WitType::List(item), Val::List(items)) if **item == WitType::U8 => Value::Bytes(
            items
                .into_iter()
                .map(|v| match v {
                    Val::U8(b) => Ok(b),
                    _ => Err(wrong()),
                })
                .collect::<Result<_, _>>()?,
        ),
        (WitType::List(item), Val::List(items)) => Value::List(
            items
                .into_iter()
                .map(|v| from_val(item, v))
                .collect::<Result<_, _>>()?,
        ),
        (WitType::Record(fields), Val::Record(values)) if fields.len() == values.len() => {
            Value::Fields(
                fields
                    .iter()
                    .zip(values)
                    .map(|((_, ty), (_, v))| from_val(ty, v))
                    .collect::<Result<_, _>>()?,
            )
        }
        (WitType::Tuple(types), Val::Tuple(values)) if types.len() == values.len() => {
            Value::Fields(
                types
                    .iter()
                    .zip(values)
                    .map(|(ty, v)| from_val(ty, v))
                    .collect::<Result<_, _>>()?,
            )
        }
        (WitType::Option(_), Val::Option(None)) => Value::Case(0, None),
        (WitType::Option(some), Val::Option(Some(v))) => {
            Value::Case(1, Some(Box::new(from_val(some, *v)?)))
        }
        (WitType::Enum(names), Val::Enum(name)) => {
            let i = names.iter().position(|n| *n == name).ok_or_else(wrong)?;
            Value::Case(i as u32, None)
        }
        (WitType::Result { .. }, Val::Result(result)) => {
            let (i, payload) = match result {
                Ok(payload) => (0, payload),
                Err(payload) => (1, payload),
            };
            Value::Case(i, payload_value(ty, i, payload)?)
        }
        (WitType::Variant(_), Val::Variant(name, payload)) => {
            let i = case_index(&name)?;
            Value::Case(i, payload_value(ty, i, payload)?)
        }
        (WitType::Flags(names), Val::Flags(set)) => {
            Value::Flags(names.iter().map(|n| set.contains(n)).collect())
        }
        // The instance is discarded after the call, and the handle with it.
        (WitType::Handle, Val::Resource(_)) => Value::Handle(0),
        _ => return Err(wrong()),
    })
}

/// The payload of case `i` of the variant or result `ty`, as ours.
fn payload_value(
    ty: &WitType,
    i: u32,
    payload: Option<Box<Val>>,
) -> Result<Option<Box<Value>>, Mismatch> {
    match (case_type(ty, i)?, payload) {
        (None, None) => Ok(None),
        (Some(case_ty), Some(v)) => Ok(Some(Box::new(from_val(case_ty, *v)?))),
        _ => Err(mismatch(
            ty,
            "came back with a payload its case does not have",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_goes_there_and_back() {
        let record = WitType::Record(vec![
            ("x".into(), WitType::S32),
            ("tag".into(), WitType::Option(Box::new(WitType::String))),
        ]);
        let variant = WitType::Variant(vec![
            ("none".into(), None),
            ("circle".into(), Some(WitType::F64)),
        ]);
        let samples = [
            (WitType::Bool, Value::Bool(true)),
            (WitType::S8, Value::Signed(-128)),
            (WitType::U64, Value::Unsigned(u64::MAX)),
            (WitType::F32, Value::F32(1.5)),
            (WitType::Char, Value::Char('é')),
            (WitType::String, Value::String("hi".into())),
            (
                WitType::List(Box::new(WitType::U8)),
                Value::Bytes(vec![0, 255]),
            ),
            (
                WitType::List(Box::new(WitType::U16)),
                Value::List(vec![Value::Unsigned(7)]),
            ),
            (
                record,
                Value::Fields(vec![
                    Value::Signed(-1),
                    Value::Case(1, Some(Box::new(Value::String("t".into())))),
                ]),
            ),
            (
                WitType::Tuple(vec![WitType::Bool, WitType::U8]),
                Value::Fields(vec![Value::Bool(false), Value::Unsigned(3)]),
            ),
            (variant.clone(), Value::Case(0, None)),
            (variant, Value::Case(1, Some(Box::new(Value::F64(2.0))))),
            (
                WitType::Enum(vec!["a".into(), "b".into()]),
                Value::Case(1, None),
            ),
            (
                WitType::Result {
                    ok: None,
                    err: Some(Box::new(WitType::String)),
                },
                Value::Case(1, Some(Box::new(Value::String("no".into())))),
            ),
            (
                WitType::Flags(vec!["r".into(), "w".into()]),
                Value::Flags(vec![false, true]),
            ),
        ];
        for (ty, value) in samples {
            let val = to_val(&ty, &value).expect("lowers");
            assert_eq!(from_val(&ty, val).expect("lifts"), value, "{}", ty.wit());
        }
    }

    #[test]
    fn values_out_of_range_or_shape_are_refused() {
        assert!(to_val(&WitType::U8, &Value::Unsigned(256)).is_err());
        assert!(to_val(&WitType::S16, &Value::Bool(true)).is_err());
        assert!(to_val(&WitType::Handle, &Value::Handle(0)).is_err());
        assert!(from_val(&WitType::Enum(vec!["a".into()]), Val::Enum("z".into())).is_err());
    }
}
