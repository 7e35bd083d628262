"""A scriptable OpenAI-compatible server for tests, and its pytest fixture.

The real ``openai`` client talks to it over HTTP on 127.0.0.1, so retries,
timeouts and request bodies are exercised as they are against a real server.
Each chat completion request takes the next scripted answer::

    fake_openai.reply_json({"entities": []})
    fake_openai.reply_status(429)          # then the SDK retries
    fake_openai.reply_text("{not json")
    fake_openai.reply_delay(2.0)           # longer than the client timeout
    config = LLMConfig(base_url=fake_openai.base_url, model="fake-model")

With the script used up it asks ``responder(body)`` for the content to send
back as JSON, if one is set (for concurrent requests, whose order is not
fixed), else answers 500 "no scripted answer left". A responder returning an
:class:`Answer` sends it as it is (plain text, its own usage or status).
"""

from __future__ import annotations

import json
import os
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Answer:
    status: int = 200
    content: str | None = None
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    prompt_tokens: int = 10
    completion_tokens: int = 5


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class FakeOpenAI:
    """The server; ``base_url`` ends in ``/v1`` like OpenAI's."""

    def __init__(self, *, model: str = "fake-model", port: int = 0):
        self.model = model
        self.requests: list[RecordedRequest] = []
        self.responder: Callable[[Any], Any] | None = None
        self._script: deque[Answer] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._server.daemon_threads = True
        # A short poll interval makes shutdown, hence every test's teardown, quick.
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies of the chat completion requests, in arrival order."""
        return [r.body for r in self.requests if r.path.endswith("/chat/completions")]

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping in a delay
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def reply_json(self, obj: Any, **usage: int) -> None:
        """Answer with ``obj`` serialised as the message content."""
        self._script.append(Answer(content=json.dumps(obj), **usage))

    def reply_text(self, content: str, **usage: int) -> None:
        """Answer with ``content`` as it is (e.g. malformed JSON)."""
        self._script.append(Answer(content=content, **usage))

    def reply_status(
        self,
        status: int,
        *,
        message: str = "scripted error",
        headers: dict[str, str] | None = None,
    ) -> None:
        """Answer with an HTTP error in OpenAI's error body.

        A 429 gets ``Retry-After: 0`` unless ``headers`` say otherwise.
        """
        default = {"Retry-After": "0"} if status == 429 else {}
        error = {"error": {"message": message, "type": "fake", "code": str(status)}}
        self._script.append(
            Answer(status=status, body=error, headers=headers or default)
        )

    def reply_delay(self, seconds: float, obj: Any = None) -> None:
        """Wait ``seconds`` before answering ``obj`` (``{}`` by default)."""
        self._script.append(
            Answer(content=json.dumps({} if obj is None else obj), delay=seconds)
        )

    @property
    def pending(self) -> int:
        """Scripted answers not yet used."""
        return len(self._script)

    def _next(self, body: Any) -> Answer:
        with self._lock:
            if self._script:
                return self._script.popleft()
        if self.responder is not None:
            reply = self.responder(body)
            if isinstance(reply, Answer):
                return reply
            return Answer(content=json.dumps(reply))
        message = {"error": {"message": "no scripted answer left", "type": "fake"}}
        return Answer(status=500, body=message)

    def _completion(self, answer: Answer, request: Any) -> dict[str, Any]:
        model = request.get("model", self.model) if isinstance(request, dict) else ""
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": answer.content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": answer.prompt_tokens,
                "completion_tokens": answer.completion_tokens,
                "total_tokens": answer.prompt_tokens + answer.completion_tokens,
            },
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format, *args):  # keep test output quiet
                pass

            def _record(self, body: Any) -> None:
                with fake._lock:
                    fake.requests.append(
                        RecordedRequest(
                            self.command,
                            self.path,
                            {k.lower(): v for k, v in self.headers.items()},
                            body,
                        )
                    )

            def _send(
                self, status: int, body: Any, headers: dict[str, str] | None = None
            ) -> None:
                data = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (a timeout test)

            def do_GET(self):
                self._record(None)
                if self.path.rstrip("/").endswith("/models"):
                    model = {"id": fake.model, "object": "model", "created": 0}
                    self._send(200, {"object": "list", "data": [model]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    body = raw.decode(errors="replace")
                self._record(body)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": "not found"}})
                    return
                answer = fake._next(body)
                if answer.delay and fake._stopping.wait(answer.delay):
                    return
                if answer.status != 200:
                    self._send(answer.status, answer.body, answer.headers)
                else:
                    self._send(200, fake._completion(answer, body), answer.headers)

        return Handler


@pytest.fixture
def fake_openai():
    # On the port the test settings allow the LLM key to be sent to (an
    # allow-listed endpoint names its port); any free one without them.
    server = FakeOpenAI(port=int(os.environ.get("FAKE_OPENAI_PORT", 0))).start()
    yield server
    server.stop()
