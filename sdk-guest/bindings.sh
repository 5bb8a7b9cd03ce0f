#!/usr/bin/env bash
# Generates the Go and C SDKs' bindings from sdk-guest/wit/sdk.wit (the contract in wit/, and the
# WASI packages the SDKs import, kept in the Python SDK's palisade_sdk/wasi_wit/deps) with the
# pinned wit-bindgen, which `./dev` installs into target/lang-tools:
#   sdk-guest/bindings.sh          rewrite sdk-guest/go/internal/wit and sdk-guest/c/bindings
#   sdk-guest/bindings.sh --check  fail, with the difference, when the committed ones are stale
# The generated code is committed, so building a plugin needs only Go or clang (and palisade).
set -euo pipefail
sdk="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$sdk")"
wit_bindgen="${WIT_BINDGEN:-$repo/target/lang-tools/bin/wit-bindgen}"
go_module="github.com/palisade-mcp/palisade/sdk-guest/go"

[[ -x "$wit_bindgen" ]] || { echo "wit-bindgen not found at $wit_bindgen: run ./dev lint (it installs it)" >&2; exit 1; }

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/wit/deps/palisade-plugin" "$stage/out/go" "$stage/out/c"
cp "$repo"/wit/*.wit "$stage/wit/deps/palisade-plugin/"
for dep in "$sdk"/python/palisade_sdk/wasi_wit/deps/*.wit; do
    mkdir -p "$stage/wit/deps/$(basename "$dep" .wit)"
    cp "$dep" "$stage/wit/deps/$(basename "$dep" .wit)/"
done
cp "$sdk/wit/sdk.wit" "$stage/wit/"

# gofmt formats the Go output when it is on PATH; the Go toolchain of ./dev is.
goroot="$("$repo/target/lang-venv/bin/go" env GOROOT 2>/dev/null || true)"
PATH="${goroot:+$goroot/bin:}$PATH" "$wit_bindgen" go "$stage/wit" --world plugin --quiet \
    --pkg-name "$go_module/internal/wit" --out-dir "$stage/out/go" 2>&1 | { grep -v "^Generating" || true; } >&2
"$wit_bindgen" c "$stage/wit" --world plugin --no-object-file --out-dir "$stage/out/c" 2>&1 | { grep -v "^Generating" || true; } >&2
# wit-bindgen writes a go.mod for a standalone module; the SDK's own go.mod is the module.
rm -f "$stage/out/go/go.mod"

go_dir="$sdk/go/internal/wit"
c_dir="$sdk/c/bindings"
if [[ "${1:-}" == "--check" ]]; then
    status=0
    # The export_* packages beside the generated ones are the SDK's own.
    diff -r -x 'export_*' "$stage/out/go" "$go_dir" || status=1
    diff -r "$stage/out/c" "$c_dir" || status=1
    if [[ $status != 0 ]]; then
        echo "the committed bindings are stale: run sdk-guest/bindings.sh" >&2
        exit 1
    fi
    echo "bindings up to date"
    exit 0
fi
rm -rf "$go_dir/imports" "$go_dir/exports/wit_exports" "$c_dir"
mkdir -p "$go_dir" "$c_dir"
cp -r "$stage/out/go/." "$go_dir/"
cp -r "$stage/out/c/." "$c_dir/"
echo "wrote $go_dir and $c_dir"
