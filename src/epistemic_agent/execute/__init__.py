"""Running and watching acts: the shell, the file tools, the sandbox, observation."""
