"""HTTP-level guard under the SDK's httpx client.

The a2a-sdk client lets a few things through that this delegator must not accept silently, so
every A2A request of the SDK goes through :class:`WireGuard`, an ``httpx`` transport wrapper:

* **JSON-RPC response ids.** The SDK takes any JSON-RPC response as the answer to its request,
  whatever its ``id``. The guard remembers the request's id and raises
  :class:`ProtocolViolation` when a response (unary body or SSE event) carries another one.
* **Event size.** The SDK buffers a whole SSE line before parsing it. The guard stops a stream
  as soon as one line grows past ``max_event_bytes`` (nothing beyond the limit is buffered).

* **0.3 enum spellings.** The SDK's lenient parser drops an enum string it does not know, so a
  lowercase ``"completed"`` would read as UNSPECIFIED; the guard reads 0.3 task states and roles
  (``completed``, ``agent``, ...) as their 1.0 names in JSON bodies and SSE events.

It also writes ``x-deleg.depth`` as a JSON integer: the SDK carries request metadata in a
``google.protobuf.Struct``, whose numbers are doubles, so ``depth`` would otherwise go out as
``2.0`` where the ``x-deleg`` convention asks for an integer; and it sends HTTP+JSON bodies as
``application/a2a+json`` (spec §11.1), where the SDK's REST transport says ``application/json``.
"""

from __future__ import annotations

import json
from typing import Any, AsyncIterator

import httpx


# 0.3 spellings some agents still send inside 1.0 payloads; the SDK's lenient parser would drop
# them (an unknown enum string becomes UNSPECIFIED), so they are read as their 1.0 names.
_LEGACY_STATES = {
    'submitted': 'TASK_STATE_SUBMITTED', 'working': 'TASK_STATE_WORKING',
    'input-required': 'TASK_STATE_INPUT_REQUIRED', 'auth-required': 'TASK_STATE_AUTH_REQUIRED',
    'completed': 'TASK_STATE_COMPLETED', 'failed': 'TASK_STATE_FAILED',
    'canceled': 'TASK_STATE_CANCELED', 'rejected': 'TASK_STATE_REJECTED',
    'unknown': 'TASK_STATE_UNSPECIFIED',
}
_LEGACY_ROLES = {'user': 'ROLE_USER', 'agent': 'ROLE_AGENT'}


def normalize_legacy_enums(obj: Any) -> bool:
    """Rewrite 0.3 lowercase task states and roles to their 1.0 names, in place."""
    changed = False
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(v, str):
                table = _LEGACY_STATES if k == 'state' else _LEGACY_ROLES if k == 'role' else None
                if table is not None and v.lower() in table:
                    obj[k] = table[v.lower()]
                    changed = True
            elif normalize_legacy_enums(v):
                changed = True
    elif isinstance(obj, list):
        for v in obj:
            if normalize_legacy_enums(v):
                changed = True
    return changed


class ProtocolViolation(Exception):
    """An agent broke the protocol on the wire (wrong JSON-RPC id, oversized event)."""


def _fix_xdeleg_depth(obj: Any) -> bool:
    """Turn ``metadata["x-deleg"]["depth"]`` into an int wherever it is an integral float."""
    changed = False
    for holder in (obj, obj.get('params') if isinstance(obj, dict) else None):
        if not isinstance(holder, dict):
            continue
        meta = holder.get('metadata')
        if not isinstance(meta, dict):
            continue
        xd = meta.get('x-deleg')
        if isinstance(xd, dict):
            d = xd.get('depth')
            if isinstance(d, float) and d.is_integer():
                xd['depth'] = int(d)
                changed = True
    return changed


class _GuardedStream(httpx.AsyncByteStream):
    """Passes an SSE body through line by line, checking size and JSON-RPC ids."""

    def __init__(
        self, inner: httpx.AsyncByteStream, rpc_id: Any, limit: int, read_legacy: bool
    ) -> None:
        self._inner = inner
        self._rpc_id = rpc_id
        self._limit = limit
        self._read_legacy = read_legacy

    def _check_line(self, line: bytes) -> bytes:
        """Check one complete line; returns it (rewritten when legacy enums were read)."""
        if not line.startswith(b'data:'):
            return line
        try:
            obj = json.loads(line[5:])
        except ValueError:
            return line  # not JSON: the SDK reports it as an unparsable event
        if (
            self._rpc_id is not None
            and isinstance(obj, dict)
            and 'id' in obj
            and obj['id'] != self._rpc_id
        ):
            raise ProtocolViolation(
                f'SSE event with JSON-RPC id {obj["id"]!r}, request id {self._rpc_id!r}'
            )
        if self._read_legacy and normalize_legacy_enums(obj):
            return b'data: ' + json.dumps(obj).encode()
        return line

    async def __aiter__(self) -> AsyncIterator[bytes]:
        buf = bytearray()
        async for chunk in self._inner:
            start = 0
            while True:
                nl = chunk.find(b'\n', start)
                if nl < 0:
                    buf += chunk[start:]
                    if len(buf) > self._limit:
                        raise ProtocolViolation(
                            f'SSE event line over {self._limit} bytes; stream stopped'
                        )
                    break
                buf += chunk[start : nl + 1]
                if len(buf) > self._limit:
                    raise ProtocolViolation(
                        f'SSE event line over {self._limit} bytes; stream stopped'
                    )
                raw = bytes(buf)
                line = raw.rstrip(b'\r\n')
                checked = self._check_line(line)
                yield raw if checked is line else checked + b'\n'
                buf.clear()
                start = nl + 1
        if buf:
            yield self._check_line(bytes(buf))

    async def aclose(self) -> None:
        await self._inner.aclose()


class WireGuard(httpx.AsyncBaseTransport):
    """An ``httpx`` transport wrapper: see the module documentation."""

    def __init__(self, max_event_bytes: int, verify: Any = True) -> None:
        self._inner = httpx.AsyncHTTPTransport(verify=verify)
        self._limit = max_event_bytes

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        rpc_id = None
        # A 1.0 call reads 0.3 spellings as 1.0; a 0.3 call (the SDK's compat transport) is
        # left to the SDK's 0.3 parser.
        read_legacy = not request.headers.get('a2a-version', '1.0').startswith('0.')
        if request.method == 'POST' and 'json' in request.headers.get('content-type', ''):
            body = await request.aread()
            try:
                obj = json.loads(body)
            except ValueError:
                obj = None
            if isinstance(obj, dict):
                headers = httpx.Headers(request.headers)
                changed = False
                if obj.get('jsonrpc') == '2.0':
                    rpc_id = obj.get('id')
                elif read_legacy and headers.get('content-type') == 'application/json':
                    # An HTTP+JSON body of a 1.0 call: the binding's media type (§11.1).
                    headers['content-type'] = 'application/a2a+json'
                    changed = True
                if _fix_xdeleg_depth(obj):
                    body = json.dumps(obj).encode()
                    headers['content-length'] = str(len(body))
                    changed = True
                if changed:
                    request = httpx.Request(
                        request.method,
                        request.url,
                        headers=headers,
                        content=body,
                        extensions=request.extensions,
                    )
        response = await self._inner.handle_async_request(request)
        ctype = response.headers.get('content-type', '')
        if 'text/event-stream' in ctype:
            response.stream = _GuardedStream(response.stream, rpc_id, self._limit, read_legacy)
            return response
        if 'json' not in ctype or response.headers.get('content-encoding'):
            return response
        # A unary JSON answer: read it (bounded), check its JSON-RPC id, read legacy enums.
        data = bytearray()
        try:
            async for chunk in response.stream:
                data += chunk
                if len(data) > self._limit:
                    raise ProtocolViolation(f'response body over {self._limit} bytes')
        finally:
            await response.aclose()
        try:
            obj = json.loads(data)
        except ValueError:
            obj = None
        if rpc_id is not None and isinstance(obj, dict) and obj.get('id') is not None:
            if obj['id'] != rpc_id:
                raise ProtocolViolation(
                    f'JSON-RPC response id {obj["id"]!r}, request id {rpc_id!r}'
                )
        if read_legacy and normalize_legacy_enums(obj):
            data = bytearray(json.dumps(obj).encode())
        headers = httpx.Headers(response.headers)
        headers['content-length'] = str(len(data))
        return httpx.Response(
            response.status_code,
            headers=headers,
            content=bytes(data),
            extensions=response.extensions,
            request=request,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()
