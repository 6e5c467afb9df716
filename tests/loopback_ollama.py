"""A small server on loopback that speaks Ollama's API and answers after a fixed delay.

Used by the interrupt test and by the concurrency benchmark: ``slots`` requests are served at
once (like OLLAMA_NUM_PARALLEL), the rest wait, as in Ollama's queue.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "bench:1"
VERDICT = json.dumps({"evidence": "", "faithfulness": 2, "relevance": 2, "note": "ok"})


def start(delay_s: float, slots: int) -> ThreadingHTTPServer:
    """Start the server in a daemon thread; ``server.server_address[1]`` is its port."""
    gate = threading.Semaphore(slots)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in two writes; with Nagle on, the second waits ~40 ms for a
        # delayed ACK, which would be charged to the client.
        disable_nagle_algorithm = True

        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == "/api/version":
                self._send({"version": "0.13.0"})
            else:
                self._send(
                    {
                        "models": [
                            {
                                "name": MODEL,
                                "model": MODEL,
                                "digest": "d" * 64,
                                "size": 1,
                                "modified_at": "2026-01-01T00:00:00Z",
                            }
                        ]
                    }
                )

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            with gate:
                time.sleep(delay_s)
            self._send(
                {
                    "message": {"role": "assistant", "content": VERDICT},
                    "done": True,
                    "done_reason": "stop",
                    "prompt_eval_count": 100,
                    "eval_count": 20,
                }
            )

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


if __name__ == "__main__":  # for tests that need the server in another process
    import sys

    server = start(float(sys.argv[1]), int(sys.argv[2]))
    print(server.server_address[1], flush=True)
    threading.Event().wait()
