"""The policy files in force during a session, for its audit bundle (docs/audit-bundle.md):
each included when it still exists and hashes to what the journal recorded."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from .format import POLICY, Entry, small_file

if TYPE_CHECKING:
    from typing import Any

    from ...journal import Loaded


def policies_of(session: Loaded, entries: list[Entry], notes: list[str]) -> list[dict[str, Any]]:
    """Each policy in force during the session (header, then `policy` records), once."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for record in session.records:
        policy = record.get("policy") if record.get("kind") == "session" else record
        if record.get("kind") not in ("session", "policy") or not isinstance(policy, dict):
            continue
        source, digest = str(policy.get("source", "")), str(policy.get("sha256", ""))
        if source and (source, digest) not in found:
            found[source, digest] = _policy(session, source, digest, entries, notes)
    if not found:
        notes.append("the journal records no policy (written before policies were applied)")
    return list(found.values())


def _policy(
    session: Loaded, source: str, digest: str, entries: list[Entry], notes: list[str]
) -> dict[str, Any]:
    item: dict[str, Any] = {"source": source, "sha256": digest, "path": None, "note": None}
    if source.startswith("preset:"):
        item["note"] = "a preset: built in, no file"
        return item
    changed = None
    for candidate in _policy_places(session, source):
        data = small_file(candidate)
        if data is None:
            continue
        found = hashlib.sha256(data).hexdigest()
        if found == digest:
            name = POLICY + candidate.name
            if any(entry.path == name for entry in entries):
                name = f"{POLICY}{digest[:12]}-{candidate.name}"
            entries.append(Entry(name, "policy", data=data))
            item["path"] = name
            return item
        changed = changed or found
    if changed:
        item["note"] = f"the file has changed since (sha256 now {changed}): not included"
    else:
        item["note"] = "the file was not found: not included"
    notes.append(f"policy {source}: {item['note']}")
    return item


def _policy_places(session: Loaded, source: str) -> list[Path]:
    """Where a policy file may be now: as recorded, or at the same place in a moved workspace."""
    recorded = str(session.header.get("workspace") or "")
    path = Path(source)
    places = [path] if path.is_absolute() else [Path(recorded) / path, session.workspace / path]
    if recorded and source.startswith(recorded.rstrip("/") + "/"):
        places.append(session.workspace / source[len(recorded.rstrip("/")) + 1 :])
    return list(dict.fromkeys(places))
