"""spectrace: code tracing and contract verification for the SGLang scheduler.

The design card keeps ``tracer/``, ``contracts/`` and ``patches/`` at the repository's top. An
install maps them to ``spectrace.tracer``, ``spectrace.contracts`` and ``spectrace.patches``
(``package-dir`` in pyproject.toml). From a checkout, where this folder shadows the installed
package, the same names resolve through this package's search path (docs/design.md).
"""

import os as _os

__version__ = "0.1.0"

_checkout = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if _os.path.isfile(_os.path.join(_checkout, "pyproject.toml")) and all(
    _os.path.isfile(_os.path.join(_checkout, name, "__init__.py")) for name in ("tracer", "contracts", "patches")
):
    __path__.append(_checkout)
