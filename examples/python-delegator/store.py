"""The durable store: one JSON file per delegation record, written atomically.

A record is saved with write-to-temporary, ``fsync``, ``rename`` and a directory ``fsync``, so a
SIGKILL at any point leaves either the old or the new record, never a torn one. Artifact files
live under ``artifacts/``; they are renamed into place only when committed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Any


def safe_name(ident: str) -> str:
    """A file-system-safe name for an id: its safe characters plus a hash suffix."""
    keep = re.sub(r'[^A-Za-z0-9._-]', '', ident)[:40].lstrip('.')
    digest = hashlib.sha256(ident.encode()).hexdigest()[:12]
    return f'{keep}-{digest}' if keep else digest


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Store:
    """Delegation records in ``<dir>/records``, artifacts in ``<dir>/artifacts``."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.records_dir = os.path.join(root, 'records')
        self.artifacts_dir = os.path.join(root, 'artifacts')
        os.makedirs(self.records_dir, exist_ok=True)
        os.makedirs(self.artifacts_dir, exist_ok=True)

    def _path(self, rid: str) -> str:
        return os.path.join(self.records_dir, safe_name(rid) + '.json')

    def save(self, record: dict[str, Any]) -> None:
        """Make ``record`` durable (raises ``OSError`` when it cannot)."""
        path = self._path(record['id'])
        tmp = path + '.tmp'
        data = json.dumps(record, sort_keys=True).encode()
        with open(tmp, 'wb') as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        _fsync_dir(self.records_dir)

    def load_all(self) -> list[dict[str, Any]]:
        """Every record, oldest first (by creation sequence)."""
        out = []
        for name in os.listdir(self.records_dir):
            if not name.endswith('.json'):
                continue
            with open(os.path.join(self.records_dir, name), 'rb') as f:
                out.append(json.loads(f.read()))
        out.sort(key=lambda r: (r.get('seq', 0), r['id']))
        return out

    def artifact_dir(self, rid: str) -> str:
        """The directory of a delegation's artifact files (created)."""
        d = os.path.join(self.artifacts_dir, safe_name(rid))
        os.makedirs(d, exist_ok=True)
        return d
