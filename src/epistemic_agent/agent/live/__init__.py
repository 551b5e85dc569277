"""The live view: one row per call, the running command and its tail, the model's words."""
