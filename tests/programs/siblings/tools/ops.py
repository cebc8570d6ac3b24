from . import numbers


def add(table: dict, key: str) -> None:
    value = table.get(key, 0)
    table[key] = numbers.plus_one(value)
