# Shared by bench/gateway.sh and bench/cluster.sh (sourced): a free port, the stateless call
# wrk sends, and the check that a run measured calls, not refusals.

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# The stateless (2026-07-28) tools/call of hello_greet, as JSON.
stateless_call='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello_greet","arguments":{"name":"bench"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'

# Writes to FILE the wrk script sending that call; `TOKEN` in wrk's environment, when set and
# not empty, goes as a bearer token.
write_call_lua() { # FILE
  cat > "$1" <<LUA
wrk.method = "POST"
wrk.body = '$stateless_call'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "hello_greet"
local token = os.getenv("TOKEN")
if token and token ~= "" then wrk.headers["Authorization"] = "Bearer " .. token end
LUA
}

# A refused call is an HTTP 200 too: exits unless one more call at URL, with the HEADERS
# given (curl -H arguments) and BODY, is served.
check_served() { # NAME URL BODY [HEADER...]
  local name="$1" url="$2" body="$3" last header_args=()
  shift 3
  for header in "$@"; do header_args+=(-H "$header"); done
  last="$(curl -s -X POST "$url" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' "${header_args[@]}" --data "$body")"
  grep -q 'Hello, bench!' <<<"$last" || { echo "$name: calls are not served: $last" >&2; exit 1; }
}

# The headers of the stateless call.
stateless_headers=('MCP-Protocol-Version: 2026-07-28' 'Mcp-Method: tools/call' 'Mcp-Name: hello_greet')
