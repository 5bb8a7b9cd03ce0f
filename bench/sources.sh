#!/usr/bin/env bash
# What plugins from a registry cost: the time `palisade add` takes against a local registry, and
# warm start (serve until it answers `initialize`, compile cache warm) for one plugin given as a
# path, as a registry source locked by tag or by digest, and as signed ones (signature verified at
# every load).
#
#   bench/sources.sh            (after a release build: cargo build --release -p palisade)
#
# Needs docker-registry, openssl and hyperfine (Debian packages). Prints hyperfine's tables.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
bin="$repo/target/release/palisade"
wasm="$repo/target/plugins/hello.wasm"
[[ -x "$bin" && -f "$wasm" ]] || { echo "build first: ./dev serve (or cargo build --release -p palisade and plugins/build.sh)" >&2; exit 1; }
for tool in /usr/bin/docker-registry hyperfine openssl; do
  command -v "$tool" >/dev/null || { echo "missing $tool (Debian packages docker-registry, hyperfine, openssl)" >&2; exit 1; }
done

work="$(mktemp -d)"
trap 'kill "$registry_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
cat > "$work/registry.yml" <<YML
version: 0.1
log:
  level: error
storage:
  filesystem:
    rootdirectory: $work/registry
http:
  addr: 127.0.0.1:$port
YML
/usr/bin/docker-registry serve "$work/registry.yml" >/dev/null 2>&1 &
registry_pid=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/v2/" >/dev/null && break; sleep 0.1; done

cache="$work/cache"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/key.pem" 2>/dev/null
openssl pkey -in "$work/key.pem" -pubout -out "$work/key.pub" 2>/dev/null
"$bin" publish "$wasm" "oci://127.0.0.1:$port/tools/hello:1.0" --sign-key "$work/key.pem" --cache-dir "$cache" >/dev/null 2>&1

mkdir -p "$work/path" "$work/source" "$work/pinned" "$work/signed" "$work/signed-pinned" "$work/add"
printf '[plugins.hello]\npath = "%s"\n' "$wasm" > "$work/path/palisade.toml"
for kind in source pinned signed signed-pinned add; do
  printf '[sources]\nstore_dir = "%s/store"\n' "$work" > "$work/$kind/palisade.toml"
  cp "$work/$kind/palisade.toml" "$work/$kind/base.toml"
done
ref="oci://127.0.0.1:$port/tools/hello:1.0"
(cd "$work/source" && "$bin" add "$ref" --yes --cache-dir "$cache" >/dev/null)
(cd "$work/signed" && "$bin" add "$ref" --key "$work/key.pub" --yes --cache-dir "$cache" >/dev/null)
digest="$(grep '^digest' "$work/source/palisade.lock" | cut -d'"' -f2)"
(cd "$work/pinned" && "$bin" add "oci://127.0.0.1:$port/tools/hello@$digest" --name hello --yes --cache-dir "$cache" >/dev/null)
(cd "$work/signed-pinned" && "$bin" add "oci://127.0.0.1:$port/tools/hello@$digest" --name hello --key "$work/key.pub" --yes --cache-dir "$cache" >/dev/null)

echo "## palisade add (resolve, download, verify nothing, compile from cache, review, write)"
hyperfine --warmup 2 --runs 20 \
  --prepare "cp $work/add/base.toml $work/add/palisade.toml; rm -f $work/add/palisade.lock" \
  "cd $work/add && $bin add $ref --yes --cache-dir $cache"

init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}'
echo "$init" > "$work/init.jsonl"
echo "## warm start: a path; a source locked by tag (asks the registry what the tag names);"
echo "## one locked by digest (no question); by tag and by digest with the signature verified at load"
# stdin holds one initialize line: serve answers it and exits at end of input.
hyperfine --warmup 3 --runs 30 \
  -n path "$bin serve --config $work/path/palisade.toml --cache-dir $cache --no-watch < $work/init.jsonl" \
  -n tag-source "$bin serve --config $work/source/palisade.toml --cache-dir $cache --no-watch < $work/init.jsonl" \
  -n digest-source "$bin serve --config $work/pinned/palisade.toml --cache-dir $cache --no-watch < $work/init.jsonl" \
  -n signed-tag-source "$bin serve --config $work/signed/palisade.toml --cache-dir $cache --no-watch < $work/init.jsonl" \
  -n signed-digest-source "$bin serve --config $work/signed-pinned/palisade.toml --cache-dir $cache --no-watch < $work/init.jsonl"
