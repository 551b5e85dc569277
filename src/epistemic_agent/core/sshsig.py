"""Signing and checking with stock `ssh-keygen -Y`: the one tool an auditor also has.

Seals sign the journal's head (namespace `epistemic`); approvals sign a human's answer
(namespace `epistemic-approval`). Every call here runs `ssh-keygen` from the system's own
folders first (or the one `$EPISTEMIC_SSH_KEYGEN` names), never through a relative PATH
entry that could lead into a workspace: a session runs it to check what an approver signed,
and a fake one planted by an agent would say yes to anything.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from .errors import EpistemicError
from .programs import system_program

TIMEOUT = 30.0
SIGN_TIMEOUT = 300.0  # a passphrase may be typed at the terminal
SIGNATURE_START = b"-----BEGIN SSH SIGNATURE-----"
FINGERPRINT = re.compile(r"SHA256:[A-Za-z0-9+/]{43}")
KEY_PREFIXES = ("ssh-", "ecdsa-", "sk-")


class SealError(EpistemicError):
    """Something cannot be signed or checked (no ssh-keygen, a bad key): one clear line."""


def keygen() -> str:
    """The ssh-keygen to run: `$EPISTEMIC_SSH_KEYGEN` when the operator names one (an
    absolute path), else the system's."""
    named = os.environ.get("EPISTEMIC_SSH_KEYGEN")
    if named:
        found = named if os.path.isabs(named) and os.access(named, os.X_OK) else None
    else:
        found = system_program("ssh-keygen")
    if found is None:
        raise SealError("ssh-keygen not found: install OpenSSH 8.1 or later (for -Y sign/verify)")
    return found


def run_keygen(
    args: list[str], stdin: Path | None = None, timeout: float = TIMEOUT
) -> tuple[int, str, str]:
    """ssh-keygen's exit status, its standard output, and all it said on one line."""
    try:
        with open(stdin or os.devnull, "rb") as source:
            done = subprocess.run(
                [keygen(), *args],
                stdin=source,
                capture_output=True,
                timeout=timeout,
                check=False,
            )
    except subprocess.TimeoutExpired:
        return 124, "", f"ssh-keygen did not answer within {timeout:g} s"
    except OSError as error:
        raise SealError(f"ssh-keygen cannot be run: {error.strerror or error}") from None
    out = done.stdout.decode("utf-8", "replace")
    said = " ".join((out + done.stderr.decode("utf-8", "replace")).split())
    return done.returncode, out, said


def fingerprint(key: Path) -> str:
    """The SHA256 fingerprint of a key file (private or public)."""
    code, _, said = run_keygen(["-l", "-f", str(key)])
    found = FINGERPRINT.search(said) if code == 0 else None
    if found is None:
        raise SealError(f"{key}: not an SSH key ({said or 'ssh-keygen -l failed'})")
    return found.group()


def sign(message: Path, key: Path, namespace: str) -> Path:
    """`ssh-keygen -Y sign`: the signature file written beside `message` (MESSAGE.sig)."""
    code, _, said = run_keygen(
        ["-Y", "sign", "-f", str(key), "-n", namespace, str(message)], timeout=SIGN_TIMEOUT
    )
    signature = message.with_name(message.name + ".sig")
    if code != 0 or not signature.is_file():
        raise SealError(f"ssh-keygen could not sign with {key}: {said or f'exit {code}'}")
    return signature


def signed_by(message: Path, signature: Path, namespace: str) -> tuple[str | None, str]:
    """The fingerprint of the key that made `signature` over `message`, when the signature
    checks out for its own key (`-Y check-novalidate`), and what ssh-keygen said."""
    code, _, said = run_keygen(
        ["-Y", "check-novalidate", "-n", namespace, "-s", str(signature)], stdin=message
    )
    found = FINGERPRINT.search(said) if code == 0 else None
    return (found.group() if found else None), said


def principals(allowed: Path, signature: Path) -> tuple[list[str], str]:
    """The identities the allowed-signers file gives the signature's key ([] when none)."""
    code, out, said = run_keygen(
        ["-Y", "find-principals", "-f", str(allowed), "-s", str(signature)]
    )
    found = [line.strip() for line in out.splitlines() if line.strip()] if code == 0 else []
    return found, said


def verify(
    allowed: Path, identity: str, message: Path, signature: Path, namespace: str
) -> tuple[bool, str]:
    """`ssh-keygen -Y verify`: whether `identity` signed `message`, and what it said."""
    code, _, said = run_keygen(
        ["-Y", "verify", "-f", str(allowed), "-I", identity, "-n", namespace, "-s", str(signature)],
        stdin=message,
    )
    return code == 0, said


def choose_key(given: str | None, scratch: Path) -> tuple[Path, str]:
    """The key file to sign with (`--key`, else the first key ssh-agent holds, else
    ~/.ssh/id_ed25519), and how to name it. SealError when there is none."""
    if given is not None:
        path = Path(given).expanduser()
        if not path.is_file():
            raise SealError(f"--key {given}: no such key file")
        return path, str(path)
    agent = agent_key(scratch)
    if agent is not None:
        return agent, "ssh-agent"
    default = Path.home() / ".ssh" / "id_ed25519"
    if default.is_file():
        return default, str(default)
    raise SealError(
        "no SSH key to sign with: load one into ssh-agent (ssh-add), or pass --key FILE"
    )


def agent_key(scratch: Path) -> Path | None:
    """The first public key ssh-agent holds, written to a file ssh-keygen can take."""
    if not os.environ.get("SSH_AUTH_SOCK"):
        return None
    ssh_add = system_program("ssh-add")
    if ssh_add is None:
        return None
    try:
        done = subprocess.run(
            [ssh_add, "-L"], stdin=subprocess.DEVNULL, capture_output=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    keys = [
        line
        for line in done.stdout.decode("utf-8", "replace").splitlines()
        if line.startswith(KEY_PREFIXES)
    ]
    if done.returncode != 0 or not keys:
        return None
    path = scratch / "agent-key.pub"
    path.write_text(keys[0] + "\n")
    return path
