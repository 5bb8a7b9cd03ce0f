//! Calling an export of any type: the canonical ABI for [`Value`]s, driven by the component's
//! own type information.
//!
//! wasmtime's dynamic values (`Val`) would do the calling, but their results are lifted without
//! any bound: a `list<string>` whose million items all point at the same 8 MiB would be copied a
//! million times before the host could count a byte. So a generic call goes through a
//! [`TypedFunc`](wasmtime::component::TypedFunc) whose parameter and result types are ours:
//! [`Args`] lowers the values along the function's types, and [`Answer`] lifts the result while
//! charging the call's lift budget (`lift.rs`) before each copy, as the views of `lift.rs`
//! do for the `palisade:plugin` exports.
//!
//! The canonical ABI decides where values go by how many core values they flatten to. Arguments
//! of up to 16 go flat ([`Args`] declares 16 slots; the callee reads what its signature has);
//! more are refused when the plugin loads. A result of one flat value comes back directly
//! ([`FlatAnswer`]); a larger one through a pointer into the plugin's memory ([`Answer`], whose
//! declared size of 0 makes wasmtime hand over an empty slice *at* that pointer, which is how
//! [`Answer`] finds it).
//!
//! These impls use wasmtime's doc-hidden lifting interface, like `lift.rs`; wasmtime is pinned to
//! one exact version and the tests (`tests/tests/generic.rs`, every WIT type both ways) fail
//! loudly if it moves.

use std::mem::MaybeUninit;

use wasmtime::ValRaw;
use wasmtime::component::__internal::wasmtime_environ::component::{
    CanonicalAbiInfo, ComponentTypes, InterfaceType, VariantInfo,
};
use wasmtime::component::__internal::{InstanceType, LiftContext, LowerContext};
use wasmtime::component::{ComponentNamedList, ComponentType, Lift, Lower};
use wasmtime::{Result, bail, format_err};

use super::value::Value;
use crate::lift::{Text, charge};
use crate::output::ITEM_BYTES;

/// The canonical ABI's limits on values passed flat.
pub const MAX_FLAT_PARAMS: usize = 16;
const MAX_FLAT_RESULTS: usize = 1;

/// The arguments of a generic call, in parameter order.
pub struct Args(pub Vec<Value>);

/// The result of a generic call returned through a pointer (more than one flat value).
pub struct Answer(pub Value);

/// The result of a generic call returned as one flat value.
pub struct FlatAnswer(pub Value);

/// How many core values `ty` flattens to, if it is no more than `max` (`None` if more).
pub fn flat_count(types: &ComponentTypes, ty: &InterfaceType, max: usize) -> Option<usize> {
    types.canonical_abi(ty).flat_count(max)
}

const NO_LAYOUT: CanonicalAbiInfo = CanonicalAbiInfo {
    size32: 0,
    align32: 1,
    size64: 0,
    align64: 1,
    flat_count: None,
};

// SAFETY: `Lower` is 16 `ValRaw`s, the most a flat parameter list may take; `typecheck` only
// accepts parameter lists that flatten to at most that many, so wasmtime always passes them
// flat, and `linear_lower_to_flat` writes every slot.
#[allow(unsafe_code)]
unsafe impl ComponentType for Args {
    type Lower = [ValRaw; MAX_FLAT_PARAMS];
    const ABI: CanonicalAbiInfo = NO_LAYOUT;

    fn typecheck(ty: &InterfaceType, types: &InstanceType<'_>) -> Result<()> {
        match flat_count(types.types, ty, MAX_FLAT_PARAMS) {
            Some(_) if matches!(ty, InterfaceType::Tuple(_)) => Ok(()),
            _ => bail!("the parameters flatten to more than {MAX_FLAT_PARAMS} core values"),
        }
    }
}

// SAFETY: `Args` is always a whole parameter list (its typecheck takes the parameters' tuple).
#[allow(unsafe_code)]
unsafe impl ComponentNamedList for Args {}

// SAFETY: writes exactly the flat values of the parameters' types (checked by `typecheck`),
// zeros after them.
#[allow(unsafe_code)]
unsafe impl Lower for Args {
    fn linear_lower_to_flat<T>(
        &self,
        cx: &mut LowerContext<'_, T>,
        ty: InterfaceType,
        dst: &mut MaybeUninit<[ValRaw; MAX_FLAT_PARAMS]>,
    ) -> Result<()> {
        let InterfaceType::Tuple(params) = ty else {
            bail!("parameters are not a tuple");
        };
        let types = cx.types;
        let params = &types[params].types;
        if params.len() != self.0.len() {
            bail!("{} arguments for {} parameters", self.0.len(), params.len());
        }
        let mut flat = Vec::with_capacity(MAX_FLAT_PARAMS);
        for (value, ty) in self.0.iter().zip(params.iter()) {
            lower_flat(cx, types, *ty, value, &mut flat)?;
        }
        if flat.len() > MAX_FLAT_PARAMS {
            bail!("the arguments flatten to more than {MAX_FLAT_PARAMS} core values");
        }
        let mut slots = [ValRaw::i64(0); MAX_FLAT_PARAMS];
        for (slot, (kind, bits)) in slots.iter_mut().zip(flat) {
            *slot = kind.raw(bits);
        }
        dst.write(slots);
        Ok(())
    }

    fn linear_lower_to_memory<T>(
        &self,
        _cx: &mut LowerContext<'_, T>,
        _ty: InterfaceType,
        _offset: usize,
    ) -> Result<()> {
        bail!("the parameters flatten to more than {MAX_FLAT_PARAMS} core values")
    }
}

/// The arguments of a generic call whose parameters flatten to more than 16 core values: passed
/// in the plugin's memory, in a block of `SIZE` bytes that wasmtime allocates through the
/// plugin's `realloc` (at alignment 8, the largest any type has) and that must hold the
/// parameters' tuple. The caller picks the smallest size that fits, from 64 bytes to 64 KiB in
/// steps of 4x (a block is at most 4 times what the parameters need).
pub struct HeapArgs<const SIZE: u32>(pub Vec<Value>);

// SAFETY: 17 `ValRaw`s, more than 16, make wasmtime pass the parameters through memory: it
// allocates `SIZE` bytes at alignment 8 and hands `linear_lower_to_memory` the pointer, which is
// what the callee receives. `typecheck` accepts only parameter lists of more than 16 flat values
// whose tuple fits in `SIZE` bytes.
#[allow(unsafe_code)]
unsafe impl<const SIZE: u32> ComponentType for HeapArgs<SIZE> {
    type Lower = [ValRaw; MAX_FLAT_PARAMS + 1];
    const ABI: CanonicalAbiInfo = CanonicalAbiInfo {
        size32: SIZE,
        align32: 8,
        size64: SIZE,
        align64: 8,
        flat_count: None,
    };

    fn typecheck(ty: &InterfaceType, types: &InstanceType<'_>) -> Result<()> {
        let fits = types.types.canonical_abi(ty).size32 <= SIZE;
        match flat_count(types.types, ty, MAX_FLAT_PARAMS) {
            None if fits && matches!(ty, InterfaceType::Tuple(_)) => Ok(()),
            _ => bail!("the parameters do not take a block of {SIZE} bytes"),
        }
    }
}

// SAFETY: as above.
#[allow(unsafe_code)]
unsafe impl<const SIZE: u32> ComponentNamedList for HeapArgs<SIZE> {}

// SAFETY: writes the parameters' tuple at the start of the block wasmtime allocated.
#[allow(unsafe_code)]
unsafe impl<const SIZE: u32> Lower for HeapArgs<SIZE> {
    fn linear_lower_to_flat<T>(
        &self,
        _cx: &mut LowerContext<'_, T>,
        _ty: InterfaceType,
        _dst: &mut MaybeUninit<Self::Lower>,
    ) -> Result<()> {
        bail!("parameters passed in memory were asked for flat")
    }

    fn linear_lower_to_memory<T>(
        &self,
        cx: &mut LowerContext<'_, T>,
        ty: InterfaceType,
        offset: usize,
    ) -> Result<()> {
        let types = cx.types;
        let InterfaceType::Tuple(params) = ty else {
            bail!("parameters are not a tuple");
        };
        let params = &types[params].types;
        same_len(params.len(), self.0.len())?;
        let mut at = 0;
        for (value, ty) in self.0.iter().zip(params.iter()) {
            let field = types.canonical_abi(ty).next_field32_size(&mut at);
            store(cx, types, *ty, value, offset + field)?;
        }
        Ok(())
    }
}

// SAFETY: two `ValRaw`s, more than the one flat result, make wasmtime take the result through a
// pointer; the layout of 0 bytes at alignment 1 makes it hand over the slice at that pointer,
// which `linear_lift_from_memory` checks against the real layout before reading.
#[allow(unsafe_code)]
unsafe impl ComponentType for Answer {
    type Lower = [ValRaw; 2];
    const ABI: CanonicalAbiInfo = NO_LAYOUT;

    fn typecheck(ty: &InterfaceType, types: &InstanceType<'_>) -> Result<()> {
        match flat_count(types.types, ty, MAX_FLAT_RESULTS) {
            None => Ok(()),
            Some(_) => bail!("the result is returned flat"),
        }
    }
}

// SAFETY: see `ComponentType for Answer`.
#[allow(unsafe_code)]
unsafe impl Lift for Answer {
    fn linear_lift_from_flat(
        _cx: &mut LiftContext<'_>,
        _ty: InterfaceType,
        _src: &Self::Lower,
    ) -> Result<Self> {
        bail!("a result returned through memory was passed flat")
    }

    fn linear_lift_from_memory(
        cx: &mut LiftContext<'_>,
        ty: InterfaceType,
        bytes: &[u8],
    ) -> Result<Self> {
        let memory = cx.memory();
        // `bytes` is the empty slice of `memory` at the returned pointer (see above).
        let ptr = (bytes.as_ptr() as usize).wrapping_sub(memory.as_ptr() as usize);
        if ptr > memory.len() {
            bail!("the result pointer is not in the plugin's memory");
        }
        let abi = cx.types.canonical_abi(&ty).clone();
        check_range(memory, ptr, abi.align32, u64::from(abi.size32))?;
        Ok(Answer(load(cx, ty, ptr)?))
    }
}

// SAFETY: one `ValRaw`, the one flat result; `typecheck` accepts only types of exactly one flat
// value.
#[allow(unsafe_code)]
unsafe impl ComponentType for FlatAnswer {
    type Lower = ValRaw;
    const ABI: CanonicalAbiInfo = NO_LAYOUT;

    fn typecheck(ty: &InterfaceType, types: &InstanceType<'_>) -> Result<()> {
        match flat_count(types.types, ty, MAX_FLAT_RESULTS) {
            Some(1) => Ok(()),
            _ => bail!("the result is not one flat value"),
        }
    }
}

// SAFETY: see `ComponentType for FlatAnswer`.
#[allow(unsafe_code)]
unsafe impl Lift for FlatAnswer {
    fn linear_lift_from_flat(
        cx: &mut LiftContext<'_>,
        ty: InterfaceType,
        src: &Self::Lower,
    ) -> Result<Self> {
        Ok(FlatAnswer(lift_one_flat(cx.types, ty, src.get_u64())?))
    }

    fn linear_lift_from_memory(
        _cx: &mut LiftContext<'_>,
        _ty: InterfaceType,
        _bytes: &[u8],
    ) -> Result<Self> {
        bail!("a flat result was passed through memory")
    }
}

/// A core value type of the flat form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flat {
    I32,
    I64,
    F32,
    F64,
}

impl Flat {
    /// The slot for `bits` (an i32 or f32 in the low 32 bits).
    fn raw(self, bits: u64) -> ValRaw {
        match self {
            Flat::I32 => ValRaw::u32(bits as u32),
            Flat::I64 => ValRaw::u64(bits),
            Flat::F32 => ValRaw::f32(bits as u32),
            Flat::F64 => ValRaw::f64(bits),
        }
    }

    /// The canonical ABI's join of two slot types of a variant's cases.
    fn join(self, other: Flat) -> Flat {
        match (self, other) {
            (a, b) if a == b => a,
            (Flat::I32, Flat::F32) | (Flat::F32, Flat::I32) => Flat::I32,
            _ => Flat::I64,
        }
    }
}

/// The flat core types of `ty`.
fn flatten(types: &ComponentTypes, ty: InterfaceType, out: &mut Vec<Flat>) -> Result<()> {
    match ty {
        InterfaceType::Bool
        | InterfaceType::S8
        | InterfaceType::U8
        | InterfaceType::S16
        | InterfaceType::U16
        | InterfaceType::S32
        | InterfaceType::U32
        | InterfaceType::Char
        | InterfaceType::Own(_)
        | InterfaceType::Borrow(_)
        | InterfaceType::Enum(_) => out.push(Flat::I32),
        InterfaceType::S64 | InterfaceType::U64 => out.push(Flat::I64),
        InterfaceType::Float32 => out.push(Flat::F32),
        InterfaceType::Float64 => out.push(Flat::F64),
        InterfaceType::String | InterfaceType::List(_) => out.extend([Flat::I32, Flat::I32]),
        InterfaceType::Record(_) | InterfaceType::Tuple(_) => {
            for field in fields(types, ty) {
                flatten(types, field, out)?;
            }
        }
        InterfaceType::Flags(f) => out.extend(std::iter::repeat_n(
            Flat::I32,
            types[f].names.len().div_ceil(32),
        )),
        InterfaceType::Variant(_) | InterfaceType::Option(_) | InterfaceType::Result(_) => {
            out.push(Flat::I32);
            out.extend(joined_payload(types, ty)?);
        }
        other => bail!("cannot pass a value of type {other:?}"),
    }
    Ok(())
}

/// The types of a record's fields or a tuple's items, in order (none for other types).
fn fields(types: &ComponentTypes, ty: InterfaceType) -> Vec<InterfaceType> {
    match ty {
        InterfaceType::Record(r) => types[r].fields.iter().map(|f| f.ty).collect(),
        InterfaceType::Tuple(t) => types[t].types.to_vec(),
        _ => Vec::new(),
    }
}

/// The payload types of a variant-like type's cases, in case order.
fn payloads(types: &ComponentTypes, ty: InterfaceType) -> Result<Vec<Option<InterfaceType>>> {
    Ok(match ty {
        InterfaceType::Variant(v) => types[v].cases.values().copied().collect(),
        InterfaceType::Option(o) => vec![None, Some(types[o].ty)],
        InterfaceType::Result(r) => vec![types[r].ok, types[r].err],
        InterfaceType::Enum(e) => vec![None; types[e].names.len()],
        other => bail!("{other:?} is not a variant"),
    })
}

fn variant_info(types: &ComponentTypes, ty: InterfaceType) -> Result<&VariantInfo> {
    Ok(match ty {
        InterfaceType::Variant(v) => &types[v].info,
        InterfaceType::Option(o) => &types[o].info,
        InterfaceType::Result(r) => &types[r].info,
        InterfaceType::Enum(e) => &types[e].info,
        other => bail!("{other:?} is not a variant"),
    })
}

/// The slots of a variant's payload: per position, the join of every case's type there.
fn joined_payload(types: &ComponentTypes, ty: InterfaceType) -> Result<Vec<Flat>> {
    let mut joined: Vec<Flat> = Vec::new();
    for payload in payloads(types, ty)?.into_iter().flatten() {
        let mut flat = Vec::new();
        flatten(types, payload, &mut flat)?;
        for (i, kind) in flat.into_iter().enumerate() {
            match joined.get_mut(i) {
                Some(slot) => *slot = slot.join(kind),
                None => joined.push(kind),
            }
        }
    }
    Ok(joined)
}

/// Lowers `value` of type `ty` to flat core values (kind and bits), allocating its strings and
/// lists in the plugin's memory.
fn lower_flat<T>(
    cx: &mut LowerContext<'_, T>,
    types: &ComponentTypes,
    ty: InterfaceType,
    value: &Value,
    out: &mut Vec<(Flat, u64)>,
) -> Result<()> {
    match (ty, value) {
        (InterfaceType::Bool, Value::Bool(b)) => out.push((Flat::I32, u64::from(*b))),
        (InterfaceType::S8 | InterfaceType::S16 | InterfaceType::S32, Value::Signed(n)) => {
            out.push((Flat::I32, u64::from(*n as i32 as u32)))
        }
        (InterfaceType::U8 | InterfaceType::U16 | InterfaceType::U32, Value::Unsigned(n)) => {
            out.push((Flat::I32, u64::from(*n as u32)))
        }
        (InterfaceType::S64, Value::Signed(n)) => out.push((Flat::I64, *n as u64)),
        (InterfaceType::U64, Value::Unsigned(n)) => out.push((Flat::I64, *n)),
        (InterfaceType::Float32, Value::F32(n)) => out.push((Flat::F32, u64::from(n.to_bits()))),
        (InterfaceType::Float64, Value::F64(n)) => out.push((Flat::F64, n.to_bits())),
        (InterfaceType::Char, Value::Char(c)) => out.push((Flat::I32, u64::from(u32::from(*c)))),
        (InterfaceType::String, Value::String(s)) => {
            let (ptr, len) = lower_string(cx, s)?;
            out.extend([(Flat::I32, ptr), (Flat::I32, len)]);
        }
        (InterfaceType::List(l), Value::Bytes(_) | Value::List(_)) => {
            let (ptr, len) = lower_list(cx, types, types[l].element, value)?;
            out.extend([(Flat::I32, ptr), (Flat::I32, len)]);
        }
        (InterfaceType::Record(_) | InterfaceType::Tuple(_), Value::Fields(values)) => {
            let fields = fields(types, ty);
            same_len(fields.len(), values.len())?;
            for (field, value) in fields.into_iter().zip(values) {
                lower_flat(cx, types, field, value, out)?;
            }
        }
        (InterfaceType::Flags(f), Value::Flags(set)) => {
            same_len(types[f].names.len(), set.len())?;
            for word in flag_words(set) {
                out.push((Flat::I32, u64::from(word)));
            }
        }
        (
            InterfaceType::Variant(_)
            | InterfaceType::Option(_)
            | InterfaceType::Result(_)
            | InterfaceType::Enum(_),
            Value::Case(case, payload),
        ) => {
            let case_ty = check_case(types, ty, *case, payload.is_some())?;
            out.push((Flat::I32, u64::from(*case)));
            if matches!(ty, InterfaceType::Enum(_)) {
                return Ok(());
            }
            let joined = joined_payload(types, ty)?;
            let mut own = Vec::new();
            if let (Some(case_ty), Some(payload)) = (case_ty, payload) {
                lower_flat(cx, types, case_ty, payload, &mut own)?;
            }
            // A case's value keeps its bits in the joined slot (an i32 widened unsigned to an
            // i64, an f32's or f64's bits in an integer slot); slots it does not use are zero.
            for (i, slot) in joined.iter().enumerate() {
                out.push((*slot, own.get(i).map_or(0, |(_, bits)| *bits)));
            }
        }
        (ty, value) => bail!("a {value:?} cannot be passed as {ty:?}"),
    }
    Ok(())
}

/// The payload type of `case` of a variant-like `ty`, checking the case exists and that a
/// payload is given exactly when it has one.
fn check_case(
    types: &ComponentTypes,
    ty: InterfaceType,
    case: u32,
    has_payload: bool,
) -> Result<Option<InterfaceType>> {
    let payloads = payloads(types, ty)?;
    let payload = *payloads
        .get(case as usize)
        .ok_or_else(|| format_err!("case {case} of {} does not exist", payloads.len()))?;
    if payload.is_some() != has_payload {
        bail!("case {case} given with the wrong payload");
    }
    Ok(payload)
}

/// The size of a variant's discriminant with `cases` cases, as the canonical ABI has it.
fn discriminant_bytes(cases: usize) -> usize {
    match cases {
        0..=0x100 => 1,
        0x101..=0x1_0000 => 2,
        _ => 4,
    }
}

fn same_len(expected: usize, got: usize) -> Result<()> {
    if expected != got {
        bail!("{got} values for {expected} fields");
    }
    Ok(())
}

/// The flags packed in 32-bit words, first flag in the lowest bit.
fn flag_words(set: &[bool]) -> Vec<u32> {
    set.chunks(32)
        .map(|chunk| {
            chunk
                .iter()
                .enumerate()
                .fold(0u32, |word, (bit, on)| word | (u32::from(*on) << bit))
        })
        .collect()
}

/// Copies `s` into the plugin's memory in its string encoding: its pointer and length.
fn lower_string<T>(cx: &mut LowerContext<'_, T>, s: &str) -> Result<(u64, u64)> {
    let mut dst = MaybeUninit::<[ValRaw; 2]>::uninit();
    s.linear_lower_to_flat(cx, InterfaceType::String, &mut dst)?;
    // SAFETY: `str`'s flat lowering writes both slots (pointer and length) when it succeeds.
    #[allow(unsafe_code)]
    let [ptr, len] = unsafe { dst.assume_init() };
    Ok((u64::from(ptr.get_u32()), u64::from(len.get_u32())))
}

/// Copies a list into the plugin's memory: its pointer and length.
fn lower_list<T>(
    cx: &mut LowerContext<'_, T>,
    types: &ComponentTypes,
    element: InterfaceType,
    value: &Value,
) -> Result<(u64, u64)> {
    let abi = types.canonical_abi(&element).clone();
    let len = match value {
        Value::Bytes(bytes) => bytes.len(),
        Value::List(items) => items.len(),
        _ => bail!("not a list"),
    };
    let size = (abi.size32 as usize)
        .checked_mul(len)
        .ok_or_else(|| format_err!("list too large"))?;
    let ptr = cx.realloc(0, 0, abi.align32, size)?;
    match value {
        Value::Bytes(bytes) if element == InterfaceType::U8 => {
            let memory = cx.as_slice_mut();
            memory
                .get_mut(ptr..ptr + size)
                .ok_or_else(|| format_err!("the plugin's allocation is out of bounds"))?
                .copy_from_slice(bytes);
        }
        Value::List(items) => {
            for (i, item) in items.iter().enumerate() {
                store(cx, types, element, item, ptr + i * abi.size32 as usize)?;
            }
        }
        _ => bail!("bytes given for a list of {element:?}"),
    }
    Ok((ptr as u64, len as u64))
}

/// Writes `bytes` at `offset` of the plugin's memory.
fn write<T>(cx: &mut LowerContext<'_, T>, offset: usize, bytes: &[u8]) -> Result<()> {
    cx.as_slice_mut()
        .get_mut(offset..offset + bytes.len())
        .ok_or_else(|| format_err!("write out of the plugin's memory"))?
        .copy_from_slice(bytes);
    Ok(())
}

/// Stores `value` of type `ty` at `offset` of the plugin's memory (allocated by the caller).
fn store<T>(
    cx: &mut LowerContext<'_, T>,
    types: &ComponentTypes,
    ty: InterfaceType,
    value: &Value,
    offset: usize,
) -> Result<()> {
    match (ty, value) {
        (InterfaceType::Bool, Value::Bool(b)) => write(cx, offset, &[u8::from(*b)]),
        (InterfaceType::S8, Value::Signed(n)) => write(cx, offset, &(*n as i8).to_le_bytes()),
        (InterfaceType::U8, Value::Unsigned(n)) => write(cx, offset, &(*n as u8).to_le_bytes()),
        (InterfaceType::S16, Value::Signed(n)) => write(cx, offset, &(*n as i16).to_le_bytes()),
        (InterfaceType::U16, Value::Unsigned(n)) => write(cx, offset, &(*n as u16).to_le_bytes()),
        (InterfaceType::S32, Value::Signed(n)) => write(cx, offset, &(*n as i32).to_le_bytes()),
        (InterfaceType::U32, Value::Unsigned(n)) => write(cx, offset, &(*n as u32).to_le_bytes()),
        (InterfaceType::S64, Value::Signed(n)) => write(cx, offset, &n.to_le_bytes()),
        (InterfaceType::U64, Value::Unsigned(n)) => write(cx, offset, &n.to_le_bytes()),
        (InterfaceType::Float32, Value::F32(n)) => write(cx, offset, &n.to_bits().to_le_bytes()),
        (InterfaceType::Float64, Value::F64(n)) => write(cx, offset, &n.to_bits().to_le_bytes()),
        (InterfaceType::Char, Value::Char(c)) => write(cx, offset, &u32::from(*c).to_le_bytes()),
        (InterfaceType::String, Value::String(s)) => {
            let (ptr, len) = lower_string(cx, s)?;
            write_pair(cx, offset, ptr, len)
        }
        (InterfaceType::List(l), Value::Bytes(_) | Value::List(_)) => {
            let (ptr, len) = lower_list(cx, types, types[l].element, value)?;
            write_pair(cx, offset, ptr, len)
        }
        (InterfaceType::Record(_) | InterfaceType::Tuple(_), Value::Fields(values)) => {
            let fields = fields(types, ty);
            same_len(fields.len(), values.len())?;
            let mut at = 0;
            for (field, value) in fields.into_iter().zip(values) {
                let field_offset = types.canonical_abi(&field).next_field32_size(&mut at);
                store(cx, types, field, value, offset + field_offset)?;
            }
            Ok(())
        }
        (InterfaceType::Flags(f), Value::Flags(set)) => {
            same_len(types[f].names.len(), set.len())?;
            let size = types[f].abi.size32 as usize;
            let words = flag_words(set);
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            write(cx, offset, bytes.get(..size).unwrap_or(&bytes))
        }
        (
            InterfaceType::Variant(_)
            | InterfaceType::Option(_)
            | InterfaceType::Result(_)
            | InterfaceType::Enum(_),
            Value::Case(case, payload),
        ) => {
            let case_ty = check_case(types, ty, *case, payload.is_some())?;
            let info = variant_info(types, ty)?.clone();
            match discriminant_bytes(payloads(types, ty)?.len()) {
                1 => write(cx, offset, &(*case as u8).to_le_bytes())?,
                2 => write(cx, offset, &(*case as u16).to_le_bytes())?,
                _ => write(cx, offset, &case.to_le_bytes())?,
            }
            if let (Some(case_ty), Some(payload)) = (case_ty, payload) {
                let at = offset + info.payload_offset32 as usize;
                store(cx, types, case_ty, payload, at)?;
            }
            Ok(())
        }
        (ty, value) => bail!("a {value:?} cannot be stored as {ty:?}"),
    }
}

fn write_pair<T>(cx: &mut LowerContext<'_, T>, offset: usize, ptr: u64, len: u64) -> Result<()> {
    write(cx, offset, &(ptr as u32).to_le_bytes())?;
    write(cx, offset + 4, &(len as u32).to_le_bytes())
}

/// Checks that `size` bytes at `ptr`, aligned to `align`, lie in `memory`.
fn check_range(memory: &[u8], ptr: usize, align: u32, size: u64) -> Result<()> {
    if !ptr.is_multiple_of(align.max(1) as usize) {
        bail!("the plugin returned a misaligned pointer");
    }
    let end = (ptr as u64).checked_add(size);
    if end.is_none_or(|end| end > memory.len() as u64) {
        bail!("the plugin returned a pointer out of bounds of its memory");
    }
    Ok(())
}

fn read<const N: usize>(memory: &[u8], offset: usize) -> Result<[u8; N]> {
    memory
        .get(offset..)
        .and_then(|b| b.first_chunk::<N>())
        .copied()
        .ok_or_else(|| format_err!("the plugin returned a pointer out of bounds of its memory"))
}

fn read_u32(memory: &[u8], offset: usize) -> Result<u32> {
    read::<4>(memory, offset).map(u32::from_le_bytes)
}

/// Lifts the value of type `ty` at `offset` of the plugin's memory, charging the call's budget
/// before copying anything.
fn load(cx: &mut LiftContext<'_>, ty: InterfaceType, offset: usize) -> Result<Value> {
    let types = cx.types;
    let memory = cx.memory();
    Ok(match ty {
        InterfaceType::Bool => Value::Bool(read::<1>(memory, offset)?[0] != 0),
        InterfaceType::S8 => Value::Signed(i8::from_le_bytes(read(memory, offset)?).into()),
        InterfaceType::U8 => Value::Unsigned(u8::from_le_bytes(read(memory, offset)?).into()),
        InterfaceType::S16 => Value::Signed(i16::from_le_bytes(read(memory, offset)?).into()),
        InterfaceType::U16 => Value::Unsigned(u16::from_le_bytes(read(memory, offset)?).into()),
        InterfaceType::S32 => Value::Signed(i32::from_le_bytes(read(memory, offset)?).into()),
        InterfaceType::U32 => Value::Unsigned(read_u32(memory, offset)?.into()),
        InterfaceType::S64 => Value::Signed(i64::from_le_bytes(read(memory, offset)?)),
        InterfaceType::U64 => Value::Unsigned(u64::from_le_bytes(read(memory, offset)?)),
        InterfaceType::Float32 => Value::F32(f32::from_bits(read_u32(memory, offset)?)),
        InterfaceType::Float64 => {
            Value::F64(f64::from_bits(u64::from_le_bytes(read(memory, offset)?)))
        }
        InterfaceType::Char => Value::Char(char_from(read_u32(memory, offset)?)?),
        // Left in the plugin's table: the instance, and the handle with it, ends with the call.
        InterfaceType::Own(_) | InterfaceType::Borrow(_) => {
            Value::Handle(read_u32(memory, offset)?)
        }
        InterfaceType::String => {
            let pair = read::<8>(memory, offset)?;
            // `Text` charges the length before wasmtime copies (and checks) the string.
            Value::String(Text::linear_lift_from_memory(cx, InterfaceType::String, &pair)?.0)
        }
        InterfaceType::List(l) => {
            let element = types[l].element;
            let (ptr, len) = (read_u32(memory, offset)?, read_u32(memory, offset + 4)?);
            let (ptr, len) = (ptr as usize, u64::from(len));
            let abi = types.canonical_abi(&element).clone();
            check_range(
                memory,
                ptr,
                abi.align32,
                len.saturating_mul(u64::from(abi.size32)),
            )?;
            if element == InterfaceType::U8 {
                charge(len)?;
                Value::Bytes(memory[ptr..ptr + len as usize].to_vec())
            } else {
                charge(len.saturating_mul(ITEM_BYTES))?;
                let mut items = Vec::new();
                for i in 0..len as usize {
                    items.push(load(cx, element, ptr + i * abi.size32 as usize)?);
                }
                Value::List(items)
            }
        }
        InterfaceType::Record(_) | InterfaceType::Tuple(_) => {
            charge(ITEM_BYTES)?;
            let mut at = 0;
            let mut values = Vec::new();
            for ty in fields(types, ty) {
                let field_offset = types.canonical_abi(&ty).next_field32_size(&mut at);
                values.push(load(cx, ty, offset + field_offset)?);
            }
            Value::Fields(values)
        }
        InterfaceType::Flags(f) => {
            let count = types[f].names.len();
            let size = types[f].abi.size32 as usize;
            let mut word_bytes = memory
                .get(offset..offset + size)
                .ok_or_else(|| format_err!("flags out of bounds of the plugin's memory"))?
                .to_vec();
            word_bytes.resize(size.div_ceil(4) * 4, 0);
            let words: Vec<u32> = word_bytes
                .chunks(4)
                .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
                .collect();
            Value::Flags(flags_from(&words, count))
        }
        InterfaceType::Variant(_)
        | InterfaceType::Option(_)
        | InterfaceType::Result(_)
        | InterfaceType::Enum(_) => {
            charge(ITEM_BYTES)?;
            let info = variant_info(types, ty)?.clone();
            let payloads = payloads(types, ty)?;
            let case = match discriminant_bytes(payloads.len()) {
                1 => u32::from(read::<1>(memory, offset)?[0]),
                2 => u16::from_le_bytes(read(memory, offset)?).into(),
                _ => read_u32(memory, offset)?,
            };
            let payload = payloads.get(case as usize).ok_or_else(|| {
                format_err!(
                    "the plugin returned case {case} of a type with {}",
                    payloads.len()
                )
            })?;
            let payload = match payload {
                Some(payload_ty) => {
                    let at = offset + info.payload_offset32 as usize;
                    Some(Box::new(load(cx, *payload_ty, at)?))
                }
                None => None,
            };
            Value::Case(case, payload)
        }
        other => bail!("cannot return a value of type {other:?}"),
    })
}

fn char_from(bits: u32) -> Result<char> {
    char::from_u32(bits).ok_or_else(|| format_err!("the plugin returned an invalid char {bits:#x}"))
}

fn flags_from(words: &[u32], count: usize) -> Vec<bool> {
    (0..count)
        .map(|i| words.get(i / 32).is_some_and(|w| w & (1 << (i % 32)) != 0))
        .collect()
}

/// Lifts a result of exactly one flat value, `bits`: a scalar, an enum, flags, a record or tuple
/// of one such, or a variant without payloads.
fn lift_one_flat(types: &ComponentTypes, ty: InterfaceType, bits: u64) -> Result<Value> {
    let low = bits as u32;
    Ok(match ty {
        InterfaceType::Bool => Value::Bool(low != 0),
        InterfaceType::S8 => Value::Signed((low as i8).into()),
        InterfaceType::U8 => Value::Unsigned((low as u8).into()),
        InterfaceType::S16 => Value::Signed((low as i16).into()),
        InterfaceType::U16 => Value::Unsigned((low as u16).into()),
        InterfaceType::S32 => Value::Signed((low as i32).into()),
        InterfaceType::U32 => Value::Unsigned(low.into()),
        InterfaceType::S64 => Value::Signed(bits as i64),
        InterfaceType::U64 => Value::Unsigned(bits),
        InterfaceType::Float32 => Value::F32(f32::from_bits(low)),
        InterfaceType::Float64 => Value::F64(f64::from_bits(bits)),
        InterfaceType::Char => Value::Char(char_from(low)?),
        InterfaceType::Own(_) | InterfaceType::Borrow(_) => Value::Handle(low),
        InterfaceType::Flags(f) => Value::Flags(flags_from(&[low], types[f].names.len())),
        InterfaceType::Record(r) => match &*types[r].fields {
            [field] => Value::Fields(vec![lift_one_flat(types, field.ty, bits)?]),
            _ => bail!("a record of one flat value has one field"),
        },
        InterfaceType::Tuple(t) => match &*types[t].types {
            [item] => Value::Fields(vec![lift_one_flat(types, *item, bits)?]),
            _ => bail!("a tuple of one flat value has one item"),
        },
        InterfaceType::Variant(_)
        | InterfaceType::Option(_)
        | InterfaceType::Result(_)
        | InterfaceType::Enum(_) => {
            let count = payloads(types, ty)?.len();
            if low as usize >= count {
                bail!("the plugin returned case {low} of a type with {count}");
            }
            Value::Case(low, None)
        }
        other => bail!("cannot return a value of type {other:?}"),
    })
}
