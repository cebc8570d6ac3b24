"""A small OpenAI-compatible chat completions server on loopback, for contract tests.

Each request takes the next canned behaviour: an answer text, an HTTP error
status, an answer held back until the test releases it, or a dropped
connection. Every request body and its
headers are kept for the test to inspect.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Canned:
    text: str = '{"hints": []}'
    status: int = 200
    # Set: the answer waits until the test sets this event (a slow endpoint, however fast the machine).
    hold: threading.Event | None = None
    drop: bool = False


@dataclass
class FakeOpenAI:
    behaviours: list[Canned] = field(default_factory=list)
    requests: list[dict] = field(default_factory=list)
    headers: list[dict] = field(default_factory=list)

    def __post_init__(self) -> None:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *arguments: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append(body)
                fake.headers.append({key.lower(): value for key, value in self.headers.items()})
                canned = fake.behaviours.pop(0) if fake.behaviours else Canned()
                if canned.hold is not None:
                    canned.hold.wait(600)  # a safety net only: every test releases what it holds
                if canned.drop:
                    self.connection.close()
                    return
                if canned.status != 200:
                    payload = json.dumps({"error": {"message": "canned failure", "type": "server_error"}}).encode()
                else:
                    payload = json.dumps(
                        {
                            "id": "chatcmpl-1",
                            "object": "chat.completion",
                            "created": 0,
                            "model": body.get("model", "?"),
                            "choices": [
                                {
                                    "index": 0,
                                    "message": {"role": "assistant", "content": canned.text},
                                    "finish_reason": "stop",
                                }
                            ],
                            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
                        }
                    ).encode()
                try:
                    self.send_response(canned.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass  # the client gave up (timeout)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        # Looks for a shutdown every 50 ms, so closing the server does not wait half a second.
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
