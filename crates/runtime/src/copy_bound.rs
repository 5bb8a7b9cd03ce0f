//! How much a plugin can make the host copy out of its memory in one step.
//!
//! The canonical ABI lets a plugin hand the host many strings or lists that all point at one
//! buffer: from 1 MiB of memory it can name 64 GiB. wasmtime bounds that itself: every lift
//! (an import's arguments, an export's results) starts with the store's *hostcall fuel* and
//! charges each string's bytes and each list's `len × size_of::<item>()` *before* copying, so
//! the host never copies more than that fuel per lift (the tests below show it, aliased strings
//! and aliased lists, typed and dynamic, export result and import argument).
//!
//! Every store gets its fuel from the plugin's limits ([`hostcall_fuel`]); what an answer then
//! weighs, by the output limit's own rules, is counted after the lift (`output.rs`).

use crate::spec::Limits;

/// How many times the output limit a lift may copy: the host's representation of a list item
/// weighs up to this many times what the output limit counts for it (see the test
/// `every_answer_within_the_output_limit_lifts`).
pub const OUTPUT_FACTOR: u64 = 10;

/// The least hostcall fuel: WASI's own calls (a file write, an HTTP body chunk) move up to a few
/// hundred KiB at once, whatever the output limit.
pub const MIN_FUEL: u64 = 4 << 20;

/// The hostcall fuel of a store of a plugin with `limits`: the most one lift may copy.
pub fn hostcall_fuel(limits: &Limits) -> usize {
    let fuel = limits
        .output_bytes
        .saturating_mul(OUTPUT_FACTOR)
        .max(MIN_FUEL);
    usize::try_from(fuel).unwrap_or(usize::MAX)
}

/// Whether wasmtime stopped a lift because it would have copied more than the store's hostcall
/// fuel (the caller reports it as the output limit).
pub fn exhausted(err: &wasmtime::Error) -> bool {
    // wasmtime's error type for it is private: its message is what identifies it (and the
    // tests below fail if a new wasmtime words it differently).
    err.chain()
        .any(|cause| cause.to_string().contains(EXHAUSTED_MESSAGE))
}

/// What wasmtime's hostcall-fuel error says.
const EXHAUSTED_MESSAGE: &str = "fuel allocated for hostcalls has been exhausted";

#[cfg(test)]
mod tests {
    //! The spike of issue 38: does wasmtime's own lifting stop an aliased answer before copying?

    use super::*;
    use wasmtime::component::{Component, Linker, Val};
    use wasmtime::{Engine, Store};

    /// 1 MiB, referenced 65,536 times: 64 GiB if copied.
    const LEN: u32 = 1 << 20;
    const COUNT: u32 = 1 << 16;
    /// A budget like the default output limit's.
    const FUEL: usize = 32 << 20;

    /// Core code that writes `count` (ptr, len) pairs at 16, all pointing at 2 MiB into memory,
    /// where `LEN` bytes of `a` are.
    fn fill(count: u32) -> String {
        format!(
            r#"(func $fill
                  (local $i i32)
                  (memory.fill (i32.const 0x200000) (i32.const 97) (i32.const {LEN}))
                  (block $done
                    (loop $next
                      (br_if $done (i32.ge_u (local.get $i) (i32.const {count})))
                      (i32.store (i32.add (i32.const 16) (i32.mul (local.get $i) (i32.const 8)))
                                 (i32.const 0x200000))
                      (i32.store (i32.add (i32.const 20) (i32.mul (local.get $i) (i32.const 8)))
                                 (i32.const {LEN}))
                      (local.set $i (i32.add (local.get $i) (i32.const 1)))
                      (br $next))))"#
        )
    }

    /// A component whose `f` returns `count` items of type `item` (`string` or `list<u8>`, the
    /// same layout) that all point at the same `LEN` bytes.
    fn returning(engine: &Engine, item: &str, count: u32) -> Component {
        let fill = fill(count);
        let wat = format!(
            r#"(component
              (core module $m
                (memory (export "memory") 64)
                (func (export "realloc") (param i32 i32 i32 i32) (result i32) unreachable)
                {fill}
                (func (export "f") (result i32)
                  (call $fill)
                  (i32.store (i32.const 0) (i32.const 16))
                  (i32.store (i32.const 4) (i32.const {count}))
                  (i32.const 0)))
              (core instance $i (instantiate $m))
              (func (export "f") (result (list {item}))
                (canon lift (core func $i "f") (memory (core memory $i "memory"))
                  (realloc (core func $i "realloc")))))"#
        );
        Component::new(engine, wat::parse_str(&wat).expect("valid WAT")).expect("valid")
    }

    /// A component whose `run` passes the same aliased list to the host's `sink`.
    fn passing(engine: &Engine, item: &str) -> Component {
        let fill = fill(COUNT);
        let wat = format!(
            r#"(component
              (import "sink" (func $sink (param "items" (list {item}))))
              (core module $libc (memory (export "memory") 64))
              (core instance $libc (instantiate $libc))
              (alias core export $libc "memory" (core memory $memory))
              (core func $sink_lowered (canon lower (func $sink) (memory $memory)))
              (core module $m
                (import "libc" "memory" (memory 64))
                (import "host" "sink" (func $sink (param i32 i32)))
                {fill}
                (func (export "run")
                  (call $fill)
                  (call $sink (i32.const 16) (i32.const {COUNT}))))
              (core instance $i (instantiate $m
                (with "libc" (instance $libc))
                (with "host" (instance (export "sink" (func $sink_lowered))))))
              (func (export "run") (canon lift (core func $i "run"))))"#
        );
        Component::new(engine, wat::parse_str(&wat).expect("valid WAT")).expect("valid")
    }

    fn store(engine: &Engine) -> Store<()> {
        let mut store = Store::new(engine, ());
        store.set_hostcall_fuel(FUEL);
        store
    }

    /// `err` is wasmtime's fuel error, which the host reports as the output limit.
    fn is_fuel_error(err: wasmtime::Error) {
        assert!(exhausted(&err), "not the hostcall fuel error: {err:?}");
        let limits = Limits::default();
        assert!(matches!(
            crate::error::limit_hit(&err, &limits, &crate::limits::Budget::of(&limits, false)),
            Some(crate::error::LimitExceeded::Output { .. })
        ));
    }

    #[test]
    fn aliased_results_stop_at_the_fuel_typed() {
        let engine = Engine::default();
        let mut store = store(&engine);
        let linker = Linker::new(&engine);
        let strings = linker.instantiate(&mut store, &returning(&engine, "string", COUNT));
        let f = strings
            .and_then(|i| i.get_typed_func::<(), (Vec<String>,)>(&mut store, "f"))
            .expect("f");
        is_fuel_error(f.call(&mut store, ()).expect_err("64 GiB of strings"));

        let mut store = self::store(&engine);
        let lists = linker.instantiate(&mut store, &returning(&engine, "(list u8)", COUNT));
        let f = lists
            .and_then(|i| i.get_typed_func::<(), (Vec<Vec<u8>>,)>(&mut store, "f"))
            .expect("f");
        is_fuel_error(f.call(&mut store, ()).expect_err("64 GiB of lists"));
    }

    #[test]
    fn aliased_results_stop_at_the_fuel_dynamic() {
        let engine = Engine::default();
        let linker = Linker::new(&engine);
        for item in ["string", "(list u8)"] {
            let mut store = store(&engine);
            let instance = linker
                .instantiate(&mut store, &returning(&engine, item, COUNT))
                .expect("instance");
            let f = instance.get_func(&mut store, "f").expect("f");
            let mut results = [Val::Bool(false)];
            let err = f.call(&mut store, &[], &mut results).expect_err(item);
            is_fuel_error(err);
        }
    }

    #[test]
    fn aliased_arguments_stop_at_the_fuel() {
        let engine = Engine::default();
        for item in ["string", "(list u8)"] {
            // Typed host function.
            let mut linker = Linker::<()>::new(&engine);
            match item {
                "string" => linker
                    .root()
                    .func_wrap("sink", |_, (_,): (Vec<String>,)| Ok(())),
                _ => linker
                    .root()
                    .func_wrap("sink", |_, (_,): (Vec<Vec<u8>>,)| Ok(())),
            }
            .expect("sink");
            is_fuel_error(run_passing(&engine, &linker, item));

            // Dynamic host function.
            let mut linker = Linker::<()>::new(&engine);
            linker
                .root()
                .func_new("sink", |_, _, _, _| Ok(()))
                .expect("sink");
            is_fuel_error(run_passing(&engine, &linker, item));
        }
    }

    /// Runs the component that passes an aliased list of `item` to `linker`'s `sink`: its error.
    fn run_passing(engine: &Engine, linker: &Linker<()>, item: &str) -> wasmtime::Error {
        let mut store = store(engine);
        let instance = linker
            .instantiate(&mut store, &passing(engine, item))
            .expect("instance");
        let run = instance
            .get_typed_func::<(), ()>(&mut store, "run")
            .expect("run");
        run.call(&mut store, ()).expect_err(item)
    }

    #[test]
    fn every_answer_within_the_output_limit_lifts() {
        // wasmtime charges a list `len × size_of::<item>()`; the output limit counts
        // `ITEM_BYTES` per item (strings alike in both). So an answer within the output limit
        // lifts under `OUTPUT_FACTOR` times it when no list item is larger than this.
        use crate::bindings::{completion, host, prompts, resources, tools, types};
        use crate::output::ITEM_BYTES;
        use std::mem::size_of;
        let items = [
            ("content block", size_of::<types::ContentBlock>()),
            ("resource contents", size_of::<types::ResourceContents>()),
            ("icon", size_of::<types::Icon>()),
            ("role", size_of::<types::Role>()),
            ("string", size_of::<String>()),
            ("tool", size_of::<tools::Tool>()),
            ("resource", size_of::<resources::Resource>()),
            ("template", size_of::<resources::ResourceTemplate>()),
            ("prompt", size_of::<prompts::Prompt>()),
            ("prompt argument", size_of::<prompts::PromptArgument>()),
            ("prompt message", size_of::<prompts::PromptMessage>()),
            ("completion ref", size_of::<completion::CompletionRef>()),
            ("sampling message", size_of::<host::SamplingMessage>()),
            ("question", size_of::<(String, host::InputRequest)>()),
            ("dynamic value", size_of::<Val>()),
        ];
        for (item, size) in items {
            println!("{item}: {size} bytes");
            assert!(
                size as u64 <= OUTPUT_FACTOR * ITEM_BYTES,
                "a {item} is {size} bytes: raise OUTPUT_FACTOR"
            );
        }
    }

    #[test]
    fn within_the_fuel_the_same_answer_lifts_whole() {
        // 16 views of the 1 MiB: 16 MiB, under the fuel of 32 MiB.
        let engine = Engine::default();
        let mut store = store(&engine);
        let instance = Linker::new(&engine)
            .instantiate(&mut store, &returning(&engine, "string", 16))
            .expect("instance");
        let f = instance
            .get_typed_func::<(), (Vec<String>,)>(&mut store, "f")
            .expect("f");
        let (strings,) = f.call(&mut store, ()).expect("16 MiB lifts");
        assert_eq!(strings.len(), 16);
        assert!(strings.iter().all(|s| s.len() == LEN as usize));
    }
}
