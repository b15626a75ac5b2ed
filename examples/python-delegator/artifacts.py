"""Artifact reassembly to disk, validation and commit.

Chunks are written to a file per artifact as they arrive (memory stays bounded whatever the
artifact's size): a chunk with ``append: true`` extends the artifact with its ``artifactId``, one
without it starts or replaces it, and a ``Task`` snapshot replaces every artifact it carries.
Bytes are the UTF-8 of text parts, the decoded bytes of raw parts, the JSON text of data parts
(serde_json's compact form with sorted keys, as the agent hashed it) and the fetched body of url
parts. Nothing is released until :meth:`Assembler.commit`, called once the task is COMPLETED,
which validates media type, size and schema and renames the accepted files into place.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Any

import httpx
from google.protobuf import json_format

from store import safe_name


_DEFAULT_PORTS = {'http': 80, 'https': 443}


def _origin(url: httpx.URL) -> str:
    """``scheme://host:port`` with the port always written (the default one when absent)."""
    port = url.port or _DEFAULT_PORTS.get(url.scheme, 0)
    return f'{url.scheme}://{url.host}:{port}'


def fetch_origins(value: Any) -> list[str]:
    """``init.fetch_origins`` checked and normalised (empty: no list). Raises ``ValueError``."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(o, str) for o in value):
        raise ValueError('fetch_origins: must be an array of origins (scheme://host:port)')
    out = []
    for o in value:
        try:
            u = httpx.URL(o)
        except Exception as e:  # noqa: BLE001 - any parse error names the entry
            raise ValueError(f'fetch_origins: {o!r}: {e}') from e
        if u.scheme not in ('http', 'https') or not u.host:
            raise ValueError(f'fetch_origins: {o!r} is not an http(s) origin')
        out.append(_origin(u))
    return out


def url_refused(url: httpx.URL, origins: list[str]) -> str | None:
    """Why a url part must not be fetched (A2A §14.1.1), or ``None``: http(s) only, no
    userinfo, and an origin of ``init.fetch_origins`` when that list is given."""
    if url.scheme not in ('http', 'https'):
        return f'scheme {url.scheme!r} is not fetched (only http and https)'
    if url.userinfo:
        return 'a url with userinfo is not fetched'
    if origins and _origin(url) not in origins:
        return f'origin {_origin(url)} is not an allowed fetch origin'
    return None


def url_policy_hook(origins: list[str]):
    """An httpx request hook: every request of the fetch client (each redirect hop too) is
    checked before it connects; a refused one raises ``httpx.RequestError``."""

    async def check(request: httpx.Request) -> None:
        why = url_refused(request.url, origins)
        if why is not None:
            raise httpx.RequestError(why, request=request)

    return check


class FetchClient(httpx.AsyncClient):
    """The client url parts are fetched with: the allowed origins, checked by
    :func:`url_policy_hook` on every request (redirect hops included)."""

    def __init__(self, origins: list[str], **kw: Any) -> None:
        super().__init__(event_hooks={'request': [url_policy_hook(origins)]}, **kw)
        self.fetch_origins = origins


class AgentProtocolError(Exception):
    """The agent broke the protocol in what it streamed (for example an append to nothing)."""


def _plain(v: Any) -> Any:
    """Protobuf ``Value`` numbers are doubles: integral ones become ints again."""
    if isinstance(v, float) and v.is_integer() and abs(v) < 2**53:
        return int(v)
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


def data_value(part: Any) -> Any:
    """The JSON value of a data part."""
    return _plain(json_format.MessageToDict(part.data))


def data_bytes(value: Any) -> bytes:
    """The JSON text of a data value, compact with sorted keys."""
    return json.dumps(value, sort_keys=True, separators=(',', ':'), ensure_ascii=False).encode()


def part_kind(part: Any) -> str:
    """``text``, ``raw``, ``url``, ``data`` or ``''``."""
    return part.WhichOneof('content') or ''


def part_media_type(part: Any) -> str:
    """The part's ``mediaType``, else the default of its kind."""
    if part.media_type.strip():
        return part.media_type.strip()
    return {'text': 'text/plain', 'data': 'application/json'}.get(
        part_kind(part), 'application/octet-stream'
    )


def accepts(accepted: list[str], media_type: str) -> bool:
    """Whether a media type is covered by the accepted list (``type/*`` and ``*/*`` allowed)."""
    mt = media_type.split(';', 1)[0].strip().lower()
    for a in accepted:
        a = a.split(';', 1)[0].strip().lower()
        if a in ('*/*', '*', mt):
            return True
        if a.endswith('/*') and mt.split('/', 1)[0] == a[:-2]:
            return True
    return False


@dataclass
class _Artifact:
    artifact_id: str
    name: str
    path: str
    file: Any
    size: int = 0
    sha: Any = field(default_factory=hashlib.sha256)
    media_type: str | None = None
    problems: list[str] = field(default_factory=list)
    oversize: bool = False


class Assembler:
    """Reassembles one task's artifacts into files under ``directory``."""

    def __init__(
        self,
        directory: str,
        spec: dict[str, Any],
        http: httpx.AsyncClient,
        task_id: str,
    ) -> None:
        self.dir = directory
        self.spec = spec
        self.http = http
        self.task_id = task_id
        self.arts: dict[str, _Artifact] = {}
        self.order: list[str] = []
        self.gen = 0
        schema = spec.get('schema')
        self.validator = None
        if schema is not None:
            import jsonschema  # only when a schema is given: keeps start-up short

            self.validator = jsonschema.Draft202012Validator(schema)

    # -- building ---------------------------------------------------------------------------

    def _start(self, artifact_id: str, name: str) -> _Artifact:
        old = self.arts.get(artifact_id)
        if old is not None:
            old.file.close()
            os.unlink(old.path)
        self.gen += 1
        path = os.path.join(self.dir, f'part-{self.gen}-{safe_name(artifact_id)}')
        a = _Artifact(artifact_id, name, path, open(path, 'wb'))
        self.arts[artifact_id] = a
        if artifact_id not in self.order:
            self.order.append(artifact_id)
        return a

    async def on_chunk(self, artifact: Any, append: bool) -> None:
        """An ``artifactUpdate``: append to or start/replace an artifact."""
        aid = artifact.artifact_id
        if append:
            a = self.arts.get(aid)
            if a is None:
                raise AgentProtocolError(f'append to unknown artifact {aid!r}')
        else:
            a = self._start(aid, artifact.name)
        if artifact.name and not a.name:
            a.name = artifact.name
        for p in artifact.parts:
            await self._write_part(a, p)

    async def on_snapshot(self, task: Any) -> None:
        """A ``Task``: every artifact it carries is complete as given."""
        for art in task.artifacts:
            a = self._start(art.artifact_id, art.name)
            for p in art.parts:
                await self._write_part(a, p)

    def _write(self, a: _Artifact, data: bytes) -> None:
        limit = int(self.spec['max_size_bytes'])
        if a.oversize:
            return
        if a.size + len(data) > limit:
            a.oversize = True
            a.problems.append(
                f'artifact {a.artifact_id!r}: over max_size_bytes {limit} '
                f'(rejected once {a.size + len(data)} bytes were reached)'
            )
            return
        a.file.write(data)
        a.sha.update(data)
        a.size += len(data)

    async def _write_part(self, a: _Artifact, p: Any) -> None:
        mt = part_media_type(p)
        if a.media_type is None:
            a.media_type = mt
        if not accepts(self.spec['mime_types'], mt):
            msg = f'artifact {a.artifact_id!r}: media type {mt!r} is not accepted'
            if msg not in a.problems:
                a.problems.append(msg + f' (accepted: {self.spec["mime_types"]})')
        kind = part_kind(p)
        if kind == 'text':
            self._write(a, p.text.encode('utf-8'))
        elif kind == 'raw':
            self._write(a, p.raw)
        elif kind == 'data':
            value = data_value(p)
            if self.validator is not None:
                err = next(iter(self.validator.iter_errors(value)), None)
                if err is not None:
                    a.problems.append(
                        f'artifact {a.artifact_id!r}: data part violates the schema at '
                        f'/{"/".join(str(x) for x in err.absolute_path)}: {err.message}'
                    )
            self._write(a, data_bytes(value))
        elif kind == 'url':
            await self._fetch(a, p.url)

    async def _fetch(self, a: _Artifact, url: str) -> None:
        """Fetch a url part on its own path, enforcing the size bound while reading. The url is
        checked first (and every redirect hop by the fetch client's request hook): a refused one
        is never connected to and the artifact is rejected."""
        try:
            why = url_refused(httpx.URL(url), getattr(self.http, 'fetch_origins', []))
        except Exception as e:  # noqa: BLE001 - an unparsable url is refused too
            why = f'not a url: {e}'
        if why is not None:
            a.problems.append(f'artifact {a.artifact_id!r}: {url} not fetched: {why}')
            return
        try:
            async with self.http.stream('GET', url) as resp:
                if resp.status_code != 200:
                    a.problems.append(
                        f'artifact {a.artifact_id!r}: fetching {url} gave HTTP {resp.status_code}'
                    )
                    return
                async for chunk in resp.aiter_bytes():
                    self._write(a, chunk)
                    if a.oversize:
                        return  # stop reading: the rest is never buffered
        except httpx.HTTPError as e:
            a.problems.append(f'artifact {a.artifact_id!r}: fetching {url} failed: {e}')

    # -- result -----------------------------------------------------------------------------

    def close(self) -> None:
        """Drop every uncommitted file."""
        for a in self.arts.values():
            if not a.file.closed:
                a.file.close()
            if os.path.exists(a.path):
                os.unlink(a.path)
        self.arts.clear()
        self.order.clear()

    def problems(self) -> list[str]:
        """Every rejection so far."""
        return [p for aid in self.order for p in self.arts[aid].problems]

    def partial(self) -> list[dict[str, Any]]:
        """Uncommitted artifacts, as a dead-letter record holds them."""
        return [
            {
                'artifact_id': a.artifact_id,
                'name': a.name,
                'bytes': a.size,
                'sha256': a.sha.hexdigest(),
                'committed': False,
            }
            for a in (self.arts[x] for x in self.order)
        ]

    def commit(self, provenance: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
        """Validate and make the accepted artifacts durable: (committed, rejections)."""
        committed: list[dict[str, Any]] = []
        rejected: list[str] = []
        for n, aid in enumerate(self.order):
            a = self.arts[aid]
            a.file.flush()
            os.fsync(a.file.fileno())
            a.file.close()
            if a.problems:
                rejected.extend(a.problems)
                os.unlink(a.path)
                continue
            final = os.path.join(self.dir, f'{n + 1}-{safe_name(aid)}')
            os.replace(a.path, final)
            committed.append(
                {
                    'artifact_id': aid,
                    'name': a.name or None,
                    'media_type': a.media_type,
                    'bytes': a.size,
                    'sha256': a.sha.hexdigest(),
                    'path': os.path.abspath(final),
                    'committed': True,
                    **provenance,
                }
            )
        fd = os.open(self.dir, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        self.arts.clear()
        self.order.clear()
        return committed, rejected
