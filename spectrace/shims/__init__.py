"""The runtime shims (docs/shims.md): ``spectrace.shims.runtime`` is the entry point."""
