"""A fake OpenAI Chat Completions server on 127.0.0.1 for the one-shot soak: the first path
segment picks the behaviour of every request under it (/<kind>/v1/chat/completions):

- ok: a streamed answer ("hello from http") and [DONE];
- rate_limit: 429 with a retry-after of 1 s, every time (a quota that never ends);
- dead_socket: 200, one text chunk, then the socket is reset (no [DONE], no FIN-clean end);
- hung: 200, one text chunk, then nothing but an SSE comment every 0.5 s until the client goes.
"""
import http.server
import json
import socket
import struct
import threading
import time


def _chunk(content):
    body = {"id": "chatcmpl-soak", "object": "chat.completion.chunk", "model": "soak",
            "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": None}]}
    return f"data: {json.dumps(body)}\n\n".encode()


_FINISH = ("data: " + json.dumps({"id": "chatcmpl-soak", "object": "chat.completion.chunk",
                                  "model": "soak", "choices": [{"index": 0, "delta": {},
                                                                "finish_reason": "stop"}]})
           + "\n\ndata: [DONE]\n\n").encode()


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # nothing on the soak's stdout or stderr
        pass

    def _stream_head(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        kind = self.path.strip("/").split("/")[0]
        self.server.requests[kind] = self.server.requests.get(kind, 0) + 1
        if kind == "rate_limit":
            body = json.dumps({"error": {"message": "Rate limit reached for requests",
                                         "type": "requests", "code": "rate_limit_exceeded"}}).encode()
            self.send_response(429)
            self.send_header("Content-Type", "application/json")
            self.send_header("retry-after", "1")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self._stream_head()
        if kind == "ok":
            self.wfile.write(_chunk("hello ") + _chunk("from http") + _FINISH)
            self.close_connection = True
            return
        self.wfile.write(_chunk("partial "))
        self.wfile.flush()
        if kind == "dead_socket":
            # A reset, not a clean close: SO_LINGER with a zero timeout.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        until = time.time() + 30  # hung: the client ends it (its deadline); give up after 30 s
        try:
            while time.time() < until:
                time.sleep(0.5)
                self.wfile.write(b": still here\n\n")
                self.wfile.flush()
        except OSError:
            pass
        self.close_connection = True


class FakeLlm:
    """The server on an ephemeral loopback port, in daemon threads."""

    def __init__(self):
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.server.requests = {}
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def base_url(self, kind):
        return f"http://127.0.0.1:{self.port}/{kind}/v1"

    def close(self):
        self.server.shutdown()
        self.server.server_close()
