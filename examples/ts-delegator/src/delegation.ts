// One delegation from `delegate` (or a restart) to `done`: limits and routing, the durable
// record, sending with retries, observing the task (stream, resubscribe, polling), answering or
// escalating interrupted states, the local deadline and caller cancels, and committing artifacts.

import { createHash, randomUUID } from "node:crypto";
import type { Message, Part, StreamResponse, Task, TaskState as TaskStateT } from "@a2a-js/sdk";
import { TaskState, Role } from "@a2a-js/sdk";
import type { Client, RequestOptions } from "@a2a-js/sdk/client";
import { Assembler, ProtocolError } from "./artifacts.js";
import { type AgentEntry, type AgentView, agentHeaders, classify, clientFor, type Failure, firstInterface, freshView, type HttpTrace, type Iface, type Passed, route, usableInterfaces } from "./agents.js";
import { emit, FINAL_STATES, log, type DelegateRequest, type DelegationState, type Options, type Outcome } from "./contract.js";
import type { DelegationRecord, ErrorRecord, Store } from "./store.js";

/** What a delegation needs from the process around it. */
export interface Env {
  store: Store;
  options: Options;
  selfUrl: string;
  agents: AgentEntry[];
  /** `init.fetch_origins`, normalised (empty: no list). */
  fetchOrigins: string[];
}

/** uuid5(NAMESPACE_URL, `deleg:{id}:{purpose}`), as the reference delegator derives messageIds. */
export function messageId(delegationId: string, purpose: string): string {
  const ns = Buffer.from("6ba7b8119dad11d180b400c04fd430c8", "hex");
  const h = createHash("sha1").update(ns).update(`deleg:${delegationId}:${purpose}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString("hex");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** A small seeded generator (mulberry32) for retry jitter: seeded from the seed and the id. */
function rngFor(seed: number, id: string): () => number {
  let s = createHash("sha256").update(`${seed}:${id}`).digest().readUInt32LE(0);
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STATE_NAMES: Record<number, DelegationState> = {
  [TaskState.TASK_STATE_SUBMITTED]: "SUBMITTED",
  [TaskState.TASK_STATE_WORKING]: "WORKING",
  [TaskState.TASK_STATE_COMPLETED]: "COMPLETED",
  [TaskState.TASK_STATE_FAILED]: "FAILED",
  [TaskState.TASK_STATE_CANCELED]: "CANCELED",
  [TaskState.TASK_STATE_INPUT_REQUIRED]: "INPUT_REQUIRED",
  [TaskState.TASK_STATE_REJECTED]: "REJECTED",
  [TaskState.TASK_STATE_AUTH_REQUIRED]: "AUTH_REQUIRED",
};

function stateName(s: TaskStateT | undefined): DelegationState {
  return s === undefined ? "UNSPECIFIED" : (STATE_NAMES[s] ?? "UNSPECIFIED");
}

const TERMINAL: ReadonlySet<DelegationState> = new Set(["COMPLETED", "FAILED", "CANCELED", "REJECTED"]);
/** How long a stream is still read after its final state, to catch events after it. */
const TERMINAL_GRACE_MS = 1000;
const INTERRUPTED: ReadonlySet<DelegationState> = new Set(["INPUT_REQUIRED", "AUTH_REQUIRED"]);

/** Text of a message: its text parts, then its data parts as JSON. */
function messageText(m: Message | undefined): string | null {
  if (!m) return null;
  const texts: string[] = [];
  const datas: string[] = [];
  for (const p of m.parts) {
    if (p.content?.$case === "text") texts.push(p.content.value);
    else if (p.content?.$case === "data") datas.push(JSON.stringify(p.content.value));
  }
  const all = [...texts, ...datas];
  return all.length > 0 ? all.join("\n") : null;
}

function words(s: string): string {
  let out = " ";
  let lastSpace = true;
  let prevLower = false;
  for (const c of s) {
    if (/[\p{L}\p{N}]/u.test(c)) {
      if (c !== c.toLowerCase() && prevLower && !lastSpace) out += " ";
      out += c.toLowerCase();
      lastSpace = false;
      prevLower = c === c.toLowerCase() && c !== c.toUpperCase();
    } else {
      if (!lastSpace) out += " ";
      lastSpace = true;
      prevLower = false;
    }
  }
  if (!lastSpace) out += " ";
  return out;
}

/** Answers a question from the delegation's inputs when it names one of their keys. */
export function answerFromInputs(question: string, inputs: Record<string, unknown>): { text: string; keys: string[]; data: Record<string, unknown> } | null {
  const q = words(question);
  let keys = Object.keys(inputs).filter((k) => words(k).trim().length >= 2 && q.includes(words(k)));
  const all = [...keys];
  keys = keys.filter((k) => !all.some((o) => o !== k && o.length > k.length && words(o).includes(words(k))));
  if (keys.length === 0) return null;
  const textOf = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));
  const data: Record<string, unknown> = {};
  for (const k of keys) data[k] = inputs[k];
  const text = keys.length === 1 ? textOf(data[keys[0]!]) : keys.map((k) => `${k}: ${textOf(data[k])}`).join("\n");
  return { text, keys, data };
}

/** A stream event lacking a field A2A §5.7 makes REQUIRED: rejected, never taken as a result. */
class MalformedEvent extends Error {}

/** Why a stream event lacks a REQUIRED field, or null when it is well formed. */
function missingRequired(p: NonNullable<StreamResponse["payload"]>): string | null {
  switch (p.$case) {
    case "task":
      if (!p.value.id) return "a Task event without id";
      if (!p.value.status) return "a Task event without status";
      return null;
    case "statusUpdate":
      if (!p.value.taskId) return "a status update without taskId";
      if (!p.value.contextId) return "a status update without contextId";
      if (!p.value.status) return "a status update without status";
      return null;
    case "artifactUpdate":
      if (!p.value.taskId) return "an artifact update without taskId";
      if (!p.value.contextId) return "an artifact update without contextId";
      if (!p.value.artifact) return "an artifact update without artifact";
      if (!p.value.artifact.artifactId) return "an artifact update without artifact.artifactId";
      if (!p.value.artifact.parts || p.value.artifact.parts.length === 0) return "an artifact update without parts";
      return null;
    default:
      return null;
  }
}

/** Ends the observation loop with an outcome. */
class Finish extends Error {
  constructor(readonly outcome: Outcome, readonly reason: string, readonly finalMessage: string | null = null) {
    super(reason);
  }
}

/** An escalation waiting for the caller. */
interface Pending {
  kind: "input" | "auth";
  resolve: (value: string) => void;
}

/** How long an auth escalation waits before it first reads the task (an out-of-band resume). */
const ESCALATION_FIRST_READ_MS = 2000;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** One running delegation. */
export class Delegation {
  readonly rec: DelegationRecord;
  private client: Client | null = null;
  private agent: AgentEntry | null = null;
  /** The agent's card and decisions as they were when this delegation took it (kept to its end). */
  private view: AgentView | null = null;
  private readonly trace: HttpTrace = { status: null, retryAfterMs: null };
  /** Aborted at the local deadline or on a caller's cancel. */
  private readonly stop = new AbortController();
  private stopWhy: "deadline" | "cancel" | null = null;
  private deadlineTimer: NodeJS.Timeout | null = null;
  private pending: Pending | null = null;
  private credential: string | null = null;
  private readonly rng: () => number;
  private assembler: Assembler | null = null;
  /** Settles with the outcome once `done` was written. */
  finished: Promise<Outcome>;
  private resolveFinished!: (o: Outcome) => void;

  constructor(private readonly env: Env, rec: DelegationRecord) {
    this.rec = rec;
    this.rng = rngFor(env.options.seed, rec.id);
    this.finished = new Promise((r) => (this.resolveFinished = r));
  }

  /** A fresh record for an accepted request. */
  static newRecord(env: Env, req: DelegateRequest, parentId: string | null, budgetShare: number): DelegationRecord {
    const now = Date.now();
    let deadline = now + req.timeout_seconds * 1000;
    if (req.deadline !== null) deadline = Math.min(deadline, Date.parse(req.deadline));
    const ts = new Date(now).toISOString();
    return {
      id: req.id, seq: env.store.allocSeq(), parent_id: parentId, request: req,
      agent_url: null, rpc_url: null, protocol_version: null, skill: req.capability,
      message_ids: {}, task_id: null, context_id: null, state: "SENDING", reason: null,
      budget_usd: req.budget_usd, budget_share: budgetShare, spend_usd: 0,
      deadline: new Date(deadline).toISOString(), depth: req.depth, chain: req.chain,
      refine_of: req.refine_of, reference_task_ids: [], streaming: false, push_token_sha256: [],
      attempts: 0, last_error: null, error_code: null, final_message: null, priority: req.priority,
      created_at: ts, updated_at: ts, terminal_at: null, dlq: false, input_rounds: [],
      artifacts: [], errors: [], done_reported: false,
    };
  }

  get isOpen(): boolean {
    return !FINAL_STATES.has(this.rec.state);
  }

  /** The caller's `cancel`. */
  cancel(): void {
    if (!this.stop.signal.aborted) {
      this.stopWhy = "cancel";
      this.stop.abort();
    }
    this.pending?.resolve("");
  }

  /** The caller's `answer` or `credential`; false when no such escalation is pending. */
  answer(kind: "input" | "auth", value: string): boolean {
    if (!this.pending || this.pending.kind !== kind) return false;
    const p = this.pending;
    this.pending = null;
    p.resolve(value);
    return true;
  }

  private save(): void {
    this.env.store.save(this.rec);
  }

  /** Records a state change (or newly learnt task ids) durably, then reports it. */
  private setState(s: DelegationState): void {
    if (this.rec.state === s && !this.idsDirty) return;
    this.rec.state = s;
    this.idsDirty = false;
    this.save();
    emit({ type: "state", id: this.rec.id, state: s, task_id: this.rec.task_id, context_id: this.rec.context_id });
    if (process.env.TS_DELEGATOR_TRACE) log(`${this.rec.id}: state ${s} written`);
  }

  private addError(op: string, f: Failure): void {
    const e: ErrorRecord = {
      at: new Date().toISOString(), op,
      code: f.kind === "definite" ? f.code : null,
      http_status: "httpStatus" in f ? f.httpStatus : null,
      transient: f.kind === "transient", message: f.message,
    };
    this.rec.errors.push(e);
    this.rec.last_error = f.message;
    if (f.kind === "definite") this.rec.error_code = f.code;
  }

  /** Makes the final state durable, then writes `done` (once per process life). */
  finish(outcome: Outcome, reason: string, message: string | null = null): void {
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    this.rec.state = outcome;
    this.rec.reason = reason;
    this.rec.final_message = message;
    this.rec.terminal_at = new Date().toISOString();
    if (outcome === "DEAD_LETTERED") this.rec.dlq = true;
    this.rec.done_reported = false;
    let saved = false;
    for (let i = 0; i < 3 && !saved; i++) {
      try {
        this.save();
        saved = true;
      } catch (e) {
        log(`${this.rec.id}: saving the final state failed: ${(e as Error).message}`);
      }
    }
    if (!saved) {
      emit({ type: "error", id: this.rec.id, code: "internal", message: "the final state could not be made durable" });
      this.resolveFinished(outcome);
      return;
    }
    this.reportDone();
    this.resolveFinished(outcome);
  }

  /** Writes the `done` line of a final record and marks it reported. */
  reportDone(): void {
    const r = this.rec;
    emit({
      type: "done", id: r.id, state: r.state, reason: r.reason ?? "", task_id: r.task_id,
      context_id: r.context_id, message: r.final_message,
      artifacts: r.state === "COMPLETED"
        ? r.artifacts.filter((a) => a.committed).map((a) => ({
            artifact_id: a.artifact_id, name: a.name, bytes: a.bytes, sha256: a.sha256,
            media_type: a.media_type, path: a.path,
          }))
        : [],
    });
    r.done_reported = true;
    try {
      this.save();
    } catch (e) {
      log(`${r.id}: marking done reported failed: ${(e as Error).message}`);
    }
  }

  private armDeadline(): void {
    const ms = Date.parse(this.rec.deadline) - Date.now();
    this.deadlineTimer = setTimeout(() => {
      if (!this.stop.signal.aborted) {
        this.stopWhy = "deadline";
        this.stop.abort();
      }
      this.pending?.resolve("");
    }, Math.max(0, ms));
  }

  /** Limits and routing for new work; returns false when refused (already reported). */
  async admit(): Promise<boolean> {
    const r = this.rec;
    const req = r.request;
    const margin = this.env.options.deadline_margin_ms;
    let refusal: string | null = null;
    if (Date.parse(r.deadline) - Date.now() <= margin) {
      refusal = `deadline: the deadline ${r.deadline} is already past or within the ${margin} ms margin`;
    } else if (req.depth > this.env.options.max_depth) {
      refusal = `depth: incoming depth ${req.depth} is over the limit ${this.env.options.max_depth}`;
    } else if (req.chain.includes(this.env.selfUrl)) {
      refusal = `loop: the chain already holds this delegator (${this.env.selfUrl})`;
    } else if (!(req.budget_usd > 0)) {
      refusal = "budget: no budget to spend";
    }
    if (refusal === null && req.children === null) {
      const agent = await this.routeAgent();
      if (!agent && this.passed.unspoken.length > 0 && this.passed.extensions.length === 0) {
        // Only agents reachable over a binding this example does not speak: decline.
        emit({ type: "error", id: r.id, code: "unsupported", message: `only ${this.passed.unspoken.join(", ")} can take this work, over a binding this delegator does not speak (it speaks JSON-RPC, HTTP+JSON and gRPC)` });
        this.resolveFinished("FAILED");
        return false;
      }
      if (!agent) {
        refusal = `routing: no agent advertises skill ${JSON.stringify(req.capability)} with an accepted output mode (${req.artifact_spec.mime_types.join(", ")})`;
        if (this.passed.extensions.length > 0) refusal += `; passed over for a required extension this delegator does not support: ${this.passed.extensions.join("; ")}`;
        if (this.passed.plaintext.length > 0) refusal += `; passed over for plain http:// interfaces while TLS is required (A2A §7.1): ${this.passed.plaintext.join(", ")}`;
      }
    }
    if (refusal !== null) {
      this.save();
      this.finish("REFUSED", refusal);
      return false;
    }
    return true;
  }

  /**
   * Chooses the agent (or takes the recorded one after a restart, or a refinement's), its card
   * revalidated first when stale, and keeps the view it had then for the whole delegation.
   */
  private async routeAgent(): Promise<AgentEntry | null> {
    const req = this.rec.request;
    const timeout = this.env.options.request_timeout_ms;
    this.passed = { unspoken: [], extensions: [], plaintext: [] };
    if (this.rec.agent_url) {
      const fixed = this.env.agents.find((a) => a.cardUrl === this.rec.agent_url) ?? null;
      const view = fixed ? await freshView(fixed, timeout) : null;
      if (fixed && view && view.unsupportedExtensions.length > 0) {
        this.passed.extensions.push(`${fixed.cardUrl} requires ${view.unsupportedExtensions.join(", ")}`);
        this.agent = null;
      } else {
        this.agent = fixed && view ? fixed : null;
      }
      this.view = this.agent ? view : null;
    } else {
      const found = await route(this.env.agents, req, timeout, this.passed);
      this.agent = found?.entry ?? null;
      this.view = found?.view ?? null;
    }
    if (!this.agent || !this.view) return null;
    const iface = firstInterface(this.view.card);
    this.rec.agent_url = this.agent.cardUrl;
    this.rec.rpc_url = iface?.url ?? null;
    this.rec.protocol_version = iface?.version ?? null;
    this.rec.streaming = Boolean(this.view.card.capabilities?.streaming) && req.artifact_spec.streaming_preferred;
    return this.agent;
  }

  /** Runs new work (after `admit`) or resumes a record after a restart. */
  async run(resuming: boolean): Promise<void> {
    this.armDeadline();
    try {
      if (resuming) {
        if (!(await this.routeAgent())) throw new Finish("FAILED", `the agent ${this.rec.agent_url} is not reachable after the restart`);
        emit({ type: "state", id: this.rec.id, state: this.rec.state, task_id: this.rec.task_id, context_id: this.rec.context_id });
      } else {
        this.rec.message_ids.create = messageId(this.rec.id, "create");
        this.rec.state = "SENDING";
        this.save();
        emit({ type: "state", id: this.rec.id, state: "SENDING", task_id: null, context_id: null });
      }
      this.ifaces = usableInterfaces(this.view!.card);
      await this.useInterface(0);
      await this.drive(resuming);
    } catch (e) {
      if (e instanceof Finish) {
        this.finish(e.outcome, e.reason, e.finalMessage);
      } else {
        log(`${this.rec.id}: internal error: ${(e as Error).stack ?? String(e)}`);
        this.finish("FAILED", `internal error in the delegator: ${(e as Error).message}`);
      }
    } finally {
      this.assembler?.discard();
    }
  }

  /** Switches to interface `i` of the card (a new SDK client for its binding). */
  private async useInterface(i: number): Promise<void> {
    const iface = this.ifaces[i]!;
    this.ifaceIdx = i;
    this.client = await clientFor(this.view!.card, iface, this.trace);
    this.rec.rpc_url = iface.url;
    this.rec.protocol_version = iface.version;
  }

  /**
   * Headers of every request to the agent: the required extensions it activates, and in
   * `Authorization` the credential the caller gave for the current auth round, else the agent's
   * own credential when its card requires one on every call (§7.3), else none.
   */
  private requestOptions(signal: AbortSignal): RequestOptions {
    const headers = agentHeaders(this.agent!, this.view!, this.credential === null && this.view!.credentialOnEveryRequest);
    if (this.credential) headers["Authorization"] = this.credential;
    return { signal, serviceParameters: headers };
  }

  private unarySignal(): AbortSignal {
    return AbortSignal.any([this.stop.signal, AbortSignal.timeout(this.env.options.request_timeout_ms)]);
  }

  private xDeleg(): Record<string, unknown> {
    const ours = Date.parse(this.rec.deadline);
    return {
      deadline: new Date(ours - this.env.options.deadline_margin_ms).toISOString(),
      budget_usd: this.rec.budget_share,
      depth: this.rec.depth + 1,
      chain: [...this.rec.chain, this.env.selfUrl],
    };
  }

  private buildMessage(purpose: string, parts: Part[]): Message {
    const id = this.rec.message_ids[purpose] ?? messageId(this.rec.id, purpose);
    this.rec.message_ids[purpose] = id;
    return {
      messageId: id,
      contextId: this.rec.context_id ?? "",
      taskId: purpose === "create" ? "" : (this.rec.task_id ?? ""),
      role: Role.ROLE_USER,
      parts,
      metadata: { skill: this.rec.skill },
      extensions: [],
      referenceTaskIds: purpose === "create" ? this.rec.reference_task_ids : [],
    };
  }

  private textPart(text: string): Part {
    return { content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "" };
  }

  private dataPart(data: unknown): Part {
    return { content: { $case: "data", value: data }, metadata: undefined, filename: "", mediaType: "" };
  }

  private createParts(): Part[] {
    const parts = [this.textPart(this.rec.request.text)];
    if (Object.keys(this.rec.request.inputs).length > 0) parts.push(this.dataPart(this.rec.request.inputs));
    return parts;
  }

  /**
   * Sends one intent (same messageId on every attempt), retrying transient failures with
   * exponential backoff and jitter (honouring Retry-After) at most `max_retries` times. Returns
   * the reply (unary) or the open stream with its first event.
   */
  private async send(purpose: string, parts: Part[], streaming: boolean): Promise<
    { kind: "unary"; result: Message | Task } | { kind: "stream"; first: StreamResponse; rest: AsyncGenerator<StreamResponse> }
  > {
    const message = this.buildMessage(purpose, parts);
    const params = {
      tenant: "",
      message,
      configuration: {
        acceptedOutputModes: this.rec.request.artifact_spec.mime_types,
        taskPushNotificationConfig: undefined,
        historyLength: 0,
        returnImmediately: !streaming,
      },
      metadata: { "x-deleg": this.xDeleg() },
    };
    let failures = 0;
    for (;;) {
      this.rec.attempts++;
      this.save();
      try {
        if (streaming) {
          const gen = this.client!.sendMessageStream(params, this.requestOptions(this.stop.signal));
          const first = await this.withFirstEventTimeout(gen);
          if (first.done) throw new Error("the stream closed before its first event");
          return { kind: "stream", first: first.value, rest: gen };
        }
        const result = await this.client!.sendMessage(params, this.requestOptions(this.unarySignal()));
        return { kind: "unary", result };
      } catch (e) {
        const f = classify(e, this.trace, this.stop.signal);
        if (f.kind === "stopped") throw this.stopped();
        this.addError(purpose === "create" ? "send" : `send:${purpose}`, f);
        this.save();
        if (f.kind === "unserved" && this.ifaceIdx + 1 < this.ifaces.length) {
          // Nothing answered at this interface: the same call goes to the card's next one.
          log(`${this.rec.id}: ${this.ifaces[this.ifaceIdx]!.binding} at ${this.ifaces[this.ifaceIdx]!.url} did not answer (${f.message}); trying ${this.ifaces[this.ifaceIdx + 1]!.binding}`);
          await this.useInterface(this.ifaceIdx + 1);
          continue;
        }
        if (f.kind === "definite") {
          if (purpose === "create") throw new Finish("SEND_FAILED", `the agent answered the send with error ${f.code}: ${f.message}`);
          throw new Finish("FAILED", `the agent answered the ${purpose} message with error ${f.code}: ${f.message}`);
        }
        if (f.kind === "protocol") {
          throw new Finish("FAILED", `agent protocol error on the send: ${f.message}`);
        }
        failures++;
        if (failures > this.rec.request.max_retries) {
          throw new Finish("DEAD_LETTERED", `retries exhausted after ${failures} transient failures; last: ${f.message}`);
        }
        const delay = this.backoff(failures - 1, f.kind === "transient" ? f.retryAfterMs : null);
        log(`${this.rec.id}: transient failure (${f.message}); retry ${failures} in ${delay} ms`);
        await sleep(delay, this.stop.signal);
        if (this.stop.signal.aborted) throw this.stopped();
      }
    }
  }

  /** Waits for a stream's first event no longer than the request timeout. */
  private async withFirstEventTimeout(gen: AsyncGenerator<StreamResponse>): Promise<IteratorResult<StreamResponse>> {
    let timer: NodeJS.Timeout | null = null;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        void gen.return(undefined);
        const e = new Error("no first stream event within the request timeout");
        e.name = "TimeoutError";
        reject(e);
      }, this.env.options.request_timeout_ms);
    });
    try {
      return await Promise.race([gen.next(), timeout]);
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  private backoff(attempt: number, retryAfterMs: number | null): number {
    const { retry_base_ms: base, retry_cap_ms: cap } = this.env.options;
    const exp = Math.min(base * 2 ** Math.min(attempt, 40), Math.max(cap, 1));
    const half = Math.floor(exp / 2);
    const b = half + Math.floor(this.rng() * (exp - half + 1));
    return retryAfterMs !== null && retryAfterMs > b ? retryAfterMs : b;
  }

  /** The Finish for a stop (deadline or cancel) when no task exists yet. */
  private stopped(): Finish {
    if (this.stopWhy === "cancel") return new Finish("CANCELED", "canceled by the caller before the agent created a task");
    return new Finish("FAILED", "deadline: the local deadline passed before the agent created a task");
  }

  private adoptTask(taskId: string, contextId: string): void {
    if (this.rec.task_id === taskId && this.rec.context_id === contextId) return;
    if (this.rec.task_id !== null && this.rec.task_id !== taskId) {
      throw new Finish("FAILED", `agent protocol error: an event for another task ${JSON.stringify(taskId)} (ours is ${JSON.stringify(this.rec.task_id)})`);
    }
    this.rec.task_id = taskId;
    this.rec.context_id = contextId || this.rec.context_id;
    this.idsDirty = true;
  }

  private newAssembler(): Assembler {
    this.assembler?.discard();
    this.assembler = new Assembler(this.env.store.artifactDir(this.rec.id), this.rec.request.artifact_spec, this.env.options.request_timeout_ms, this.env.fetchOrigins);
    return this.assembler;
  }

  /** The observation loop: from the first reply (or a restart) to a final outcome. */
  private async drive(resuming: boolean): Promise<void> {
    const r = this.rec;
    let stream: AsyncGenerator<StreamResponse> | null = null;
    let first: StreamResponse | null = null;
    let snapshot: Task | null = null;
    /** The interrupted state the last continuation answered. */
    let answered: DelegationState | null = null;
    this.newAssembler();

    if (resuming && r.task_id !== null) {
      snapshot = await this.getTask("reconcile");
    } else {
      const sent = await this.send("create", this.createParts(), r.streaming);
      if (resuming && sent.kind === "stream") {
        // The record had no task id: the resend (same messageId) resolves it. The task may have
        // run on while we were down, so it is reconciled like any open task: GetTask, then
        // observed again (SubscribeToTask or polling), not read from the resend's stream.
        const p = sent.first.payload;
        void sent.rest.return(undefined).catch(() => undefined);
        if (p?.$case === "message") throw new Finish("ANSWERED_DIRECT", "the agent answered with a message", messageText(p.value));
        if (p?.$case !== "task") throw new Finish("FAILED", `agent protocol error: the stream opened with ${p?.$case ?? "an empty event"}, not a Task`);
        this.adoptTask(p.value.id, p.value.contextId);
        this.setState(stateName(p.value.status?.state));
        snapshot = await this.getTask("reconcile");
      } else if (sent.kind === "unary") {
        if ("messageId" in sent.result && !("status" in sent.result)) {
          const m = sent.result as Message;
          throw new Finish("ANSWERED_DIRECT", "the agent answered with a message", messageText(m));
        }
        snapshot = sent.result as Task;
        this.adoptTask(snapshot.id, snapshot.contextId);
      } else {
        stream = sent.rest;
        first = sent.first;
      }
    }

    for (;;) {
      // 1. Observe until a terminal or interrupted state (or a broken stream).
      let state: DelegationState;
      let status: Message | undefined;
      if (stream) {
        const seen = await this.consumeStream(stream, first, answered);
        answered = null;
        stream = null;
        first = null;
        if (seen === null) {
          // The stream ended or broke before a final or interrupted state: follow it up.
          snapshot = await this.getTask("follow-up");
          continue;
        }
        state = seen.state;
        status = seen.status;
      } else if (snapshot) {
        this.setState(stateName(snapshot.status?.state));
        const s = stateName(snapshot.status?.state);
        if (!TERMINAL.has(s) && !INTERRUPTED.has(s)) {
          if (r.streaming && !this.pollOnly) {
            stream = this.client!.resubscribeTask({ tenant: "", id: r.task_id! }, this.requestOptions(this.stop.signal));
            const firstEv = await this.nextOrNull(stream);
            if (firstEv === null) {
              stream = null;
              snapshot = await this.poll(snapshot);
            } else {
              first = firstEv;
            }
            continue;
          }
          snapshot = await this.poll(snapshot);
          continue;
        }
        state = s;
        status = snapshot.status?.message;
        if (s === "COMPLETED") await this.assembler!.replaceAll(snapshot.artifacts, this.stop.signal);
      } else {
        throw new Error("nothing to observe");
      }
      snapshot = null;

      // 2. Act on the state.
      this.setState(state);
      if (state === "COMPLETED") {
        const res = this.assembler!.commit({ agent_url: r.agent_url ?? "", skill: r.skill, task_id: r.task_id });
        if (res.rejected.length > 0) {
          throw new Finish("FAILED", `the task completed but its artifacts were rejected: ${res.rejected.join("; ")}`, messageText(status));
        }
        r.artifacts = res.accepted;
        r.spend_usd = 0;
        throw new Finish("COMPLETED", `the task completed${this.rejectedNote()}`, messageText(status));
      }
      if (TERMINAL.has(state)) {
        throw new Finish(state as Outcome, `the agent ended the task ${state}${this.rejectedNote()}`, messageText(status));
      }
      // Interrupted: answer from our own data, or escalate.
      const cont = await this.handleInterrupted(state as "INPUT_REQUIRED" | "AUTH_REQUIRED", messageText(status) ?? "");
      if ("resumed" in cont) {
        // The agent resumed on its own while the auth escalation waited (credential given out
        // of band, A2A §7.6.2): observe the task from what it showed.
        snapshot = cont.resumed;
        this.newAssembler();
        continue;
      }
      const sent = await this.send(cont.purpose, cont.parts, r.streaming && !this.pollOnly);
      this.markSent();
      this.newAssembler();
      if (sent.kind === "unary") {
        if (!("status" in sent.result)) throw new Finish("FAILED", "agent protocol error: a Message reply to a message for an existing task");
        snapshot = sent.result as Task;
        this.adoptTask(snapshot.id, snapshot.contextId);
        // The reply may still show the interrupted state it answered: poll past it. A reply that
        // shows another question (a new status message) is the next round, acted on at once.
        const sameQuestion = snapshot.status?.message?.messageId === status?.messageId;
        if (INTERRUPTED.has(stateName(snapshot.status?.state)) && sameQuestion) snapshot = await this.poll(snapshot, true);
      } else {
        stream = sent.rest;
        first = sent.first;
        answered = state;
      }
    }
  }

  /** The rejected stream events, for the outcome's reason. */
  private rejectedNote(): string {
    return this.rejectedEvents.length > 0 ? `; the delegator ${this.rejectedEvents.join("; ")}` : "";
  }

  private pendingRound() {
    const last = this.rec.input_rounds[this.rec.input_rounds.length - 1];
    return last && last.answer === null ? last : null;
  }

  private markSent(): void {
    const last = this.rec.input_rounds[this.rec.input_rounds.length - 1];
    if (last && last.sent_at === null) {
      last.sent_at = new Date().toISOString();
      this.save();
    }
  }

  /** Decides the continuation of an interrupted task: an answer from inputs, or the caller's. */
  private async handleInterrupted(state: "INPUT_REQUIRED" | "AUTH_REQUIRED", question: string): Promise<{ purpose: string; parts: Part[] } | { resumed: Task }> {
    const r = this.rec;
    const kind = state === "INPUT_REQUIRED" ? "input" : "auth";
    // A credential given for one auth round is never assumed to authorise a later one (§7.6.4).
    if (kind === "auth") this.credential = null;
    let round = this.pendingRound();
    if (!round || round.kind !== kind) {
      const n = r.input_rounds.length + 1;
      if (n > this.env.options.input_round_cap) {
        await this.cancelRemote();
        throw new Finish("FAILED", `input round cap: the agent asked a ${kind} question past the cap of ${this.env.options.input_round_cap} rounds`);
      }
      round = {
        round: n, kind, question, answer: null, source: null, answer_message_id: null,
        asked_at: new Date().toISOString(), answered_at: null, sent_at: null,
      };
      r.input_rounds.push(round);
      this.save();
    }
    const purpose = `${kind}-${round.round}`;
    if (kind === "input") {
      const own = answerFromInputs(question, r.request.inputs);
      if (own) {
        round.answer = own.text;
        round.source = own.keys.map((k) => `inputs.${k}`).join(",");
        round.answered_at = new Date().toISOString();
        round.answer_message_id = messageId(r.id, purpose);
        this.save();
        return { purpose, parts: [this.textPart(own.text), this.dataPart(own.data)] };
      }
    }
    const got = await this.escalate(kind, question);
    if (typeof got !== "string") {
      round.answer = "(none: the agent resumed on its own)";
      round.source = "agent";
      round.answered_at = new Date().toISOString();
      this.save();
      return { resumed: got.resumed };
    }
    const value = got;
    round.answer = kind === "input" ? value : "(scoped credential)";
    round.source = "caller";
    round.answered_at = new Date().toISOString();
    round.answer_message_id = messageId(r.id, purpose);
    this.save();
    if (kind === "auth") {
      this.credential = value;
      return { purpose, parts: [this.textPart("The requested authorization is provided with this request.")] };
    }
    return { purpose, parts: [this.textPart(value)] };
  }

  /**
   * Writes `escalate` and waits for the caller's answer, or the deadline/cancel. While an auth
   * escalation waits the task is still read (GetTask, backing off like polling): an agent that
   * resumes on its own (the credential arrived out of band) drops the escalation.
   */
  private async escalate(kind: "input" | "auth", question: string): Promise<string | { resumed: Task }> {
    const r = this.rec;
    const watching = new AbortController();
    const value = await new Promise<string | { resumed: Task }>((resolve) => {
      const p: Pending = { kind, resolve };
      this.pending = p;
      emit({ type: "escalate", id: r.id, kind, question, agent: r.agent_url, task_id: r.task_id });
      if (kind === "auth" && r.task_id !== null) {
        void this.watchWhileEscalated(p, watching.signal, (t) => {
          if (this.pending !== p) return;
          this.pending = null;
          resolve({ resumed: t });
        });
      }
    });
    watching.abort();
    this.pending = null;
    if (this.stop.signal.aborted) throw await this.onStop();
    return value;
  }

  /** Reads the task while an auth escalation waits; calls `resumed` once it left AUTH_REQUIRED. */
  private async watchWhileEscalated(p: Pending, done: AbortSignal, resumed: (t: Task) => void): Promise<void> {
    const stop = AbortSignal.any([done, this.stop.signal]);
    const base = Math.max(this.env.options.poll_interval_ms, 1);
    // The first read waits a little, so that a caller's answer on its way does not race it.
    let interval = Math.max(base, ESCALATION_FIRST_READ_MS);
    for (let reads = 0; reads < 10000; reads++) {
      await sleep(interval, stop);
      if (stop.aborted || this.pending !== p) return;
      interval = Math.min(interval * 1.5, base * 10);
      let t: Task;
      try {
        t = await this.client!.getTask({ tenant: "", id: this.rec.task_id!, historyLength: 0 }, this.requestOptions(AbortSignal.any([stop, AbortSignal.timeout(this.env.options.request_timeout_ms)])));
      } catch (e) {
        if (!stop.aborted) this.addError("get:while-escalated", classify(e, this.trace, stop));
        continue;
      }
      if (stop.aborted || this.pending !== p) return;
      if (t.id && t.id !== this.rec.task_id) continue;
      if (!t.status) continue;
      const s = stateName(t.status.state);
      if (s !== "AUTH_REQUIRED" && s !== "UNSPECIFIED") {
        log(`${this.rec.id}: the task left AUTH_REQUIRED (${s}) while the auth escalation waited; it is dropped`);
        resumed(t);
        return;
      }
    }
  }

  /** Reads the next event of a stream, null when it ended (errors propagate). */
  private async nextOrNull(gen: AsyncGenerator<StreamResponse>): Promise<StreamResponse | null> {
    try {
      const n = await gen.next();
      return n.done ? null : n.value;
    } catch (e) {
      const f = classify(e, this.trace, this.stop.signal);
      if (f.kind === "stopped") throw await this.onStop();
      this.addError("subscribe", f);
      if (f.kind === "definite" && f.code === -32001) throw new Finish("LOST", `the agent no longer knows task ${this.rec.task_id} (-32001)`);
      return null;
    }
  }

  /**
   * Reads a stream: artifact chunks are reassembled, status changes recorded. Returns the state
   * that ends this stream's part (terminal or interrupted), or null when the stream ended or
   * broke (transport) before one. Agent protocol errors end the delegation FAILED.
   */
  private async consumeStream(gen: AsyncGenerator<StreamResponse>, first: StreamResponse | null, answered: DelegationState | null): Promise<{ state: DelegationState; status: Message | undefined } | null> {
    const r = this.rec;
    const asm = this.assembler!;
    let ev: StreamResponse | null = first;
    try {
      for (;;) {
        if (ev === null) {
          const n = await gen.next();
          if (n.done) return null;
          ev = n.value;
        }
        const p = ev.payload;
        ev = null;
        if (!p) throw new ProtocolError("a stream event without a payload");
        const missing = missingRequired(p);
        if (missing !== null) throw new MalformedEvent(missing);
        switch (p.$case) {
          case "message":
            if (r.task_id === null) {
              throw new Finish("ANSWERED_DIRECT", "the agent answered with a message", messageText(p.value));
            }
            throw new ProtocolError("a Message event about an existing task (replies for a task are Task-based)");
          case "task": {
            if (process.env.TS_DELEGATOR_TRACE) log(`${r.id}: task event`);
            this.adoptTask(p.value.id, p.value.contextId);
            if (p.value.artifacts.length > 0) await asm.replaceAll(p.value.artifacts, this.stop.signal);
            const s = stateName(p.value.status?.state);
            // A continuation stream opens with the task as it was when our answer arrived: the
            // interrupted state we just answered is not a new question.
            if (s === answered) break;
            this.setState(s);
            if (TERMINAL.has(s)) return await this.afterTerminal(gen, s, p.value.status?.message);
            if (INTERRUPTED.has(s)) return { state: s, status: p.value.status?.message };
            break;
          }
          case "statusUpdate": {
            if (r.task_id === null) throw new ProtocolError("a status update before any task");
            this.adoptTask(p.value.taskId, p.value.contextId);
            const s = stateName(p.value.status?.state);
            this.setState(s);
            if (TERMINAL.has(s)) return await this.afterTerminal(gen, s, p.value.status?.message);
            if (INTERRUPTED.has(s)) return { state: s, status: p.value.status?.message };
            break;
          }
          case "artifactUpdate": {
            if (r.task_id === null) throw new ProtocolError("an artifact update before any task");
            this.adoptTask(p.value.taskId, p.value.contextId);
            if (!p.value.artifact) throw new ProtocolError("an artifact update without an artifact");
            await asm.applyUpdate(p.value.artifact, p.value.append, this.stop.signal);
            break;
          }
        }
      }
    } catch (e) {
      if (e instanceof Finish) throw e;
      if (e instanceof ProtocolError) {
        throw new Finish("FAILED", `agent protocol error in the stream: ${e.message}`);
      }
      if (e instanceof MalformedEvent) {
        // Nothing from it is used: the task is read afresh (GetTask) and polled from now on.
        const why = `rejected ${e.message} (A2A §5.7 REQUIRED field missing)`;
        this.addError("stream", { kind: "protocol", message: why, httpStatus: null });
        this.rejectedEvents.push(why);
        this.pollOnly = true;
        this.save();
        log(`${r.id}: ${why}; reading the task afresh and polling it`);
        return null;
      }
      const f = classify(e, this.trace, this.stop.signal);
      if (f.kind === "stopped") throw await this.onStop();
      this.addError("stream", f);
      this.save();
      if (f.kind === "transient") {
        log(`${r.id}: stream broke (${f.message}); following up`);
        return null;
      }
      throw new Finish("FAILED", `agent protocol error in the stream: ${f.message}`);
    } finally {
      void gen.return(undefined).catch(() => undefined);
    }
  }

  /**
   * After a terminal state the stream must end: it is read a little longer (bounded by
   * TERMINAL_GRACE_MS) so that a chunk after the final state is seen as the protocol error it
   * is, never silently dropped or committed.
   */
  private async afterTerminal(gen: AsyncGenerator<StreamResponse>, s: DelegationState, status: Message | undefined): Promise<{ state: DelegationState; status: Message | undefined }> {
    let timer: NodeJS.Timeout | null = null;
    const grace = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), TERMINAL_GRACE_MS);
    });
    try {
      const next = await Promise.race([gen.next().catch(() => ({ done: true, value: undefined }) as const), grace]);
      if (next !== "timeout" && !next.done) {
        throw new ProtocolError(`an event after the final state ${s} (${next.value.payload?.$case ?? "empty"})`);
      }
    } finally {
      if (timer) clearTimeout(timer);
    }
    return { state: s, status };
  }

  /** GetTask with retries of transient failures; -32001 marks the delegation LOST. */
  private async getTask(why: string): Promise<Task> {
    let failures = 0;
    for (;;) {
      try {
        const t = await this.client!.getTask({ tenant: "", id: this.rec.task_id!, historyLength: 0 }, this.requestOptions(this.unarySignal()));
        if (t.id && t.id !== this.rec.task_id) throw new ProtocolError(`GetTask answered about task ${t.id}`);
        return t;
      } catch (e) {
        if (e instanceof ProtocolError) throw new Finish("FAILED", `agent protocol error: ${e.message}`);
        const f = classify(e, this.trace, this.stop.signal);
        if (f.kind === "stopped") throw await this.onStop();
        this.addError(`get:${why}`, f);
        this.save();
        if (f.kind === "definite" && f.code === -32001) {
          throw new Finish("LOST", `the agent no longer knows task ${this.rec.task_id} (-32001 on GetTask)`);
        }
        const retryable = f.kind === "transient" || f.kind === "unserved" || (f.kind === "definite" && f.code === -32603);
        failures++;
        if (!retryable || failures > this.rec.request.max_retries) {
          throw new Finish(retryable ? "DEAD_LETTERED" : "FAILED", `GetTask failed: ${f.message}`);
        }
        await sleep(this.backoff(failures - 1, f.kind === "transient" ? f.retryAfterMs : null), this.stop.signal);
        if (this.stop.signal.aborted) throw await this.onStop();
      }
    }
  }

  /**
   * Polls GetTask until the state is terminal or interrupted (or, with `pastInterrupted`, until
   * it leaves the interrupted state it had). The interval starts at poll_interval_ms and grows
   * ×1.5 up to 10× while nothing changes.
   */
  private async poll(last: Task, pastInterrupted = false): Promise<Task> {
    const base = this.env.options.poll_interval_ms;
    let interval = base;
    let prev = JSON.stringify(last.status);
    let cur = last;
    const stopAt = (t: Task) => {
      const s = stateName(t.status?.state);
      if (TERMINAL.has(s)) return true;
      if (INTERRUPTED.has(s)) return !pastInterrupted;
      return false;
    };
    let changedFromInterrupted = !pastInterrupted;
    for (;;) {
      await sleep(interval, this.stop.signal);
      if (this.stop.signal.aborted) throw await this.onStop();
      cur = await this.getTask("poll");
      const s = stateName(cur.status?.state);
      if (!INTERRUPTED.has(s)) changedFromInterrupted = true;
      // Still interrupted, but with another status message: the agent asks anew (a new round).
      if (INTERRUPTED.has(s) && cur.status?.message?.messageId !== last.status?.message?.messageId) return cur;
      if (changedFromInterrupted && INTERRUPTED.has(s)) return cur;
      if (stopAt(cur)) return cur;
      this.setState(s);
      const now = JSON.stringify(cur.status);
      interval = now === prev ? Math.min(interval * 1.5, base * 10) : base;
      prev = now;
    }
  }

  /** CancelTask on our task; -32002 is resolved by reading the final state. Returns the task seen. */
  private async cancelRemote(): Promise<Task | null> {
    if (this.rec.task_id === null) return null;
    const signal = AbortSignal.timeout(this.env.options.request_timeout_ms);
    try {
      return await this.client!.cancelTask({ tenant: "", id: this.rec.task_id, metadata: undefined }, this.requestOptions(signal));
    } catch (e) {
      const f = classify(e, this.trace, new AbortController().signal);
      this.addError("cancel", f);
      this.save();
      if (f.kind === "definite" && f.code === -32001) throw new Finish("LOST", `the agent no longer knows task ${this.rec.task_id} (-32001 on CancelTask)`);
      try {
        return await this.client!.getTask({ tenant: "", id: this.rec.task_id, historyLength: 0 }, this.requestOptions(AbortSignal.timeout(this.env.options.request_timeout_ms)));
      } catch (e2) {
        this.addError("get:after-cancel", classify(e2, this.trace, new AbortController().signal));
        return null;
      }
    }
  }

  /** On a stop (deadline or caller's cancel) with a task: CancelTask, then the outcome it shows. */
  private async onStop(): Promise<Finish> {
    if (this.rec.task_id === null) return this.stopped();
    const t = await this.cancelRemote();
    this.lastSeen = t;
    return this.afterStop();
  }

  private lastSeen: Task | null = null;
  /** The interfaces of the agent's card this delegator can call, and the one in use. */
  private ifaces: Iface[] = [];
  private ifaceIdx = 0;
  /** Agents with the skill that were passed over, and why. */
  private passed: Passed = { unspoken: [], extensions: [], plaintext: [] };
  /**
   * A stream event was rejected (it lacked REQUIRED fields, A2A §5.7): the task is observed by
   * polling from then on, and the reasons are named in the outcome.
   */
  private pollOnly = false;
  private rejectedEvents: string[] = [];
  /** Task ids learnt but not yet saved (saved with the state line that first carries them). */
  private idsDirty = false;

  /** The outcome after a stop, from the task CancelTask (or GetTask) showed. */
  private async afterStop(): Promise<Finish> {
    const t = this.lastSeen;
    const why = this.stopWhy === "cancel" ? "canceled by the caller" : `deadline: the local deadline ${this.rec.deadline} passed`;
    const s = stateName(t?.status?.state);
    if (t && s === "COMPLETED") {
      const asm = this.newAssembler();
      const ctl = AbortSignal.timeout(this.env.options.request_timeout_ms);
      await asm.replaceAll(t.artifacts, ctl);
      const res = asm.commit({ agent_url: this.rec.agent_url ?? "", skill: this.rec.skill, task_id: this.rec.task_id });
      if (res.rejected.length > 0) return new Finish("FAILED", `${why}; the task had completed but artifacts were rejected: ${res.rejected.join("; ")}`);
      this.rec.artifacts = res.accepted;
      return new Finish("COMPLETED", `${why}; CancelTask found the task already COMPLETED`, messageText(t.status?.message));
    }
    if (t && TERMINAL.has(s)) return new Finish(s as Outcome, `${why}; CancelTask: the task is ${s}`, messageText(t.status?.message));
    return new Finish("FAILED", `${why}; CancelTask was sent but the task is still ${t ? s : "unknown"}`);
  }
}
