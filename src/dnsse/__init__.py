"""dnsse: find concurrency bugs in distributed AI programs by controlled, searched execution."""

from dnsse.api import Range, TensorSpec, emit, test

__version__ = "0.1.0"
__all__ = ["Range", "TensorSpec", "emit", "test", "__version__"]
