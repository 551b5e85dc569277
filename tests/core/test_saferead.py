"""The one reader of files an act may have written: anything but a regular file is refused
at once (a device without being opened), and never more than the limit is read."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from epistemic_agent.core import saferead
from epistemic_agent.core.saferead import NotRegular, TooLarge, read_open, read_regular
from hazards import KINDS, WORDS, plant

pytestmark = pytest.mark.timeout(30)


@pytest.mark.parametrize("kind", KINDS)
def test_every_hazard_is_refused_at_once_and_says_what_it_is(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "planted"
    plant(path, kind)
    with pytest.raises(OSError) as refused:
        read_regular(path, 1 << 20)
    assert WORDS[kind] in str(refused.value.strerror)
    expected = {"sparse": TooLarge, "loop": OSError}.get(kind, NotRegular)
    assert isinstance(refused.value, expected)
    assert refused.value.filename == str(path)


def test_a_device_is_refused_without_being_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening a device runs its driver (a watchdog starts counting): never done."""
    if "device" not in KINDS:
        pytest.skip("making a device node needs root")
    path = tmp_path / "zero"
    plant(path, "device")
    opened: list[str] = []
    real_open = os.open
    monkeypatch.setattr(saferead.os, "open", lambda *a, **k: opened.append(a[0]) or real_open(*a))
    with pytest.raises(NotRegular, match="a character device"):
        read_regular(path, 10)
    assert opened == []


def test_the_limit_is_a_number_of_bytes_and_over_it_is_refused_or_cut(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 10)
    assert read_regular(path, 10) == b"x" * 10
    with pytest.raises(TooLarge, match="larger than 9 bytes") as refused:
        read_regular(path, 9)
    assert refused.value.errno == errno.EFBIG
    assert read_regular(path, 4, whole=False) == b"xxxx"  # only the head was asked for
    plant(path, "sparse")  # the ten bytes, then 4 GB of zeros
    assert read_regular(path, 12, whole=False) == b"x" * 10 + b"\0\0"
    with pytest.raises(TooLarge, match=f"larger than {1 << 20} bytes"):
        read_regular(path, 1 << 20)


def test_a_file_larger_than_it_says_is_still_cut_at_the_limit() -> None:
    """/proc's files say they are empty; a file can also grow after it was stat'ed."""
    with pytest.raises(TooLarge):
        read_regular("/proc/self/status", 16)
    assert len(read_regular("/proc/self/status", 16, whole=False)) == 16


def test_a_symlink_is_followed_only_when_asked(tmp_path: Path) -> None:
    (tmp_path / "target").write_bytes(b"data")
    link = tmp_path / "link"
    link.symlink_to("target")
    assert read_regular(link, 100) == b"data"
    with pytest.raises(NotRegular, match="a symbolic link"):
        read_regular(link, 100, follow=False)
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "absent", 100)


def test_a_descriptor_is_checked_and_read_from_where_it_stands(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"0123456789")
    fd = os.open(path, os.O_RDONLY)
    try:
        os.lseek(fd, 4, os.SEEK_SET)
        assert read_open(fd, 100) == b"456789"
    finally:
        os.close(fd)
    plant(path, "fifo")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        with pytest.raises(NotRegular, match="a FIFO"):
            read_open(fd, 100, str(path))
    finally:
        os.close(fd)


def test_a_part_is_read_from_an_offset(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"0123456789")
    assert read_regular(path, 3, whole=False, offset=4) == b"456"
    assert read_regular(path, 30, whole=False, offset=8) == b"89"
    with pytest.raises(ValueError):
        read_regular(path, 3, offset=4)
