"""coverage.py's own branch numbers for an uncontrolled run: the reference dnsse's coverage is checked against."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import coverage

from dnsse.coverage.arcs import BranchCoverage


def coverage_py_branches(path: Path, entry: str = "main") -> BranchCoverage:
    """Run ``path``'s ``entry()`` once, plainly, under coverage.py with ``branch=True``."""
    path = Path(path).resolve()
    measure = coverage.Coverage(branch=True, include=[str(path)], data_file=None)
    measure.start()
    try:
        spec = importlib.util.spec_from_file_location(f"__coverage_reference_{path.stem}__", path)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(module)  # type: ignore[union-attr]
        getattr(module, entry)()
    finally:
        measure.stop()
    numbers = measure._analyze(str(path)).numbers
    return BranchCoverage(numbers.n_branches, numbers.n_branches - numbers.n_missing_branches)
