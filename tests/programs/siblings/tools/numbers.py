STEP = 1


def plus_one(value: int) -> int:
    return value + STEP
