"""The push-notification receiver (spec §4.3.3, §13.2): a small HTTP/1.1 server on asyncio.

Agents post to ``{webhook_url}/a2a-webhook/{delegation id}`` with the token of the push config
the delegator gave them (``X-A2A-Notification-Token``, or ``Authorization: Bearer …``). The
receiver never holds a token in plaintext: each delegation's record keeps the sha256 of every
token it configured (``push_token_sha256``), and an incoming token is hashed and compared with
them in constant time.

* A wrong or missing token and an unknown delegation get the same answer: ``401`` with an empty
  body, and the body is not read.
* With the right token, the body must be a JSON object (``400`` otherwise, at most
  ``max_body`` bytes: ``413``); the task it is about is read from it leniently (``task.id``,
  ``statusUpdate.taskId``, ``artifactUpdate.taskId``, and the 0.3 spellings), and it is answered
  ``200`` whatever it says: duplicates, pushes after the delegation ended and pushes about a
  task the delegator did not create are acknowledged too (§4.3.3). The payload itself is never
  taken as a result: a push about the delegation's own task only wakes it to read the task with
  ``GetTask``; a push about another task changes nothing.

Every connection serves one request (``Connection: close``), read within a bounded time.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import secrets
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, unquote, urlsplit

PATH = '/a2a-webhook/'
MAX_HEAD = 16 * 1024
READ_TIMEOUT_S = 10.0
REASONS = {200: 'OK', 400: 'Bad Request', 401: 'Unauthorized', 404: 'Not Found',
           405: 'Method Not Allowed', 411: 'Length Required', 413: 'Content Too Large'}
_NO_MATCH = hashlib.sha256(b'no delegation has this token').hexdigest()


def new_token() -> str:
    """A fresh push token: 256 random bits, for one push config only."""
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    """The lowercase hex sha256 of a token: what the record keeps."""
    return hashlib.sha256(token.encode()).hexdigest()


def task_id_of(body: dict[str, Any]) -> str | None:
    """The task a push payload is about (1.0 ``StreamResponse`` or 0.3 event), if it names one."""
    for key, field in (('task', 'id'), ('statusUpdate', 'taskId'), ('artifactUpdate', 'taskId'),
                       ('status_update', 'task_id'), ('artifact_update', 'task_id'),
                       ('message', 'taskId')):
        inner = body.get(key)
        if isinstance(inner, dict) and isinstance(inner.get(field), str):
            return inner[field]
    kind = body.get('kind')
    if kind == 'task' and isinstance(body.get('id'), str):
        return body['id']
    if kind in ('status-update', 'artifact-update') and isinstance(body.get('taskId'), str):
        return body['taskId']
    return None


class Webhook:
    """The receiver. ``hashes(delegation id)`` gives the token hashes of that delegation (None
    when there is no such delegation); ``on_push(delegation id, task id)`` is called for every
    genuine push, after its answer is decided."""

    def __init__(self, hashes: Callable[[str], list[str] | None],
                 on_push: Callable[[str, str | None], None], max_body: int,
                 log: Callable[[str], None]) -> None:
        self.hashes = hashes
        self.on_push = on_push
        self.max_body = max_body
        self.log = log
        self.base = ''
        self._server: asyncio.AbstractServer | None = None

    async def start(self, base_url: str, listen: str | None) -> str:
        """Bind (``listen`` ``host:port``, else the host and port of ``base_url``; port 0: any
        free port) and return the base URL actually served."""
        parts = urlsplit(base_url)
        if parts.scheme != 'http' or not parts.hostname:
            raise ValueError(f'webhook_base_url {base_url!r}: not an http URL with a host')
        url_port = parts.port if parts.port is not None else 80
        if listen:
            host, _, port = listen.rpartition(':')
            host = host.strip('[]')
        else:
            host, port = parts.hostname, str(url_port)
        self._server = await asyncio.start_server(self._serve, host, int(port), limit=MAX_HEAD)
        if url_port == 0:  # any free port: the URL names the one bound
            url_port = self._server.sockets[0].getsockname()[1]
        shown = f'[{parts.hostname}]' if ':' in parts.hostname else parts.hostname
        self.base = f'http://{shown}:{url_port}{parts.path.rstrip("/")}'
        return self.base

    def url_for(self, delegation_id: str) -> str:
        """The webhook URL a push config for this delegation names."""
        return f'{self.base}{PATH}{quote(delegation_id, safe="")}'

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            status, genuine = await asyncio.wait_for(self._handle(reader), READ_TIMEOUT_S)
        except asyncio.CancelledError:  # the process is ending: drop the connection quietly
            writer.close()
            return
        except (asyncio.TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                ConnectionError, ValueError, UnicodeError):
            status, genuine = 400, None
        try:
            writer.write(f'HTTP/1.1 {status} {REASONS[status]}\r\ncontent-length: 0\r\n'
                         'connection: close\r\n\r\n'.encode())
            await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()
        if genuine is not None:
            self.on_push(*genuine)

    async def _handle(self, reader: asyncio.StreamReader
                      ) -> tuple[int, tuple[str, str | None] | None]:
        head = (await reader.readuntil(b'\r\n\r\n')).decode('latin-1')
        lines = head.split('\r\n')
        method, target, _version = lines[0].split(' ', 2)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                key, _, value = line.partition(':')
                headers[key.strip().lower()] = value.strip()
        path = urlsplit(target).path
        if not path.startswith(PATH) or '/' in path[len(PATH):]:
            return 404, None
        if method != 'POST':
            return 405, None
        rid = unquote(path[len(PATH):])
        if not self._token_ok(rid, headers):
            return 401, None
        body = await self._body(reader, headers)
        if isinstance(body, int):
            return body, None
        try:
            obj = json.loads(body)
        except ValueError:
            return 400, None
        if not isinstance(obj, dict):
            return 400, None
        return 200, (rid, task_id_of(obj))

    def _token_ok(self, rid: str, headers: dict[str, str]) -> bool:
        presented = []
        if 'x-a2a-notification-token' in headers:
            presented.append(headers['x-a2a-notification-token'])
        scheme, _, cred = headers.get('authorization', '').partition(' ')
        if scheme.lower() == 'bearer' and cred.strip():
            presented.append(cred.strip())
        known = self.hashes(rid) or []
        ok = False
        for token in presented:
            h = token_hash(token)
            for want in known or [_NO_MATCH]:  # the same work for an unknown delegation
                ok |= hmac.compare_digest(h, want) and bool(known)
        return ok

    async def _body(self, reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes | int:
        if headers.get('transfer-encoding', '').lower() == 'chunked':
            out = bytearray()
            while True:
                size = int((await reader.readuntil(b'\r\n')).split(b';')[0].strip(), 16)
                if size == 0:  # trailers are not read: the connection closes after the answer
                    return bytes(out)
                if len(out) + size > self.max_body:
                    return 413
                out += await reader.readexactly(size)
                await reader.readexactly(2)
        if 'content-length' not in headers:
            return 411
        n = int(headers['content-length'])
        if n < 0:
            return 400
        if n > self.max_body:
            return 413
        return await reader.readexactly(n)

    async def close(self) -> None:
        """Stop accepting connections."""
        if self._server is not None:
            self._server.close()
