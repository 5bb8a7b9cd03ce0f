//! What `palisade-bench` measures besides a trivial call: a CPU-bound tool (for the cost of fuel
//! metering) and large payloads, as a tool result and as a resource.

use palisade_sdk::{Resource, Tool};
use schemars::JsonSchema;
use serde::Deserialize;

/// The size of the `bench://blob` resource: 1 MiB.
const BLOB_BYTES: usize = 1 << 20;

#[derive(Deserialize, JsonSchema)]
struct Primes {
    /// Count the primes below this number.
    below: u32,
}

/// Trial division on purpose: a tight loop of arithmetic and branches, the code fuel metering
/// slows down the most.
fn primes(args: Primes) -> String {
    let count = (2..args.below)
        .filter(|&n| (2..).take_while(|d| d * d <= n).all(|d| n % d != 0))
        .count();
    count.to_string()
}

#[derive(Deserialize, JsonSchema)]
struct Blob {
    /// How many bytes of text to return.
    bytes: u32,
}

fn blob(args: Blob) -> String {
    "x".repeat(args.bytes as usize)
}

palisade_sdk::export_plugin! {
    tools: [
        Tool::new("primes", primes)
            .description("Count the primes below a number, by trial division (CPU-bound)")
            .read_only(true),
        Tool::new("blob", blob)
            .description("Return that many bytes of text")
            .read_only(true),
    ],
    resources: [
        Resource::new("bench://blob", "blob", || "x".repeat(BLOB_BYTES)).mime_type("text/plain"),
    ],
}
