"""The evaluation: distributed AI programs with seeded bugs, and the harness that measures dnsse on them.

``python -m benchmarks [--quick]`` from the repository root regenerates
``benchmarks/results/`` (JSON, Markdown table, coverage plot).
"""
