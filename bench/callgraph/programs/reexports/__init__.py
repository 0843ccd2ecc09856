"""Names re-exported by the package: `from .impl import start as begin`, `from .sub.tools import *`."""
from .impl import start as begin
from .sub.tools import *
