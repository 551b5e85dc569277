"""RATIONALE.md is replaced, never rewritten: whatever a reader opened stays whole.

Readers are separate processes, as an editor, `tail -f` or a web server would be: each opens
the report over and over while a session makes calls as fast as it can, checks every read is
a whole report, and keeps some of what it opened open across later renders, reading them again
from the start: the file a reader holds must keep the report it held."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from epistemic_agent.session.session import Session

REASON = "learn what this prints in the current workspace"

READER = r"""
import collections, json, os, sys
report, stop = sys.argv[1], sys.argv[2]
FOOTER_END = b"Check it with `epistemic verify`._\n"
held = collections.deque()  # (fd, the bytes read through it when it was opened)
opened = torn = changed = 0
problems = []

def whole(data):
    return data.startswith(b"# RATIONALE\n") and data.endswith(FOOTER_END) and (
        data.rsplit(b"\n", 2)[-2].startswith(b"_Journal head: `"))

def read_all(fd):
    chunks = []
    offset = 0
    while True:
        chunk = os.pread(fd, 1 << 16, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)

while not os.path.exists(stop):
    try:
        fd = os.open(report, os.O_RDONLY)
    except FileNotFoundError:
        continue
    data = read_all(fd)
    opened += 1
    if opened == 1:
        print("reading", flush=True)  # the test starts rendering once every reader says so
    if not whole(data):
        torn += 1
        problems.append(["torn", data[:40].decode(errors="replace"),
                         data[-80:].decode(errors="replace")])
    held.append((fd, data))
    for old_fd, old_data in held:  # read again from offset 0: still the report it was
        again = read_all(old_fd)
        if again != old_data:
            changed += 1
            problems.append(["changed", len(old_data), len(again),
                             again[-80:].decode(errors="replace")])
    if len(held) > 12:
        os.close(held.popleft()[0])
print(json.dumps({"opened": opened, "torn": torn, "changed": changed,
                  "problems": problems[:5]}))
"""


@pytest.mark.system  # end to end, slow for the default tier
def test_readers_holding_the_report_open_keep_whole_reports(ws: Path, tmp_path: Path) -> None:
    (ws / "f.txt").write_text("x\n" * 2000)  # a report of some size: its calls quote it
    session = Session(ws).open()
    session.read_file("f.txt", REASON)  # RATIONALE.md exists before the readers start
    stop = tmp_path / "stop"
    readers = [
        subprocess.Popen(
            [sys.executable, "-c", READER, str(ws / "RATIONALE.md"), str(stop)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    try:
        for reader in readers:
            assert reader.stdout is not None and reader.stdout.readline() == "reading\n"
        for i in range(150):
            if i % 50 == 25:  # runs long enough to show as running: a re-render mid-command
                session.bash("echo start; sleep 0.8; echo done", "collect-info", REASON)
            elif i % 10 == 0:
                session.bash(f"echo {i}", "collect-info", REASON)
            else:
                session.read_file("f.txt", REASON)
    finally:
        stop.touch()
        results = [json.loads(reader.communicate(timeout=60)[0]) for reader in readers]
        session.close()
    for result in results:
        assert result["opened"] >= 20, result
        assert result["torn"] == 0 and result["changed"] == 0, result
    assert not [p for p in ws.iterdir() if p.name.startswith(".RATIONALE.md.")]


def test_each_render_is_a_new_file_and_what_a_reader_holds_stays_as_it_was(ws: Path) -> None:
    (ws / "f.txt").write_text("x\n")
    with Session(ws) as session:
        session.read_file("f.txt", REASON)
        report = ws / "RATIONALE.md"
        with report.open("rb") as held:
            first = held.read()
            for _ in range(4):
                session.read_file("f.txt", REASON)
                held.seek(0)
                assert held.read() == first
                assert os.fstat(held.fileno()).st_nlink == 0  # replaced, not rewritten
        assert report.read_bytes() != first


def test_the_report_copies_an_older_version_kept_are_removed(ws: Path) -> None:
    """Older versions kept earlier reports in `.epistemic/RATIONALE.md.previous` and `.older`
    and rewrote them in place: a session that opens the workspace removes them."""
    (ws / "f.txt").write_text("x\n")
    with Session(ws) as session:
        session.read_file("f.txt", REASON)
    record = ws / ".epistemic"
    for name in ("RATIONALE.md.previous", "RATIONALE.md.older"):
        (record / name).write_text("# RATIONALE\nan old report\n")
    with Session(ws) as session:
        session.bash("echo hi", "collect-info", REASON)
    assert not (record / "RATIONALE.md.previous").exists()
    assert not (record / "RATIONALE.md.older").exists()
