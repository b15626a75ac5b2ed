"""The SDK's HTTP+JSON transport with task ids percent-encoded in request paths.

a2a-sdk 1.3.0's ``RestTransport`` formats paths as ``f'/tasks/{request.id}'``: an id the agent
chose with ``/``, ``?``, ``#``, ``%`` or a space is sent raw, so ``task/1 a?b`` turns into another
path, a query and a fragment (spec §11.5 asks for RFC 3986 percent-encoding). This subclass,
given to the SDK through ``ClientFactory.register``, sends the same requests with the id encoded
as one path segment; bodies keep the id as the agent gave it. Only the operations this delegator
uses that put an id in the path are overridden: GetTask, CancelTask and SubscribeToTask.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any
from urllib.parse import quote

from a2a.client.transports.rest import RestTransport
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
)
from a2a.utils.proto_utils import parse_lenient
from google.protobuf.json_format import MessageToDict


def segment(value: str) -> str:
    """``value`` percent-encoded as one path segment (RFC 3986: only unreserved bytes raw)."""
    return quote(value, safe='')


class EscapedRestTransport(RestTransport):
    """``RestTransport`` whose paths carry the task id percent-encoded (see the module doc)."""

    async def get_task(self, request: GetTaskRequest, *, context: Any = None) -> Task:
        params = MessageToDict(request)
        params.pop('id', None)  # in the path
        params.pop('tenant', None)  # the path prefix
        data = await self._execute_request(
            'GET', f'/tasks/{segment(request.id)}', request.tenant, context=context,
            params=params,
        )
        return parse_lenient(data, Task())

    async def cancel_task(self, request: CancelTaskRequest, *, context: Any = None) -> Task:
        data = await self._execute_request(
            'POST', f'/tasks/{segment(request.id)}:cancel', request.tenant, context=context,
            json=MessageToDict(request),
        )
        return parse_lenient(data, Task())

    async def subscribe(
        self, request: SubscribeToTaskRequest, *, context: Any = None
    ) -> AsyncGenerator[StreamResponse]:
        async for event in self._send_stream_request(
            'POST', f'/tasks/{segment(request.id)}:subscribe', request.tenant, context=context,
        ):
            yield event
