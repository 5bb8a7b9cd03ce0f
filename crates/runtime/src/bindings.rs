//! Host-side bindings of the `palisade:plugin` contract, generated from `wit/`.
//!
//! Only the per-interface pieces are used: a component may export any subset of the interfaces, so
//! each export is looked up on its own (`GuestIndices::new`) instead of through the `plugin` world.

// Generated code: the WIT files in wit/ document every item.
#![allow(missing_docs)]

wasmtime::component::bindgen!({
    world: "plugin",
    path: "../../wit",
    imports: { default: async | trappable },
    exports: { default: async },
    // To tell whether a plugin's tool definitions changed (they are pinned at load).
    additional_derives: [PartialEq],
});

pub use exports::palisade::plugin::{completion, prompts, resources, tools};
pub use palisade::plugin::{host, types};
