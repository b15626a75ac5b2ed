// Entry point: reads driver-contract lines from stdin, answers `init`, dispatches requests to
// delegations, and on EOF finishes open work and exits 0. SIGTERM exits at once.

// First: the runtime's memory settings must be in place before any module allocates or fetches.
import "./memory.js";
import * as readline from "node:readline";
import { type AgentEntry, contractBinding, firstInterface, loadCard, setSignaturePolicy, setSupportedExtensions, setTlsRoots } from "./agents.js";
import { readFileSync } from "node:fs";
import {
  BadRequest, childRequest, emit, log, type DelegateRequest, type Options, parseDelegate, parseOptions,
} from "./contract.js";
import { Delegation, type Env } from "./delegation.js";
import { Store } from "./store.js";
import { parseFetchOrigins } from "./artifacts.js";

// Stdout carries driver-contract lines only (`emit`): whatever a library prints with
// console.log/info/debug/warn (the SDK's signature verifier does) goes to stderr.
for (const level of ["log", "info", "debug", "warn"] as const) {
  console[level] = (...args: unknown[]) => console.error(...args);
}

const NAME = "a2a-ts-delegator";
const VERSION = "0.1.0";
const SUPPORTS = [
  "delegate", "answer", "credential", "cancel", "snapshot", "recovery", "streaming", "polling",
  "fan_out", "refinement", "input_escalation", "auth_escalation", "limits", "dead_letter",
  "artifact_url", "artifact_schema", "a2a_0_3", "binding:jsonrpc", "binding:rest", "binding:grpc",
];
const MAX_LINE = 16 * 1024 * 1024;

let env: Env | null = null;
const running = new Map<string, Delegation>();
const work: Promise<unknown>[] = [];

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function error(id: string | null, code: string, message: string): void {
  emit({ type: "error", id, code, message });
}

async function init(msg: Record<string, unknown>): Promise<void> {
  const storeDir = msg.store_dir;
  if (typeof storeDir !== "string" || storeDir === "") throw new BadRequest("store_dir: required (this delegator has no default store)");
  if (!Array.isArray(msg.agents) || !msg.agents.every((a) => typeof a === "string")) throw new BadRequest("agents: must be an array of card URLs");
  if (typeof msg.self_url !== "string") throw new BadRequest("self_url: required string");
  const creds = msg.agent_credentials ?? {};
  if (!isObject(creds) || !Object.values(creds).every((c) => typeof c === "string")) {
    throw new BadRequest("agent_credentials: must be an object of card URL -> credential string");
  }
  const exts = msg.extensions ?? [];
  if (!Array.isArray(exts) || !exts.every((u) => typeof u === "string")) throw new BadRequest("extensions: must be an array of URIs");
  setSupportedExtensions(exts as string[]);
  let fetchOrigins: string[];
  try {
    fetchOrigins = parseFetchOrigins(msg.fetch_origins);
  } catch (e) {
    throw new BadRequest((e as Error).message);
  }
  if (msg.tls_roots !== undefined && msg.tls_roots !== null) {
    if (typeof msg.tls_roots !== "string") throw new BadRequest("tls_roots: must be the path of a PEM file");
    try {
      setTlsRoots(readFileSync(msg.tls_roots));
    } catch (e) {
      throw new BadRequest(`tls_roots: ${msg.tls_roots}: ${(e as Error).message}`);
    }
  }
  try {
    setSignaturePolicy(msg.card_signatures);
  } catch (e) {
    throw new BadRequest((e as Error).message);
  }
  const options: Options = parseOptions(msg.options);
  const store = new Store(storeDir);
  // Each agent's credential (a secret) is kept in memory only, beside its agent.
  const agents: AgentEntry[] = (msg.agents as string[]).map((cardUrl) => ({
    cardUrl, view: null, error: null, refreshing: null,
    credential: typeof creds[cardUrl] === "string" ? (creds[cardUrl] as string) : null,
  }));
  await Promise.all(agents.map((a) => loadCard(a, Math.min(options.request_timeout_ms, 5000))));
  env = { store, options, selfUrl: msg.self_url, agents, fetchOrigins };
  emit({
    type: "init_ok", name: NAME, version: VERSION, supports: SUPPORTS,
    // Push notifications are not implemented: tasks are observed by streaming or polling.
    webhook_url: null,
    agents: agents.map((a) => {
      if (!a.view) return { card_url: a.cardUrl, ok: false, error: a.error ?? "unreadable card" };
      const i = firstInterface(a.view.card);
      if (!i) return { card_url: a.cardUrl, ok: false, error: "no interface with a binding this delegator speaks (JSON-RPC, HTTP+JSON, gRPC)" };
      return { card_url: a.cardUrl, ok: true, name: a.view.card.name, protocol_version: i.version, binding: contractBinding(i.binding) };
    }),
  });
  if (msg.recovering === true) recover(env);
}

/** Resumes every open record, and reports again the final ones whose `done` may be lost. */
function recover(e: Env): void {
  const records = e.store.all();
  const byParent = new Map<string, string[]>();
  for (const r of records) if (r.parent_id) byParent.set(r.parent_id, [...(byParent.get(r.parent_id) ?? []), r.id]);
  for (const r of records) {
    const d = new Delegation(e, r);
    if (!d.isOpen) {
      if (!r.done_reported) d.reportDone();
      continue;
    }
    if (r.request.children !== null) continue; // fan-out parents are resumed after their children
    running.set(r.id, d);
    // A record killed before its first send may not have passed admission (limits, routing):
    // it is admitted now, and refused as it would have been.
    const sent = r.message_ids.create !== undefined;
    const resumed = sent ? d.run(true) : d.admit().then((ok) => (ok ? d.run(false) : undefined));
    work.push(resumed.finally(() => running.delete(r.id)));
  }
  for (const r of records) {
    if (r.request.children === null || !new Delegation(e, r).isOpen) continue;
    const kids = (byParent.get(r.id) ?? []).map((id) => running.get(id)?.finished ?? Promise.resolve(e.store.get(id)!.state));
    const parent = new Delegation(e, r);
    running.set(r.id, parent);
    work.push(finishParent(parent, kids).finally(() => running.delete(r.id)));
  }
}

async function finishParent(parent: Delegation, kids: Promise<unknown>[]): Promise<void> {
  const outcomes = await Promise.all(kids);
  const failed = outcomes.filter((o) => o !== "COMPLETED").length;
  if (failed === 0) parent.finish("COMPLETED", `all ${outcomes.length} children completed`);
  else parent.finish("FAILED", `${failed} of ${outcomes.length} children did not complete (${outcomes.join(", ")})`);
}

function delegate(e: Env, msg: Record<string, unknown>): void {
  const req: DelegateRequest = parseDelegate(msg);
  if (e.store.has(req.id)) throw new BadRequest(`id: delegation ${JSON.stringify(req.id)} already exists`);
  let refineOf = null;
  if (req.refine_of !== null) {
    refineOf = e.store.get(req.refine_of);
    if (!refineOf) throw new BadRequest(`refine_of: unknown delegation ${JSON.stringify(req.refine_of)}`);
  }
  if (req.children) {
    const ids = new Set<string>();
    for (const c of req.children) {
      if (e.store.has(c.id) || ids.has(c.id) || c.id === req.id) throw new BadRequest(`children: duplicate id ${JSON.stringify(c.id)}`);
      ids.add(c.id);
    }
  }
  const share = req.budget_usd * (1 - e.options.budget_reserve_fraction);
  const rec = Delegation.newRecord(e, req, null, share);
  if (refineOf) {
    rec.agent_url = refineOf.agent_url;
    rec.context_id = refineOf.context_id;
    rec.reference_task_ids = refineOf.task_id ? [refineOf.task_id] : [];
    if (!req.agent) req.agent = refineOf.agent_url;
  }
  const d = new Delegation(e, rec);
  running.set(req.id, d);
  const job = (async () => {
    if (!(await d.admit())) return;
    if (!req.children) return d.run(false);
    // Fan-out: the parent is WORKING while its children run; each child is its own delegation.
    rec.state = "WORKING";
    e.store.save(rec);
    emit({ type: "state", id: rec.id, state: "WORKING", task_id: null, context_id: null });
    const childShare = share / req.children.length;
    const kids = req.children.map((c) => {
      const creq = childRequest(req, c);
      creq.budget_usd = childShare;
      creq.deadline = rec.deadline;
      const crec = Delegation.newRecord(e, creq, req.id, childShare * (1 - e.options.budget_reserve_fraction));
      const cd = new Delegation(e, crec);
      running.set(c.id, cd);
      void (async () => {
        if (await cd.admit()) await cd.run(false);
      })().finally(() => running.delete(c.id));
      return cd.finished;
    });
    await finishParent(d, kids);
  })().catch((err) => {
    log(`${req.id}: ${(err as Error).stack ?? String(err)}`);
    d.finish("FAILED", `internal error in the delegator: ${(err as Error).message}`);
  }).finally(() => running.delete(req.id));
  work.push(d.finished);
  work.push(job);
}

async function handle(msg: Record<string, unknown>): Promise<void> {
  const id = typeof msg.id === "string" ? msg.id : null;
  if (msg.type === "init") {
    if (env) return error(null, "bad_request", "init: already initialised");
    try {
      await init(msg);
    } catch (e) {
      error(null, e instanceof BadRequest ? "bad_request" : "internal", (e as Error).message);
    }
    return;
  }
  if (!env) return error(id, "bad_request", `${String(msg.type)}: expected init first`);
  try {
    switch (msg.type) {
      case "delegate":
        return delegate(env, msg);
      case "answer":
      case "credential": {
        const kind = msg.type === "answer" ? "input" : "auth";
        const value = msg.type === "answer" ? msg.text : msg.credential;
        if (typeof value !== "string") throw new BadRequest(`${msg.type === "answer" ? "text" : "credential"}: required string`);
        const d = id ? running.get(id) : undefined;
        if (!d || !d.answer(kind, value)) throw new BadRequest(`${msg.type}: no pending ${kind} escalation for ${JSON.stringify(id)}`);
        return;
      }
      case "cancel": {
        const d = id ? running.get(id) : undefined;
        if (!d || !d.isOpen) throw new BadRequest(`cancel: no running delegation ${JSON.stringify(id)}`);
        d.cancel();
        return;
      }
      case "snapshot":
        emit({ type: "snapshot_ok", records: env.store.all().map(({ seq: _seq, done_reported: _d, ...r }) => r) });
        return;
      default:
        return error(id, "unsupported", `unknown message type ${JSON.stringify(msg.type)}`);
    }
  } catch (e) {
    if (e instanceof BadRequest) return error(id, "bad_request", e.message);
    log(`request failed: ${(e as Error).stack ?? String(e)}`);
    return error(id, "internal", (e as Error).message);
  }
}

async function main(): Promise<void> {
  process.on("SIGTERM", () => process.exit(0));
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of rl) {
    if (line.trim() === "") continue;
    if (line.length > MAX_LINE) {
      error(null, "bad_request", `line longer than ${MAX_LINE} bytes skipped`);
      continue;
    }
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch (e) {
      error(null, "bad_request", `not JSON: ${(e as Error).message}`);
      continue;
    }
    if (!isObject(msg) || typeof msg.type !== "string") {
      error(null, "bad_request", "every line must be an object with a string field type");
      continue;
    }
    // Requests are handled in order; only init is awaited (nothing else may overtake it).
    if (msg.type === "init") await handle(msg);
    else void handle(msg);
  }
  // EOF: finish open delegations (each bounded by its deadline), then exit 0.
  while (work.length > 0) {
    const batch = work.splice(0, work.length);
    await Promise.allSettled(batch);
  }
  process.exit(0);
}

main().catch((e) => {
  log(`fatal: ${(e as Error).stack ?? String(e)}`);
  process.exit(1);
});
