#!/usr/bin/env python3
"""Adversarial delegators for the harness's own tests: each speaks just enough of the driver
protocol (docs/driver-protocol.md) to be judged, and none does the work. The harness must give
every one of them 0 PASS over the whole catalog.

Usage: adversary.py MODE, MODE one of
  never-init      reads its stdin and never answers `init`;
  done-failed     answers `init`, then `done` FAILED for every delegation at once;
  done-completed  `done` COMPLETED (no artifacts) at once;
  done-refused    `done` REFUSED at once;
  fabricate       `done` COMPLETED with made-up artifacts (plausible lengths, invented bytes
                  written to a file) without contacting any agent;
  send-no-read    sends the first SendMessage (with well-formed limits) to the first agent that
                  advertises the skill, never reads the reply, and so never reports an outcome.
Every mode answers `snapshot` with an empty record list (except never-init).
"""

import datetime
import hashlib
import json
import os
import socket
import sys
import urllib.parse
import uuid

MODE = sys.argv[1] if len(sys.argv) > 1 else ""
MODES = {"never-init", "done-failed", "done-completed", "done-refused", "fabricate", "send-no-read"}
if MODE not in MODES:
    sys.stderr.write(f"unknown mode {MODE!r}; one of {sorted(MODES)}\n")
    sys.exit(2)

STATE = {"done-failed": "FAILED", "done-completed": "COMPLETED", "done-refused": "REFUSED",
         "fabricate": "COMPLETED"}

init = {}
sockets = []  # kept open, never read


def write(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def card_for(capability):
    """The first agent card advertising `capability`: (rpc url, card)."""
    import urllib.request  # only send-no-read reads cards: the other modes start without it

    for url in init.get("agents", []):
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                card = json.loads(r.read())
        except Exception as e:  # a card that cannot be read is skipped
            sys.stderr.write(f"card {url}: {e}\n")
            continue
        if any(s.get("id") == capability for s in card.get("skills", [])):
            ifaces = card.get("supportedInterfaces") or card.get("additionalInterfaces") or []
            rpc = next((i.get("url") for i in ifaces if i.get("url")), card.get("url"))
            return rpc, card
    return None, None


def x_deleg(d):
    """Well-formed limits, so that the request itself breaks no wire rule."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ours = now + datetime.timedelta(seconds=d.get("timeout_seconds") or 300)
    if d.get("deadline"):
        ours = min(ours, datetime.datetime.fromisoformat(d["deadline"].replace("Z", "+00:00")))
    child = ours - datetime.timedelta(seconds=1)
    return {"deadline": child.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
            "budget_usd": (d.get("budget_usd") or 1.0) * 0.5, "depth": (d.get("depth") or 0) + 1,
            "chain": list(d.get("chain") or []) + [init.get("self_url")]}


def send_without_reading(d):
    rpc, _ = card_for(d["capability"])
    if not rpc:
        return
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                    "parts": [{"text": d["text"]}],
                    "metadata": {"skill": d["capability"]}},
        "configuration": {"returnImmediately": True,
                          "acceptedOutputModes": d["artifact_spec"]["mime_types"]},
        "metadata": {"x-deleg": x_deleg(d)}}}).encode()
    u = urllib.parse.urlparse(rpc)
    s = socket.create_connection((u.hostname, u.port or 80), timeout=2)
    head = (f"POST {u.path or '/'} HTTP/1.1\r\nHost: {u.netloc}\r\n"
            f"Content-Type: application/json\r\nA2A-Version: 1.0\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    s.sendall(head + body)
    sockets.append(s)


def fabricated(d):
    store = init.get("store_dir") or "/tmp"
    spec = d.get("artifact_spec") or {}
    size = min(int(spec.get("max_size_bytes") or 1024), 4096)
    data = os.urandom(size)
    os.makedirs(store, exist_ok=True)
    path = os.path.join(store, f"{d['id']}-artifact-1")
    with open(path, "wb") as f:
        f.write(data)
    media = (spec.get("mime_types") or ["application/json"])[0]
    return [{"artifact_id": "artifact-1", "name": "result", "bytes": size,
             "sha256": hashlib.sha256(data).hexdigest(), "media_type": media, "path": path}]


for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    kind = msg.get("type")
    if MODE == "never-init":
        continue
    if kind == "init":
        init = msg
        write({"type": "init_ok", "name": f"adversary-{MODE}", "version": "0.0.1",
               "supports": ["delegate", "snapshot"], "webhook_url": None})
    elif kind == "delegate":
        if MODE == "send-no-read":
            try:
                send_without_reading(msg)
            except Exception as e:
                sys.stderr.write(f"send: {e}\n")
            continue
        artifacts = fabricated(msg) if MODE == "fabricate" else []
        write({"type": "done", "id": msg["id"], "state": STATE[MODE],
               "reason": f"adversary {MODE}", "task_id": None, "context_id": None,
               "message": None, "artifacts": artifacts})
    elif kind == "snapshot":
        write({"type": "snapshot_ok", "records": []})
