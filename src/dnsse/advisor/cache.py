"""Model answers on disk, keyed by a hash of the request, as plain JSON.

A campaign run again with the same prompts gets the same answers without the
model, so a campaign that used a model can be repeated offline. The key is a
digest of the model name and the messages; nothing of the request's
credentials is part of it or of the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path


def request_key(model: str, messages: list[dict[str, str]]) -> str:
    payload = json.dumps({"model": model, "messages": messages}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()


class AnswerCache:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def get(self, key: str) -> str | None:
        """The answer text stored for ``key``; ``None`` when absent or unreadable."""
        try:
            record = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        answer = record.get("answer") if isinstance(record, dict) else None
        return answer if isinstance(answer, str) else None

    def put(self, key: str, model: str, answer: str) -> None:
        """Store atomically: a reader never sees half a file."""
        self.directory.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=".answer-", suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            json.dump({"model": model, "answer": answer}, file)
        os.chmod(temporary, 0o644)
        os.replace(temporary, self._path(key))
