"""SSH keys for the tests of signed approvals and seals, made by stock ssh-keygen: a fresh key,
the allowed_signers line that trusts it, and a workspace whose policy takes only signed answers.

Imported as `from sshkeys import ...`; pytest puts tests/ on the path (pyproject's `pythonpath`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

KEYGEN = shutil.which("ssh-keygen") or "/usr/bin/ssh-keygen"
SIGNED_POLICY = """default = "allow"
[approval]
channel = "file"
timeout = 60
allowed_signers = "allowed_signers"
[[rule]]
id = "changes"
when = "act == 'change-state'"
decision = "ask"
message = "a qualified engineer approves every change"
"""


def new_key(folder: Path, name: str, comment: str | None = None) -> Path:
    """A fresh ed25519 key with no passphrase at `folder / name` (its public half beside it,
    `name.pub`), its comment `comment` or else `name`."""
    key = folder / name
    argv = [KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", comment or name, "-f", str(key)]
    subprocess.run(argv, check=True)
    return key


def signer_line(key: Path, identity: str = "alice@example.com") -> str:
    """The allowed_signers line that trusts `key` as `identity`."""
    kind, blob = (key.parent / f"{key.name}.pub").read_text().split()[:2]
    return f"{identity} {kind} {blob}\n"


def require_signatures(ws: Path, signers: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGNED_POLICY in `ws`, trusting the allowed_signers line(s) `signers`; no default key
    and no agent, so that only a key named with `--key` signs."""
    (ws / "epistemic.toml").write_text(SIGNED_POLICY)
    (ws / "allowed_signers").write_text(signers)
    monkeypatch.setenv("HOME", str(ws.parent / "home"))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
