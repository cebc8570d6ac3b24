"""The prompt a model gets, and the JSON schema its answer must follow.

The prompt carries the target's source trimmed to the functions that reached
scheduling points, the specifications, and the run summary. The schema is
stated in the prompt and, where the endpoint offers it, enforced by its JSON
output mode; the answer is still validated item by item (``parse_hints``).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from dnsse.advisor.summary import RunSummary

MAX_SOURCE_CHARS = 12_000

_OPERATION_SCHEMA = {
    "type": "object",
    "properties": {
        "agent": {"type": "string"},
        "operation": {"type": "string"},
        "location": {"type": "string"},
        "occurrence": {"type": "integer", "minimum": 1},
    },
    "required": ["agent"],
}

ANSWER_SCHEMA = {
    "type": "object",
    "properties": {
        "hints": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "type": {"enum": ["ordering", "delay", "input", "fault"]},
                    "sequence": {"type": "array", "items": _OPERATION_SCHEMA, "minItems": 2},
                    "at": _OPERATION_SCHEMA,
                    "name": {"type": "string"},
                    "value": {},
                    "actor": {"type": "string"},
                    "method": {"type": "string"},
                    "after": {"type": "integer", "minimum": 1},
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                    "reason": {"type": "string"},
                },
                "required": ["type", "confidence"],
            },
        }
    },
    "required": ["hints"],
}

SYSTEM = (
    "You are a concurrency expert helping a systematic tester find bugs in a distributed or "
    "multithreaded Python program. The tester controls every interleaving. Predict orderings of "
    "operations, agents to delay, input values and crashes (of actors that may crash) likely to make the program fail "
    "(assertion, deadlock, collective mismatch, specification violation). Name agents, operation "
    "kinds, locations and actors exactly as the run summary spells them. Answer with JSON only, following this schema: "
    + json.dumps(ANSWER_SCHEMA, separators=(",", ":"))
)

EXAMPLE = (
    'Example answer: {"hints": [{"type": "ordering", "sequence": [{"agent": "thread 1", "operation": '
    '"attr.load", "location": "app.py:12"}, {"agent": "thread 2", "operation": "attr.store", "location": '
    '"app.py:20"}, {"agent": "thread 1", "operation": "attr.store", "location": "app.py:13"}], '
    '"confidence": 0.8, "reason": "lost update"}, {"type": "delay", "at": {"agent": "thread 1", "operation": '
    '"lock.release", "location": "app.py:15"}, "confidence": 0.5, "reason": "hold the lock holder"}, {"type": "input", "name": "batch", "value": 3, '
    '"confidence": 0.4}, {"type": "fault", "actor": "Server#1", "method": "push", "after": 2, '
    '"confidence": 0.6, "reason": "crash right after the 2nd push, before it is checkpointed"}]}'
)


def build_messages(summary: RunSummary, source_path: Path, max_hints: int = 10) -> list[dict[str, str]]:
    """The chat messages for one advice request."""
    source = trimmed_source(source_path, summary)
    user = (
        f"Program under test ({source_path.name}):\n```python\n{source}\n```\n\n"
        f"What the controlled runs have shown:\n{summary.render()}\n\n"
        f"Give at most {max_hints} hints, most promising first. {EXAMPLE}"
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def trimmed_source(path: Path, summary: RunSummary) -> str:
    """The functions of ``path`` that contain a location the runs reached, or the whole file when short."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if len(text) <= MAX_SOURCE_CHARS:
        return text
    lines_reached = {
        int(location.rsplit(":", 1)[1])
        for agent in summary.agents
        for location in summary.locations_of(agent)
        if location and location.rsplit(":", 1)[0].endswith(path.name) and location.rsplit(":", 1)[1].isdigit()
    }
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text[:MAX_SOURCE_CHARS]
    lines = text.splitlines()
    parts = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno is not None:
            if any(node.lineno <= line <= node.end_lineno for line in lines_reached):
                parts.append((node.lineno, "\n".join(lines[node.lineno - 1 : node.end_lineno])))
    chosen = "\n\n".join(f"# line {start}\n{body}" for start, body in sorted(parts))
    return (chosen or text)[:MAX_SOURCE_CHARS]
