"""Confinement of every act by the kernel (docs/security.md)."""
