"""The supervisor: a second model (or a scripted one) that reads a call's declared act and
reason before the call runs, and the supervisors a session can be given by name."""
