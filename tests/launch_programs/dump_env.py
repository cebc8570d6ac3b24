"""Writes what this process was given (its sys.argv, its environment, __name__, __file__) to OUT/rank-R.json."""

import json
import os
import sys


def main() -> None:
    out = sys.argv[sys.argv.index("--out") + 1]
    record = {"argv": sys.argv, "env": dict(os.environ), "name": __name__, "file": __file__}
    with open(os.path.join(out, f"rank-{os.environ['RANK']}.json"), "w") as stream:
        json.dump(record, stream)


if __name__ == "__main__":
    main()
