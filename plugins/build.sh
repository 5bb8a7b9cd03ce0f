#!/usr/bin/env bash
# Builds every plugin as a WebAssembly component and copies them to target/plugins/ at the top of
# the repository, where the host and the end-to-end tests look for them. Works from any directory.
#   Rust:       every member of plugins/Cargo.toml (examples, and test plugins under fixtures/)
#   Python:     every directory with an app.py, with sdk-guest/python (componentize-py, pinned)
#   JavaScript: every directory with an app.js, with sdk-guest/js (componentize-js, pinned)
#   Go:         every directory with a go.mod (listed in plugins/go.work), with sdk-guest/go
#   C, C++, Zig: every directory with .c, .cpp or .zig files, with sdk-guest/c
# Go, C, C++ and Zig plugins are core modules made components by `palisade componentize`: the
# server's binary, $PALISADE (./dev sets it), else target/debug/palisade, built if missing.
set -euo pipefail

plugins_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_dir="$(dirname "$plugins_dir")"
target=wasm32-wasip2
out_dir="$repo_dir/target/plugins"

log() { printf '==> %s\n' "$*" >&2; }

# A component starts with the magic `\0asm` and the component-model version/layer 0d 00 01 00.
check_component() {
    if [[ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" != "0061736d0d000100" ]]; then
        echo "error: $1 is not a WebAssembly component" >&2
        exit 1
    fi
    echo "$1 ($(wc -c < "$1") bytes)"
}

# A digest of every file under the given paths, to skip rebuilding a Python or JavaScript plugin
# (10 to 20 seconds each) when nothing it is made of changed.
inputs_digest() {
    find "$@" -type f \( -name '*.py' -o -name '*.js' -o -name '*.mjs' -o -name '*.wit' \
        -o -name 'package-lock.json' -o -name 'pyproject.toml' -o -name '*.go' -o -name 'go.mod' \
        -o -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.zig' -o -name '*.sh' \) \
        -not -path '*/node_modules/*' -not -path '*/__pycache__/*' -not -path '*/tests/*' -not -path '*/test/*' \
        -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1
}

# Builds with `$@` unless `out`'s recorded inputs digest is `digest`.
build_if_changed() {
    local out="$1" digest="$2"
    shift 2
    if [[ -f "$out" && "$(cat "$out.inputs" 2>/dev/null)" == "$digest" ]]; then
        echo "$out (up to date)"
        return
    fi
    rm -f "$out.inputs"
    "$@"
    check_component "$out"
    echo "$digest" > "$out.inputs"
}

build_rust() {
    if ! rustup target list --installed | grep -qx "$target"; then
        rustup target add "$target"
    fi
    cargo build --manifest-path "$plugins_dir/Cargo.toml" --release --target "$target"
    for manifest in "$plugins_dir"/*/Cargo.toml "$plugins_dir"/fixtures/*/Cargo.toml; do
        name="$(basename "$(dirname "$manifest")")"
        # cargo names the library with `_` where the package has `-`.
        cp "$plugins_dir/target/$target/release/${name//-/_}.wasm" "$out_dir/$name.wasm"
        check_component "$out_dir/$name.wasm"
    done
}

# A virtualenv `env` holding `pip install ARGS...`, made again when the file of pins `pins`
# changes: a copy of it is kept in the virtualenv once the install succeeded. `what` is for the
# log line.
pinned_venv() {
    local env="$1" pins="$2" what="$3"
    shift 3
    if ! cmp -s "$pins" "$env/$(basename "$pins")"; then
        log "installing $what in $env"
        python3 -m venv "$env"
        "$env/bin/pip" install --quiet --disable-pip-version-check "$@" >&2
        cp "$pins" "$env/$(basename "$pins")"
    fi
}

# The Python SDK and its pinned componentize-py, in a virtualenv of their own under target/.
python_sdk() {
    local env="$repo_dir/target/python-sdk" sdk="$repo_dir/sdk-guest/python"
    pinned_venv "$env" "$sdk/pyproject.toml" "the Python plugin SDK (componentize-py)" -e "$sdk[test]"
    echo "$env/bin/palisade-py"
}

# Builds every plugins/*/APP (app.py or app.js) with `$@ APP --wit WIT -o OUT`, skipping those whose
# inputs (the app's folder, the SDK in `sdk`, the WIT contract) did not change.
build_apps() {
    local app_file="$1" sdk="$2"
    shift 2
    local apps=("$plugins_dir"/*/"$app_file" "$plugins_dir"/fixtures/*/"$app_file")
    for app in "${apps[@]}"; do
        [[ -e "$app" ]] || continue
        local dir name
        dir="$(dirname "$app")"
        name="$(basename "$dir")"
        build_if_changed "$out_dir/$name.wasm" "$(inputs_digest "$dir" "$sdk" "$repo_dir/wit")" \
            "$@" build "$app" --wit "$repo_dir/wit" -o "$out_dir/$name.wasm"
    done
}

# The JavaScript SDK's pinned componentize-js, installed from its lock file.
js_sdk() {
    local sdk="$repo_dir/sdk-guest/js"
    command -v npm >/dev/null || { echo "npm not found: install Node.js (JavaScript plugins are built with it)" >&2; exit 1; }
    if [[ ! -d "$sdk/node_modules" ]] || ! cmp -s "$sdk/package-lock.json" "$sdk/node_modules/.package-lock.json.copy"; then
        log "installing the JavaScript plugin SDK (componentize-js)"
        npm ci --prefix "$sdk" --no-audit --no-fund --loglevel=error >&2
        cp "$sdk/package-lock.json" "$sdk/node_modules/.package-lock.json.copy"
    fi
    echo "$sdk/bin/palisade-js.mjs"
}

# ---- Go, C, C++ and Zig ----------------------------------------------------------------------

# Go and Zig, pinned in plugins/toolchains.txt, from PyPI into a virtualenv under target/.
lang_venv() {
    local env="$repo_dir/target/lang-venv" pins="$plugins_dir/toolchains.txt"
    pinned_venv "$env" "$pins" "Go and Zig (plugins/toolchains.txt, from PyPI)" -r "$pins"
    echo "$env"
}

# The runtime of wit-bindgen's Go bindings (go.bytecodealliance.org/pkg v0.4.0) ships inside the
# wit-bindgen-go crate; plugins/go.work points the module at it, so no Go proxy is needed.
GO_PKG_CRATE="wit-bindgen-go-0.63.0"
GO_PKG_SHA256="baa1f6a09b5901067987f0c27d32e5e917f4946f2aafa1307500467ed3f74a33"
go_pkg() {
    local deps="$repo_dir/target/go-deps"
    [[ -f "$deps/$GO_PKG_CRATE/src/pkg/go.mod" ]] && return
    log "fetching $GO_PKG_CRATE from crates.io (the Go bindings' runtime)"
    mkdir -p "$deps"
    curl -sSfL --retry 3 "https://static.crates.io/crates/${GO_PKG_CRATE%-*}/$GO_PKG_CRATE.crate" -o "$deps/pkg.crate"
    echo "$GO_PKG_SHA256  $deps/pkg.crate" | sha256sum -c --quiet - \
        || { echo "error: $GO_PKG_CRATE.crate does not have the pinned SHA-256" >&2; exit 1; }
    tar -xzf "$deps/pkg.crate" -C "$deps"
    rm "$deps/pkg.crate"
}

# Debian's clang 19 for wasm32-wasi (C, C++), installed when missing.
clang_toolchain() {
    local missing=()
    [[ -x /usr/bin/clang-19 ]] || missing+=(clang-19)
    [[ -x /usr/bin/wasm-ld-19 ]] || missing+=(lld-19)
    [[ -d /usr/include/wasm32-wasi ]] || missing+=(wasi-libc)
    compgen -G "/usr/lib/llvm-19/lib/clang/19/lib/wasi/libclang_rt.builtins-wasm32.a" >/dev/null \
        || missing+=(libclang-rt-19-dev-wasm32)
    [[ -d /usr/lib/wasm32-wasi/c++/v1 || -d /usr/include/wasm32-wasi/c++/v1 ]] \
        || missing+=(libc++-19-dev-wasm32 libc++abi-19-dev-wasm32)
    [[ ${#missing[@]} == 0 ]] && return
    command -v apt-get >/dev/null || { echo "error: missing ${missing[*]}: install them (C and C++ plugins are built with them)" >&2; exit 1; }
    log "installing ${missing[*]} (Debian packages) for the C and C++ plugins"
    local sudo=""
    [[ "$(id -u)" == 0 ]] || sudo="sudo"
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >&2 \
        || { $sudo apt-get update >&2 && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >&2; }
}

palisade_bin() {
    if [[ -n "${PALISADE:-}" ]]; then
        echo "$PALISADE"
        return
    fi
    if [[ ! -x "$repo_dir/target/debug/palisade" ]]; then
        log "building palisade (its componentize command makes the Go, C and Zig plugins components)"
        cargo build --manifest-path "$repo_dir/Cargo.toml" -p palisade >&2
    fi
    echo "$repo_dir/target/debug/palisade"
}

# The plugin directories of one language: those with a file matching `pattern`.
lang_dirs() {
    local pattern="$1" dir
    for dir in "$plugins_dir"/*/ "$plugins_dir"/fixtures/*/; do
        if compgen -G "$dir$pattern" >/dev/null; then echo "${dir%/}"; fi
    done
}

build_native_langs() {
    local go_dirs c_dirs dir name env zig palisade
    mapfile -t go_dirs < <(lang_dirs go.mod)
    mapfile -t c_dirs < <(for p in '*.c' '*.cpp' '*.zig'; do lang_dirs "$p"; done | sort -u)
    [[ ${#go_dirs[@]} == 0 && ${#c_dirs[@]} == 0 ]] && return
    env="$(lang_venv)"
    zig="$("$env/bin/python" -c 'import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')"
    palisade="$(palisade_bin)"
    if [[ ${#go_dirs[@]} -gt 0 ]]; then
        go_pkg
    fi
    for dir in "${go_dirs[@]}"; do
        name="$(basename "$dir")"
        grep -q "^[[:space:]]*\./${dir#"$plugins_dir"/}\$" "$plugins_dir/go.work" \
            || { echo "error: plugins/go.work does not use ./${dir#"$plugins_dir"/}: add it" >&2; exit 1; }
        build_if_changed "$out_dir/$name.wasm" \
            "$(inputs_digest "$dir" "$repo_dir/sdk-guest/go" "$repo_dir/sdk-guest/wit" "$repo_dir/wit")" \
            env GO="$env/bin/go" PALISADE="$palisade" GOPROXY=off GOTOOLCHAIN=local GOFLAGS= \
            "$repo_dir/sdk-guest/go/build.sh" "$dir" "$out_dir/$name.wasm"
    done
    for dir in "${c_dirs[@]}"; do
        name="$(basename "$dir")"
        if ! compgen -G "$dir/*.zig" >/dev/null; then
            clang_toolchain
        fi
        build_if_changed "$out_dir/$name.wasm" \
            "$(inputs_digest "$dir" "$repo_dir/sdk-guest/c" "$repo_dir/sdk-guest/wit" "$repo_dir/wit")" \
            env ZIG="$zig" PALISADE="$palisade" \
            "$repo_dir/sdk-guest/c/build.sh" "$dir" "$out_dir/$name.wasm"
    done
}

# --toolchains: install what the plugins are built with (for ./dev lint), build nothing.
if [[ "${1:-}" == "--toolchains" ]]; then
    js_sdk >/dev/null
    lang_venv >/dev/null
    go_pkg
    exit 0
fi

mkdir -p "$out_dir"
build_rust
# (The SDK paths are assigned first: a failed install must stop the script, which `set -e` does
# not do for a command substitution inside a command's arguments.)
if compgen -G "$plugins_dir/*/app.py" >/dev/null; then
    palisade_py="$(python_sdk)"
    build_apps app.py "$repo_dir/sdk-guest/python" "$palisade_py"
fi
if compgen -G "$plugins_dir/*/app.js" >/dev/null; then
    palisade_js="$(js_sdk)"
    build_apps app.js "$repo_dir/sdk-guest/js" node "$palisade_js"
fi

# Components built without the SDK, with the toolchains alone: fixtures/*/generic.py or
# generic.js, plain functions with a wit/ of their own whose world is `generic`, as another host's
# catalogue has them; and fixtures/*/plain.py or plain.js, written against the WIT contract's
# `tool-provider` world by hand, which the benchmark sets against the SDK's plugins.
build_plain() {
    local source dir name componentize_py="" wit world module
    if compgen -G "$plugins_dir/fixtures/*/generic.py" >/dev/null || compgen -G "$plugins_dir/fixtures/*/plain.py" >/dev/null; then
        componentize_py="$(python_sdk)"
        componentize_py="$(dirname "$componentize_py")/componentize-py"
    fi
    if compgen -G "$plugins_dir/fixtures/*/generic.js" >/dev/null || compgen -G "$plugins_dir/fixtures/*/plain.js" >/dev/null; then
        js_sdk >/dev/null
    fi
    for source in "$plugins_dir"/fixtures/*/generic.{py,js} "$plugins_dir"/fixtures/*/plain.{py,js}; do
        [[ -e "$source" ]] || continue
        dir="$(dirname "$source")"
        name="$(basename "$dir")"
        module="$(basename "${source%.*}")"
        case "$module" in
            generic) wit="$dir/wit" world=generic ;;
            *) wit="$repo_dir/wit" world=tool-provider ;;
        esac
        case "$source" in
            *.py)
                build_if_changed "$out_dir/$name.wasm" "$(inputs_digest "$dir" "$wit")" \
                    "$componentize_py" -d "$wit" -w "$world" \
                    componentize "$module" -p "$dir" -o "$out_dir/$name.wasm" ;;
            *.js)
                build_if_changed "$out_dir/$name.wasm" "$(inputs_digest "$dir" "$wit")" \
                    node "$repo_dir/sdk-guest/js/bin/build-plain.mjs" "$source" \
                    --wit "$wit" --world "$world" -o "$out_dir/$name.wasm" ;;
        esac
    done
}
build_plain
build_native_langs
