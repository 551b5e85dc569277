"""The record: the hash-chained journal, its records, evidence, verification, seals, recovery of
killed sessions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import front_door

# -- the front door: what other packages may use of this one ---------------------------

if TYPE_CHECKING:
    from .beliefs import ASK as ASK
    from .beliefs import Ledger as Ledger
    from .beliefs import agent_verdict as agent_verdict
    from .beliefs import final as final
    from .blobs import read_blob as read_blob
    from .catalog import Entry as Entry
    from .catalog import by_default as by_default
    from .catalog import choosing as choosing
    from .catalog import find_layout as find_layout
    from .catalog import for_writing as for_writing
    from .catalog import listing as listing
    from .catalog import named as named
    from .evidence import DEFAULT_CAP as DEFAULT_CAP
    from .evidence import EvidenceStore as EvidenceStore
    from .evidence import copy_of as copy_of
    from .evidence_check import Listing as Listing
    from .evidence_check import list_store as list_store
    from .evidence_check import stored_unreferenced as stored_unreferenced
    from .history import History as History
    from .history import covers as covers
    from .history import inside as inside
    from .log import FORMAT_VERSION as FORMAT_VERSION
    from .log import GENESIS as GENESIS
    from .log import JournalError as JournalError
    from .log import Position as Position
    from .log import Record as Record
    from .log import decode as decode
    from .log import follow as follow
    from .log import line_hash as line_hash
    from .notice import announce as announce
    from .notice import check_journal as check_journal
    from .notice import exit_status as exit_status
    from .notice import notice as chain_notice
    from .notice import verdict_of as verdict_of
    from .reading import listed as listed
    from .reading import newer_note as newer_note
    from .reading import newer_version as newer_version
    from .reading import read_numbered as read_numbered
    from .reading import read_records as read_records
    from .reading import versions_text as versions_text
    from .record_check import PROBLEMS as PROBLEMS
    from .record_check import Options as Options
    from .record_check import check_record as check_record
    from .records import CallView as CallView
    from .records import call_record as call_record
    from .records import merge_calls as merge_calls
    from .records import outcome_record as outcome_record
    from .records import rejected_record as rejected_record
    from .records import seq_of as seq_of
    from .records import view_of as view_of
    from .schema_docs import DEFAULT as DEFAULT
    from .schema_docs import render as render
    from .seal import MAX_STATEMENT as MAX_STATEMENT
    from .seal import NAME as NAME
    from .sealing import NotSealed as NotSealed
    from .sealing import seal as seal_record
    from .sessions import Loaded as Loaded
    from .sessions import ReadError as ReadError
    from .sessions import find_journals as find_journals
    from .sessions import journal_of as journal_of
    from .sessions import load as load
    from .spend import BUCKET as BUCKET
    from .spend import Spend as Spend
    from .spend import dollars as dollars
    from .spend import spend_of as spend_of
    from .state import SessionState as SessionState
    from .summary import summary as session_summary
    from .verify import INTACT as INTACT
    from .verify import TORN as TORN
    from .verify import Verification as Verification
    from .verify import verify_journal as verify_journal
    from .versions import record_versions as record_versions
    from .view import RAN as RAN
    from .view import Tally as Tally
    from .view import outcome_fate as outcome_fate
    from .view import tally_of as tally_of
    from .writer import JournalWriter as JournalWriter
    from .writers import find_writer as find_writer

#: public name -> "submodule:attribute", imported when first used
EXPORTS = {
    "ASK": "beliefs:ASK",
    "BUCKET": "spend:BUCKET",
    "CallView": "records:CallView",
    "DEFAULT": "schema_docs:DEFAULT",
    "DEFAULT_CAP": "evidence:DEFAULT_CAP",
    "Entry": "catalog:Entry",
    "EvidenceStore": "evidence:EvidenceStore",
    "FORMAT_VERSION": "log:FORMAT_VERSION",
    "GENESIS": "log:GENESIS",
    "History": "history:History",
    "INTACT": "verify:INTACT",
    "JournalError": "log:JournalError",
    "JournalWriter": "writer:JournalWriter",
    "Ledger": "beliefs:Ledger",
    "Listing": "evidence_check:Listing",
    "Loaded": "sessions:Loaded",
    "MAX_STATEMENT": "seal:MAX_STATEMENT",
    "NAME": "seal:NAME",
    "NotSealed": "sealing:NotSealed",
    "Options": "record_check:Options",
    "PROBLEMS": "record_check:PROBLEMS",
    "Position": "log:Position",
    "RAN": "view:RAN",
    "ReadError": "sessions:ReadError",
    "Record": "log:Record",
    "SessionState": "state:SessionState",
    "Spend": "spend:Spend",
    "TORN": "verify:TORN",
    "Tally": "view:Tally",
    "Verification": "verify:Verification",
    "agent_verdict": "beliefs:agent_verdict",
    "announce": "notice:announce",
    "by_default": "catalog:by_default",
    "call_record": "records:call_record",
    "chain_notice": "notice:notice",
    "check_journal": "notice:check_journal",
    "check_record": "record_check:check_record",
    "choosing": "catalog:choosing",
    "copy_of": "evidence:copy_of",
    "covers": "history:covers",
    "decode": "log:decode",
    "dollars": "spend:dollars",
    "exit_status": "notice:exit_status",
    "final": "beliefs:final",
    "find_journals": "sessions:find_journals",
    "find_layout": "catalog:find_layout",
    "find_writer": "writers:find_writer",
    "follow": "log:follow",
    "for_writing": "catalog:for_writing",
    "inside": "history:inside",
    "journal_of": "sessions:journal_of",
    "line_hash": "log:line_hash",
    "list_store": "evidence_check:list_store",
    "listed": "reading:listed",
    "listing": "catalog:listing",
    "load": "sessions:load",
    "merge_calls": "records:merge_calls",
    "named": "catalog:named",
    "newer_note": "reading:newer_note",
    "newer_version": "reading:newer_version",
    "outcome_fate": "view:outcome_fate",
    "outcome_record": "records:outcome_record",
    "read_blob": "blobs:read_blob",
    "read_numbered": "reading:read_numbered",
    "read_records": "reading:read_records",
    "record_versions": "versions:record_versions",
    "rejected_record": "records:rejected_record",
    "render": "schema_docs:render",
    "seal_record": "sealing:seal",
    "seq_of": "records:seq_of",
    "session_summary": "summary:summary",
    "spend_of": "spend:spend_of",
    "stored_unreferenced": "evidence_check:stored_unreferenced",
    "tally_of": "view:tally_of",
    "verdict_of": "notice:verdict_of",
    "verify_journal": "verify:verify_journal",
    "versions_text": "reading:versions_text",
    "view_of": "records:view_of",
}
__all__ = [
    "ASK",
    "BUCKET",
    "DEFAULT",
    "DEFAULT_CAP",
    "FORMAT_VERSION",
    "GENESIS",
    "INTACT",
    "MAX_STATEMENT",
    "NAME",
    "PROBLEMS",
    "RAN",
    "TORN",
    "CallView",
    "Entry",
    "EvidenceStore",
    "History",
    "JournalError",
    "JournalWriter",
    "Ledger",
    "Listing",
    "Loaded",
    "NotSealed",
    "Options",
    "Position",
    "ReadError",
    "Record",
    "SessionState",
    "Spend",
    "Tally",
    "Verification",
    "agent_verdict",
    "announce",
    "by_default",
    "call_record",
    "chain_notice",
    "check_journal",
    "check_record",
    "choosing",
    "copy_of",
    "covers",
    "decode",
    "dollars",
    "exit_status",
    "final",
    "find_journals",
    "find_layout",
    "find_writer",
    "follow",
    "for_writing",
    "inside",
    "journal_of",
    "line_hash",
    "list_store",
    "listed",
    "listing",
    "load",
    "merge_calls",
    "named",
    "newer_note",
    "newer_version",
    "outcome_fate",
    "outcome_record",
    "read_blob",
    "read_numbered",
    "read_records",
    "record_versions",
    "rejected_record",
    "render",
    "seal_record",
    "seq_of",
    "session_summary",
    "spend_of",
    "stored_unreferenced",
    "tally_of",
    "verdict_of",
    "verify_journal",
    "versions_text",
    "view_of",
]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__ = front_door(__name__, EXPORTS)
