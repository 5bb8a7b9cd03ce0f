//! The WIT types a generic export's parameters and result may have, read from the component's
//! own type information and bounded: the host turns them into JSON Schemas and converts every
//! argument and result along them, so a hostile component must not be able to make them deep or
//! huge.

use wasmtime::component::types::{ComponentFunc, Type};

/// Deepest nesting of types the host follows (a record in a list in an option is 3).
pub const MAX_DEPTH: usize = 32;

/// Most type nodes one function's parameters and result may expand to. WIT types are a DAG, and a
/// record of two fields of the same record of two fields... doubles with each level: this caps
/// the tree the schemas and conversions walk.
pub const MAX_NODES: usize = 4096;

/// A WIT value type the host can convert to and from JSON.
#[allow(missing_docs)] // Each variant is the WIT type of its name.
#[derive(Debug, Clone, PartialEq)]
pub enum WitType {
    Bool,
    S8,
    U8,
    S16,
    U16,
    S32,
    U32,
    S64,
    U64,
    F32,
    F64,
    Char,
    String,
    List(Box<WitType>),
    Record(Vec<(String, WitType)>),
    Tuple(Vec<WitType>),
    Variant(Vec<(String, Option<WitType>)>),
    Enum(Vec<String>),
    Option(Box<WitType>),
    Result {
        ok: Option<Box<WitType>>,
        err: Option<Box<WitType>>,
    },
    Flags(Vec<String>),
    /// A resource handle (`own` or `borrow`): only in the exports an adapter calls (`wasmcp`),
    /// which never passes one and refuses one it gets back.
    Handle,
}

/// A function's parameters and result as the host converts them.
#[derive(Debug, Clone, PartialEq)]
pub struct Signature {
    /// Parameters in order, with their WIT names.
    pub params: Vec<(String, WitType)>,
    /// The result, if the function has one.
    pub result: Option<WitType>,
}

/// Why a function cannot be a tool.
#[allow(missing_docs)] // The messages say.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unsupported {
    #[error("it takes or returns a resource (`{0}`), which a JSON argument cannot carry")]
    Resource(&'static str),
    #[error("it takes or returns a {0}, which a tool call cannot carry")]
    Async(&'static str),
    #[error("it uses a {0}, which this host does not convert yet")]
    Unconverted(&'static str),
    #[error("it is an async export")]
    AsyncFunction,
    #[error("its types nest deeper than {MAX_DEPTH} levels")]
    TooDeep,
    #[error("its types expand to more than {MAX_NODES} parts")]
    TooLarge,
    #[error("`option<option<...>>` has no exact JSON form (null would mean either none)")]
    NestedOption,
    #[error("it has more than one result")]
    ManyResults,
}

impl Signature {
    /// The signature of `func`, or why the host cannot call it as a tool.
    pub fn of(func: &ComponentFunc) -> Result<Signature, Unsupported> {
        Signature::read(func, false)
    }

    /// The signature of `func`, resources included (as [`WitType::Handle`]): for an adapter
    /// that knows what the function takes.
    pub fn with_handles(func: &ComponentFunc) -> Result<Signature, Unsupported> {
        Signature::read(func, true)
    }

    fn read(func: &ComponentFunc, handles: bool) -> Result<Signature, Unsupported> {
        if func.async_() {
            return Err(Unsupported::AsyncFunction);
        }
        let mut walk = Walk {
            budget: MAX_NODES,
            handles,
        };
        let params = func
            .params()
            .map(|(name, ty)| Ok((name.to_string(), walk.convert(&ty, 0)?)))
            .collect::<Result<Vec<_>, Unsupported>>()?;
        let mut results = func.results();
        if results.len() > 1 {
            return Err(Unsupported::ManyResults);
        }
        let result = results.next().map(|ty| walk.convert(&ty, 0)).transpose()?;
        Ok(Signature { params, result })
    }
}

/// The conversion's state: what is left of the node budget, and whether handles are taken.
struct Walk {
    budget: usize,
    handles: bool,
}

impl Walk {
    fn convert(&mut self, ty: &Type, depth: usize) -> Result<WitType, Unsupported> {
        if depth > MAX_DEPTH {
            return Err(Unsupported::TooDeep);
        }
        self.budget = self.budget.checked_sub(1).ok_or(Unsupported::TooLarge)?;
        let inner = |walk: &mut Walk, ty: &Type| walk.convert(ty, depth + 1).map(Box::new);
        let walk = self;
        Ok(match ty {
            Type::Bool => WitType::Bool,
            Type::S8 => WitType::S8,
            Type::U8 => WitType::U8,
            Type::S16 => WitType::S16,
            Type::U16 => WitType::U16,
            Type::S32 => WitType::S32,
            Type::U32 => WitType::U32,
            Type::S64 => WitType::S64,
            Type::U64 => WitType::U64,
            Type::Float32 => WitType::F32,
            Type::Float64 => WitType::F64,
            Type::Char => WitType::Char,
            Type::String => WitType::String,
            Type::List(list) => WitType::List(inner(walk, &list.ty())?),
            Type::Record(record) => WitType::Record(
                record
                    .fields()
                    .map(|f| Ok((f.name.to_string(), *inner(walk, &f.ty)?)))
                    .collect::<Result<_, Unsupported>>()?,
            ),
            Type::Tuple(tuple) => WitType::Tuple(
                tuple
                    .types()
                    .map(|t| Ok(*inner(walk, &t)?))
                    .collect::<Result<_, Unsupported>>()?,
            ),
            Type::Variant(variant) => WitType::Variant(
                variant
                    .cases()
                    .map(|c| {
                        let payload = c.ty.as_ref().map(|t| inner(walk, t)).transpose()?;
                        Ok((c.name.to_string(), payload.map(|b| *b)))
                    })
                    .collect::<Result<_, Unsupported>>()?,
            ),
            Type::Enum(e) => WitType::Enum(e.names().map(str::to_string).collect()),
            Type::Option(option) => {
                let some = inner(walk, &option.ty())?;
                if matches!(*some, WitType::Option(_)) {
                    return Err(Unsupported::NestedOption);
                }
                WitType::Option(some)
            }
            Type::Result(result) => WitType::Result {
                ok: result.ok().map(|t| inner(walk, &t)).transpose()?,
                err: result.err().map(|t| inner(walk, &t)).transpose()?,
            },
            Type::Flags(flags) => WitType::Flags(flags.names().map(str::to_string).collect()),
            Type::Own(_) | Type::Borrow(_) if walk.handles => WitType::Handle,
            Type::Own(_) => return Err(Unsupported::Resource("own")),
            Type::Borrow(_) => return Err(Unsupported::Resource("borrow")),
            Type::Future(_) => return Err(Unsupported::Async("future")),
            Type::Stream(_) => return Err(Unsupported::Async("stream")),
            Type::ErrorContext => return Err(Unsupported::Async("error-context")),
            Type::Map(_) => return Err(Unsupported::Unconverted("map")),
            Type::FixedLengthList(_) => return Err(Unsupported::Unconverted("fixed-length list")),
        })
    }
}

impl WitType {
    /// The type as WIT spells it, for error messages and descriptions.
    pub fn wit(&self) -> String {
        match self {
            WitType::Bool => "bool".into(),
            WitType::S8 => "s8".into(),
            WitType::U8 => "u8".into(),
            WitType::S16 => "s16".into(),
            WitType::U16 => "u16".into(),
            WitType::S32 => "s32".into(),
            WitType::U32 => "u32".into(),
            WitType::S64 => "s64".into(),
            WitType::U64 => "u64".into(),
            WitType::F32 => "f32".into(),
            WitType::F64 => "f64".into(),
            WitType::Char => "char".into(),
            WitType::String => "string".into(),
            WitType::List(t) => format!("list<{}>", t.wit()),
            WitType::Record(_) => "record".into(),
            WitType::Tuple(ts) => format!(
                "tuple<{}>",
                ts.iter().map(WitType::wit).collect::<Vec<_>>().join(", ")
            ),
            WitType::Variant(_) => "variant".into(),
            WitType::Enum(_) => "enum".into(),
            WitType::Option(t) => format!("option<{}>", t.wit()),
            WitType::Result { ok, err } => {
                let part = |t: &Option<Box<WitType>>| t.as_ref().map_or("_".into(), |t| t.wit());
                format!("result<{}, {}>", part(ok), part(err))
            }
            WitType::Flags(_) => "flags".into(),
            WitType::Handle => "resource".into(),
        }
    }
}
