"""dnsse: find concurrency bugs in distributed AI programs by controlled, searched execution."""

from dnsse.api import Range, emit

__version__ = "0.1.0"
__all__ = ["Range", "emit", "__version__"]
