"""Who may approve: the allowed_signers files a policy names, each as a private copy taken
when the session opened (named by its SHA-256), so that a file swapped in later (by a rename
of its folder, say) is never read."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import atomic_write, read_regular
from ..policy import SIGNERS_MAX_BYTES

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..policy import Policy


class Signers:
    """The allowed_signers copies of one session, kept in `folder`."""

    def __init__(
        self, policy: Policy, folder: Path, recorded: Mapping[str, str] | None = None
    ) -> None:
        self.policy = policy
        self.folder = folder
        self._copies: dict[str, str] = {}
        for named, digest in (recorded or {}).items():  # the copies a session recorded
            copy = folder / digest
            if digest and copy.is_file():
                self._copies[named] = str(copy)
        for named in policy.signer_files():  # who may approve, as it stood when the session opened
            self.for_file(named)

    def digests(self) -> dict[str, str | None]:
        """Each allowed_signers file the policy names, and the hash of the copy in force (a
        copy is named by its hash), else of the file now."""
        return {path: self._digest(path) for path in self.policy.signer_files()}

    def for_rule(self, rule: str | None) -> str | None:
        """The allowed_signers file that decides who may approve what `rule` asks about: the
        private copy of the one named."""
        named = self.policy.signers_for(rule)
        return None if named is None else self.for_file(named)

    def for_file(self, named: str) -> str:
        if named not in self._copies:
            self._copies[named] = self._copy(named)
        return self._copies[named]

    def _digest(self, named: str) -> str | None:
        copy = self._copies.get(named)
        if copy is not None and copy != named:
            return Path(copy).name
        return sha256_of(named)

    def _copy(self, named: str) -> str:
        try:
            data = read_regular(named, SIGNERS_MAX_BYTES)
        except OSError:
            return named  # checked when used: an answer then does not count
        self.folder.mkdir(parents=True, exist_ok=True)
        private = self.folder / hashlib.sha256(data).hexdigest()
        if not private.exists():
            atomic_write(private, data)
        return str(private)


def sha256_of(path: str) -> str | None:
    try:
        return hashlib.sha256(read_regular(path, SIGNERS_MAX_BYTES)).hexdigest()
    except OSError:
        return None
