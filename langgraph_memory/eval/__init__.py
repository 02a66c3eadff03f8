"""The planted-fact exam (public API filled in below)."""
