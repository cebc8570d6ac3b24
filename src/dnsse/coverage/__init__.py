"""Branch coverage of the program under test, measured inside controlled agents."""

from dnsse.coverage.arcs import ArcRecorder, BranchCoverage, branch_coverage

__all__ = ["ArcRecorder", "BranchCoverage", "branch_coverage"]
