#!/usr/bin/env bash
# What [cluster] costs and gives, in one run: the same stateless (2026-07-28) tools/call of
# hello_greet, driven by wrk over HTTP, against each setting in turn:
#   alone           one replica, no [cluster]: limits counted in the process
#   shared-limits   one replica with [cluster]: every call admitted by a script in Redis
#   nginx-1         the same replica behind nginx (the balancer's own cost)
#   nginx-3         three replicas behind nginx, round robin, sharing Redis
#   nginx-3-session the same, each call in one 2025-11-25 session (Mcp-Session-Id): every
#                   request reads the session's record from Redis too
# and what Redis does per call: EVALSHA calls per tool call and their time inside Redis
# (INFO commandstats), and a PING's round trip from here (redis-benchmark, one connection).
#
#   bench/cluster.sh [SECONDS] [CONNECTIONS]   (default 10 s, 16 connections; after ./dev test
#                                               and cargo build --release -p palisade)
#
# Needs wrk, nginx and redis-server (Debian packages; ./dev test installs the last two).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-10}"
connections="${2:-16}"
bin="$repo/target/release/palisade"
for needed in "$bin" "$repo/target/plugins/hello.wasm"; do
  [[ -f "$needed" ]] || { echo "missing $needed: run ./dev test and cargo build --release -p palisade" >&2; exit 1; }
done
for program in wrk redis-server redis-cli redis-benchmark; do
  command -v "$program" >/dev/null || { echo "missing $program (Debian packages wrk, redis-server)" >&2; exit 1; }
done
nginx="$(command -v nginx || echo /usr/sbin/nginx)"
[[ -x "$nginx" ]] || { echo "missing nginx (Debian package nginx-light)" >&2; exit 1; }

work="$(mktemp -d)"
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; pkill -f -- "--config $work/" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
source "$repo/bench/common.sh"

redis_port="$(free_port)"
redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" \
  --logfile redis.log < /dev/null &
pids+=($!)
for _ in $(seq 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
rcli() { redis-cli -p "$redis_port" "$@"; }

write_call_lua "$work/call.lua"

# Limits high enough that nothing is refused: what is measured is counting, not refusing.
limits='[plugins.hello.limits]\ncalls_per_minute = 100000000\ncalls_per_minute_per_client = 100000000\nconcurrent_calls = 64\n'
replicas=()
start_replica() { # NAME CLUSTER(yes|no) -> appends its port to replicas
  local name="$1" cluster="" port
  port="$(free_port)"
  [[ "$2" == yes ]] && cluster="[cluster]\nredis = \"redis://127.0.0.1:$redis_port/0\"\n"
  printf '[server]\nwatch = false\n\n[server.http]\nlisten = "127.0.0.1:%s"\n\n%b\n[plugins.hello]\npath = "%s"\n\n%b' \
    "$port" "$cluster" "$repo/target/plugins/hello.wasm" "$limits" > "$work/$name.toml"
  RUST_LOG=warn "$bin" serve --config "$work/$name.toml" --cache-dir "$work/cache" \
    2> "$work/$name.log" < /dev/null &
  pids+=($!)
  for _ in $(seq 300); do
    [[ "$(curl -s "http://127.0.0.1:$port/readyz" 2>/dev/null)" == '{"status":"ready"}' ]] && break
    sleep 0.1
  done
  replicas+=("$port")
}
stop_replicas() { pkill -f -- "--config $work/" || true; replicas=(); sleep 0.5; }
# Sets nginx_port and nginx_pid (not through $(...), which would wait for nginx's output).
start_nginx() {
  local port upstreams=""
  port="$(free_port)"
  for p in "${replicas[@]}"; do upstreams+="server 127.0.0.1:$p; "; done
  mkdir -p "$work/nginx"
  cat > "$work/nginx/nginx.conf" <<CONF
daemon off; master_process off; worker_processes 1; pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
  access_log off; client_body_temp_path $work/nginx/body; proxy_temp_path $work/nginx/proxy;
  upstream palisade { $upstreams keepalive 64; }
  server { listen 127.0.0.1:$port;
    location / { proxy_pass http://palisade; proxy_http_version 1.1; proxy_set_header Connection "";
                 proxy_set_header Host \$http_host; proxy_buffering off; } }
}
CONF
  "$nginx" -p "$work/nginx" -c "$work/nginx/nginx.conf" < /dev/null &
  nginx_pid=$!
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.1; done
  nginx_port="$port"
}

# Ids unique within the session (a session refuses an id already in flight).
cat > "$work/session-call.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
wrk.headers["Mcp-Session-Id"] = os.getenv("SESSION")
math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
local prefix = tostring(math.random(1, 1000000000))
local n = 0
request = function()
  n = n + 1
  local body = '{"jsonrpc":"2.0","id":"' .. prefix .. '-' .. n ..
    '","method":"tools/call","params":{"name":"hello_greet","arguments":{"name":"bench"}}}'
  return wrk.format(nil, nil, nil, body)
end
LUA

# A 2025-11-25 session through the balancer at port $1; prints its id.
new_session() {
  local url="http://127.0.0.1:$1/mcp" id
  id="$(curl -s -D - -o /dev/null -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' \
    "$url" | tr -d '\r' | awk -F': ' 'tolower($1) == "mcp-session-id" {print $2}')"
  curl -s -o /dev/null -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H 'MCP-Protocol-Version: 2025-11-25' -H "Mcp-Session-Id: $id" \
    -d '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$url"
  echo "$id"
}

measure() { # NAME PORT [SCRIPT]
  local out evals usec calls getex script="${3:-call.lua}"
  rcli config resetstat >/dev/null
  out="$(wrk -t2 -c"$connections" -d"${seconds}s" --latency -s "$work/$script" "http://127.0.0.1:$2/mcp")"
  if grep -q "Non-2xx" <<<"$out"; then echo "$1: requests failed:" >&2; echo "$out" >&2; exit 1; fi
  if [[ "$script" == call.lua ]]; then
    check_served "$1" "http://127.0.0.1:$2/mcp" "$stateless_call" "${stateless_headers[@]}"
  else
    check_served "$1" "http://127.0.0.1:$2/mcp" \
      '{"jsonrpc":"2.0","id":"last","method":"tools/call","params":{"name":"hello_greet","arguments":{"name":"bench"}}}' \
      'MCP-Protocol-Version: 2025-11-25' "Mcp-Session-Id: $SESSION"
  fi
  calls="$(awk '/requests in/ {print $1}' <<<"$out")"
  evals="$(rcli info commandstats | tr -d '\r' | sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),usec=[0-9]*,usec_per_call=\([0-9.]*\).*/\1 \2/p')"
  getex="$(rcli info commandstats | tr -d '\r' | sed -n 's/^cmdstat_getex:calls=\([0-9]*\),.*/\1/p')"
  printf '%-16s %9s req/s   p50 %8s   p99 %8s   EVALSHA/call %5s   in Redis %6s us   GETEX/call %5s\n' "$1" \
    "$(awk '/Requests\/sec/ {print $2}' <<<"$out")" \
    "$(awk '$1 == "50%" {print $2}' <<<"$out")" "$(awk '$1 == "99%" {print $2}' <<<"$out")" \
    "$(awk -v c="$calls" '{ if (c > 0) printf "%.2f", $1 / c; else print "-" }' <<<"${evals:-0 0}")" \
    "$(awk '{print $2}' <<<"${evals:-0 -}")" \
    "$(awk -v c="$calls" -v g="${getex:-0}" 'BEGIN { if (c > 0) printf "%.2f", g / c; else print "-" }')"
}

echo "wrk: ${seconds}s, ${connections} connections, stateless tools/call hello_greet ($(nproc) cores)"
echo "Redis PING round trip from here (one connection): $(redis-benchmark -p "$redis_port" -t ping_mbulk -n 20000 -c 1 --csv \
  | tail -1 | awk -F'"' '{ printf "%.1f us", 1e6 / $4 }')"
start_replica alone no; measure alone "${replicas[0]}"; stop_replicas
start_replica shared yes; measure shared-limits "${replicas[0]}"
start_nginx; measure nginx-1 "$nginx_port"; kill "$nginx_pid"; wait "$nginx_pid" 2>/dev/null || true; stop_replicas
for n in 1 2 3; do start_replica "r$n" yes; done
start_nginx; measure nginx-3 "$nginx_port"
SESSION="$(new_session "$nginx_port")" measure nginx-3-session "$nginx_port" session-call.lua
kill "$nginx_pid"; wait "$nginx_pid" 2>/dev/null || true
