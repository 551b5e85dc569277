"""The contract and the helpers everything else stands on: value records, errors, the record's
layout, the act vocabulary, the tool schemas, secret scrubbing, text for humans."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .frontdoor import front_door

# -- the front door: what other packages may use of this one ---------------------------

if TYPE_CHECKING:
    from .cancel import Cancel as Cancel
    from .clock import epoch_of as epoch_of
    from .clock import now as now
    from .errors import EXIT_PROVIDER as EXIT_PROVIDER
    from .errors import EXIT_RECORD as EXIT_RECORD
    from .errors import EXIT_USAGE as EXIT_USAGE
    from .errors import EpistemicError as EpistemicError
    from .errors import ProviderError as ProviderError
    from .errors import SupervisorUnavailable as SupervisorUnavailable
    from .errors import UsageError as UsageError
    from .frontdoor import front_door as front_door
    from .fsutil import atomic_write as atomic_write
    from .fsutil import make_unique as make_unique
    from .fsutil import replace_file as replace_file
    from .htmltext import esc as esc
    from .identity import GitTimeout as GitTimeout
    from .identity import git_head as git_head
    from .identity import run_git as run_git
    from .identity import user as user
    from .layout import ANCHOR_NAME as ANCHOR_NAME
    from .layout import JOURNAL_NAME as JOURNAL_NAME
    from .layout import POLICY_NAME as POLICY_NAME
    from .layout import RECORD_DIR as RECORD_DIR
    from .layout import REPORT_NAME as REPORT_NAME
    from .layout import REPORT_NAMES as REPORT_NAMES
    from .layout import SESSIONS_DIR as SESSIONS_DIR
    from .layout import Layout as Layout
    from .layout import discover as discover
    from .layout import drop_old_spares as drop_old_spares
    from .layout import ignore_record as ignore_record
    from .layout import is_guarded as is_guarded
    from .layout import is_protected as is_protected
    from .layout import is_session_id as is_session_id
    from .layout import moved_note as moved_note
    from .layout import workspace_of as workspace_of
    from .liveness import recorder_alive as recorder_alive
    from .outcome_line import excerpt as excerpt
    from .outcome_line import outcome_line as informative_line
    from .programs import system_program as system_program
    from .redact import Redactor as Redactor
    from .redact import check_patterns as check_patterns
    from .registry import load as load
    from .safepath import open_beneath as open_beneath
    from .safepath import open_in_root as open_in_root
    from .safepath import where as where
    from .saferead import TooLarge as TooLarge
    from .saferead import read_open as read_open
    from .saferead import read_regular as read_regular
    from .safetext import one_line as one_line
    from .safetext import visible as visible
    from .sshsig import FINGERPRINT as SSH_FINGERPRINT
    from .sshsig import SIGNATURE_START as SSH_SIGNATURE_START
    from .sshsig import SealError as SealError
    from .sshsig import choose_key as ssh_choose_key
    from .sshsig import fingerprint as ssh_fingerprint
    from .sshsig import keygen as ssh_keygen
    from .sshsig import principals as ssh_principals
    from .sshsig import run_keygen as ssh_run_keygen
    from .sshsig import sign as ssh_sign
    from .sshsig import signed_by as ssh_signed_by
    from .sshsig import verify as ssh_verify
    from .structs import field as field
    from .structs import replace as replace
    from .structs import struct as struct
    from .suggest import did_you_mean as did_you_mean
    from .tokens_text import input_sum as input_sum
    from .tokens_text import tokens_line as tokens_line
    from .toml import TomlError as TomlError
    from .toml import loads as loads
    from .tools import TOOL_NAMES as TOOL_NAMES
    from .tools import TOOL_SPECS as TOOL_SPECS
    from .tools import TOOLS_BY_NAME as TOOLS_BY_NAME
    from .tools import anthropic_tools as anthropic_tools
    from .tools import openai_tools as openai_tools
    from .tools import responses_tools as responses_tools
    from .version import __version__ as __version__
    from .vocabulary import ACT_NAMES as ACT_NAMES
    from .vocabulary import ACTS as ACTS
    from .vocabulary import ACTS_BY_NAME as ACTS_BY_NAME
    from .vocabulary import FILE_TOOL_ACTS as FILE_TOOL_ACTS
    from .vocabulary import GUARANTEES as GUARANTEES
    from .vocabulary import act_list_text as act_list_text
    from .vocabulary import act_order as act_order
    from .vocabulary import is_mutating as is_mutating
    from .vocabulary import normalise_act as normalise_act

#: public name -> "submodule:attribute", imported when first used
EXPORTS = {
    "ACTS": "vocabulary:ACTS",
    "ACTS_BY_NAME": "vocabulary:ACTS_BY_NAME",
    "ACT_NAMES": "vocabulary:ACT_NAMES",
    "ANCHOR_NAME": "layout:ANCHOR_NAME",
    "Cancel": "cancel:Cancel",
    "EXIT_PROVIDER": "errors:EXIT_PROVIDER",
    "EXIT_RECORD": "errors:EXIT_RECORD",
    "EXIT_USAGE": "errors:EXIT_USAGE",
    "EpistemicError": "errors:EpistemicError",
    "FILE_TOOL_ACTS": "vocabulary:FILE_TOOL_ACTS",
    "GUARANTEES": "vocabulary:GUARANTEES",
    "GitTimeout": "identity:GitTimeout",
    "JOURNAL_NAME": "layout:JOURNAL_NAME",
    "Layout": "layout:Layout",
    "POLICY_NAME": "layout:POLICY_NAME",
    "ProviderError": "errors:ProviderError",
    "RECORD_DIR": "layout:RECORD_DIR",
    "REPORT_NAME": "layout:REPORT_NAME",
    "REPORT_NAMES": "layout:REPORT_NAMES",
    "Redactor": "redact:Redactor",
    "SESSIONS_DIR": "layout:SESSIONS_DIR",
    "SSH_FINGERPRINT": "sshsig:FINGERPRINT",
    "SSH_SIGNATURE_START": "sshsig:SIGNATURE_START",
    "SealError": "sshsig:SealError",
    "SupervisorUnavailable": "errors:SupervisorUnavailable",
    "TOOLS_BY_NAME": "tools:TOOLS_BY_NAME",
    "TOOL_NAMES": "tools:TOOL_NAMES",
    "TOOL_SPECS": "tools:TOOL_SPECS",
    "TomlError": "toml:TomlError",
    "TooLarge": "saferead:TooLarge",
    "UsageError": "errors:UsageError",
    "__version__": "version:__version__",
    "act_list_text": "vocabulary:act_list_text",
    "act_order": "vocabulary:act_order",
    "anthropic_tools": "tools:anthropic_tools",
    "atomic_write": "fsutil:atomic_write",
    "check_patterns": "redact:check_patterns",
    "did_you_mean": "suggest:did_you_mean",
    "discover": "layout:discover",
    "drop_old_spares": "layout:drop_old_spares",
    "epoch_of": "clock:epoch_of",
    "esc": "htmltext:esc",
    "excerpt": "outcome_line:excerpt",
    "field": "structs:field",
    "front_door": "frontdoor:front_door",
    "git_head": "identity:git_head",
    "ignore_record": "layout:ignore_record",
    "informative_line": "outcome_line:outcome_line",
    "input_sum": "tokens_text:input_sum",
    "is_guarded": "layout:is_guarded",
    "is_mutating": "vocabulary:is_mutating",
    "is_protected": "layout:is_protected",
    "is_session_id": "layout:is_session_id",
    "load": "registry:load",
    "loads": "toml:loads",
    "make_unique": "fsutil:make_unique",
    "moved_note": "layout:moved_note",
    "normalise_act": "vocabulary:normalise_act",
    "now": "clock:now",
    "one_line": "safetext:one_line",
    "open_beneath": "safepath:open_beneath",
    "open_in_root": "safepath:open_in_root",
    "openai_tools": "tools:openai_tools",
    "read_open": "saferead:read_open",
    "read_regular": "saferead:read_regular",
    "recorder_alive": "liveness:recorder_alive",
    "replace": "structs:replace",
    "replace_file": "fsutil:replace_file",
    "responses_tools": "tools:responses_tools",
    "run_git": "identity:run_git",
    "ssh_choose_key": "sshsig:choose_key",
    "ssh_fingerprint": "sshsig:fingerprint",
    "ssh_keygen": "sshsig:keygen",
    "ssh_principals": "sshsig:principals",
    "ssh_run_keygen": "sshsig:run_keygen",
    "ssh_sign": "sshsig:sign",
    "ssh_signed_by": "sshsig:signed_by",
    "ssh_verify": "sshsig:verify",
    "struct": "structs:struct",
    "system_program": "programs:system_program",
    "tokens_line": "tokens_text:tokens_line",
    "user": "identity:user",
    "visible": "safetext:visible",
    "where": "safepath:where",
    "workspace_of": "layout:workspace_of",
}
__all__ = [
    "ACTS",
    "ACTS_BY_NAME",
    "ACT_NAMES",
    "ANCHOR_NAME",
    "EXIT_PROVIDER",
    "EXIT_RECORD",
    "EXIT_USAGE",
    "FILE_TOOL_ACTS",
    "GUARANTEES",
    "JOURNAL_NAME",
    "POLICY_NAME",
    "RECORD_DIR",
    "REPORT_NAME",
    "REPORT_NAMES",
    "SESSIONS_DIR",
    "SSH_FINGERPRINT",
    "SSH_SIGNATURE_START",
    "TOOLS_BY_NAME",
    "TOOL_NAMES",
    "TOOL_SPECS",
    "Cancel",
    "EpistemicError",
    "GitTimeout",
    "Layout",
    "ProviderError",
    "Redactor",
    "SealError",
    "SupervisorUnavailable",
    "TomlError",
    "TooLarge",
    "UsageError",
    "__version__",
    "act_list_text",
    "act_order",
    "anthropic_tools",
    "atomic_write",
    "check_patterns",
    "did_you_mean",
    "discover",
    "drop_old_spares",
    "epoch_of",
    "esc",
    "excerpt",
    "field",
    "front_door",
    "git_head",
    "ignore_record",
    "informative_line",
    "input_sum",
    "is_guarded",
    "is_mutating",
    "is_protected",
    "is_session_id",
    "load",
    "loads",
    "make_unique",
    "moved_note",
    "normalise_act",
    "now",
    "one_line",
    "open_beneath",
    "open_in_root",
    "openai_tools",
    "read_open",
    "read_regular",
    "recorder_alive",
    "replace",
    "replace_file",
    "responses_tools",
    "run_git",
    "ssh_choose_key",
    "ssh_fingerprint",
    "ssh_keygen",
    "ssh_principals",
    "ssh_run_keygen",
    "ssh_sign",
    "ssh_signed_by",
    "ssh_verify",
    "struct",
    "system_program",
    "tokens_line",
    "user",
    "visible",
    "where",
    "workspace_of",
]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__ = front_door(__name__, EXPORTS)
