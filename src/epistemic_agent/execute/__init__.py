"""Running and watching acts: the shell, the file tools, the sandbox, observation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import front_door

# -- the front door: what other packages may use of this one ---------------------------

if TYPE_CHECKING:
    from .baseline import DIRECTORY as DIRECTORY
    from .baseline import GONE as GONE
    from .baseline import Baseline as Baseline
    from .baseline import is_binary as is_binary
    from .files import FileOutcome as FileOutcome
    from .files import precheck as precheck
    from .files import run_file_tool as run_file_tool
    from .observe.base import DEFAULT_IGNORE as DEFAULT_IGNORE
    from .observe.base import Changes as Changes
    from .observe.base import Observer as Observer
    from .observe.base import changed_since as changed_since
    from .observe.registry import best_observer as best_observer
    from .observe.registry import observer_class as observer_class
    from .observe.registry import outside_observer as outside_observer
    from .reaper import Reaper as Reaper
    from .sandbox.apply import DEVICES as DEVICES
    from .sandbox.apply import Launch as Launch
    from .sandbox.confinement import Confinement as Confinement
    from .sandbox.confinement import ConfinementError as ConfinementError
    from .sandbox.confinement import probe as probe
    from .sandbox.confinement import unmet as unmet
    from .sandbox.confinement import warning as warning
    from .sandbox.landlock import restrict_thread as landlock_restrict_thread
    from .sandbox.layouts import layouts as layouts
    from .sandbox.layouts import unprotected as unprotected
    from .sandbox.platform import Platform as Platform
    from .sandbox.platform import detect as detect
    from .sandbox.readable import beneath as beneath
    from .sandbox.syscalls import CLONE_NEWNS as CLONE_NEWNS
    from .sandbox.syscalls import CLONE_NEWPID as CLONE_NEWPID
    from .sandbox.syscalls import MS_NODEV as MS_NODEV
    from .sandbox.syscalls import MS_NOEXEC as MS_NOEXEC
    from .sandbox.syscalls import MS_NOSUID as MS_NOSUID
    from .sandbox.syscalls import MS_PRIVATE as MS_PRIVATE
    from .sandbox.syscalls import MS_REC as MS_REC
    from .sandbox.syscalls import mount as mount
    from .sandbox.syscalls import unshare as unshare
    from .sandbox.tripwire import Attempts as Attempts
    from .sandbox.tripwire import Tripwire as Tripwire
    from .shell import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT
    from .shell import Execution as Execution
    from .shell import Interrupted as Interrupted
    from .shell import bounded_text as bounded_text
    from .shell import run_shell as run_shell
    from .trials import prove as prove
    from .trials import verdicts as verdicts

#: public name -> "submodule:attribute", imported when first used
EXPORTS = {
    "Attempts": "sandbox.tripwire:Attempts",
    "Baseline": "baseline:Baseline",
    "CLONE_NEWNS": "sandbox.syscalls:CLONE_NEWNS",
    "CLONE_NEWPID": "sandbox.syscalls:CLONE_NEWPID",
    "Changes": "observe.base:Changes",
    "Confinement": "sandbox.confinement:Confinement",
    "ConfinementError": "sandbox.confinement:ConfinementError",
    "DEFAULT_IGNORE": "observe.base:DEFAULT_IGNORE",
    "DEFAULT_TIMEOUT": "shell:DEFAULT_TIMEOUT",
    "DEVICES": "sandbox.apply:DEVICES",
    "DIRECTORY": "baseline:DIRECTORY",
    "Execution": "shell:Execution",
    "FileOutcome": "files:FileOutcome",
    "GONE": "baseline:GONE",
    "Interrupted": "shell:Interrupted",
    "Launch": "sandbox.apply:Launch",
    "MS_NODEV": "sandbox.syscalls:MS_NODEV",
    "MS_NOEXEC": "sandbox.syscalls:MS_NOEXEC",
    "MS_NOSUID": "sandbox.syscalls:MS_NOSUID",
    "MS_PRIVATE": "sandbox.syscalls:MS_PRIVATE",
    "MS_REC": "sandbox.syscalls:MS_REC",
    "Observer": "observe.base:Observer",
    "Platform": "sandbox.platform:Platform",
    "Reaper": "reaper:Reaper",
    "Tripwire": "sandbox.tripwire:Tripwire",
    "beneath": "sandbox.readable:beneath",
    "best_observer": "observe.registry:best_observer",
    "bounded_text": "shell:bounded_text",
    "changed_since": "observe.base:changed_since",
    "detect": "sandbox.platform:detect",
    "is_binary": "baseline:is_binary",
    "landlock_restrict_thread": "sandbox.landlock:restrict_thread",
    "layouts": "sandbox.layouts:layouts",
    "mount": "sandbox.syscalls:mount",
    "observer_class": "observe.registry:observer_class",
    "outside_observer": "observe.registry:outside_observer",
    "precheck": "files:precheck",
    "probe": "sandbox.confinement:probe",
    "prove": "trials:prove",
    "run_file_tool": "files:run_file_tool",
    "run_shell": "shell:run_shell",
    "unmet": "sandbox.confinement:unmet",
    "unprotected": "sandbox.layouts:unprotected",
    "unshare": "sandbox.syscalls:unshare",
    "verdicts": "trials:verdicts",
    "warning": "sandbox.confinement:warning",
}
__all__ = [
    "CLONE_NEWNS",
    "CLONE_NEWPID",
    "DEFAULT_IGNORE",
    "DEFAULT_TIMEOUT",
    "DEVICES",
    "DIRECTORY",
    "GONE",
    "MS_NODEV",
    "MS_NOEXEC",
    "MS_NOSUID",
    "MS_PRIVATE",
    "MS_REC",
    "Attempts",
    "Baseline",
    "Changes",
    "Confinement",
    "ConfinementError",
    "Execution",
    "FileOutcome",
    "Interrupted",
    "Launch",
    "Observer",
    "Platform",
    "Reaper",
    "Tripwire",
    "beneath",
    "best_observer",
    "bounded_text",
    "changed_since",
    "detect",
    "is_binary",
    "landlock_restrict_thread",
    "layouts",
    "mount",
    "observer_class",
    "outside_observer",
    "precheck",
    "probe",
    "prove",
    "run_file_tool",
    "run_shell",
    "unmet",
    "unprotected",
    "unshare",
    "verdicts",
    "warning",
]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__ = front_door(__name__, EXPORTS)
