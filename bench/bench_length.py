"""Per-call cost does not grow with the session's length: `epistemic run` with a scripted model
and an `epistemic mcp` session, each at about 200 and about 10,000 calls of `true`, with
confinement and observation on (as by default), beside a `bash -c true` spawn, in one run.

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/bench_length.py                  # 200 and 10,000 calls (minutes)
    .venv/bin/python bench/bench_length.py --quick          # 200 and 2,000 calls
    .venv/bin/python bench/bench_length.py --calls 20,40    # any lengths (a smoke run)

`run`: one session per length per round, each in a fresh `git init` folder in the temp dir,
played by `--model replay:SCRIPT` (N turns of one `true` call, then a final answer). The
per-call cost *at length N* is read from the journal: the time between the outcome records of
calls N-100 and N, over 100 (the cost of calls near the end of the session: the figure that
grows if anything the session does per call grows with its history). The whole session's
average, (wall(N) - wall(0 calls)) / N with walls from spawn to exit of the same round, is
printed beside it.

MCP: `epistemic mcp -C WS` driven over stdio by a minimal client written here (JSON-RPC lines:
`initialize`, `notifications/initialized`, `tools/list`, then `tools/call` of the `bash` tool,
one at a time, each sent when the previous reply has arrived). The per-call cost at length N is
the median of the round trips of calls N-99..N, all from one session of the longest length.

When a length is shorter than 200 the window is half of it. The floor, `bash -c true` spawned
with subprocess.run, is measured between sessions throughout; the median is used.

Targets (issue 30): per-call cost at the longest length within 1.2x that at the shortest, for
`run` and for MCP; per-call cost at any length within 4x a `bash -c true` spawn. The exit
status is 0 once the tables are printed, whatever the verdicts (they are in the tables).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from scripted_sessions import (
    EPISTEMIC,
    InForce,
    bash_call,
    bash_floor,
    journal,
    load_average,
    machine,
    new_workspace,
    outcome_times,
    parse_counts,
    print_table,
    remove,
    run_session,
    verdict,
    write_script,
)

CALLS = (200, 10000)
QUICK_CALLS = (200, 2000)
WINDOW = 100
GROWTH_TARGET, FLOOR_TARGET = 1.2, 4.0
LONG = 2000  # sessions longer than this run `--long-rounds` times
INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "bench_length", "version": "1"},
}


def window(length: int) -> int:
    return min(WINDOW, max(1, length // 2))


class McpClient:
    """A JSON-RPC client over the server's stdin and stdout, one request at a time."""

    def __init__(self, workspace: Path, log: IO[bytes]) -> None:
        self.server = subprocess.Popen(
            [EPISTEMIC, "mcp", "-C", str(workspace)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
        )
        self.next_id = 0

    def send(self, method: str, params: dict[str, Any] | None = None, notify: bool = False) -> int:
        assert self.server.stdin is not None
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notify:
            self.next_id += 1
            message["id"] = self.next_id
        self.server.stdin.write(json.dumps(message).encode() + b"\n")
        self.server.stdin.flush()
        return self.next_id

    def reply(self, request: int) -> bytes:
        """The raw line answering `request` (notifications from the server are skipped)."""
        assert self.server.stdout is not None
        while True:
            line = self.server.stdout.readline()
            if not line:
                raise SystemExit("bench: epistemic mcp closed its output before replying")
            if f'"id":{request},'.encode() in line.replace(b" ", b""):
                return line

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        found: dict[str, Any] = json.loads(self.reply(self.send(method, params)))
        if "error" in found:
            raise SystemExit(f"bench: {method} failed: {found['error']}")
        return found["result"]  # type: ignore[no-any-return]

    def close(self) -> None:
        assert self.server.stdin is not None
        self.server.stdin.close()
        self.server.wait(timeout=120)


def bash_arguments(client: McpClient) -> tuple[str, dict[str, Any]]:
    """The bash tool's name and the arguments for `true`, checked against `tools/list`."""
    tools = client.request("tools/list")["tools"]
    tool = next((t for t in tools if t["name"] == "bash"), None)
    if tool is None:
        raise SystemExit(f"bench: tools/list has no bash tool: {[t['name'] for t in tools]}")
    arguments: dict[str, Any] = bash_call(0)["args"]
    schema = tool["inputSchema"]
    missing = set(schema.get("required", [])) - set(arguments)
    unknown = set(arguments) - set(schema.get("properties", {}))
    if missing or unknown:
        raise SystemExit(f"bench: the bash tool wants {missing or ''}, refuses {unknown or ''}")
    return tool["name"], arguments


def mcp_session(calls: int, in_force: InForce) -> list[float]:
    """The round trip, in seconds, of each of `calls` tools/call of bash in one session."""
    workspace = new_workspace("bench-mcp-")
    with tempfile.TemporaryFile() as log:
        client = McpClient(workspace, log)
        try:
            client.request("initialize", INITIALIZE)
            client.send("notifications/initialized", notify=True)
            name, arguments = bash_arguments(client)
            trips = []
            for index in range(1, calls + 1):
                params = {"name": name, "arguments": {**arguments, **bash_call(index)["args"]}}
                started = time.perf_counter()
                line = client.reply(client.send("tools/call", params))
                trips.append(time.perf_counter() - started)
                if b'"isError":false' not in line.replace(b" ", b""):
                    raise SystemExit(f"bench: call {index} failed: {line[:600]!r}")
            client.close()
        except BaseException:
            client.server.kill()
            log.seek(0)
            print(log.read().decode(errors="replace")[-2000:], file=sys.stderr)
            raise
    in_force.add(journal(workspace))
    remove(workspace)
    return trips


def run_end_cost(workspace: Path, length: int) -> float:
    """Seconds per call over the last window of the session, from the journal's outcomes."""
    times, width = outcome_times(journal(workspace)), window(length)
    return (times[length] - times[length - width]) / width


def timed(length: int) -> str:
    """The calls whose cost is read for length `length`."""
    return f"{length - window(length) + 1:,}–{length:,}"


def against(cost: float, floor: float, average: float) -> list[str]:
    return [f"{cost / floor:.2f}×", ms(average)]


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f}"


def growth_and_floor(name: str, at: dict[int, float], floor: float) -> list[list[str]]:
    """Target rows: the cost at the longest length against the shortest, and each against the
    floor."""
    first, last = at[min(at)], at[max(at)]
    rows = [[f"{name}: at {max(at):,} ÷ at {min(at):,} calls", f"≤ {GROWTH_TARGET:g}×"]]
    rows[0] += [f"{last / first:.2f}×", verdict(last <= GROWTH_TARGET * first)]
    for length, cost in at.items():
        row = [f"{name}: at {length:,} calls", f"≤ {FLOOR_TARGET:g}× bash -c true"]
        rows.append([*row, f"{cost / floor:.2f}×", verdict(cost <= FLOOR_TARGET * floor)])
    return rows


def parse_calls(text: str) -> tuple[int, ...]:
    why = "two or more lengths of at least 2, e.g. 200,10000"
    return parse_counts(text, least=2, fewest=2, why=why)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="200 and 2,000 calls, 1 round")
    parser.add_argument("--calls", type=parse_calls, help="comma-separated session lengths")
    parser.add_argument("--rounds", type=int, help="rounds up to 2,000 calls (default 3)")
    parser.add_argument("--long-rounds", type=int, default=1, help="rounds above 2,000 calls")
    parser.add_argument("--no-mcp", action="store_true", help="`run` sessions only")
    args = parser.parse_args(argv)
    lengths = args.calls or (QUICK_CALLS if args.quick else CALLS)
    rounds = args.rounds or (1 if args.quick else 3)
    if not Path(EPISTEMIC).exists():
        print("bench: no `epistemic` next to this python; run with the venv's", file=sys.stderr)
        return 2
    began, facts = time.perf_counter(), machine()
    in_force = InForce()
    walls: dict[int, list[float]] = {0: []}
    ends: dict[int, list[float]] = {n: [] for n in lengths}
    trips: dict[int, list[float]] = {n: [] for n in lengths}
    floors = [bash_floor(20)]
    with tempfile.TemporaryDirectory(prefix="bench-length-") as name:
        scripts = {n: write_script(n, Path(name)) for n in (0, *lengths)}
        remove(run_session(scripts[0], 0)[1])  # warm-up: bytecode caches
        for index in range(max(rounds, args.long_rounds)):
            for length in (0, *lengths):
                if length and index >= (rounds if length <= LONG else args.long_rounds):
                    continue
                elapsed, workspace = run_session(scripts[length], length, in_force)
                walls.setdefault(length, []).append(elapsed)
                if length:
                    ends[length].append(run_end_cost(workspace, length))
                remove(workspace)
                floors.append(bash_floor(20))
            longest = lengths[-1]
            if not args.no_mcp and index < (rounds if longest <= LONG else args.long_rounds):
                session = mcp_session(longest, in_force)
                for length in lengths:
                    trips[length].append(
                        statistics.median(session[length - window(length) : length])
                    )
                floors.append(bash_floor(20))
    floor = statistics.median(floors)
    print("## Per-call cost against the session's length\n")
    print(f"Sessions ran with {in_force.describe()}.")
    run_at = {n: statistics.median(ends[n]) for n in lengths}
    average = {
        n: statistics.median((w - z) / n for w, z in zip(walls[n], walls[0], strict=False))
        for n in lengths
    }
    rows = [
        [
            f"{n:,}",
            timed(n),
            str(len(ends[n])),
            ms(run_at[n]),
            *against(run_at[n], floor, average[n]),
        ]
        for n in lengths
    ]
    header = [
        "calls N",
        "calls timed",
        "rounds",
        "ms/call at N",
        "× bash -c true",
        "whole-session ms/call",
    ]
    print_table(
        "`epistemic run`, scripted: ms per call at length N (from the journal)", header, rows
    )
    targets = growth_and_floor("run", run_at, floor)
    if not args.no_mcp:
        mcp_at = {n: statistics.median(trips[n]) for n in lengths}
        rows = [
            [f"{n:,}", timed(n), str(len(trips[n])), ms(mcp_at[n]), f"{mcp_at[n] / floor:.2f}×"]
            for n in lengths
        ]
        header = ["calls N", "calls timed", "sessions", "ms/call at N", "× bash -c true"]
        print_table(
            "`epistemic mcp`: ms per tools/call round trip at length N (median)",
            header,
            rows,
        )
        targets += growth_and_floor("mcp", mcp_at, floor)
    print(
        f"\n`bash -c true` (subprocess.run): {ms(floor)} ms, median of {len(floors)} batches of 20."
    )
    print_table("Targets", ["what", "target", "measured", "verdict"], targets, right=2)
    print_table("Machine", ["what", "value"], [list(f) for f in facts], right=2)
    elapsed = time.perf_counter() - began
    print(f"\nTotal bench time {elapsed:.0f} s; load average at the end {load_average()}.")
    return 0  # the verdicts are in the tables


if __name__ == "__main__":
    sys.exit(main())
