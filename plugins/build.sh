#!/usr/bin/env bash
# Builds every plugin as a WebAssembly component and copies them to target/plugins/ at the top of
# the repository, where the host and the end-to-end tests look for them. Works from any directory.
#   Rust:       every member of plugins/Cargo.toml (examples, and test plugins under fixtures/)
#   Python:     every directory with an app.py, with sdk-guest/python (componentize-py, pinned)
#   JavaScript: every directory with an app.js, with sdk-guest/js (componentize-js, pinned)
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
        -o -name 'package-lock.json' -o -name 'pyproject.toml' \) \
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

# The Python SDK and its pinned componentize-py, in a virtualenv of their own under target/.
python_sdk() {
    local env="$repo_dir/target/python-sdk" sdk="$repo_dir/sdk-guest/python"
    if [[ ! -x "$env/bin/palisade-py" ]] || ! cmp -s "$sdk/pyproject.toml" "$env/pyproject.toml"; then
        log "installing the Python plugin SDK (componentize-py) in $env"
        python3 -m venv "$env"
        "$env/bin/pip" install --quiet --disable-pip-version-check -e "$sdk[test]" >&2
        cp "$sdk/pyproject.toml" "$env/pyproject.toml"
    fi
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

# Components of plain functions built without the SDK (fixtures/*/generic.py or generic.js, with
# a wit/ of their own whose world is `generic`): the toolchains alone, as another host's
# catalogue has them.
build_plain() {
    local source dir name componentize_py=""
    if compgen -G "$plugins_dir/fixtures/*/generic.py" >/dev/null; then
        componentize_py="$(python_sdk)"
        componentize_py="$(dirname "$componentize_py")/componentize-py"
    fi
    if compgen -G "$plugins_dir/fixtures/*/generic.js" >/dev/null; then
        js_sdk >/dev/null
    fi
    for source in "$plugins_dir"/fixtures/*/generic.py "$plugins_dir"/fixtures/*/generic.js; do
        [[ -e "$source" ]] || continue
        dir="$(dirname "$source")"
        name="$(basename "$dir")"
        case "$source" in
            *.py)
                build_if_changed "$out_dir/$name.wasm" "$(inputs_digest "$dir")" \
                    "$componentize_py" -d "$dir/wit" -w generic \
                    componentize generic -p "$dir" -o "$out_dir/$name.wasm" ;;
            *.js)
                build_if_changed "$out_dir/$name.wasm" "$(inputs_digest "$dir")" \
                    node "$repo_dir/sdk-guest/js/bin/build-plain.mjs" "$source" \
                    --wit "$dir/wit" --world generic -o "$out_dir/$name.wasm" ;;
        esac
    done
}
build_plain
