"""dnsse: find concurrency bugs in distributed AI programs by controlled, searched execution."""
__version__ = "0.1.0"
