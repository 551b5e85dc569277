"""Policies: ordered CEL rules and a default, presets, policy files, alert hooks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import front_door

# -- the front door: what other packages may use of this one ---------------------------

if TYPE_CHECKING:
    from .alerts import Alerts as Alerts
    from .extras import SIGNERS_MAX_BYTES as SIGNERS_MAX_BYTES
    from .file import load_policy as load_policy
    from .file import read_policy as read_policy
    from .rules import Decision as Decision
    from .rules import Policy as Policy
    from .rules import PolicyError as PolicyError
    from .rules import call_facts as call_facts
    from .rules import complete_facts as complete_facts
    from .rules import find_policy as find_policy
    from .rules import paths_known as paths_known
    from .rules import preset as preset
    from .supervisor import ROLE as ROLE
    from .supervisor import SupervisorSpec as SupervisorSpec
    from .trust import MAX_FILE as MAX_FILE
    from .trust import TrustError as TrustError
    from .trust import file_digest as file_digest
    from .trust import trust as trust_file
    from .trust import trust_folder as trust_folder
    from .trust import trusted as trusted

#: public name -> "submodule:attribute", imported when first used
EXPORTS = {
    "Alerts": "alerts:Alerts",
    "Decision": "rules:Decision",
    "MAX_FILE": "trust:MAX_FILE",
    "Policy": "rules:Policy",
    "PolicyError": "rules:PolicyError",
    "ROLE": "supervisor:ROLE",
    "SIGNERS_MAX_BYTES": "extras:SIGNERS_MAX_BYTES",
    "SupervisorSpec": "supervisor:SupervisorSpec",
    "TrustError": "trust:TrustError",
    "call_facts": "rules:call_facts",
    "complete_facts": "rules:complete_facts",
    "file_digest": "trust:file_digest",
    "find_policy": "rules:find_policy",
    "load_policy": "file:load_policy",
    "paths_known": "rules:paths_known",
    "preset": "rules:preset",
    "read_policy": "file:read_policy",
    "trust_file": "trust:trust",
    "trust_folder": "trust:trust_folder",
    "trusted": "trust:trusted",
}
__all__ = [
    "MAX_FILE",
    "ROLE",
    "SIGNERS_MAX_BYTES",
    "Alerts",
    "Decision",
    "Policy",
    "PolicyError",
    "SupervisorSpec",
    "TrustError",
    "call_facts",
    "complete_facts",
    "file_digest",
    "find_policy",
    "load_policy",
    "paths_known",
    "preset",
    "read_policy",
    "trust_file",
    "trust_folder",
    "trusted",
]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__ = front_door(__name__, EXPORTS)
