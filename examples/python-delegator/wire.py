"""HTTP-level guard under the SDK's httpx client.

The a2a-sdk client does two things this delegator must not accept silently, so every HTTP
request of the SDK goes through :class:`WireGuard`, an ``httpx`` transport wrapper:

* **JSON-RPC response ids.** The SDK takes any JSON-RPC response as the answer to its request,
  whatever its ``id``. The guard remembers the request's id and raises
  :class:`ProtocolViolation` when a response (unary body or SSE event) carries another one.
* **Event size.** The SDK buffers a whole SSE line before parsing it. The guard stops a stream
  as soon as one line grows past ``max_event_bytes`` (nothing beyond the limit is buffered).

It also writes ``x-deleg.depth`` as a JSON integer: the SDK carries request metadata in a
``google.protobuf.Struct``, whose numbers are doubles, so ``depth`` would otherwise go out as
``2.0`` where the ``x-deleg`` convention asks for an integer.
"""

from __future__ import annotations

import json
from typing import Any, AsyncIterator

import httpx


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

    def __init__(self, inner: httpx.AsyncByteStream, rpc_id: Any, limit: int) -> None:
        self._inner = inner
        self._rpc_id = rpc_id
        self._limit = limit

    def _check_line(self, line: bytes) -> None:
        if self._rpc_id is None or not line.startswith(b'data:'):
            return
        try:
            obj = json.loads(line[5:])
        except ValueError:
            return  # not JSON: the SDK reports it as an unparsable event
        if isinstance(obj, dict) and 'id' in obj and obj['id'] != self._rpc_id:
            raise ProtocolViolation(
                f'SSE event with JSON-RPC id {obj["id"]!r}, request id {self._rpc_id!r}'
            )

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
                self._check_line(bytes(buf).rstrip(b'\r\n'))
                yield bytes(buf)
                buf.clear()
                start = nl + 1
        if buf:
            self._check_line(bytes(buf))
            yield bytes(buf)

    async def aclose(self) -> None:
        await self._inner.aclose()


class WireGuard(httpx.AsyncBaseTransport):
    """An ``httpx`` transport wrapper: see the module documentation."""

    def __init__(self, max_event_bytes: int) -> None:
        self._inner = httpx.AsyncHTTPTransport()
        self._limit = max_event_bytes

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        rpc_id = None
        if request.method == 'POST' and 'json' in request.headers.get('content-type', ''):
            body = await request.aread()
            try:
                obj = json.loads(body)
            except ValueError:
                obj = None
            if isinstance(obj, dict):
                if obj.get('jsonrpc') == '2.0':
                    rpc_id = obj.get('id')
                if _fix_xdeleg_depth(obj):
                    body = json.dumps(obj).encode()
                    headers = httpx.Headers(request.headers)
                    headers['content-length'] = str(len(body))
                    request = httpx.Request(
                        request.method,
                        request.url,
                        headers=headers,
                        content=body,
                        extensions=request.extensions,
                    )
        response = await self._inner.handle_async_request(request)
        if rpc_id is None:
            if 'text/event-stream' in response.headers.get('content-type', ''):
                response.stream = _GuardedStream(response.stream, None, self._limit)
            return response
        if 'text/event-stream' in response.headers.get('content-type', ''):
            response.stream = _GuardedStream(response.stream, rpc_id, self._limit)
            return response
        # A unary JSON-RPC answer: read it (bounded) and check its id.
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
        if isinstance(obj, dict) and 'id' in obj and obj['id'] is not None:
            if obj['id'] != rpc_id:
                raise ProtocolViolation(
                    f'JSON-RPC response id {obj["id"]!r}, request id {rpc_id!r}'
                )
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            content=bytes(data),
            extensions=response.extensions,
            request=request,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()
