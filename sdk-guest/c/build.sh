#!/usr/bin/env bash
# Builds a C, C++ or Zig plugin written with this SDK into a Palisade component:
#   sdk-guest/c/build.sh DIR OUT.wasm
# DIR holds the plugin's sources: *.c (C), *.cpp or *.cc (C++), or Zig with main.zig as its root (or
# its only .zig file). They are compiled with this SDK for wasm32-wasi as a reactor (a library:
# the host calls its exports) and made a component by `palisade componentize`.
# Tools, found on PATH unless named: clang-19 and clang++-19 with Debian's wasi-libc (C, C++;
# $CLANG, $CLANGXX, $WASI_SYSROOT), zig 0.17 ($ZIG), palisade ($PALISADE).
set -euo pipefail
sdk="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[[ $# == 2 ]] || { echo "usage: $0 DIR OUT.wasm" >&2; exit 2; }
dir="$(cd "$1" && pwd)"
out="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
# Absolute: the Zig build runs in a directory of its own.
absolute() { if [[ "$1" == */* ]]; then echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; else echo "$1"; fi; }
palisade="$(absolute "${PALISADE:-palisade}")"
sysroot="${WASI_SYSROOT:-/usr}"
sdk_sources=("$sdk/palisade.c" "$sdk/palisade_json.c" "$sdk/bindings/plugin.c")
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

need() {
    command -v "$1" >/dev/null || { echo "error: $1 not found: $2" >&2; exit 1; }
}

shopt -s nullglob
c_files=("$dir"/*.c)
cpp_files=("$dir"/*.cpp "$dir"/*.cc)
zig_files=("$dir"/*.zig)
core="$work/plugin.core.wasm"
if [[ ${#zig_files[@]} -gt 0 ]]; then
    zig="$(absolute "${ZIG:-zig}")"
    need "$zig" "install Zig 0.17 (pip install ziglang==0.17.1 gives python -m ziglang), or set ZIG"
    root="$dir/main.zig"
    if [[ ! -f "$root" ]]; then
        [[ ${#zig_files[@]} == 1 ]] || { echo "error: $dir has several .zig files and no main.zig" >&2; exit 1; }
        root="${zig_files[0]}"
    fi
    # The SDK's header as Zig declarations, imported by the plugin as "palisade".
    "$zig" translate-c -target wasm32-wasi -lc -I"$sdk" "$sdk/palisade.h" > "$work/palisade.zig"
    (cd "$work" && "$zig" build-exe -target wasm32-wasi -mexec-model=reactor -fno-entry \
        -O ReleaseSmall -lc --dep palisade -I"$sdk" "${sdk_sources[@]}" "${c_files[@]}" \
        -Mroot="$root" -Mpalisade="$work/palisade.zig" --name plugin.core)
elif [[ ${#cpp_files[@]} -gt 0 ]]; then
    clangxx="${CLANGXX:-clang++-19}"
    need "$clangxx" "install Debian's clang-19, lld-19, wasi-libc, libclang-rt-19-dev-wasm32, libc++-19-dev-wasm32 and libc++abi-19-dev-wasm32, or set CLANGXX"
    # Debian's wasi-libc has no exceptions or setjmp support.
    "$clangxx" --target=wasm32-wasi --sysroot="$sysroot" -mexec-model=reactor -O2 -fno-exceptions \
        -I"$sdk" -Wall -o "$core" "${cpp_files[@]}" -x c "${c_files[@]}" "${sdk_sources[@]}"
elif [[ ${#c_files[@]} -gt 0 ]]; then
    clang="${CLANG:-clang-19}"
    need "$clang" "install Debian's clang-19, lld-19, wasi-libc and libclang-rt-19-dev-wasm32, or set CLANG"
    "$clang" --target=wasm32-wasi --sysroot="$sysroot" -mexec-model=reactor -O2 -I"$sdk" -Wall \
        -o "$core" "${c_files[@]}" "${sdk_sources[@]}"
else
    echo "error: $dir has no .c, .cpp or .zig files" >&2
    exit 1
fi
"$palisade" componentize "$core" -o "$out"
