"""How soon `epistemic mcp` answers, side by side with `python -c pass`, in one run: the
handshake without and with a policy in force, and a session's first `tools/call` against its
later ones.

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/bench_mcp_start.py            # 15 rounds (about a minute)
    .venv/bin/python bench/bench_mcp_start.py --quick    # 3 rounds

Timed round-robin, bytecode cached (one warm-up round first; the children run without
PYTHONDONTWRITEBYTECODE, as an installed tool does), each from the spawn (or the request) to
the byte that ends the reply:

1. `python -c pass` on the tool's own interpreter: the floor;
2. `initialize` and `tools/list` answered (sent together, as clients do), in a workspace
   without a policy and in one with an `epistemic.toml` of two rules;
3. in the workspace with the policy, a session of 10 `bash` calls (`true`, `collect-info`):
   the median of the 2nd..10th (a later call), and the first, sent after the client's first
   model turn (`--turn`, 0.5 s by default: the model's first answer takes longer than that)
   and, for the record, sent at once after the handshake (it waits for the policy to load);
4. `import mcp.server.lowlevel, mcp.server.stdio`: what answering through the SDK would cost
   before the first reply could be written (the front answers without it).

Targets (issue 30): `initialize` and `tools/list` within 8x `python -c pass` with a policy in
force, and the first call within 2x a later one.
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
HANDSHAKE_TARGET = 8.0  # x python -c pass
FIRST_CALL_TARGET = 2.0  # x a later call
CALLS = 10
POLICY = """default = "allow"

[[rule]]
id = "no-rm"
when = "argv0 == 'rm'"
decision = "deny"
message = "never rm"

[[rule]]
id = "changes"
when = "act == 'change-state'"
decision = "ask"
message = "a human approves every change"

[approval]
signatures = "optional"
"""
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
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
REASON = "Timing a harmless command: the bench measures what each call costs."
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def python_pass() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True, env=ENV)
    return time.perf_counter() - started


def sdk_import() -> float:
    started = time.perf_counter()
    code = "import mcp.server.lowlevel, mcp.server.stdio"
    subprocess.run([sys.executable, "-c", code], check=True, env=ENV)
    return time.perf_counter() - started


class Server:
    """`epistemic mcp` in `workspace`, driven over raw JSON-RPC."""

    def __init__(self, workspace: Path) -> None:
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            [EPISTEMIC, "mcp", "-C", str(workspace)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=ENV,
        )
        self.seen = b""

    def send(self, *messages: dict[str, object]) -> float:
        """Write the messages at once; when that was."""
        assert self.process.stdin is not None
        self.process.stdin.write("".join(json.dumps(m) + "\n" for m in messages).encode())
        self.process.stdin.flush()
        return time.perf_counter()

    def replies(self, count: int) -> list[float]:
        """When each of the next `count` lines arrived (a notification would count too: none
        is asked for)."""
        assert self.process.stdout is not None
        times: list[float] = []
        while len(times) < count:
            while b"\n" in self.seen and len(times) < count:
                line, _, self.seen = self.seen.partition(b"\n")
                reply = json.loads(line)
                if "error" in reply or reply.get("result", {}).get("isError"):
                    raise RuntimeError(f"epistemic mcp answered with an error: {reply}")
                times.append(time.perf_counter())
            if len(times) == count:
                break
            ready, _, _ = select.select([self.process.stdout], [], [], 60)
            if not ready:
                raise RuntimeError("epistemic mcp did not answer within 60 s")
            chunk = os.read(self.process.stdout.fileno(), 1 << 20)
            if not chunk:
                self.log.seek(0)
                said = self.log.read().decode(errors="replace")
                raise RuntimeError(f"epistemic mcp ended before it answered:\n{said}")
            self.seen += chunk
        return times

    def close(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)
        self.process.stdout.close()
        self.log.close()


def handshake(workspace: Path) -> tuple[float, float]:
    """Seconds from the spawn to the initialize reply, and to the tools/list reply."""
    server = Server(workspace)
    server.send(INITIALIZE, INITIALIZED, LIST)
    initialized, listed = server.replies(2)
    server.close()
    return initialized - server.started, listed - server.started


def call(ident: int) -> dict[str, object]:
    arguments = {"command": "true", "type": "collect-info", "reason": REASON}
    params = {"name": "bash", "arguments": arguments}
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}


def session(workspace: Path, turn: float) -> tuple[float, float]:
    """Seconds the first call took (sent `turn` seconds after the handshake), and the median
    of the later ones."""
    server = Server(workspace)
    server.send(INITIALIZE)
    server.replies(1)
    server.send(INITIALIZED, LIST)
    server.replies(1)
    time.sleep(turn)
    took = []
    for ident in range(3, 3 + CALLS):
        sent = server.send(call(ident))
        (answered,) = server.replies(1)
        took.append(answered - sent)
    server.close()
    return took[0], statistics.median(took[1:])


def fresh(folder: Path, name: str, policy: bool) -> Path:
    workspace = folder / name
    workspace.mkdir()
    if policy:
        (workspace / "epistemic.toml").write_text(POLICY)
    return workspace


def row(name: str, values: list[float], base: float, target: float | None) -> tuple[str, bool]:
    ordered = sorted(values)
    median, p90 = statistics.median(ordered), ordered[int(0.9 * (len(ordered) - 1))]
    ratio = median / base
    ok = target is None or ratio <= target
    verdict = "" if target is None else f"≤ {target:g}×: {'PASS' if ok else 'FAIL'}"
    return f"| {name} | {median * 1e3:,.1f} | {p90 * 1e3:,.1f} | {ratio:.1f}× | {verdict} |", ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds instead of 15")
    parser.add_argument(
        "--turn",
        type=float,
        default=0.5,
        metavar="SECONDS",
        help="the client's first model turn, between the handshake and the first call",
    )
    args = parser.parse_args(argv)
    rounds = 3 if args.quick else 15
    samples: dict[str, list[float]] = {
        name: []
        for name in (
            "python",
            "init",
            "list",
            "init-policy",
            "list-policy",
            "first",
            "later",
            "first-at-once",
            "later-at-once",
            "sdk",
        )
    }
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as folder:
        base = Path(folder)
        for number in range(rounds + 1):  # round 0 warms the bytecode caches
            values = {"python": python_pass()}
            values["init"], values["list"] = handshake(fresh(base, f"plain{number}", False))
            policed = fresh(base, f"policy{number}", True)
            values["init-policy"], values["list-policy"] = handshake(policed)
            values["first"], values["later"] = session(policed, args.turn)
            at_once = fresh(base, f"at-once{number}", True)
            values["first-at-once"], values["later-at-once"] = session(at_once, 0.0)
            values["sdk"] = sdk_import()
            if number:
                for name, value in values.items():
                    samples[name].append(value)
    floor = statistics.median(samples["python"])
    later = statistics.median(samples["later"])
    results = []
    print(f"## `epistemic mcp` start-up ({rounds} rounds, median)\n")
    print("| from the spawn to | median ms | p90 ms | × python -c pass | target |")
    print("|---|---:|---:|---:|---|")
    lines = [
        row("`python -c pass` exits (the floor)", samples["python"], floor, None),
        row("`initialize` answered, no policy", samples["init"], floor, None),
        row("`tools/list` answered, no policy", samples["list"], floor, None),
        row(
            "`initialize` answered, with a policy", samples["init-policy"], floor, HANDSHAKE_TARGET
        ),
        row(
            "`tools/list` answered, with a policy", samples["list-policy"], floor, HANDSHAKE_TARGET
        ),
        row("`import mcp.server.lowlevel, .stdio` (the SDK)", samples["sdk"], floor, None),
    ]
    for text, ok in lines:
        print(text)
        results.append(ok)
    print(f"\n## A session's calls, with a policy ({rounds} sessions, median)\n")
    print("| `tools/call` (`bash true`), request to reply | median ms | p90 ms | × later ", end="")
    print("| target |")
    print("|---|---:|---:|---:|---|")
    lines = [
        row(f"later call (median of 2nd..{CALLS}th)", samples["later"], later, None),
        row(
            f"first call, {args.turn:g} s after the handshake",
            samples["first"],
            later,
            FIRST_CALL_TARGET,
        ),
        row("first call, sent at once after the handshake", samples["first-at-once"], later, None),
    ]
    for text, ok in lines:
        print(text)
        results.append(ok)
    print(
        "\nThe call sent at once waits for the policy to load and the session to open: no "
        "call runs before the policy is in force. Targets: " + ("PASS" if all(results) else "FAIL")
    )
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
