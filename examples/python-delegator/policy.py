"""Pure decisions: message ids, backoff, answering questions from the delegation's inputs,
reading the agent's status messages, and classifying client errors."""

from __future__ import annotations

import json
import random
import re
import uuid
from dataclasses import dataclass
from typing import Any

import httpx
from a2a.client.errors import A2AClientError, A2AClientTimeoutError
from a2a.utils.errors import JSON_RPC_ERROR_CODE_MAP
from google.protobuf import json_format

from wire import ProtocolViolation

try:  # gRPC is optional at run time (a2a-sdk[grpc])
    import grpc
except ImportError:  # pragma: no cover - environment without grpc
    grpc = None  # type: ignore[assignment]


def message_id(delegation_id: str, purpose: str) -> str:
    """uuid5(NAMESPACE_URL, ``deleg:{id}:{purpose}``): a resend of an intent reuses it."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f'deleg:{delegation_id}:{purpose}'))


def backoff_ms(attempt: int, base_ms: int, cap_ms: int, rng: random.Random) -> float:
    """Exponential backoff with equal jitter: half of ``min(cap, base*2^attempt)`` plus a random
    part up to the other half."""
    exp = min(cap_ms, base_ms * (2 ** min(attempt, 40)))
    half = exp / 2
    return half + rng.uniform(0, exp - half)


def _words(s: str) -> str:
    s = re.sub(r'([a-z0-9])([A-Z])', r'\1 \2', s)
    return ' ' + ' '.join(re.findall(r'[^\W_]+', s.lower())) + ' '


def answer_from_inputs(question: str, inputs: dict[str, Any]) -> tuple[str, list[str]] | None:
    """Answer a question from ``inputs`` when it names keys the delegation holds (whole words,
    case-insensitive). The question is data: it only selects which of our own values to send.
    Returns (answer text, keys used) or ``None`` (escalate)."""
    q = _words(question)
    keys = [k for k in inputs if len(_words(k).strip()) >= 2 and _words(k) in q]
    keys = [
        k for k in keys
        if not any(o != k and len(o) > len(k) and _words(k) in _words(o) for o in keys)
    ]
    if not keys:
        return None

    def text_of(v: Any) -> str:
        return v if isinstance(v, str) else json.dumps(v)

    if len(keys) == 1:
        return text_of(inputs[keys[0]]), keys
    return '\n'.join(f'{k}: {text_of(inputs[k])}' for k in keys), keys


def message_text(msg: Any) -> str | None:
    """A status message as text: its text parts, then its data parts as JSON."""
    if msg is None or not msg.parts:
        return None
    texts = [p.text for p in msg.parts if p.WhichOneof('content') == 'text']
    datas = [
        json.dumps(json_format.MessageToDict(p.data))
        for p in msg.parts
        if p.WhichOneof('content') == 'data'
    ]
    return '\n'.join(texts + datas) or None


@dataclass
class ErrorInfo:
    """What a failed call means."""

    message: str
    code: int | None = None
    http_status: int | None = None
    transient: bool = False
    # A transport-level failure before any answer (connection refused, 404/405 without an A2A
    # error, gRPC UNAVAILABLE/UNIMPLEMENTED): the next interface of the card may be tried.
    transport: bool = False
    retry_after_s: float | None = None
    protocol: bool = False

    def record(self, op: str, at: str) -> dict[str, Any]:
        """The ``errors[]`` entry of a record."""
        return {
            'at': at,
            'op': op,
            'code': self.code,
            'http_status': self.http_status,
            'transient': self.transient,
            'message': self.message,
        }


def classify(exc: BaseException) -> ErrorInfo:
    """Map an exception of the SDK client (or of the wire guard) to an :class:`ErrorInfo`."""
    msg = str(exc) or type(exc).__name__
    if isinstance(exc, ProtocolViolation):
        return ErrorInfo(msg, protocol=True)
    cause = exc.__cause__
    if (
        isinstance(cause, httpx.HTTPStatusError)
        and cause.response.status_code == 404
        and msg.startswith('Resource not found:')
    ):
        # The SDK's HTTP+JSON transport reports a 404 that carries no A2A error as
        # MethodNotFoundError: the endpoint does not serve this binding (a transport failure).
        return ErrorInfo(msg, http_status=404, transport=True)
    code = JSON_RPC_ERROR_CODE_MAP.get(type(exc))
    if code is not None:
        return ErrorInfo(msg, code=code)
    m = re.match(r'JSON-RPC Error (-?\d+):', msg)
    if m:
        return ErrorInfo(msg, code=int(m.group(1)))
    if isinstance(exc, A2AClientTimeoutError):
        return ErrorInfo(msg, transient=True)
    if isinstance(cause, httpx.HTTPStatusError):
        status = cause.response.status_code
        ra = None
        raw = cause.response.headers.get('retry-after')
        if raw is not None:
            try:
                ra = float(raw)
            except ValueError:
                ra = None
        transient = status >= 500 or status in (408, 429)
        return ErrorInfo(
            msg,
            http_status=status,
            transient=transient,
            transport=status in (404, 405, 415),
            retry_after_s=ra,
        )
    if isinstance(cause, (httpx.TimeoutException, httpx.TransportError)):
        connect = isinstance(cause, httpx.ConnectError)
        return ErrorInfo(msg, transient=True, transport=connect)
    if grpc is not None and isinstance(cause, grpc.aio.AioRpcError):
        c = cause.code()
        if c == grpc.StatusCode.RESOURCE_EXHAUSTED and 'larger than max' in (
            cause.details() or ''
        ):
            # Our own receive limit (max_event_bytes): the agent sent an oversized message.
            return ErrorInfo(msg, protocol=True)
        ra = None
        for md in (cause.trailing_metadata(), cause.initial_metadata()):
            for k, v in md or ():
                if k.lower() == 'retry-after':
                    try:
                        ra = float(v)
                    except ValueError:
                        ra = None
        transient = c in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED)
        return ErrorInfo(
            msg,
            transient=transient,
            transport=c in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.UNIMPLEMENTED),
            retry_after_s=ra,
        )
    if isinstance(exc, (httpx.TimeoutException, httpx.TransportError)):
        return ErrorInfo(msg, transient=True)
    if isinstance(exc, A2AClientError):
        # Anything else the client could not read: the agent sent something invalid.
        return ErrorInfo(msg, protocol=True)
    return ErrorInfo(f'{type(exc).__name__}: {msg}', protocol=True)


def missing_fields(kind: str, obj: Any) -> list[str]:
    """The REQUIRED fields (spec §5.7) a ``task``, ``status_update`` or ``artifact_update`` lacks.

    The SDK parses leniently: an absent string reads as ``""`` and an absent message as unset,
    so both count as missing (no agent id or artifact id is empty). An absent ``status.state``
    reads as UNSPECIFIED, which is observed as an unknown state."""
    out = []
    if kind == 'task':
        if not obj.id:
            out.append('id')
        if not obj.HasField('status'):
            out.append('status')
    elif kind in ('status_update', 'artifact_update'):
        if not obj.task_id:
            out.append('taskId')
        if not obj.context_id:
            out.append('contextId')
        if kind == 'status_update' and not obj.HasField('status'):
            out.append('status')
        if kind == 'artifact_update':
            if not obj.HasField('artifact'):
                out.append('artifact')
            else:
                if not obj.artifact.artifact_id:
                    out.append('artifact.artifactId')
                if not obj.artifact.parts:
                    out.append('artifact.parts')
    return out
