"""Fake Anthropic and OpenAI servers for the cost benchmark (stdlib only).

Each plays a scripted model in the provider's streaming wire format (tests/wire.py) and
bills every request the way the provider documents its prompt cache, so that what a session
costs with and without caching can be measured offline. Tokens are counted as one per four
characters of the request's canonical JSON: a stand-in tokenizer, the same for both runs
compared, which is all a ratio needs.

Anthropic (docs: "Prompt caching"):
  * the prompt is tools, then system, then messages, in that order; a block marked with
    `cache_control` is a breakpoint: the prefix up to and including it may be cached;
  * at most 4 breakpoints (more is a 400 error);
  * a prefix shorter than the model's minimum (1,024 tokens for Claude Sonnet 4.5) is not
    cached: no write, and so no read later;
  * for each breakpoint, the cache is checked at the block boundaries from the breakpoint back
    to 20 blocks before it; the longest cached prefix found is read;
  * what lies between the end of the read and the last cacheable breakpoint is written
    (billed 1.25x input); what follows the last breakpoint is ordinary input;
  * an entry lives 5 minutes, and each read refreshes it.
OpenAI (docs: "Prompt caching"):
  * automatic for prompts of 1,024 tokens or more, for an exact prefix of an earlier prompt;
  * hits come in increments of 128 tokens: 1,024, 1,152, 1,280...;
  * requests are routed by `prompt_cache_key` (else by the prompt's first 256 tokens): only a
    prompt seen on the same route can be reused;
  * entries last a few minutes when idle (5 here); cache writes cost nothing extra (before
    GPT-5.6).
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from wire import AnthropicWire, Call, OpenAIWire

CHARS_PER_TOKEN = 4
TTL = 300.0


def tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def canonical(value: Any) -> str:
    """JSON with sorted keys and without cache markers: what a prefix is compared on."""

    def strip(item: Any) -> Any:
        if isinstance(item, dict):
            return {k: strip(v) for k, v in item.items() if k != "cache_control"}
        if isinstance(item, list):
            return [strip(v) for v in item]
        return item

    return json.dumps(strip(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class CacheError(ValueError):
    """A request the provider would refuse (more than 4 breakpoints)."""


class AnthropicCache:
    def __init__(
        self,
        minimum: int = 1024,
        lookback: int = 20,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.minimum, self.lookback, self.clock = minimum, lookback, clock
        self.entries: dict[str, float] = {}  # prefix hash -> expiry

    @staticmethod
    def blocks(body: dict[str, Any]) -> list[tuple[str, bool]]:
        """Every block of the prompt in cache order, and whether it is a breakpoint."""
        found = [(canonical(t), "cache_control" in t) for t in body.get("tools", [])]
        system = body.get("system")
        if isinstance(system, str):  # the same prompt as one text block
            system = [{"type": "text", "text": system}]
        for block in system if isinstance(system, list) else ():
            found.append((canonical(block), "cache_control" in block))
        for message in body.get("messages", []):
            content = message["content"]
            for block in [content] if isinstance(content, str) else content:
                marked = isinstance(block, dict) and "cache_control" in block
                found.append((canonical({"role": message["role"], "block": block}), marked))
        return found

    def bill(self, body: dict[str, Any]) -> tuple[int, int, int]:
        """(all input tokens, read from the cache, written to it) for one request."""
        blocks = self.blocks(body)
        marks = [i for i, (_, marked) in enumerate(blocks) if marked]
        if len(marks) > 4:
            raise CacheError(
                f"A maximum of 4 blocks with cache_control may be provided. Found {len(marks)}."
            )
        cumulative, hashes, total, digest = [], [], 0, hashlib.sha256()
        for text, _ in blocks:
            total += tokens(text)
            digest.update(text.encode())
            cumulative.append(total)
            hashes.append(digest.copy().hexdigest())
        now = self.clock()
        read_at = -1
        for mark in marks:
            for index in range(mark, max(mark - self.lookback, 0) - 1, -1):
                if self.entries.get(hashes[index], -1.0) > now:
                    read_at = max(read_at, index)
                    break
        if read_at >= 0:
            self.entries[hashes[read_at]] = now + TTL  # a hit refreshes the entry
        read = cumulative[read_at] if read_at >= 0 else 0
        cacheable = [m for m in marks if m > read_at and cumulative[m] >= self.minimum]
        for mark in cacheable:
            self.entries[hashes[mark]] = now + TTL
        written = cumulative[cacheable[-1]] - read if cacheable else 0
        return total, read, written


class OpenAICache:
    def __init__(self, enabled: bool = True, clock: Callable[[], float] = time.monotonic) -> None:
        self.enabled, self.clock = enabled, clock
        self.routes: dict[str, list[tuple[str, float]]] = {}  # route -> [(prompt, expiry)]

    @staticmethod
    def prompt(body: dict[str, Any]) -> str:
        parts = [canonical(body.get("tools", [])), canonical(body.get("instructions", ""))]
        parts += [canonical(item) for item in body.get("messages", body.get("input", []))]
        return "".join(parts)

    def bill(self, body: dict[str, Any]) -> tuple[int, int, int]:
        """(all input tokens, cached tokens, 0 written) for one request."""
        prompt = self.prompt(body)
        total = tokens(prompt)
        if not self.enabled:
            return total, 0, 0
        route = (
            body.get("prompt_cache_key") or hashlib.sha256(prompt[: 256 * 4].encode()).hexdigest()
        )
        now = self.clock()
        alive = [(p, t) for p, t in self.routes.get(route, []) if t > now]
        best = max((_common(prompt, p) for p, _ in alive), default=0) // CHARS_PER_TOKEN
        cached = 0 if best < 1024 else 1024 + (best - 1024) // 128 * 128
        if total >= 1024:
            alive.append((prompt, now + TTL))
        self.routes[route] = alive[-64:]
        return total, cached, 0


def _common(a: str, b: str) -> int:
    size = min(len(a), len(b))
    low, high = 0, size
    while low < high:  # the longest common prefix, by bisection on slices
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


Turn = tuple[str, list[Call]]  # (text, calls); no calls: the final answer


class FakeModelServer:
    """Plays `turns` in order over the provider's wire format, billing each request with
    `cache`; `log` keeps (input, read, written, output) per request."""

    def __init__(
        self, provider: str, turns: list[Turn], cache: AnthropicCache | OpenAICache
    ) -> None:
        self.wire = AnthropicWire(True) if provider == "anthropic" else OpenAIWire(True)
        self.turns, self.cache = list(turns), cache
        self.log: list[tuple[int, int, int, int]] = []
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{port}" + ("" if provider == "anthropic" else "/v1")

    def answer(self, body: dict[str, Any]) -> tuple[int, bytes]:
        with self.lock:
            try:
                total, read, written = self.cache.bill(body)
            except CacheError as error:
                return 400, json.dumps(self.wire.error(400, str(error))).encode()
            if len(self.log) >= len(self.turns):
                return 500, json.dumps(self.wire.error(500, "the script is over")).encode()
            text, calls = self.turns[len(self.log)]
            output = tokens(text + "".join(json.dumps(args) for _, _, args in calls))
            self.log.append((total, read, written, output))
        usage = (total, output, read, written) if written else (total, output, read)
        data, _ = self.wire.response(text, calls, usage)
        return 200, data

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                status, data = server.answer(json.loads(self.rfile.read(size)))
                self.send_response(status)
                kind = "text/event-stream" if status == 200 else "application/json"
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler

    def __enter__(self) -> FakeModelServer:
        threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        ).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
