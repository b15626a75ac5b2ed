#!/usr/bin/env python3
"""An official A2A Python SDK (a2a-sdk 1.3.0) agent serving JSON-RPC, HTTP+JSON and gRPC.

Usage: .venv/bin/python interop/sdk_agent.py [--order grpc,rest,jsonrpc] [--artifacts one|mixed]

It binds loopback port 0 twice (HTTP for the card, JSON-RPC and HTTP+JSON via uvicorn; gRPC via
grpc.aio), then prints one JSON line on stdout:

  {"card_url": ".../.well-known/agent-card.json", "jsonrpc": URL, "rest": URL, "grpc": "host:port"}

and serves until stdin closes or it is killed. The card lists the three interfaces in `--order`
(default grpc, rest, jsonrpc), protocol version 1.0, streaming on, one skill `work` producing
`text/plain`. The executor answers every message with a task that goes WORKING, gets one text
artifact `result` ("sdk says: <the message text>"), and COMPLETED; over a stream each step is
an event. With `--artifacts mixed` the task gets, after `result`, artifacts of several sizes
and part kinds, each streamed in chunks (`append`, `lastChunk`) as `_mixed_artifacts` lists them:
a 4,000-byte text in four chunks of 1,000; a UTF-8 text sent as raw bytes split inside a
two-byte sequence; 9,000 raw bytes of every value; a data part; a 100,000-character text of
multi-byte characters (160,000 bytes) in chunks of 16,384 characters.

Needs `a2a-sdk[http-server,grpc]==1.3.0` and uvicorn (interop/requirements.txt).
"""

import argparse
import asyncio
import json
import socket
import sys

import grpc
import uvicorn
from starlette.applications import Starlette

from a2a.helpers.proto_helpers import new_data_part, new_raw_part, new_task, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.request_handlers import DefaultRequestHandlerV2, GrpcHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import InMemoryTaskStore
from a2a.server.tasks.task_updater import TaskUpdater
from a2a.types import a2a_pb2, a2a_pb2_grpc

BINDINGS = {"jsonrpc": "JSONRPC", "rest": "HTTP+JSON", "grpc": "GRPC"}


def _chunks(data, size):
    return [data[i : i + size] for i in range(0, len(data), size)]


def _mixed_artifacts() -> list[tuple[str, list[list]]]:
    """(artifact id, chunks of parts) of `--artifacts mixed`, the same for every task."""
    text_4000 = "".join(f"line {i:04d} of the four-thousand-byte text\n" for i in range(100))
    text_4000 = (text_4000 * 2)[:4000]
    utf8 = "naïve café, Ünïcödé ✓".encode()
    cut = utf8.index("ï".encode()) + 1  # inside the two bytes of ï
    raw_9000 = bytes((i * 31) % 256 for i in range(9000))
    big = ("ünïcödé ✓ " * 10000)[:100000]
    return [
        ("text-4000", [[new_text_part(c, media_type="text/plain")] for c in _chunks(text_4000, 1000)]),
        (
            "raw-split-utf8",
            [
                [new_raw_part(utf8[:cut], media_type="text/plain; charset=utf-8")],
                [new_raw_part(utf8[cut:])],
            ],
        ),
        (
            "raw-9000",
            [[new_raw_part(raw_9000, media_type="application/octet-stream", filename="big.bin")]],
        ),
        (
            "data",
            [
                [
                    new_data_part(
                        {"answer": "sdk", "items": ["ü", True, None], "nested": {"k": "v"}},
                        media_type="application/json",
                    )
                ]
            ],
        ),
        ("text-100k", [[new_text_part(c, media_type="text/plain")] for c in _chunks(big, 16384)]),
    ]


class ArtifactExecutor(AgentExecutor):
    """Completes every task with one text artifact (and, when `mixed`, those of `_mixed_artifacts`)."""

    def __init__(self, mixed: bool):
        self.mixed = mixed

    async def execute(self, context: RequestContext, event_queue) -> None:
        task = context.current_task or new_task(
            context.task_id,
            context.context_id,
            a2a_pb2.TaskState.TASK_STATE_SUBMITTED,
            history=[context.message] if context.message else [],
        )
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        text = context.get_user_input() if context.message else ""
        await updater.add_artifact(
            [new_text_part(f"sdk says: {text}", media_type="text/plain")],
            name="result",
            last_chunk=True,
        )
        if self.mixed:
            for artifact_id, chunks in _mixed_artifacts():
                for i, parts in enumerate(chunks):
                    await updater.add_artifact(
                        parts,
                        artifact_id=artifact_id,
                        name=artifact_id,
                        append=i > 0,
                        last_chunk=i == len(chunks) - 1,
                    )
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


def card(http_base: str, grpc_target: str, order: list[str]) -> a2a_pb2.AgentCard:
    urls = {
        "jsonrpc": f"{http_base}/a2a/jsonrpc",
        "rest": f"{http_base}/a2a/rest",
        "grpc": grpc_target,
    }
    return a2a_pb2.AgentCard(
        name="sdk-agent",
        description="a2a-sdk 1.3.0 reference peer (JSON-RPC, HTTP+JSON, gRPC)",
        version="1.0.0",
        supported_interfaces=[
            a2a_pb2.AgentInterface(
                url=urls[b], protocol_binding=BINDINGS[b], protocol_version="1.0"
            )
            for b in order
        ],
        capabilities=a2a_pb2.AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            a2a_pb2.AgentSkill(
                id="work",
                name="work",
                description="answers with a text artifact",
                tags=["interop"],
                output_modes=["text/plain"],
            )
        ],
    )


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--order", default="grpc,rest,jsonrpc")
    ap.add_argument("--artifacts", choices=["one", "mixed"], default="one")
    args = ap.parse_args()
    order = [b.strip() for b in args.order.split(",") if b.strip()]
    if not order or any(b not in BINDINGS for b in order):
        print(json.dumps({"error": f"bad --order {args.order!r}"}))
        return 2

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    http_port = sock.getsockname()[1]
    http_base = f"http://127.0.0.1:{http_port}"

    grpc_server = grpc.aio.server()
    grpc_port = grpc_server.add_insecure_port("127.0.0.1:0")
    grpc_target = f"127.0.0.1:{grpc_port}"

    agent_card = card(http_base, grpc_target, order)
    handler = DefaultRequestHandlerV2(
        agent_executor=ArtifactExecutor(args.artifacts == "mixed"),
        task_store=InMemoryTaskStore(),
        agent_card=agent_card,
    )
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), grpc_server)
    routes = (
        create_agent_card_routes(agent_card)
        + create_jsonrpc_routes(handler, rpc_url="/a2a/jsonrpc")
        + create_rest_routes(handler, path_prefix="/a2a/rest")
    )
    app = Starlette(routes=routes)
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
    )

    await grpc_server.start()
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if serving.done():
            return 1
        await asyncio.sleep(0.01)
    print(
        json.dumps(
            {
                "card_url": f"{http_base}/.well-known/agent-card.json",
                "jsonrpc": f"{http_base}/a2a/jsonrpc",
                "rest": f"{http_base}/a2a/rest",
                "grpc": grpc_target,
            }
        ),
        flush=True,
    )
    loop = asyncio.get_running_loop()
    stdin_closed = loop.run_in_executor(None, sys.stdin.read)
    await asyncio.wait([serving, stdin_closed], return_when=asyncio.FIRST_COMPLETED)
    server.should_exit = True
    await grpc_server.stop(0.5)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
