"""A call in, a verdict out: the pure checks of a declaration, the policy's decision and a human's
approval.
"""
