def shard(items: list, rank: int, world_size: int) -> list:
    return items[rank::world_size]
