"""See the package README section in docs/ARCHITECTURE.md."""
