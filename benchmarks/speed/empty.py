"""Entry points that return at once, and a loop of plain lines: the cost model's programs (benchmarks/cost_model.py)."""


def threads_main() -> None:
    pass


def torch_main(rank: int, world_size: int) -> None:
    pass


def busy_lines(iterations: int = 20_000) -> None:
    # Local variables only: two line events an iteration, nothing else.
    total = 0
    for index in range(iterations):
        total += index
