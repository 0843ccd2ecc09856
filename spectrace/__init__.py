"""spectrace: code tracing and contract verification for the SGLang scheduler."""

__version__ = "0.1.0"
