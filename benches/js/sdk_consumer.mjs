#!/usr/bin/env node
// The js-sdk baseline of `a2a-harness bench`: N concurrent sends through the official
// @a2a-js/sdk client (the version examples/ts-delegator pins, installed by
// `bash scripts/setup-node.sh`), each response's artifacts reassembled with A2A's append/replace
// semantics and hashed incrementally (sha256, node:crypto), nothing printed per event.
//
// Usage: sdk_consumer.mjs CARD_URL N PREFIX (stream|send)
//        sdk_consumer.mjs --check   (prints "@a2a-js/sdk VERSION" when the SDK loads)
//
// The same protocol as benches/python/sdk_consumer.py. Message ids are PREFIX-<i>, so the bench
// finds each task in the mock's journal. Prints one JSON line: {"reads": [{"message_id",
// "task_id", "artifacts": {id: {"bytes", "sha256"}}, "sent_unix_s", "ended_s", "error"?}],
// "wall_s", "cpu_s", "maxrss_kib"} (sent_unix_s: the wall clock when the read's send began, for
// the bench's time to first byte) (CPU of this process from process.cpuUsage(), counted from the first send; peak
// RSS from process.resourceUsage().maxRSS). Exit 0 even when a read failed (the bench judges);
// 2 on usage errors; 3 when the SDK cannot be loaded.
//
// The SDK is resolved from A2A_BENCH_JS_SDK_FROM (a directory whose node_modules holds
// @a2a-js/sdk), by default examples/ts-delegator of this repository.

import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const USAGE = "usage: sdk_consumer.mjs CARD_URL N PREFIX (stream|send) | --check\n";

function loadSdk() {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const from = process.env.A2A_BENCH_JS_SDK_FROM || path.join(here, "..", "..", "examples", "ts-delegator");
  const require = createRequire(path.join(path.resolve(from), "package.json"));
  try {
    const entry = require.resolve("@a2a-js/sdk");
    return { sdk: require("@a2a-js/sdk"), client: require("@a2a-js/sdk/client"), entry };
  } catch (e) {
    process.stderr.write(
      `sdk_consumer.mjs: @a2a-js/sdk not found from ${from} (${String(e.message).split("\n")[0]}); run \`bash scripts/setup-node.sh\`\n`,
    );
    process.exit(3);
  }
}

/** Per artifact: running sha256 and length (append extends, a new artifact replaces). */
class Hasher {
  constructor() {
    /** @type {Map<string, {h: import("node:crypto").Hash, n: number}>} */
    this.arts = new Map();
  }

  addParts(aid, parts, append) {
    let a = this.arts.get(aid);
    if (!append || a === undefined) {
      a = { h: createHash("sha256"), n: 0 };
      this.arts.set(aid, a);
    }
    for (const p of parts ?? []) {
      const c = p.content;
      let b;
      switch (c?.$case) {
        case "text":
          b = Buffer.from(c.value, "utf8");
          break;
        case "raw":
          b = c.value;
          break;
        case "data":
          // The compact JSON text of the value, as the Python consumer's json.dumps.
          b = Buffer.from(JSON.stringify(c.value) ?? "null", "utf8");
          break;
        default:
          continue;
      }
      a.h.update(b);
      a.n += b.length;
    }
  }

  /** A task snapshot: artifacts not seen yet are taken whole. */
  onTask(task) {
    for (const art of task.artifacts ?? []) {
      if (!this.arts.has(art.artifactId)) this.addParts(art.artifactId, art.parts, false);
    }
    return task.id;
  }

  /** One stream event; returns its task id, if any. */
  onEvent(ev) {
    const p = ev.payload;
    switch (p?.$case) {
      case "task":
        return this.onTask(p.value);
      case "artifactUpdate": {
        const u = p.value;
        if (u.artifact) this.addParts(u.artifact.artifactId, u.artifact.parts, u.append);
        return u.taskId;
      }
      case "statusUpdate":
        return p.value.taskId;
      default:
        return null;
    }
  }

  summary() {
    const out = {};
    for (const [id, a] of this.arts) out[id] = { bytes: a.n, sha256: a.h.digest("hex") };
    return out;
  }
}

async function one(sdk, client, mid, streaming, t0) {
  const out = { message_id: mid, task_id: null };
  const h = new Hasher();
  const params = {
    tenant: "",
    message: {
      messageId: mid,
      contextId: "",
      taskId: "",
      role: sdk.Role.ROLE_USER,
      parts: [{ content: { $case: "text", value: "bench js-sdk" }, metadata: undefined, filename: "", mediaType: "" }],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: undefined,
      returnImmediately: false,
    },
    metadata: undefined,
  };
  out.sent_unix_s = (performance.timeOrigin + performance.now()) / 1000;
  try {
    if (streaming) {
      for await (const ev of client.sendMessageStream(params)) {
        const tid = h.onEvent(ev);
        if (tid) out.task_id = tid;
      }
    } else {
      const r = await client.sendMessage(params);
      // A Task has a status; a Message does not (it carries no artifacts).
      if (r && "status" in r) out.task_id = h.onTask(r);
    }
  } catch (e) {
    out.error = `${e?.name ?? "Error"}: ${e?.message ?? String(e)}`;
  }
  out.artifacts = h.summary();
  out.ended_s = (performance.now() - t0) / 1000;
  return out;
}

/** The version in the package.json above the SDK's entry point. */
function sdkVersion(entry) {
  const require = createRequire(entry);
  for (let d = path.dirname(entry); d !== path.dirname(d); d = path.dirname(d)) {
    try {
      const pkg = require(path.join(d, "package.json"));
      if (pkg.name === "@a2a-js/sdk") return pkg.version;
    } catch {
      // not this directory
    }
  }
  return "unknown";
}

async function main() {
  if (process.argv.length === 3 && process.argv[2] === "--check") {
    const { entry } = loadSdk();
    process.stdout.write(`@a2a-js/sdk ${sdkVersion(entry)}\n`);
    return 0;
  }
  const [card, nArg, prefix, mode] = process.argv.slice(2);
  const n = Number(nArg);
  if (process.argv.length !== 6 || !Number.isInteger(n) || n < 1 || (mode !== "stream" && mode !== "send")) {
    process.stderr.write(USAGE);
    return 2;
  }
  const { sdk, client: c } = loadSdk();
  const factory = new c.ClientFactory(
    c.ClientFactoryOptions.createFrom(c.ClientFactoryOptions.default, {
      transports: [new c.JsonRpcTransportFactory({})],
      preferredTransports: ["JSONRPC"],
    }),
  );
  // The full card URL with an empty path (the SDK's documented form).
  const client = await factory.createFromUrl(card, "");
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const reads = await Promise.all(
    Array.from({ length: n }, (_, i) => one(sdk, client, `${prefix}-${i}`, mode === "stream", t0)),
  );
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  process.stdout.write(
    `${JSON.stringify({
      reads,
      wall_s: wall,
      cpu_s: (cpu.user + cpu.system) / 1e6,
      maxrss_kib: process.resourceUsage().maxRSS,
    })}\n`,
  );
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    process.stderr.write(`sdk_consumer.mjs: ${e?.stack ?? e}\n`);
    process.exitCode = 1;
  },
);
