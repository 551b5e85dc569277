"""The contract and the helpers everything else stands on: value records, errors, the record's
layout, the act vocabulary, the tool schemas, secret scrubbing, text for humans.
"""
