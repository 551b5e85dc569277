"""The program tables, one module per family of programs."""
