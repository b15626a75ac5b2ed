#!/usr/bin/env python3
"""Drive a running A2A 1.0 agent with the official Python SDK client (a2a-sdk).

Usage:
    sdk_client.py CARD_URL SCENARIO [ARG]

CARD_URL is either the agent card URL itself (a path ending in ``.json`` or
containing ``/.well-known/``) or the agent's base URL, to which the SDK's
default ``/.well-known/agent-card.json`` is appended.  The card is fetched and
parsed by the SDK's ``A2ACardResolver``; ``ClientFactory`` then picks the
interface of the chosen transport from ``supportedInterfaces`` exactly as the
SDK does.  The transport is A2A_TRANSPORT: ``jsonrpc`` (default), ``rest``
(HTTP+JSON) or ``grpc`` (an insecure ``grpc.aio`` channel to the interface's
``host:port``; needs ``a2a-sdk[grpc]``).

Scenarios (stdout: one JSON document per line, ProtoJSON as produced by
``json_format.MessageToDict``):

    card                  the card as the SDK parsed it: {"card": AgentCard}
    send [TEXT]           SendMessage (client streaming disabled), text "hello"
                          by default: one line {"task": ...} or {"message": ...}
    stream [TEXT]         SendStreamingMessage: one line per StreamResponse
                          ({"task"|"message"|"statusUpdate"|"artifactUpdate": ...}),
                          then {"artifacts": {artifactId: {"bytes", "sha256", "parts"}}}
    get TASK_ID           GetTask: one line, the Task
    list                  ListTasks: one line, the ListTasksResponse
    cancel TASK_ID        CancelTask: one line, the Task
    subscribe TASK_ID     SubscribeToTask: like stream

Artifact reassembly: an ``artifactUpdate`` with ``append: true`` adds its
parts to the artifact with the same ``artifactId``; otherwise it replaces it.
A ``task`` event replaces every artifact it carries (a snapshot is complete).
Bytes are the UTF-8 encoding of text parts and the decoded bytes of raw parts,
concatenated in order; ``parts`` counts all parts (url/data parts add no bytes).
``append: true`` for an unknown id starts a new artifact and is reported in
``"warnings"``.

``send`` and ``stream`` use a random UUID as ``messageId``; with A2A_MESSAGE_ID_PREFIX set
they use ``<prefix>-<8 hex>`` instead (how the TCK tells a reference agent what to do).

Every HTTP wait is bounded by A2A_CLIENT_TIMEOUT (default 20 s, per request /
per SSE read) and the whole scenario by A2A_CLIENT_TOTAL_TIMEOUT (default 60 s).

On failure: a line {"error": {"type", "message", "code"?}} on stdout (code is
the JSON-RPC code for A2A/JSON-RPC errors), the traceback on stderr, exit 1.
Usage errors exit 2.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import re
import sys
import traceback
import uuid

from typing import Any
from urllib.parse import urlsplit, urlunsplit


USAGE = (
    'usage: sdk_client.py CARD_URL '
    '(card | send [TEXT] | stream [TEXT] | get TASK_ID | list | '
    'cancel TASK_ID | subscribe TASK_ID)'
)


def usage_exit(msg: str | None = None) -> None:
    if msg:
        sys.stderr.write(f'sdk_client: {msg}\n')
    sys.stderr.write(USAGE + '\n')
    sys.exit(2)


try:
    import httpx

    from google.protobuf import json_format

    from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
    from a2a.types import (
        CancelTaskRequest,
        GetTaskRequest,
        ListTasksRequest,
        Message,
        Part,
        Role,
        SendMessageRequest,
        StreamResponse,
        SubscribeToTaskRequest,
    )
    from a2a.utils.errors import JSON_RPC_ERROR_CODE_MAP
except ImportError as exc:  # pragma: no cover - environment problem
    sys.stderr.write(
        f'sdk_client: cannot import a2a-sdk ({exc}); '
        'run scripts/setup-python.sh and use .venv/bin/python\n'
    )
    sys.exit(2)


REQUEST_TIMEOUT = float(os.environ.get('A2A_CLIENT_TIMEOUT', '20'))
TRANSPORTS = {'jsonrpc': 'JSONRPC', 'rest': 'HTTP+JSON', 'grpc': 'GRPC'}


def transport() -> str:
    """The protocolBinding the client speaks, from A2A_TRANSPORT."""
    name = os.environ.get('A2A_TRANSPORT', 'jsonrpc').strip().lower()
    if name not in TRANSPORTS:
        usage_exit(f'A2A_TRANSPORT must be one of {sorted(TRANSPORTS)}, not {name!r}')
    return TRANSPORTS[name]


def client_config(streaming: bool, http: Any) -> Any:
    binding = transport()
    extra: dict[str, Any] = {}
    if binding == 'GRPC':
        import grpc  # a2a-sdk[grpc]

        extra['grpc_channel_factory'] = grpc.aio.insecure_channel
    return ClientConfig(
        streaming=streaming,
        httpx_client=http,
        supported_protocol_bindings=[binding],
        **extra,
    )
TOTAL_TIMEOUT = float(os.environ.get('A2A_CLIENT_TOTAL_TIMEOUT', '60'))


def emit(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj) + '\n')
    sys.stdout.flush()


def to_dict(msg: Any) -> dict[str, Any]:
    return json_format.MessageToDict(msg)


def split_card_url(card_url: str) -> tuple[str, str | None]:
    """Returns (base_url, relative_card_path or None for the SDK default)."""
    parts = urlsplit(card_url)
    if not parts.scheme or not parts.netloc:
        usage_exit(f'CARD_URL must be an absolute http(s) URL: {card_url!r}')
    path = parts.path
    if path.endswith('.json') or '/.well-known/' in path:
        base = urlunsplit((parts.scheme, parts.netloc, '', '', ''))
        rel = path + (f'?{parts.query}' if parts.query else '')
        return base, rel
    return card_url.rstrip('/'), None


class ArtifactAssembler:
    def __init__(self) -> None:
        self.parts: dict[str, list[Part]] = {}
        self.warnings: list[str] = []

    def on_event(self, ev: StreamResponse) -> None:
        kind = ev.WhichOneof('payload')
        if kind == 'task':
            for art in ev.task.artifacts:
                self.parts[art.artifact_id] = list(art.parts)
        elif kind == 'artifact_update':
            upd = ev.artifact_update
            aid = upd.artifact.artifact_id
            if upd.append:
                if aid not in self.parts:
                    self.warnings.append(
                        f'append=true for unknown artifactId {aid!r}'
                    )
                self.parts.setdefault(aid, []).extend(upd.artifact.parts)
            else:
                self.parts[aid] = list(upd.artifact.parts)

    def summary(self) -> dict[str, Any]:
        arts = {}
        for aid, parts in self.parts.items():
            data = b''
            for p in parts:
                content = p.WhichOneof('content')
                if content == 'text':
                    data += p.text.encode('utf-8')
                elif content == 'raw':
                    data += p.raw
            arts[aid] = {
                'bytes': len(data),
                'sha256': hashlib.sha256(data).hexdigest(),
                'parts': len(parts),
            }
        out: dict[str, Any] = {'artifacts': arts}
        if self.warnings:
            out['warnings'] = self.warnings
        return out


def message_id() -> str:
    """A fresh messageId; with A2A_MESSAGE_ID_PREFIX set, ``<prefix>-<8 hex>`` (the TCK's
    convention for telling a reference agent what to do)."""
    prefix = os.environ.get('A2A_MESSAGE_ID_PREFIX')
    if prefix:
        return f'{prefix}-{uuid.uuid4().hex[:8]}'
    return str(uuid.uuid4())


def user_message(text: str) -> Message:
    return Message(
        message_id=message_id(),
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
    )


async def run(card_url: str, scenario: str, args: list[str]) -> None:
    streaming = scenario in ('stream', 'subscribe')
    timeout = httpx.Timeout(REQUEST_TIMEOUT)
    async with httpx.AsyncClient(timeout=timeout) as http:
        # As in ClientFactory.create_from_url: the factory first adds the
        # `A2A-Version: 1.0` header to the shared httpx client (so the card GET
        # carries it too), then the SDK resolver fetches and parses the card.
        config = client_config(streaming, http)
        factory = ClientFactory(config)
        base, rel = split_card_url(card_url)
        card = await A2ACardResolver(http, base).get_agent_card(
            relative_card_path=rel
        )
        if scenario == 'card':
            emit({'card': to_dict(card)})
            return
        if streaming and not card.capabilities.streaming:
            raise RuntimeError(
                'agent card does not set capabilities.streaming=true; the SDK '
                'client would silently fall back to non-streaming SendMessage '
                '(and refuses SubscribeToTask)'
            )
        # Picks the first entry of supportedInterfaces with the chosen binding
        # (preferring protocolVersion 1.0) exactly as the SDK does; raises
        # ValueError if none.
        client = factory.create(card)
        try:
            if scenario in ('send', 'stream'):
                text = args[0] if args else 'hello'
                req = SendMessageRequest(message=user_message(text))
                asm = ArtifactAssembler()
                n = 0
                async for ev in client.send_message(req):
                    n += 1
                    asm.on_event(ev)
                    emit(to_dict(ev))
                if n == 0:
                    raise RuntimeError('no response/event received')
                if scenario == 'stream':
                    emit(asm.summary())
            elif scenario == 'subscribe':
                asm = ArtifactAssembler()
                async for ev in client.subscribe(SubscribeToTaskRequest(id=args[0])):
                    asm.on_event(ev)
                    emit(to_dict(ev))
                emit(asm.summary())
            elif scenario == 'get':
                emit(to_dict(await client.get_task(GetTaskRequest(id=args[0]))))
            elif scenario == 'list':
                emit(to_dict(await client.list_tasks(ListTasksRequest())))
            elif scenario == 'cancel':
                emit(to_dict(await client.cancel_task(CancelTaskRequest(id=args[0]))))
        finally:
            await client.close()  # shared httpx client: closed by the `async with`


def error_json(exc: BaseException) -> dict[str, Any]:
    err: dict[str, Any] = {
        'type': type(exc).__name__,
        'message': str(exc) or repr(exc),
    }
    code = JSON_RPC_ERROR_CODE_MAP.get(type(exc))
    if code is None:  # unmapped codes surface as A2AClientError('JSON-RPC Error <code>: ...')
        m = re.match(r'JSON-RPC Error (-?\d+):', str(exc))
        code = int(m.group(1)) if m else None
    if code is not None:
        err['code'] = code
    data = getattr(exc, 'data', None)
    if data:
        err['data'] = data
    return {'error': err}


async def main_async(card_url: str, scenario: str, args: list[str]) -> int:
    try:
        await asyncio.wait_for(run(card_url, scenario, args), TOTAL_TIMEOUT)
    except asyncio.TimeoutError as exc:
        emit({'error': {'type': 'TimeoutError',
                        'message': f'scenario exceeded {TOTAL_TIMEOUT}s'}})
        sys.stderr.write(f'sdk_client: timed out after {TOTAL_TIMEOUT}s\n')
        traceback.print_exception(exc, file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001
        emit(error_json(exc))
        traceback.print_exception(exc, file=sys.stderr)
        return 1
    return 0


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        usage_exit()
    card_url, scenario, args = argv[1], argv[2], argv[3:]
    arity = {
        'card': (0, 0), 'send': (0, 1), 'stream': (0, 1), 'list': (0, 0),
        'get': (1, 1), 'cancel': (1, 1), 'subscribe': (1, 1),
    }
    if scenario not in arity:
        usage_exit(f'unknown scenario {scenario!r}')
    lo, hi = arity[scenario]
    if not lo <= len(args) <= hi:
        usage_exit(f'wrong number of arguments for {scenario!r}')
    return asyncio.run(main_async(card_url, scenario, args))


if __name__ == '__main__':
    sys.exit(main(sys.argv))
