//! Test-only plugin: its component imports `palisade-test:extra/waiter` (see `wit/extra.wit`),
//! an interface the host does not provide and whose `subscribe-later` returns the `pollable`
//! resource of `wasi:io/poll`. It exists so the host's tests can check how a plugin with an
//! unprovided import, one that names a WASI resource type, is loaded: `ok` never touches the
//! import and should work; `use_it` calls it and is expected to fail (trap) on the host.

use palisade_sdk::{NoArgs, Tool};

#[allow(clippy::all)]
mod bindings {
    wit_bindgen::generate!({
        world: "unprovided",
        path: "wit",
        // Bindings of its own for wasi:io/poll, just for the `pollable` the import returns.
        with: { "wasi:io/poll@0.2.6": generate },
    });
}

use bindings::palisade_test::extra::waiter;

fn ok(_: NoArgs) -> &'static str {
    "loaded fine"
}

fn use_it(_: NoArgs) -> String {
    let plain = waiter::plain();
    let pollable = waiter::subscribe_later(1);
    pollable.block();
    format!("the unprovided import answered: plain() = {plain}, and the pollable became ready")
}

palisade_sdk::export_plugin! {
    tools: [
        Tool::new("ok", ok).description("Answer without touching the unprovided import"),
        Tool::new("use_it", use_it)
            .description("Call the unprovided import (expected to trap on the host)"),
    ],
}
