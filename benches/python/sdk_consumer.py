#!/usr/bin/env python3
"""The python-sdk baseline of `a2a-harness bench`: N concurrent sends through the official
a2a-sdk client (the interop venv), each response's artifacts reassembled with A2A's
append/replace semantics and hashed incrementally (sha256), nothing printed per event.

Usage: sdk_consumer.py CARD_URL N PREFIX (stream|send)

Message ids are PREFIX-<i>, so the bench finds each task in the mock's journal.
Prints one JSON line: {"reads": [{"message_id", "task_id", "artifacts": {id: {"bytes",
"sha256"}}, "sent_unix_s", "ended_s", "error"?}], "wall_s", "cpu_s", "maxrss_kib"} (sent_unix_s:
the wall clock when the read's send began, for the bench's time to first byte; CPU and peak RSS
of this process from getrusage; CPU counted from the first send). Exit 0 even when a read failed (the bench judges); 2 on usage errors.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import resource
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'interop'))

import httpx  # noqa: E402

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory  # noqa: E402
from a2a.types import Message, Part, Role, SendMessageRequest  # noqa: E402

from sdk_client import split_card_url  # noqa: E402


class Hasher:
    """Per artifact: running sha256 and length (append extends, a new artifact replaces)."""

    def __init__(self) -> None:
        self.arts: dict[str, list] = {}

    def add_parts(self, aid: str, parts, append: bool) -> None:
        if not append or aid not in self.arts:
            self.arts[aid] = [hashlib.sha256(), 0]
        h = self.arts[aid]
        for p in parts:
            kind = p.WhichOneof('content')
            if kind == 'text':
                b = p.text.encode('utf-8')
            elif kind == 'raw':
                b = p.raw
            elif kind == 'data':
                from google.protobuf import json_format
                b = json.dumps(json_format.MessageToDict(p.data), separators=(',', ':')).encode()
            else:
                continue
            h[0].update(b)
            h[1] += len(b)

    def on_event(self, ev) -> str | None:
        kind = ev.WhichOneof('payload')
        if kind == 'task':
            for art in ev.task.artifacts:
                if art.artifact_id not in self.arts:
                    self.add_parts(art.artifact_id, art.parts, False)
            return ev.task.id
        if kind == 'artifact_update':
            upd = ev.artifact_update
            self.add_parts(upd.artifact.artifact_id, upd.artifact.parts, upd.append)
            return upd.task_id
        if kind == 'status_update':
            return ev.status_update.task_id
        return None

    def summary(self) -> dict:
        return {a: {'bytes': h[1], 'sha256': h[0].hexdigest()} for a, h in self.arts.items()}


async def one(client, mid: str, t0: float) -> dict:
    out: dict = {'message_id': mid, 'task_id': None}
    h = Hasher()
    out['sent_unix_s'] = time.time()
    try:
        req = SendMessageRequest(message=Message(message_id=mid, role=Role.ROLE_USER,
                                                 parts=[Part(text='bench python-sdk')]))
        async for ev in client.send_message(req):
            if isinstance(ev, tuple):  # older SDKs yield (task, update)
                ev = ev[0]
            tid = h.on_event(ev)
            if tid:
                out['task_id'] = tid
    except Exception as exc:  # noqa: BLE001
        out['error'] = f'{type(exc).__name__}: {exc}'
    out['artifacts'] = h.summary()
    out['ended_s'] = time.monotonic() - t0
    return out


async def run(card_url: str, n: int, prefix: str, streaming: bool) -> dict:
    limits = httpx.Limits(max_connections=max(n, 10), max_keepalive_connections=max(n, 10))
    async with httpx.AsyncClient(timeout=httpx.Timeout(600), limits=limits) as http:
        base, rel = split_card_url(card_url)
        card = await A2ACardResolver(http, base).get_agent_card(relative_card_path=rel)
        factory = ClientFactory(ClientConfig(streaming=streaming, httpx_client=http,
                                             supported_protocol_bindings=['JSONRPC']))
        client = factory.create(card)
        ru0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.monotonic()
        reads = await asyncio.gather(*(one(client, f'{prefix}-{i}', t0) for i in range(n)))
        wall = time.monotonic() - t0
        await client.close()
    ru = resource.getrusage(resource.RUSAGE_SELF)
    # CPU from the first send on (interpreter start, imports and the card are left out).
    cpu = ru.ru_utime + ru.ru_stime - ru0.ru_utime - ru0.ru_stime
    return {'reads': reads, 'wall_s': wall, 'cpu_s': cpu,
            'maxrss_kib': ru.ru_maxrss}


def main() -> int:
    if len(sys.argv) != 5 or sys.argv[4] not in ('stream', 'send'):
        sys.stderr.write(__doc__ or '')
        return 2
    res = asyncio.run(run(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == 'stream'))
    sys.stdout.write(json.dumps(res) + '\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
