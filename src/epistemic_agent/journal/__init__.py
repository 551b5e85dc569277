"""The record: the hash-chained journal, its records, evidence, verification, seals, recovery of
killed sessions.
"""
