"""What a shell command would do, from its parse: the classifier, its cache and the per-program
option grammars.
"""
