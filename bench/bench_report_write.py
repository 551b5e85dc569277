"""What replacing RATIONALE.md and head.json costs per call: in place, or a new file each time.

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/bench_report_write.py            # 2,000 writes of each, 5 rounds
    .venv/bin/python bench/bench_report_write.py --quick    # 200 writes, 2 rounds

The report was written into a spare file (pwrite, ftruncate) and swapped in with
renameat2(RENAME_EXCHANGE), two spares taking turns: no file created per call, but the report a
swap displaced was rewritten in place two writes later, under any reader that still held it.
It is now a new file (O_EXCL, beside the report) swapped with it, the old one then unlinked
(`fsutil.replace_file`); a plain rename over it (`fsutil.atomic_write`) is timed too, for it is
what ext4 makes dear. The head anchor likewise: 256 padded bytes rewritten in place, now a new
file each time. The old ways are reproduced here (this tree no longer has them); each is timed
on the same ~50 KB report (the size of a full page of 100 calls) in a folder of its own in a
temporary directory, the cases alternating per round so the machine's drift falls on all alike.
Prints a Markdown table of the median per-write time in microseconds.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from epistemic_agent.core.fsutil import atomic_write, replace_file

_renameat2 = ctypes.CDLL(None, use_errno=True).renameat2


def swapped(folder: Path, data: list[bytes]) -> Callable[[int], None]:
    """The old report write: pwrite into a spare, then swap it with the report."""
    report = folder / "RATIONALE.md"
    spares = [folder / "RATIONALE.md.previous", folder / "RATIONALE.md.older"]
    for path in (report, *spares):
        path.write_bytes(data[0])

    def write(i: int) -> None:
        spare = spares[i % 2]
        flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        handle = os.open(spare, flags, 0o644)
        os.fstat(handle)  # the old code checked the spare was a plain file of one link
        try:
            body = data[i % len(data)]
            os.pwrite(handle, body, 0)
            os.ftruncate(handle, len(body))
        finally:
            os.close(handle)
        if _renameat2(-100, bytes(spare), -100, bytes(report), 2) != 0:
            raise OSError(ctypes.get_errno(), "renameat2")

    return write


def renamed(folder: Path, data: list[bytes]) -> Callable[[int], None]:
    """A new file beside the report, renamed over it (`atomic_write`)."""
    report = folder / "RATIONALE.md"
    return lambda i: atomic_write(report, data[i % len(data)])


def replaced(folder: Path, data: list[bytes]) -> Callable[[int], None]:
    """The report write now: a new file beside it, swapped with it, the old one unlinked."""
    report = folder / "RATIONALE.md"
    report.write_bytes(data[0])
    return lambda i: replace_file(report, data[i % len(data)])


def anchor_in_place(folder: Path) -> Callable[[int], None]:
    fd = os.open(folder / "head.json", os.O_RDWR | os.O_CREAT, 0o644)

    def write(i: int) -> None:
        os.fstat(fd)  # the old code checked it was not deleted under it
        os.pwrite(fd, _anchor(i).ljust(255) + b"\n", 0)
        os.fstat(fd)

    return write


def anchor_renamed(folder: Path) -> Callable[[int], None]:
    path = folder / "head.json"
    return lambda i: atomic_write(path, _anchor(i) + b"\n")


def anchor_replaced(folder: Path) -> Callable[[int], None]:
    path = folder / "head.json"
    path.write_bytes(_anchor(0) + b"\n")
    return lambda i: replace_file(path, _anchor(i) + b"\n")


def _anchor(i: int) -> bytes:
    position = {"offset": 1000 * i, "lines": i, "head": f"{i:064x}", "last_seq": i}
    return json.dumps(position).encode("ascii")


def reports(size: int) -> list[bytes]:
    """A few reports of about `size` bytes, differing as successive renders do."""
    line = b"- `echo hello` ran: rc=0, 1 line(s) of output, 0.01 s\n"
    body = line * (size // len(line))
    return [
        b"# RATIONALE\n\n" + body + f"\n_Journal head: `{i:064x}`_\n".encode() for i in range(4)
    ]


def timed(write: Callable[[int], None], count: int) -> float:
    started = time.perf_counter()
    for i in range(count):
        write(i)
    return (time.perf_counter() - started) / count * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 writes, 2 rounds")
    parser.add_argument("--size", type=int, default=50_000, help="report size in bytes")
    args = parser.parse_args(argv)
    count, rounds = (200, 2) if args.quick else (2000, 5)
    data = reports(args.size)
    cases: dict[str, Callable[[Path], Callable[[int], None]]] = {
        "RATIONALE.md, old: pwrite into a spare, renameat2 swap": lambda f: swapped(f, data),
        "RATIONALE.md, a new file (O_EXCL) renamed over it": lambda f: renamed(f, data),
        "RATIONALE.md, new: a new file swapped in, the old one unlinked": lambda f: replaced(
            f, data
        ),
        "head.json, old: pwrite in place": anchor_in_place,
        "head.json, a new file renamed over it": anchor_renamed,
        "head.json, new: a new file swapped in, the old one unlinked": anchor_replaced,
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    with tempfile.TemporaryDirectory(prefix="bench-report-write-") as root:
        for round_ in range(rounds):
            for name, make in cases.items():
                folder = Path(root) / f"{round_}-{len(times[name])}-{abs(hash(name))}"
                folder.mkdir()
                times[name].append(timed(make(folder), count))
    print(f"{count:,} writes of a {len(data[0]):,}-byte report (and of head.json), median of")
    print(f"{rounds} rounds, in {tempfile.gettempdir()}\n")
    print("| write | µs per write |")
    print("|---|--:|")
    for name, values in times.items():
        print(f"| {name} | {statistics.median(values):.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
