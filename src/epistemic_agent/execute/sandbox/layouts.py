"""The layouts a session cannot protect on this machine, and the refusal to start in one.

A confinement keeps the tool's installation and the policy read-only for every act by binding
them (and pinning the folders above them) where they lie in a writable area. What it cannot
bind is named by install.exposures: a symlink on the way in a writable folder, a missing path
an act could create, an installation folder holding a writable one; and under the `landlock`
mechanism (no mount namespace) anything of the tool inside a writable folder. On a platform
that protects the tool and the record, a session refuses to start in such a layout rather than
claim a guarantee it cannot keep.
"""

from __future__ import annotations

from .confinement import Confinement
from .install import LANDLOCK_INSTEAD, LANDLOCK_WHY, Exposure, linked_exposures, under


def layouts(confinement: Confinement, record_files: tuple[str, ...] = ()) -> list[Exposure]:
    """What of the tool as installed now, and of the record's files as named (`record_files`:
    the policy, allowed_signers), this confinement cannot keep out of its acts' reach."""
    roots = confinement.roots()
    found = list(confinement.exposed)
    if confinement.mechanism == "landlock":
        inside = [path for path in confinement.tool if any(under(path, root) for root in roots)]
        found += [Exposure(path, LANDLOCK_WHY, LANDLOCK_INSTEAD) for path in inside]
    found += linked_exposures(record_files, roots)
    return list(dict.fromkeys(found))


def unprotected(confinement: Confinement, record_files: tuple[str, ...] = ()) -> str | None:
    """Why a session may not start here, in one line: a layout the platform would otherwise
    protect (the tool, the policy) and cannot; None when there is none."""
    missing = confinement.platform.not_held()
    found: list[Exposure] = []
    if "tool-protected" not in missing:
        found += confinement.exposed
    if "record-protected" not in missing:
        found += linked_exposures(record_files, confinement.roots())
    if not found:
        return None
    first = found[0]
    more = f" ({len(found) - 1} more: see `epistemic doctor`)" if len(found) > 1 else ""
    return f"cannot keep {first.path} out of the agent's reach ({first.why}): {first.instead}{more}"
