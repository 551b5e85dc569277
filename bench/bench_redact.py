"""Secret scrubbing throughput: the scan every captured output and every record goes through.

    .venv/bin/python bench/bench_redact.py            # this tree
    PYTHONPATH=OTHER/src .venv/bin/python bench/bench_redact.py   # another, to compare

Three inputs: ~8 MB of ordinary text with no secret (this repository's own sources and docs,
repeated: code, Markdown, words like token, password and key everywhere); 8 MB of near misses
(`password` and `token` without a value, key names that are no secret); and the short free-text
fields of a call record, scrubbed one at a time as the session does per call.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from epistemic_agent.core.redact import Redactor

ROOT = Path(__file__).resolve().parent.parent
TARGET = 8 << 20
RECORD_FIELDS = [
    "see which files the workspace starts with before changing anything",
    "python -m pytest -q tests/test_app.py::test_token_refresh --maxfail=1",
    "rc=0 — 14 passed in 0.31s",
    "the config loader reads DB_PASSWORD from the environment; check how it is parsed",
    "grep -rn 'api_key' src/ | head -20",
    "write_file settings.py (1200 bytes)",
]


def ordinary() -> str:
    sources = [p.read_text() for p in sorted((ROOT / "src").rglob("*.py"))]
    sources += [p.read_text() for p in sorted((ROOT / "docs").glob("*.md"))]
    text = "\n".join(sources)
    return (text * (TARGET // len(text) + 1))[:TARGET]


def near_misses() -> str:
    unit = (
        "password\ntoken: \nprimary_key = id\nmax_tokens=512\n--token\nsecret_name: db\n"
        "the password is checked; bypass=true; compass: north; token_count: 5\n"
    )
    return unit * (TARGET // len(unit))


def rate(function: object, text: str, repeats: int = 5) -> float:
    """MB/s of the fastest of `repeats` runs (the machine is shared: the least disturbed)."""
    runs = []
    for _ in range(repeats):
        started = time.perf_counter()
        function(text)  # type: ignore[operator]
        runs.append(time.perf_counter() - started)
    return len(text.encode()) / min(runs) / 1e6


def per_call(redactor: Redactor, repeats: int = 2_000, rounds: int = 7) -> float:
    """µs to scrub the fields of one record, the fastest of `rounds` rounds."""
    runs = []
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(repeats):
            for text in RECORD_FIELDS:
                redactor.text(text)
        runs.append((time.perf_counter() - started) / repeats * 1e6)
    return statistics.median(sorted(runs)[:3])


def main() -> None:
    redactor = Redactor({})
    redactor.text("warm up the regexes: password=x token: y sk-" + "a1B" * 10)
    print(f"ordinary text, no secret: {rate(redactor.text, ordinary()):7.1f} MB/s")
    print(f"near misses:              {rate(redactor.text, near_misses()):7.1f} MB/s")
    print(f"a call record's fields:   {per_call(redactor):7.1f} µs a call")


if __name__ == "__main__":
    main()
