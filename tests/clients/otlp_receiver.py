"""An OTLP/HTTP trace receiver for end-to-end tests, built on the official opentelemetry-proto.

Usage: otlp_receiver.py PORT --out FILE   (PORT 0 picks a free one)

Prints `listening http://127.0.0.1:PORT` first, then accepts `POST /v1/traces` as
application/x-protobuf or application/json (OTLP JSON, hex ids), optionally gzip-encoded,
and answers 200 with an empty ExportTraceServiceResponse in the request's encoding. Every
span received becomes one JSON line in FILE. Exits on SIGTERM, or when a piped stdin closes.
"""

import argparse
import base64
import json
import os
import signal
import stat
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

MAX_BODY = 16 * 1024 * 1024
ID_KEYS = {"traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id"}
PROTOBUF, JSON = "application/x-protobuf", "application/json"


def hex_ids_to_base64(node):
    """OTLP JSON writes trace and span ids as hex; protobuf's JSON mapping wants base64."""
    if isinstance(node, list):
        return [hex_ids_to_base64(item) for item in node]
    if isinstance(node, dict):
        return {
            key: base64.b64encode(bytes.fromhex(value)).decode()
            if key in ID_KEYS and isinstance(value, str)
            else hex_ids_to_base64(value)
            for key, value in node.items()
        }
    return node


def any_value(value):
    """An AnyValue as plain JSON: arrays become lists, key/value lists objects, bytes hex."""
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [any_value(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, kind)


def span_lines(request):
    for resource_spans in request.resource_spans:
        resource = {kv.key: any_value(kv.value) for kv in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                yield {
                    "trace_id": span.trace_id.hex(),
                    "span_id": span.span_id.hex(),
                    "parent_span_id": span.parent_span_id.hex(),
                    "name": span.name,
                    "kind": span.kind,
                    "service": resource.get("service.name"),
                    "attributes": {kv.key: any_value(kv.value) for kv in span.attributes},
                    "status": {"code": span.status.code, "message": span.status.message},
                    "events": [event.name for event in span.events],
                }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def reply(self, code, body=b"", content_type="text/plain"):
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if code >= 400:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        if self.path.split("?")[0] != "/v1/traces":
            return self.reply(404, b"only /v1/traces\n")
        content_type = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if content_type not in (PROTOBUF, JSON):
            return self.reply(415, b"expected application/x-protobuf or application/json\n")
        length = int(self.headers.get("Content-Length") or -1)
        if length < 0:
            return self.reply(411, b"Content-Length required\n")
        if length > MAX_BODY:
            # Drain in bounded chunks so that the sender gets to read the 413.
            while length > 0 and (chunk := self.rfile.read(min(length, 1 << 20))):
                length -= len(chunk)
            return self.reply(413, b"body too large\n")
        body = self.rfile.read(length)
        encoding = self.headers.get("Content-Encoding", "identity").strip().lower()
        try:
            if encoding == "gzip":
                inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
                body = inflater.decompress(body, MAX_BODY + 1)
                if len(body) > MAX_BODY:
                    return self.reply(413, b"inflated body too large\n")
                if not inflater.eof:
                    raise ValueError("truncated gzip stream")
            elif encoding != "identity":
                return self.reply(415, b"unsupported Content-Encoding\n")
            request = ExportTraceServiceRequest()
            if content_type == PROTOBUF:
                request.ParseFromString(body)
            else:
                document = hex_ids_to_base64(json.loads(body))
                json_format.ParseDict(document, request, ignore_unknown_fields=True)
        except Exception as error:  # a malformed export is the sender's fault: 400
            return self.reply(400, f"bad request: {error}\n".encode())
        self.server.record(span_lines(request))
        response = ExportTraceServiceResponse()
        if content_type == PROTOBUF:
            self.reply(200, response.SerializeToString(), PROTOBUF)
        else:
            self.reply(200, json_format.MessageToJson(response).encode(), JSON)

    def log_message(self, format, *args):
        pass


class Receiver(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port, out):
        super().__init__(("127.0.0.1", port), Handler)
        self.out, self.lock = out, threading.Lock()

    def record(self, lines):
        with self.lock:
            for line in lines:
                self.out.write(json.dumps(line) + "\n")
                self.out.flush()


def main():
    parser = argparse.ArgumentParser(description="OTLP/HTTP trace receiver for tests")
    parser.add_argument("port", type=int)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    if stat.S_ISFIFO(os.fstat(0).st_mode):
        threading.Thread(target=lambda: (sys.stdin.buffer.read(), stop.set()), daemon=True).start()
    with open(args.out, "a", encoding="utf-8") as out:
        server = Receiver(args.port, out)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        print(f"listening http://127.0.0.1:{server.server_address[1]}", flush=True)
        while not stop.wait(0.2):
            pass
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    main()
