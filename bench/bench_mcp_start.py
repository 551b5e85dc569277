"""How long `epistemic mcp` takes to answer the MCP handshake, side by side with
`python -c pass` and with the SDK's own start-up, in one run.

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/bench_mcp_start.py            # 15 rounds (about a minute)
    .venv/bin/python bench/bench_mcp_start.py --quick    # 3 rounds

Timed round-robin, bytecode cached (one warm-up round first), each from the spawn to the byte
that ends the reply:

1. `python -c pass`: the interpreter's own start-up, the floor;
2. `epistemic mcp` to its `initialize` reply (the front answers it while the SDK loads);
3. `epistemic mcp` to its `tools/list` reply, sent right after `initialize`;
4. `import mcp.server.lowlevel, mcp.server.stdio`: what answering through the SDK alone would
   cost before the first reply could be written (the previous design's floor).

The target: `initialize` answered within half of the about one second Codex gives an
optional server to start (so 0.5 s) on this machine. Codex's window is measured in
shared/notes/platform-facts.md.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EPISTEMIC = str(Path(sys.executable).with_name("epistemic"))
TARGET = 0.5
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def python_pass() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - started


def sdk_import() -> float:
    started = time.perf_counter()
    code = "import mcp.server.lowlevel, mcp.server.stdio"
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - started


def handshake(workspace: Path) -> tuple[float, float]:
    """Seconds to the initialize reply, and to the tools/list reply."""
    started = time.perf_counter()
    server = subprocess.Popen(
        [EPISTEMIC, "mcp", "-C", str(workspace)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert server.stdin is not None and server.stdout is not None
    lines = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}, LIST]
    server.stdin.write("".join(json.dumps(m) + "\n" for m in lines).encode())
    server.stdin.flush()
    times, seen = [], b""
    while len(times) < 2:
        ready, _, _ = select.select([server.stdout], [], [], 30)
        if not ready:
            raise RuntimeError("epistemic mcp did not answer within 30 s")
        seen += os.read(server.stdout.fileno(), 1 << 20)
        while len(times) < seen.count(b"\n"):
            times.append(time.perf_counter() - started)
    server.stdin.close()
    server.wait(timeout=30)
    server.stdout.close()
    return times[0], times[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    rounds = 3 if args.quick else 15
    samples: dict[str, list[float]] = {
        "python -c pass": [],
        "epistemic mcp: initialize answered": [],
        "epistemic mcp: tools/list answered": [],
        "import mcp.server.lowlevel + stdio (the SDK's floor)": [],
    }
    names = list(samples)
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as folder:
        workspace = Path(folder)
        for round_number in range(rounds + 1):  # round 0 warms the bytecode caches
            values = [python_pass(), *handshake(workspace), sdk_import()]
            if round_number:
                for name, value in zip(names, values, strict=True):
                    samples[name].append(value)
    floor = statistics.median(samples["python -c pass"])
    print(f"## `epistemic mcp` start-up ({rounds} rounds, median)\n")
    print("| to | median ms | p90 ms | × python -c pass |")
    print("|---|---:|---:|---:|")
    for name, values in samples.items():
        ordered = sorted(values)
        median, p90 = statistics.median(ordered), ordered[int(0.9 * (len(ordered) - 1))]
        print(f"| {name} | {median * 1e3:,.0f} | {p90 * 1e3:,.0f} | {median / floor:.1f}× |")
    answered = statistics.median(samples["epistemic mcp: initialize answered"])
    ok = answered <= TARGET
    print(
        f"\nTarget: initialize within {TARGET:g} s (half of Codex's start-up window): "
        f"{answered:.3f} s: {'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
