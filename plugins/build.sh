#!/usr/bin/env bash
# Builds every plugin as a WebAssembly component and copies them to target/plugins/ at the top of
# the repository, where the host and the end-to-end tests look for them. Works from any directory.
set -euo pipefail

plugins_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_dir="$(dirname "$plugins_dir")"
target=wasm32-wasip2
out_dir="$repo_dir/target/plugins"

if ! rustup target list --installed | grep -qx "$target"; then
    rustup target add "$target"
fi

cargo build --manifest-path "$plugins_dir/Cargo.toml" --release --target "$target"

mkdir -p "$out_dir"
# The members of plugins/Cargo.toml, one per directory with a Cargo.toml.
for manifest in "$plugins_dir"/*/Cargo.toml; do
    name="$(basename "$(dirname "$manifest")")"
    wasm="$plugins_dir/target/$target/release/$name.wasm"
    # A component starts with the magic `\0asm` and the component-model version/layer 0d 00 01 00.
    if [[ "$(head -c 8 "$wasm" | od -An -tx1 | tr -d ' \n')" != "0061736d0d000100" ]]; then
        echo "error: $wasm is not a WebAssembly component" >&2
        exit 1
    fi
    cp "$wasm" "$out_dir/$name.wasm"
    echo "$out_dir/$name.wasm ($(wc -c < "$out_dir/$name.wasm") bytes)"
done
