#!/usr/bin/env python3
"""A small real A2A delegator on the official Python SDK (a2a-sdk 1.3.0), speaking the
harness's driver contract (docs/driver-protocol.md): JSON lines on stdin/stdout.

Run it through the harness:

    a2a-harness run --delegator '.venv/bin/python examples/python-delegator/delegator.py'

The SDK's client does the A2A side (cards, JSON-RPC / HTTP+JSON / gRPC, SSE); this file does the
delegation: durable records, routing, limits, retries, observation (stream, poll, push), input
and auth escalation, cancel, deadlines, artifact reassembly, fan-out, refinement and recovery.
See README.md.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import gc
import json
import os
import random
import signal
import sys
import time
import traceback
from typing import Any

# The SDK's imports build many objects (pydantic models) and the cyclic collector would run
# through them again and again: paused while importing, a start costs about a fifth less CPU.
gc.disable()
try:
    import httpx
    from a2a.client.client import ClientCallContext
    from a2a.types import (
        CancelTaskRequest,
        GetTaskRequest,
        ListTasksRequest,
        Message,
        Part,
        Role,
        SendMessageRequest,
        SubscribeToTaskRequest,
        TaskState,
    )
    from google.protobuf import json_format
except ImportError as exc:  # pragma: no cover - environment problem
    sys.stderr.write(
        f'python-delegator: cannot import a2a-sdk ({exc}); run scripts/setup-python.sh '
        'and start this file with .venv/bin/python\n'
    )
    sys.exit(2)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from artifacts import AgentProtocolError, Assembler, FetchClient, fetch_origins  # noqa: E402
import cards  # noqa: E402
from cards import Agent, CardView  # noqa: E402
from policy import (  # noqa: E402
    ErrorInfo,
    answer_from_inputs,
    backoff_ms,
    classify,
    message_id,
    message_text,
    missing_fields,
)
from store import Store  # noqa: E402
from webhook import Webhook, new_token, token_hash  # noqa: E402
from wire import ProtocolViolation, WireGuard  # noqa: E402

gc.enable()

NAME = 'python-delegator'
VERSION = '0.1.0'
FINAL_STATES = {
    'COMPLETED', 'FAILED', 'CANCELED', 'REJECTED', 'ANSWERED_DIRECT', 'LOST',
    'DEAD_LETTERED', 'REFUSED', 'SEND_FAILED',
}
AGENT_TERMINAL = {'COMPLETED', 'FAILED', 'CANCELED', 'REJECTED'}
INTERRUPTED = {'INPUT_REQUIRED', 'AUTH_REQUIRED'}
DEFAULT_OPTIONS = {
    'max_depth': 3, 'input_round_cap': 3, 'deadline_margin_ms': 2000,
    'budget_reserve_fraction': 0.1, 'retry_base_ms': 2000, 'retry_cap_ms': 60000,
    'poll_interval_ms': 500, 'seed': 0, 'request_timeout_ms': 30000,
    'max_event_bytes': 16 * 1024 * 1024, 'terminal_grace_ms': 1000,
}
SUPPORTS = [
    'delegate', 'answer', 'credential', 'cancel', 'snapshot', 'recovery', 'streaming',
    'polling', 'fan_out', 'refinement', 'input_escalation', 'auth_escalation', 'limits',
    'dead_letter', 'artifact_url', 'artifact_schema',
    'binding:jsonrpc', 'binding:rest', 'binding:grpc', 'a2a_0_3',
]


def log(msg: str) -> None:
    sys.stderr.write(f'{NAME}: {msg}\n')
    sys.stderr.flush()


def now_rfc3339(t: float | None = None) -> str:
    d = dt.datetime.fromtimestamp(time.time() if t is None else t, tz=dt.timezone.utc)
    return d.strftime('%Y-%m-%dT%H:%M:%S.') + f'{d.microsecond // 1000:03d}Z'


def parse_rfc3339(s: str) -> float:
    return dt.datetime.fromisoformat(s.replace('Z', '+00:00')).timestamp()


def emit(obj: dict[str, Any]) -> None:
    """Write one protocol line with a single write, then flush."""
    try:
        sys.stdout.buffer.write((json.dumps(obj, ensure_ascii=False) + '\n').encode())
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        os._exit(0)


class BadRequest(Exception):
    """A malformed request: answered with ``error`` ``bad_request``."""


def state_name(state: int) -> str:
    try:
        name = TaskState.Name(state)
    except ValueError:
        return 'UNSPECIFIED'
    return name.removeprefix('TASK_STATE_')


# ---------------------------------------------------------------------------------------------
# Request validation
# ---------------------------------------------------------------------------------------------


def _int(req: dict[str, Any], key: str, default: int, lo: int, hi: int | None) -> int:
    v = req.get(key, default)
    if v is None:
        v = default
    if isinstance(v, bool) or not isinstance(v, int):
        raise BadRequest(f'{key}: must be an integer, got {json.dumps(v)}')
    if v < lo or (hi is not None and v > hi):
        bound = f'between {lo} and {hi}' if hi is not None else f'>= {lo}'
        raise BadRequest(f'{key}: must be {bound}, got {v}')
    return v


def normalize_delegate(req: dict[str, Any], prefix: str = '') -> dict[str, Any]:
    """Check a ``delegate`` request (or a child of one) and fill in the defaults."""
    out: dict[str, Any] = {}
    rid = req.get('id')
    if not isinstance(rid, str) or not 1 <= len(rid) <= 128:
        raise BadRequest(f'{prefix}id: must be a string of 1 to 128 characters')
    out['id'] = rid
    for key in ('capability', 'text'):
        if not isinstance(req.get(key), str):
            raise BadRequest(f'{prefix}{key}: must be a string')
        out[key] = req[key]
    inputs = req.get('inputs') or {}
    if not isinstance(inputs, dict):
        raise BadRequest(f'{prefix}inputs: must be an object')
    out['inputs'] = inputs
    spec = req.get('artifact_spec') or {}
    if not isinstance(spec, dict):
        raise BadRequest(f'{prefix}artifact_spec: must be an object')
    mts = spec.get('mime_types', ['application/json'])
    if not isinstance(mts, list) or not mts or not all(isinstance(m, str) for m in mts):
        raise BadRequest(f'{prefix}artifact_spec.mime_types: must be a non-empty array of strings')
    schema = spec.get('schema')
    if schema is not None:
        import jsonschema  # only when a schema is given: keeps start-up short

        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as e:
            raise BadRequest(f'{prefix}artifact_spec.schema: not a valid JSON Schema: '
                             f'{e.message}') from None
    out['artifact_spec'] = {
        'mime_types': mts,
        'max_size_bytes': _int(spec, 'max_size_bytes', 10 * 1024 * 1024, 1, 4 * 1024**3),
        'streaming_preferred': bool(spec.get('streaming_preferred', True)),
        'schema': spec.get('schema'),
    }
    out['max_retries'] = _int(req, 'max_retries', 3, 0, 10)
    prio = req.get('priority') or 'normal'
    if prio not in ('low', 'normal', 'high', 'critical'):
        raise BadRequest(f'{prefix}priority: must be low, normal, high or critical')
    out['priority'] = prio
    return out


# ---------------------------------------------------------------------------------------------
# Delegations
# ---------------------------------------------------------------------------------------------


class Delegation:
    """One delegation: its durable record and the task that drives it to an outcome."""

    def __init__(self, eng: Engine, rec: dict[str, Any]) -> None:
        self.eng = eng
        self.rec = rec
        self.pending: asyncio.Future[str] | None = None
        self.pending_kind: str | None = None
        self.credential: str | None = None
        self.cancel_requested = False
        self.finished = rec['state'] in FINAL_STATES
        self.drive: asyncio.Task[None] | None = None
        self.asm: Assembler | None = None
        self.rng = random.Random(f'{eng.opt["seed"]}:{rec["id"]}')
        self.iface = 0
        self.view: CardView | None = None  # the card this delegation started with
        self.poll_only = False  # set once a stream event was rejected
        self.wake = asyncio.Event()  # set by a genuine push about this delegation's task
        self.terminal_seen: tuple[str, str | None] = ('UNSPECIFIED', None)

    # -- records and events ---------------------------------------------------------------

    @property
    def rid(self) -> str:
        return self.rec['id']

    @property
    def agent(self) -> Agent:
        return self.eng.agent_by_url[self.rec['agent_url']]

    def save(self) -> None:
        self.rec['updated_at'] = now_rfc3339()
        self.eng.store.save(self.rec)

    def set_state(self, state: str) -> None:
        if self.rec['state'] == state:
            return
        self.rec['state'] = state
        self.save()
        self.emit_state()

    def emit_state(self) -> None:
        emit({
            'type': 'state', 'id': self.rid, 'state': self.rec['state'],
            'task_id': self.rec['task_id'], 'context_id': self.rec['context_id'],
        })

    def done_line(self) -> dict[str, Any]:
        r = self.rec
        return {
            'type': 'done', 'id': r['id'], 'state': r['state'], 'reason': r['reason'],
            'task_id': r['task_id'], 'context_id': r['context_id'],
            'message': r['final_message'],
            'artifacts': [
                {k: a[k] for k in ('artifact_id', 'name', 'bytes', 'sha256', 'media_type', 'path')}
                for a in r['artifacts'] if a.get('committed')
            ],
        }

    def finish(
        self, state: str, reason: str, message: str | None = None,
        artifacts: list[dict[str, Any]] | None = None, dlq: bool = False,
    ) -> None:
        """Make the final state durable, then write ``done`` (once) and mark it reported."""
        if self.finished:
            return
        self.finished = True
        if self.asm is not None and state != 'COMPLETED':
            if dlq:
                self.rec['artifacts'] = self.asm.partial()
            self.asm.close()
        r = self.rec
        r.update(state=state, reason=reason, final_message=message, dlq=dlq,
                 terminal_at=now_rfc3339(), reported=False)
        if artifacts is not None:
            r['artifacts'] = artifacts
        for wait in (0.0, 0.05, 0.2, None):
            try:
                self.save()
                break
            except OSError as e:
                if wait is None:
                    emit({'type': 'error', 'id': self.rid, 'code': 'internal',
                          'message': f'cannot make the final state durable: {e}'})
                    return
                time.sleep(wait)
        emit(self.done_line())
        r['reported'] = True
        try:
            self.save()
        except OSError as e:
            log(f'{self.rid}: reported flag not saved: {e}')
        if self.pending is not None and not self.pending.done():
            self.pending.cancel()
        self.eng.on_finished(self)

    def note_error(self, op: str, info: ErrorInfo) -> None:
        self.rec['errors'].append(info.record(op, now_rfc3339()))
        self.rec['last_error'] = info.message
        if info.code is not None:
            self.rec['error_code'] = info.code
        self.save()

    # -- requests to the agent ------------------------------------------------------------

    def _ctx(self, unary: bool) -> ClientCallContext:
        # A2A-Extensions and the agent's own credential where its card asks for it everywhere;
        # a credential from an auth escalation takes precedence.
        params = dict(self.view.params) if self.view is not None else {}
        if self.credential is not None:
            params['Authorization'] = self.credential
        timeout = self.eng.opt['request_timeout_ms'] / 1000 if unary else None
        return ClientCallContext(service_parameters=params or None, timeout=timeout)

    def client(self, streaming: bool) -> Any:
        if self.view is None:
            self.view = self.agent.view
        return self.view.client(self.iface, streaming, self.eng.http)

    def xdeleg(self) -> dict[str, Any]:
        r = self.rec
        margin = self.eng.opt['deadline_margin_ms'] / 1000
        return {
            'deadline': now_rfc3339(parse_rfc3339(r['deadline']) - margin),
            'budget_usd': r['budget_share'],
            'depth': r['depth'] + 1,
            'chain': list(r['chain']) + [self.eng.self_url],
        }

    def build_send(self, purpose: str, text: str, data: dict[str, Any] | None,
                   continuing: bool) -> SendMessageRequest:
        r = self.rec
        mid = r['message_ids'].setdefault(purpose, message_id(r['id'], purpose))
        msg = Message(message_id=mid, role=Role.ROLE_USER, parts=[Part(text=text)])
        if data:
            p = Part(media_type='application/json')
            json_format.ParseDict(data, p.data)
            msg.parts.append(p)
        msg.metadata.update({'skill': r['skill']})
        if continuing:
            msg.task_id = r['task_id']
            msg.context_id = r['context_id']
        else:
            if r['context_id']:
                msg.context_id = r['context_id']
            msg.reference_task_ids.extend(r['reference_task_ids'])
        req = SendMessageRequest(message=msg)
        req.configuration.accepted_output_modes.extend(r['request']['artifact_spec']['mime_types'])
        req.configuration.history_length = 0
        if not r['streaming']:
            req.configuration.return_immediately = True
        if purpose == 'create' and self.push_wanted():
            # A new token for each push config; the record keeps only its sha256 (§13.2, §13.4).
            token = new_token()
            r.setdefault('push_token_sha256', []).append(token_hash(token))
            cfg = req.configuration.task_push_notification_config
            cfg.url = self.eng.webhook.url_for(r['id'])
            cfg.token = token
            cfg.authentication.scheme = 'Bearer'
            cfg.authentication.credentials = token
        req.metadata.update({'x-deleg': self.xdeleg()})
        return req

    def push_wanted(self) -> bool:
        """Whether a new task is observed by push (then polling only backs it up): the webhook
        runs, the delegation does not stream, and the card declares pushNotifications."""
        v = self.view
        if self.eng.webhook is None or v is None or self.rec['streaming'] or not v.interfaces:
            return False
        iface = v.interfaces[min(self.iface, len(v.interfaces) - 1)]
        return bool(v.card.capabilities.push_notifications) and \
            (iface.protocol_version or '1.0').startswith('1.')

    async def nap(self, seconds: float) -> None:
        """Sleep between two reads of the task; a genuine push ends it at once."""
        try:
            await asyncio.wait_for(self.wake.wait(), seconds)
        except asyncio.TimeoutError:
            pass
        self.wake.clear()

    async def send(self, op: str, req: SendMessageRequest) -> tuple[str, Any, Any]:
        """Send with retries. Returns ('ok', first event, stream or None), ('error', info, None)
        for a definite error, or ('exhausted', info, None) when retries ran out."""
        attempt = 0
        while True:
            streaming = self.rec['streaming']
            client = self.client(streaming)
            self.rec['attempts'] += 1
            self.save()
            try:
                stream = client.send_message(req, context=self._ctx(not streaming))
                try:
                    first = await stream.__anext__()
                except StopAsyncIteration:
                    raise ProtocolViolation('the agent answered with no event') from None
                except BaseException:
                    await stream.aclose()
                    raise
                if not streaming:
                    await stream.aclose()
                    stream = None
                return 'ok', first, stream
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 - every failure is classified
                info = classify(e)
                log(f'{self.rid}: {op} failed ({type(e).__name__}; {info}): {info.message}')
                self.note_error(op, info)
                if info.transport and self.iface + 1 < len(self.view.interfaces):
                    self.iface += 1
                    self.view.preferred = self.iface
                    continue
                if not info.transient:
                    return 'error', info, None
                if attempt >= self.rec['request']['max_retries']:
                    return 'exhausted', info, None
                delay = backoff_ms(attempt, self.eng.opt['retry_base_ms'],
                                   self.eng.opt['retry_cap_ms'], self.rng) / 1000
                if info.retry_after_s is not None:
                    delay = max(delay, info.retry_after_s)
                attempt += 1
                await asyncio.sleep(delay)

    async def unary(self, op: str, call: Any) -> Any:
        """A GetTask/CancelTask/ListTasks call with retries of transient failures."""
        attempt = 0
        while True:
            try:
                return await call(self.client(False), self._ctx(True))
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001
                info = classify(e)
                self.note_error(op, info)
                if not info.transient or attempt >= self.rec['request']['max_retries']:
                    raise
                delay = backoff_ms(attempt, self.eng.opt['retry_base_ms'],
                                   self.eng.opt['retry_cap_ms'], self.rng) / 1000
                attempt += 1
                await asyncio.sleep(max(delay, info.retry_after_s or 0))

    async def get_task(self) -> Any:
        """GetTask; an answer lacking REQUIRED fields is recorded and read again (bounded)."""
        tid = self.rec['task_id']
        for _ in range(self.rec['request']['max_retries'] + 1):
            task = await self.unary('get', lambda c, ctx: c.get_task(
                GetTaskRequest(id=tid, history_length=0), context=ctx))
            lacks = missing_fields('task', task)
            if not lacks:
                return task
            what = f'a GetTask answer lacking REQUIRED {", ".join(lacks)} (rejected)'
            self.reject(what)
            await asyncio.sleep(self.eng.opt['poll_interval_ms'] / 1000)
        raise ProtocolViolation(what)

    def reject(self, what: str) -> None:
        """Record an answer or event that is not taken as a result (it lacks REQUIRED fields)."""
        log(f'{self.rid}: agent protocol error: {what}')
        self.rec['protocol_note'] = what
        self.note_error('read', ErrorInfo(what, protocol=True))

    # -- the drive --------------------------------------------------------------------------

    async def main(self, resume: bool) -> None:
        if self.cancel_requested:  # canceled before its drive started
            await self.stop('caller')
            return
        remaining = parse_rfc3339(self.rec['deadline']) - time.time()
        self.drive = asyncio.create_task(self._drive(resume))
        done, _ = await asyncio.wait({self.drive}, timeout=max(0.0, remaining))
        try:
            if not done:
                self.drive.cancel()
                await asyncio.gather(self.drive, return_exceptions=True)
                if not self.finished:
                    await self.stop('deadline')
            elif self.drive.cancelled():
                if not self.finished:
                    await self.stop('caller' if self.cancel_requested else 'deadline')
            elif self.drive.exception() is not None:
                e = self.drive.exception()
                log(f'{self.rid}: internal error: {"".join(traceback.format_exception(e))}')
                if not self.finished:
                    await self.stop('internal', f'internal error: {e}')
        except Exception as e:  # noqa: BLE001 - never leave a delegation without an outcome
            log(f'{self.rid}: stop failed: {"".join(traceback.format_exception(e))}')
            self.finish('FAILED', f'internal error while stopping: {e}')

    async def _drive(self, resume: bool) -> None:
        r = self.rec
        if self.view is None:
            self.view = self.agent.view
        self.iface = self.view.preferred
        if r['task_id'] is None:
            src = await self._create(resume)
        else:
            try:
                task = await self.get_task()
            except Exception as e:  # noqa: BLE001
                info = classify(e)
                if info.code == -32001:
                    self.finish('LOST', f'the agent no longer knows task {r["task_id"]} (-32001)')
                else:
                    self.finish('FAILED', f'GetTask after restart failed: {info.message}')
                return
            src = ('task', task)
        while src is not None and not self.finished:
            kind = src[0]
            if kind == 'stream':
                res = await self._consume(src[1])
            elif kind == 'task':
                res = await self._on_task(src[1], polled=not r['streaming'])
            else:
                res = await self._poll()
            if self.finished or res == 'final':
                return
            if res == 'interrupted':
                src = await self._interrupt()
            else:
                src = await self._follow()

    async def _create(self, resume: bool) -> tuple[str, Any] | None:
        r = self.rec
        if resume and r['context_id']:
            # A record without a task id but with a context: look for the task there first.
            try:
                lst = await self.unary('list', lambda c, ctx: c.list_tasks(
                    ListTasksRequest(context_id=r['context_id']), context=ctx))
                mid = r['message_ids'].get('create')
                for t in lst.tasks:
                    # Ours only when its history holds our create messageId.
                    if any(m.message_id == mid for m in t.history):
                        self._got_task(t)
                        return ('task', t)
            except Exception as e:  # noqa: BLE001 - fall back to resending
                log(f'{self.rid}: ListTasks failed ({e}); resending with the same messageId')
        req = self.build_send('create', r['request']['text'], r['request']['inputs'] or None,
                              continuing=False)
        status, first, stream = await self.send('send', req)
        if status == 'error':
            if first.protocol:
                self.finish('FAILED', f'agent protocol error on send: {first.message}')
            else:
                self.finish('SEND_FAILED', f'the agent answered the send with error '
                            f'{first.code if first.code is not None else first.http_status}: '
                            f'{first.message}')
            return None
        if status == 'exhausted':
            self.finish('DEAD_LETTERED', f'retries exhausted after {r["attempts"]} attempts: '
                        f'{first.message}', dlq=True)
            return None
        kind = first.WhichOneof('payload')
        if kind == 'message':
            if stream is not None:
                await stream.aclose()
            self.finish('ANSWERED_DIRECT', 'the agent answered with a message',
                        message=message_text(first.message))
            return None
        lacks = missing_fields(kind, getattr(first, kind)) if kind else []
        if 'id' in lacks or 'taskId' in lacks:
            if stream is not None:
                await stream.aclose()
            self.finish('FAILED', f'agent protocol error: the send was answered with a {kind} '
                        f'lacking REQUIRED {", ".join(lacks)}')
            return None
        if kind != 'task' and stream is None:
            self.finish('FAILED', f'agent protocol error: the send was answered with {kind}')
            return None
        if kind == 'task':
            self._got_task(first.task)
        else:
            # A stream starting with an update: take the ids from it.
            upd = getattr(first, kind)
            r['task_id'], r['context_id'] = upd.task_id, upd.context_id
            self.save()
            self.emit_state()
        if stream is None:
            return ('task', first.task)
        return ('stream', _prepend(first, stream))

    def _got_task(self, task: Any) -> None:
        r = self.rec
        r['task_id'], r['context_id'] = task.id, task.context_id
        r['reference_task_ids'] = r['reference_task_ids']
        self.asm = Assembler(self.eng.store.artifact_dir(self.rid), r['request']['artifact_spec'],
                             self.eng.fetch_http, task.id)
        self.save()
        self.emit_state()

    def _assembler(self) -> Assembler:
        if self.asm is None:
            self.asm = Assembler(self.eng.store.artifact_dir(self.rid),
                                 self.rec['request']['artifact_spec'], self.eng.fetch_http,
                                 self.rec['task_id'])
        return self.asm

    async def _on_status(self, status: Any, defer_terminal: bool = False) -> str:
        st = state_name(status.state)
        self.set_state(st)
        if st in AGENT_TERMINAL:
            if defer_terminal:
                self.terminal_seen = (st, message_text(status.message))
                return 'terminal'
            await self._terminal(st, message_text(status.message))
            return 'final'
        if st in INTERRUPTED:
            qid = status.message.message_id if status.HasField('message') else ''
            rounds = self.rec['input_rounds']
            if qid and rounds and rounds[-1].get('sent_at') and \
                    rounds[-1].get('question_message_id') == qid:
                # The question we already answered, seen again before the agent moved on.
                return 'open'
            self.rec['question'] = message_text(status.message) or ''
            self.rec['question_message_id'] = qid or None
            return 'interrupted'
        return 'open'

    async def _on_task(self, task: Any, polled: bool, defer_terminal: bool = False) -> str:
        if task.id != self.rec['task_id']:
            raise AgentProtocolError(f'a Task for another task id {task.id!r}')
        st = state_name(task.status.state)
        if not polled or st in AGENT_TERMINAL:
            await self._assembler().on_snapshot(task)
        return await self._on_status(task.status, defer_terminal)

    async def _terminal(self, st: str, message: str | None) -> None:
        if st != 'COMPLETED':
            self.finish(st, f'the agent ended the task {st}', message=message)
            return
        prov = {'agent_url': self.rec['agent_url'], 'skill': self.rec['skill'],
                'task_id': self.rec['task_id']}
        committed, rejected = self._assembler().commit(prov)
        if rejected:
            for a in committed:
                os.unlink(a['path'])
            self.finish('FAILED', 'artifact rejected: ' + '; '.join(rejected), message=message,
                        artifacts=[])
            return
        reason = 'the task completed'
        if self.rec.get('protocol_note'):
            reason += f' (after an agent protocol error: {self.rec["protocol_note"]})'
        self.finish('COMPLETED', reason, message=message, artifacts=committed)

    async def _consume(self, stream: Any) -> str:
        try:
            async for ev in stream:
                kind = ev.WhichOneof('payload')
                if kind == 'message':
                    raise AgentProtocolError('a Message event on the stream of an existing task')
                lacks = missing_fields(kind, getattr(ev, kind)) if kind else []
                if lacks:
                    # Never taken as a result: recorded, and the task observed by polling.
                    self.reject(f'a {kind} stream event lacking REQUIRED {", ".join(lacks)} '
                                '(rejected; the task is read with GetTask from then on)')
                    self.poll_only = True
                    if self.asm is not None:  # the result comes from the final task alone
                        self.asm.close()
                    self.asm = None
                    return 'ended'
                if kind == 'task':
                    res = await self._on_task(ev.task, polled=False, defer_terminal=True)
                else:
                    upd = getattr(ev, kind)
                    if upd.task_id != self.rec['task_id']:
                        raise AgentProtocolError(
                            f'{kind} for another task {upd.task_id!r} on the stream of '
                            f'{self.rec["task_id"]!r}')
                    if kind == 'status_update':
                        res = await self._on_status(upd.status, defer_terminal=True)
                    else:
                        await self._assembler().on_chunk(upd.artifact, upd.append)
                        res = 'open'
                if res == 'terminal':
                    await self._after_terminal(stream)
                    return 'final'
                if res != 'open':
                    return res
            return 'ended'
        except asyncio.CancelledError:
            raise
        except AgentProtocolError as e:
            await self._protocol_error(str(e))
            return 'final'
        except Exception as e:  # noqa: BLE001
            info = classify(e)
            if info.protocol or info.code is not None:
                await self._protocol_error(info.message)
                return 'final'
            log(f'{self.rid}: stream ended by {info.message}')
            self.rec['errors'].append(info.record('stream', now_rfc3339()))
            self.save()
            return 'ended'
        finally:
            await stream.aclose()

    async def _after_terminal(self, stream: Any) -> None:
        """The stream reached a final state: read it a little longer (``terminal_grace_ms``) to
        catch an agent that goes on sending. Anything more is an agent protocol error: the
        problem is reported and a COMPLETED result is read again from a fresh GetTask."""
        st, msg = self.terminal_seen
        late = None
        try:
            ev = await asyncio.wait_for(stream.__anext__(),
                                        self.eng.opt['terminal_grace_ms'] / 1000)
            late = f'a {ev.WhichOneof("payload")} event after the final state {st}'
        except (StopAsyncIteration, asyncio.TimeoutError):
            pass
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001
            info = classify(e)
            if info.protocol or info.code is not None:
                late = f'after the final state {st}: {info.message}'
        if late is None or st != 'COMPLETED':
            if late is not None:
                self.rec['protocol_note'] = late
            await self._terminal(st, msg)
            return
        log(f'{self.rid}: agent protocol error: {late}; reading the task again')
        self.rec['protocol_note'] = late
        task = await self.get_task()
        if self.asm is not None:
            self.asm.close()
        self.asm = None
        await self._assembler().on_snapshot(task)
        fresh = state_name(task.status.state)
        if fresh in AGENT_TERMINAL:
            await self._terminal(fresh, message_text(task.status.message))
        else:
            self.finish('FAILED', f'agent protocol error: {late}; GetTask then reports {fresh}')

    async def _protocol_error(self, what: str) -> None:
        """An agent protocol error: fail visibly, cancel the task if it is still open."""
        log(f'{self.rid}: agent protocol error: {what}')
        try:
            t = await self.unary('cancel', lambda c, ctx: c.cancel_task(
                CancelTaskRequest(id=self.rec['task_id']), context=ctx))
            log(f'{self.rid}: canceled after the protocol error: {state_name(t.status.state)}')
        except Exception as e:  # noqa: BLE001 - the outcome is FAILED either way
            log(f'{self.rid}: CancelTask after the protocol error: {e}')
        self.finish('FAILED', f'agent protocol error: {what}', artifacts=[])

    async def _follow(self) -> tuple[str, Any] | None:
        """The stream ended before a final state: subscribe again, or poll."""
        if self.rec['streaming'] and not self.poll_only and \
                self.rec.get('resubscribes', 0) <= self.rec['request']['max_retries']:
            self.rec['resubscribes'] = self.rec.get('resubscribes', 0) + 1
            try:
                stream = self.client(True).subscribe(
                    SubscribeToTaskRequest(id=self.rec['task_id']), context=self._ctx(False))
                first = await stream.__anext__()
                return ('stream', _prepend(first, stream))
            except asyncio.CancelledError:
                raise
            except StopAsyncIteration:
                pass
            except Exception as e:  # noqa: BLE001 - fall back to polling
                info = classify(e)
                self.note_error('subscribe', info)
                if info.code == -32001:
                    self.finish('LOST', 'the agent no longer knows the task (-32001)')
                    return None
        return ('poll', None)

    async def _poll(self) -> str:
        base = self.eng.opt['poll_interval_ms'] / 1000
        interval = base
        last = None
        while True:
            try:
                task = await self.get_task()
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001
                info = classify(e)
                if info.code == -32001:
                    self.finish('LOST', f'the agent no longer knows task {self.rec["task_id"]} '
                                '(-32001)')
                else:
                    self.finish('FAILED', f'GetTask failed: {info.message}')
                return 'final'
            res = await self._on_task(task, polled=True)
            if res != 'open':
                return res
            st = task.status.state
            interval = base if st != last else min(interval * 1.5, base * 10)
            last = st
            await self.nap(interval)

    async def _interrupt(self) -> tuple[str, Any] | None:
        r = self.rec
        st = r['state']
        question = r.get('question', '')
        rounds = r['input_rounds']
        open_round = rounds[-1] if rounds and rounds[-1].get('sent_at') is None and \
            not rounds[-1].get('withdrawn_at') else None
        if open_round is None:
            if len([x for x in rounds if x['kind'] == 'input']) >= self.eng.opt[
                    'input_round_cap'] and st == 'INPUT_REQUIRED':
                await self.stop('cap')
                return None
            n = len(rounds) + 1
            open_round = {
                'round': n, 'kind': 'input' if st == 'INPUT_REQUIRED' else 'auth',
                'question': question, 'question_message_id': r.get('question_message_id'),
                'answer': None,
                'source': None, 'answer_message_id': None, 'asked_at': now_rfc3339(),
                'answered_at': None, 'sent_at': None,
            }
            rounds.append(open_round)
            self.save()
        kind = open_round['kind']
        data = None
        if kind == 'input' and open_round['answer'] is None:
            found = answer_from_inputs(question, r['request']['inputs'])
            if found is not None:
                text, keys = found
                data = {k: r['request']['inputs'][k] for k in keys}
                open_round.update(answer=text, source=','.join(f'inputs.{k}' for k in keys),
                                  answered_at=now_rfc3339())
                self.save()
        if open_round['answer'] is None or kind == 'auth':
            loop = asyncio.get_running_loop()
            self.pending = loop.create_future()
            self.pending_kind = kind
            if kind == 'auth':
                # A new auth round: the credential of an earlier round is not assumed (§7.6.4).
                self.credential = None
            emit({'type': 'escalate', 'id': self.rid, 'kind': kind, 'question': question,
                  'agent': r['agent_url'], 'task_id': r['task_id']})
            if kind == 'auth':
                value, resumed = await self._await_credential()
            else:
                value, resumed = await self.pending, None
            self.pending = None
            self.pending_kind = None
            if resumed is not None:
                log(f'{self.rid}: the task left AUTH_REQUIRED without our credential '
                    f'({state_name(resumed.status.state)}): escalation withdrawn')
                open_round['withdrawn_at'] = now_rfc3339()
                self.save()
                return ('task', resumed)
            if kind == 'auth':
                self.credential = value
                open_round.update(answer='(scoped credential)', source='caller',
                                  answered_at=now_rfc3339())
            else:
                open_round.update(answer=value, source='caller', answered_at=now_rfc3339())
            self.save()
        purpose = f'{kind}-{open_round["round"]}'
        text = open_round['answer'] if kind == 'input' else 'The credential is attached.'
        req = self.build_send(purpose, text, data, continuing=True)
        open_round['answer_message_id'] = r['message_ids'][purpose]
        status, first, stream = await self.send('continue', req)
        if status != 'ok':
            if first.code == -32001:
                self.finish('LOST', f'the agent no longer knows the task: {first.message}')
            else:
                self.finish('FAILED', f'answering the {kind} request failed: {first.message}')
            return None
        open_round['sent_at'] = now_rfc3339()
        self.save()
        kind_ev = first.WhichOneof('payload')
        if kind_ev == 'message':
            raise AgentProtocolError('a Message in reply to a message for an existing task')
        if stream is None:
            return ('task', first.task)
        return ('stream', _prepend(first, stream))

    async def _await_credential(self) -> tuple[str | None, Any]:
        """Wait for the caller's credential while still reading the task (§7.6.2: it may be
        resolved out of band and the agent resume on its own). Returns (credential, None), or
        (None, task) once a read shows the task left AUTH_REQUIRED. The first read waits 2 s
        (a caller usually answers at once), then reads back off like polling; a genuine push
        prompts a read at once."""
        pending = self.pending
        assert pending is not None
        base = self.eng.opt['poll_interval_ms'] / 1000
        interval = base
        wait = max(base, 2.0)
        tid = self.rec['task_id']
        while True:
            waker = asyncio.ensure_future(self.wake.wait())
            try:
                await asyncio.wait({pending, waker}, timeout=wait,
                                   return_when=asyncio.FIRST_COMPLETED)
            finally:
                waker.cancel()
            if pending.done():
                return pending.result(), None
            self.wake.clear()
            try:
                task = await self.client(False).get_task(
                    GetTaskRequest(id=tid, history_length=0), context=self._ctx(True))
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 - a failed read changes nothing
                log(f'{self.rid}: reading the task during an auth escalation: {classify(e)}')
                task = None
            if task is not None and not missing_fields('task', task) and task.id == tid and \
                    state_name(task.status.state) != 'AUTH_REQUIRED':
                return None, task
            interval = min(interval * 1.5, base * 10)
            wait = interval

    async def stop(self, why: str, detail: str | None = None) -> None:
        """End the delegation on our side: CancelTask (a -32002 is resolved with GetTask)."""
        reasons = {
            'deadline': 'the local deadline was reached',
            'caller': 'canceled by the caller',
            'cap': f'input round cap ({self.eng.opt["input_round_cap"]}) reached',
            'internal': detail or 'internal error',
        }
        reason = reasons[why]
        if self.finished:
            return
        if self.rec['task_id'] is None:
            self.finish('CANCELED' if why == 'caller' else 'FAILED',
                        f'{reason} before the agent created a task')
            return
        try:
            task = await asyncio.wait_for(self.unary('cancel', lambda c, ctx: c.cancel_task(
                CancelTaskRequest(id=self.rec['task_id']), context=ctx)),
                self.eng.opt['request_timeout_ms'] / 1000)
        except Exception as e:  # noqa: BLE001
            info = classify(e) if not isinstance(e, asyncio.TimeoutError) else ErrorInfo(
                'CancelTask timed out', transient=True)
            if info.code == -32002:
                try:
                    task = await asyncio.wait_for(self.get_task(),
                                                  self.eng.opt['request_timeout_ms'] / 1000)
                except Exception as e2:  # noqa: BLE001
                    self.finish('FAILED', f'{reason}; CancelTask: -32002 and GetTask failed: '
                                f'{e2}')
                    return
            elif info.code == -32001:
                self.finish('LOST', f'{reason}; CancelTask: the agent no longer knows the task')
                return
            else:
                self.finish('FAILED', f'{reason}; CancelTask failed: {info.message}')
                return
        st = state_name(task.status.state)
        if st == 'COMPLETED':
            if self.asm is not None:
                self.asm.close()
            self.asm = None
            await self._assembler().on_snapshot(task)
            self.set_state(st)
            await self._terminal(st, message_text(task.status.message))
        elif st in AGENT_TERMINAL:
            self.set_state(st)
            self.finish(st, f'{reason}; the task ended {st}', message_text(task.status.message))
        else:
            self.finish('CANCELED' if why == 'caller' else 'FAILED',
                        f'{reason}; CancelTask sent, the agent still reports {st}')


async def _prepend(first: Any, stream: Any) -> Any:
    """An async generator yielding ``first`` then the rest of ``stream`` (closing it)."""
    try:
        yield first
        async for ev in stream:
            yield ev
    finally:
        await stream.aclose()


# ---------------------------------------------------------------------------------------------
# The engine: driver contract in, delegations out
# ---------------------------------------------------------------------------------------------


class Engine:
    def __init__(self) -> None:
        self.inited = False
        self.opt: dict[str, Any] = dict(DEFAULT_OPTIONS)
        self.store: Store
        self.http: httpx.AsyncClient
        self.fetch_http: FetchClient
        self.agents: list[Agent] = []
        self.webhook: Webhook | None = None
        self.agent_by_url: dict[str, Agent] = {}
        self.self_url = ''
        self.delegations: dict[str, Delegation] = {}
        self.tasks: set[asyncio.Task[None]] = set()
        self.seq = 0
        self.parents: dict[str, set[str]] = {}

    # -- init -------------------------------------------------------------------------------

    async def init(self, msg: dict[str, Any]) -> None:
        store_dir = msg.get('store_dir')
        agents = msg.get('agents')
        if not isinstance(store_dir, str) or not store_dir:
            raise BadRequest('store_dir: required (this delegator has no default store)')
        if not isinstance(agents, list) or not all(isinstance(a, str) for a in agents):
            raise BadRequest('agents: must be an array of card URLs')
        opts = msg.get('options') or {}
        if not isinstance(opts, dict):
            raise BadRequest('options: must be an object')
        for k, v in opts.items():
            if k in self.opt and v is not None:
                self.opt[k] = v
        self.self_url = msg.get('self_url') or ''
        self.store = Store(store_dir)
        timeout = httpx.Timeout(self.opt['request_timeout_ms'] / 1000)
        # init.tls_roots: trust exactly these authorities (an SSL context with only that CA
        # file: hostname and validity checked), and use https:// interfaces only.
        tls_roots = msg.get('tls_roots')
        verify: Any = True
        if tls_roots is not None:
            import ssl
            if not isinstance(tls_roots, str):
                raise BadRequest('tls_roots: must be the path of a PEM file')
            try:
                verify = ssl.create_default_context(cafile=tls_roots)
                with open(tls_roots, 'rb') as f:
                    cards.TLS_ROOTS_PEM = f.read()
            except (OSError, ssl.SSLError) as e:
                raise BadRequest(f'tls_roots: {tls_roots}: {e}') from e
            cards.TLS_ONLY = True
        self.http = httpx.AsyncClient(
            timeout=timeout, transport=WireGuard(int(self.opt['max_event_bytes']), verify),
            headers={'A2A-Version': '1.0'})
        # Artifact url parts are fetched on their own path, with no A2A headers or credential,
        # only from init.fetch_origins (A2A §14.1.1): checked before every request, redirects
        # included (httpx follows none by default).
        try:
            origins = fetch_origins(msg.get('fetch_origins'))
        except ValueError as e:
            raise BadRequest(str(e)) from e
        self.fetch_http = FetchClient(origins, timeout=timeout, verify=verify)
        try:
            cards.SIGNATURES = cards.signature_policy(msg.get('card_signatures'))
        except ValueError as e:
            raise BadRequest(str(e)) from e
        extensions = msg.get('extensions') or []
        if not isinstance(extensions, list) or not all(isinstance(e, str) for e in extensions):
            raise BadRequest('extensions: must be an array of extension URIs')
        creds = msg.get('agent_credentials') or {}
        if not isinstance(creds, dict) or not all(isinstance(v, str) for v in creds.values()):
            raise BadRequest('agent_credentials: must be an object of card URL to credential')
        self.agents = [
            Agent(u, extensions, creds.get(u), int(self.opt['max_event_bytes']),
                  self.opt['request_timeout_ms'] / 1000, log)
            for u in agents
        ]
        self.agent_by_url = {a.card_url: a for a in self.agents}
        webhook_url = None
        base = msg.get('webhook_base_url')
        if base is not None:
            listen = msg.get('webhook_listen')
            if not isinstance(base, str) or not (listen is None or isinstance(listen, str)):
                raise BadRequest('webhook_base_url, webhook_listen: must be strings or null')
            hook = Webhook(self.push_hashes, self.on_push, int(self.opt['max_event_bytes']), log)
            try:
                webhook_url = await hook.start(base, listen)
            except (OSError, ValueError) as e:
                raise BadRequest(f'webhook_base_url: cannot serve the webhook: {e}') from None
            self.webhook = hook
        await asyncio.gather(*(a.ensure(self.http) for a in self.agents))
        records = self.store.load_all()
        self.seq = max((r.get('seq', 0) for r in records), default=0)
        self.inited = True
        supports = SUPPORTS + (['push'] if self.webhook is not None else [])
        emit({'type': 'init_ok', 'name': NAME, 'version': VERSION, 'supports': supports,
              'webhook_url': webhook_url, 'agents': [a.info() for a in self.agents]})
        for r in records:
            d = Delegation(self, r)
            self.delegations[r['id']] = d
            if r.get('parent_id'):
                self.parents.setdefault(r['parent_id'], set()).add(r['id'])
        if msg.get('recovering'):
            self.recover(records)

    def push_hashes(self, rid: str) -> list[str] | None:
        """The sha256 of every push token configured for delegation ``rid`` (the webhook)."""
        d = self.delegations.get(rid)
        return None if d is None else d.rec.get('push_token_sha256') or []

    def on_push(self, rid: str, task_id: str | None) -> None:
        """A genuine push (the right token) reached the webhook: about the delegation's own
        task it prompts a read of the task; about any other task it changes nothing."""
        d = self.delegations.get(rid)
        if d is None or d.finished:
            return
        if task_id is not None and task_id == d.rec['task_id']:
            d.wake.set()
        elif d.rec['task_id'] is not None:
            log(f'{rid}: a push about task {task_id!r}, not this delegation\'s task '
                f'{d.rec["task_id"]!r}: acknowledged and ignored')

    def recover(self, records: list[dict[str, Any]]) -> None:
        for r in records:
            d = self.delegations[r['id']]
            if r['state'] in FINAL_STATES:
                if not r.get('reported'):
                    emit(d.done_line())
                    r['reported'] = True
                    self.store.save(r)
                continue
            if r['agent_url'] is None:  # a fan-out parent
                d.emit_state()
                self.spawn(self._watch_parent(d))
                continue
            if r['agent_url'] not in self.agent_by_url or d.agent.view is None or \
                    not d.agent.view.interfaces:
                d.finish('FAILED', f'after restart the agent {r["agent_url"]} is not available')
                continue
            d.emit_state()
            self.spawn(d.main(resume=True))

    # -- requests ---------------------------------------------------------------------------

    def spawn(self, coro: Any) -> None:
        t = asyncio.create_task(coro)
        self.tasks.add(t)
        t.add_done_callback(self.tasks.discard)

    async def handle(self, msg: dict[str, Any]) -> None:
        typ = msg.get('type')
        rid = msg.get('id') if isinstance(msg.get('id'), str) else None
        try:
            if typ == 'init':
                if self.inited:
                    raise BadRequest('init: already initialised')
                try:
                    await self.init(msg)
                except OSError as e:
                    raise BadRequest(f'store_dir: cannot open the store: {e}') from None
                return
            if not self.inited:
                raise BadRequest(f'{typ}: init must come first')
            if typ == 'delegate':
                await self.delegate(msg)
            elif typ == 'answer':
                self.resolve(msg, 'input', 'text')
            elif typ == 'credential':
                self.resolve(msg, 'auth', 'credential')
            elif typ == 'cancel':
                d = self.delegations.get(rid or '')
                if d is None or d.finished:
                    raise BadRequest(f'cancel: no running delegation {rid!r}')
                kids = self.parents.get(d.rid)
                d.cancel_requested = True
                targets = [self.delegations[k] for k in sorted(kids)] if kids else [d]
                for t in targets:
                    if t.finished:
                        continue
                    t.cancel_requested = True
                    if t.drive is not None:
                        t.drive.cancel()
            elif typ == 'snapshot':
                emit({'type': 'snapshot_ok', 'records': [
                    self.public(d.rec) for d in sorted(self.delegations.values(),
                                                       key=lambda x: x.rec['seq'])]})
            else:
                emit({'type': 'error', 'id': rid, 'code': 'unsupported',
                      'message': f'unknown message type {typ!r}'})
        except BadRequest as e:
            emit({'type': 'error', 'id': rid, 'code': 'bad_request', 'message': str(e)})
        except Exception as e:  # noqa: BLE001 - the process keeps serving the others
            log(f'{typ} failed: {"".join(traceback.format_exception(e))}')
            emit({'type': 'error', 'id': rid, 'code': 'internal', 'message': f'{typ}: {e}'})

    def resolve(self, msg: dict[str, Any], kind: str, field: str) -> None:
        rid = msg.get('id')
        d = self.delegations.get(rid if isinstance(rid, str) else '')
        value = msg.get(field)
        if d is None or d.pending is None or d.pending.done() or d.pending_kind != kind:
            raise BadRequest(f'{msg.get("type")}: no pending {kind} escalation for {rid!r}')
        if not isinstance(value, str):
            raise BadRequest(f'{field}: must be a string')
        d.pending.set_result(value)

    @staticmethod
    def public(rec: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in rec.items() if k not in (
            'reported', 'question', 'question_message_id', 'resubscribes', 'protocol_note')}

    def new_record(self, req: dict[str, Any], parent_id: str | None, deadline: float,
                   budget: float, depth: int, chain: list[str],
                   refine_of: str | None) -> dict[str, Any]:
        self.seq += 1
        t = now_rfc3339()
        return {
            'id': req['id'], 'seq': self.seq, 'parent_id': parent_id, 'request': req,
            'agent_url': None, 'rpc_url': None, 'protocol_version': None,
            'skill': req['capability'], 'message_ids': {}, 'task_id': None, 'context_id': None,
            'state': 'SENDING', 'reason': None, 'budget_usd': budget, 'budget_share': 0.0,
            'spend_usd': 0.0, 'deadline': now_rfc3339(deadline), 'depth': depth,
            'chain': chain, 'refine_of': refine_of, 'reference_task_ids': [],
            'streaming': False, 'push_token_sha256': [], 'attempts': 0, 'last_error': None,
            'error_code': None, 'final_message': None, 'priority': req['priority'],
            'created_at': t, 'updated_at': t, 'terminal_at': None, 'dlq': False,
            'input_rounds': [], 'artifacts': [], 'errors': [], 'reported': True,
        }

    async def delegate(self, msg: dict[str, Any]) -> None:
        req = normalize_delegate(msg)
        if req['id'] in self.delegations:
            raise BadRequest(f'id: duplicate delegation id {req["id"]!r}')
        timeout_s = _int(msg, 'timeout_seconds', 300, 10, 3600)
        deadline = time.time() + timeout_s
        if msg.get('deadline') is not None:
            try:
                deadline = min(deadline, parse_rfc3339(msg['deadline']))
            except (TypeError, ValueError):
                raise BadRequest('deadline: must be an RFC 3339 time or null') from None
        budget = msg.get('budget_usd', 1.0)
        budget = 1.0 if budget is None else budget
        if isinstance(budget, bool) or not isinstance(budget, (int, float)) or budget < 0:
            raise BadRequest('budget_usd: must be a number >= 0')
        depth = _int(msg, 'depth', 0, 0, None)
        chain = msg.get('chain') or []
        if not isinstance(chain, list) or not all(isinstance(c, str) for c in chain):
            raise BadRequest('chain: must be an array of URLs')
        refine_of = msg.get('refine_of')
        if refine_of is not None and refine_of not in self.delegations:
            raise BadRequest(f'refine_of: unknown delegation {refine_of!r}')
        agent_only = msg.get('agent')
        children = msg.get('children')
        if children is not None:
            if not isinstance(children, list) or not children:
                raise BadRequest('children: must be a non-empty array or null')
            kids = []
            for i, c in enumerate(children):
                if not isinstance(c, dict):
                    raise BadRequest(f'children[{i}]: must be an object')
                merged = {'inputs': msg.get('inputs'), 'artifact_spec': msg.get('artifact_spec'),
                          'max_retries': msg.get('max_retries'), 'priority': msg.get('priority')}
                merged.update({k: v for k, v in c.items() if v is not None})
                kid = normalize_delegate(merged, prefix=f'children[{i}].')
                if kid['id'] in self.delegations or kid['id'] == req['id'] or any(
                        k['id'] == kid['id'] for k in kids):
                    raise BadRequest(f'children[{i}].id: duplicate delegation id')
                kids.append(kid)
        rec = self.new_record(req, None, deadline, float(budget), depth, chain, refine_of)
        d = Delegation(self, rec)
        self.delegations[req['id']] = d
        refusal = self.limits(rec, deadline)
        if refusal is not None:
            d.finish('REFUSED', refusal)
            return
        if children is not None:
            rec['state'] = 'WORKING'
            d.save()
            d.emit_state()
            share = budget * (1 - self.opt['budget_reserve_fraction']) / len(kids)
            rec['budget_share'] = share
            for kid in kids:
                krec = self.new_record(kid, req['id'], deadline, share, depth, chain, None)
                kd = Delegation(self, krec)
                self.delegations[kid['id']] = kd
                self.parents.setdefault(req['id'], set()).add(kid['id'])
                await self.start(kd, None, None)
            self.spawn(self._watch_parent(d))
            return
        await self.start(d, agent_only, refine_of)

    def limits(self, rec: dict[str, Any], deadline: float) -> str | None:
        margin = self.opt['deadline_margin_ms'] / 1000
        if deadline <= time.time():
            return 'deadline: the deadline has already passed'
        if deadline - margin <= time.time():
            return 'deadline: the deadline is within the safety margin'
        if rec['depth'] > self.opt['max_depth']:
            return f'depth: incoming depth {rec["depth"]} exceeds max_depth {self.opt["max_depth"]}'
        if self.self_url and self.self_url in rec['chain']:
            return f'loop: our own URL {self.self_url} is already in the chain'
        if rec['budget_usd'] <= 0:
            return 'budget: no budget'
        return None

    async def route(self, rec: dict[str, Any], only: str | None,
                    refine_of: str | None) -> tuple[Agent | None, str]:
        """The first capable agent (its card revalidated first when stale), or None and why."""
        spec = rec['request']['artifact_spec']
        from artifacts import accepts

        def capable(v: CardView) -> bool:
            for s in v.card.skills:
                if s.id == rec['skill']:
                    modes = v.output_modes(s)
                    if not modes or any(accepts(spec['mime_types'], m) or accepts([m], x)
                                        for m in modes for x in spec['mime_types']):
                        return True
            return False

        candidates = self.agents
        if refine_of is not None:
            candidates = [a for a in self.agents
                          if a.card_url == self.delegations[refine_of].rec['agent_url']]
        elif only is not None:
            candidates = [a for a in self.agents if a.card_url == only]
        why = (f'routing: no agent advertises skill {rec["skill"]!r} with an accepted output '
               f'mode {spec["mime_types"]}')
        for a in candidates:
            await a.ensure(self.http)
            v = a.view
            if v is None or not v.interfaces or not capable(v):
                continue
            if v.missing_extensions:
                why += (f'; {a.card_url} requires extension(s) not supported: '
                        f'{", ".join(v.missing_extensions)}')
                continue
            return a, why
        return None, why

    async def start(self, d: Delegation, only: str | None, refine_of: str | None) -> None:
        rec = d.rec
        agent, why = await self.route(rec, only, refine_of)
        if agent is None or agent.view is None:
            d.finish('REFUSED', why)
            return
        d.view = view = agent.view
        iface = view.interfaces[view.preferred]
        spec = rec['request']['artifact_spec']
        rec.update(
            agent_url=agent.card_url, rpc_url=iface.url,
            protocol_version=iface.protocol_version or '1.0',
            streaming=bool(spec['streaming_preferred'] and view.streaming),
            budget_share=rec['budget_usd'] * (1 - self.opt['budget_reserve_fraction']),
        )
        if refine_of is not None:
            old = self.delegations[refine_of].rec
            rec['context_id'] = old['context_id']
            if old['task_id']:
                rec['reference_task_ids'] = [old['task_id']]
        rec['message_ids']['create'] = message_id(rec['id'], 'create')
        d.save()  # durable before the first request leaves
        d.emit_state()
        self.spawn(d.main(resume=False))

    async def _watch_parent(self, d: Delegation) -> None:
        kids = [self.delegations[k] for k in sorted(self.parents.get(d.rid, ()))]
        while not all(k.finished for k in kids):
            d.child_event = asyncio.Event()  # type: ignore[attr-defined]
            await d.child_event.wait()  # type: ignore[attr-defined]
        states = {k.rid: k.rec['state'] for k in kids}
        if d.cancel_requested:
            d.finish('CANCELED', 'canceled by the caller; children ended ' + ', '.join(
                f'{k}: {s}' for k, s in states.items()), artifacts=[])
        elif all(s == 'COMPLETED' for s in states.values()):
            d.finish('COMPLETED', 'every child completed', artifacts=[])
        else:
            d.finish('FAILED', 'children ended ' + ', '.join(
                f'{k}: {s}' for k, s in states.items()), artifacts=[])

    def on_finished(self, d: Delegation) -> None:
        parent = d.rec.get('parent_id')
        if parent and parent in self.delegations:
            ev = getattr(self.delegations[parent], 'child_event', None)
            if ev is not None:
                ev.set()

    async def finish_open_work(self) -> None:
        while self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)


async def read_lines(engine: Engine) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=16 * 1024 * 1024 + 1)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while True:
        try:
            line = await reader.readline()
        except (asyncio.LimitOverrunError, ValueError):
            emit({'type': 'error', 'id': None, 'code': 'bad_request',
                  'message': 'line longer than 16 MiB skipped'})
            continue
        if not line:
            break
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError as e:
            emit({'type': 'error', 'id': None, 'code': 'bad_request',
                  'message': f'not a JSON object: {e}'})
            continue
        if not isinstance(msg, dict) or not isinstance(msg.get('type'), str):
            emit({'type': 'error', 'id': None, 'code': 'bad_request',
                  'message': 'a message must be a JSON object with a string "type"'})
            continue
        await engine.handle(msg)
    await engine.finish_open_work()
    if engine.webhook is not None:
        await engine.webhook.close()


def main() -> int:
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    engine = Engine()
    try:
        asyncio.run(read_lines(engine))
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == '__main__':
    sys.exit(main())
