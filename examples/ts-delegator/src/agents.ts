// Agents: reading their cards through the SDK's card resolver, routing work to a capable agent,
// building an SDK `Client` per delegation, and classifying what a failed call means.

import type { AgentCard } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from "@a2a-js/sdk/client";
import { GrpcTransportFactory } from "@a2a-js/sdk/client/grpc";
import { mediaTypeAccepted } from "./artifacts.js";
import type { DelegateRequest } from "./contract.js";

/** One agent of `init.agents`: its card once read, or why it could not be read. */
export interface AgentEntry {
  cardUrl: string;
  card: AgentCard | null;
  error: string | null;
}

/** The SDK's resolver, with its opt-in 0.3 layer (0.3 cards are translated and tagged 0.3). */
const resolver = new DefaultAgentCardResolver({ legacyCompat: { enabled: true } });

/** Reads one card (bounded in time). */
export async function loadCard(entry: AgentEntry, timeoutMs: number): Promise<void> {
  try {
    const fetchImpl: typeof fetch = (input, init) =>
      fetch(input, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    const r = new DefaultAgentCardResolver({ legacyCompat: { enabled: true }, fetchImpl });
    // The card URL is absolute: resolving it against itself yields it unchanged.
    entry.card = await r.resolve(entry.cardUrl, entry.cardUrl);
    entry.error = null;
  } catch (e) {
    entry.card = null;
    entry.error = (e as Error).message;
  }
}

/** The binding names this example speaks, as the SDK and the card spell them. */
export const SPOKEN_BINDINGS = ["JSONRPC", "HTTP+JSON", "GRPC"];

/** One interface of a card that this delegator can call. */
export interface Iface {
  binding: string;
  url: string;
  version: string;
}

/**
 * The interfaces of `card` this delegator speaks, in the order it tries them: card order, 1.x
 * interfaces first (a 0.x one only when the card has no usable 1.x interface), one per binding
 * (the SDK's factory selects by binding).
 */
export function usableInterfaces(card: AgentCard): Iface[] {
  const all = (card.supportedInterfaces ?? [])
    .filter((i) => SPOKEN_BINDINGS.some((b) => b.toLowerCase() === (i.protocolBinding ?? "").toLowerCase()))
    .map((i) => ({ binding: i.protocolBinding, url: i.url, version: i.protocolVersion || "1.0" }));
  const v1 = all.filter((i) => i.version.startsWith("1"));
  const chosen = v1.length > 0 ? v1 : all;
  const seen = new Set<string>();
  return chosen.filter((i) => {
    const k = i.binding.toUpperCase();
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** The interface of `card` called first. */
export function firstInterface(card: AgentCard): Iface | null {
  return usableInterfaces(card)[0] ?? null;
}

/** The contract's name of an A2A binding (`binding:jsonrpc`, …). */
export function contractBinding(b: string): string {
  const l = b.toLowerCase();
  return l === "jsonrpc" ? "jsonrpc" : l === "http+json" ? "rest" : l === "grpc" ? "grpc" : l;
}

/**
 * The first agent eligible for `req`: the skill is advertised with an output mode the request
 * accepts. Agents that have the skill but no interface this delegator speaks go to `unspoken`.
 */
export async function route(agents: AgentEntry[], req: DelegateRequest, timeoutMs: number, unspoken: string[] = []): Promise<AgentEntry | null> {
  for (const a of agents) {
    if (req.agent !== null && a.cardUrl !== req.agent) continue;
    if (!a.card) await loadCard(a, timeoutMs);
    const card = a.card;
    if (!card) continue;
    if (!firstInterface(card)) {
      if ((card.skills ?? []).some((s) => s.id === req.capability)) unspoken.push(a.cardUrl);
      continue;
    }
    // The resolver returns the card as JSON (repeated fields may be absent).
    const skill = (card.skills ?? []).find((s) => s.id === req.capability);
    if (!skill) continue;
    const own = skill.outputModes ?? [];
    const modes = own.length > 0 ? own : (card.defaultOutputModes ?? []);
    const ok = modes.length === 0 || modes.some((m) => mediaTypeAccepted(req.artifact_spec.mime_types, m));
    if (ok) return a;
  }
  return null;
}

/** What the last HTTP response of a delegation's client looked like (for retries). */
export interface HttpTrace {
  status: number | null;
  retryAfterMs: number | null;
}

/**
 * An SDK client for one delegation. `fetch` is wrapped only to see the HTTP status and
 * `Retry-After` of each response, which the SDK's errors do not carry.
 */
export async function clientFor(card: AgentCard, iface: Iface, trace: HttpTrace): Promise<Client> {
  const fetchImpl: typeof fetch = async (input, init) => {
    trace.status = null;
    trace.retryAfterMs = null;
    const res = await fetch(input, init);
    trace.status = res.status;
    const ra = res.headers.get("retry-after");
    if (ra !== null) {
      const secs = Number(ra);
      if (Number.isFinite(secs)) trace.retryAfterMs = secs * 1000;
      else if (!Number.isNaN(Date.parse(ra))) trace.retryAfterMs = Math.max(0, Date.parse(ra) - Date.now());
    }
    return res;
  };
  const factory = new ClientFactory({
    transports: [
      new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } }),
      new RestTransportFactory({ fetchImpl, legacyCompat: { enabled: true } }),
      new GrpcTransportFactory({ legacyCompat: { enabled: true } }),
    ],
    // The factory picks the interface of this binding from the card.
    preferredTransports: [iface.binding.toUpperCase() as "JSONRPC"],
    cardResolver: resolver,
  });
  return factory.createFromAgentCard(card);
}

/** A2A error names of the SDK and their codes (A2A 1.0 §5.4). */
const A2A_CODES: Record<string, number> = {
  TaskNotFoundError: -32001,
  TaskNotCancelableError: -32002,
  PushNotificationNotSupportedError: -32003,
  UnsupportedOperationError: -32004,
  ContentTypeNotSupportedError: -32005,
  InvalidAgentResponseError: -32006,
  ExtendedAgentCardNotConfiguredError: -32007,
  ExtensionSupportRequiredError: -32008,
  VersionNotSupportedError: -32009,
  RequestMalformedError: -32600,
};

/** `retry-after` (seconds) from the trailers of a gRPC error, which the SDK keeps as its cause. */
function grpcRetryAfterMs(e: unknown): number | null {
  const md = (e as { cause?: { metadata?: { get?: (k: string) => unknown[] } } }).cause?.metadata;
  const v = md?.get?.("retry-after")?.[0];
  const secs = typeof v === "string" ? Number(v) : Buffer.isBuffer(v) ? Number(v.toString()) : NaN;
  return Number.isFinite(secs) ? secs * 1000 : null;
}

/** What a failed call means. */
export type Failure =
  | { kind: "definite"; code: number; message: string; httpStatus: number | null }
  | { kind: "transient"; message: string; httpStatus: number | null; retryAfterMs: number | null }
  | { kind: "protocol"; message: string; httpStatus: number | null }
  | { kind: "stopped"; message: string }
  /** A transport failure before any answer (nothing served there): another interface may answer. */
  | { kind: "unserved"; message: string; httpStatus: number | null };

function chainText(e: unknown): string {
  const parts: string[] = [];
  let cur: unknown = e;
  for (let i = 0; i < 4 && cur; i++) {
    const err = cur as { message?: string; code?: string };
    parts.push(`${err.message ?? String(cur)}${err.code ? ` (${err.code})` : ""}`);
    cur = (cur as { cause?: unknown }).cause;
  }
  return parts.join(": ");
}

/**
 * Classifies an error thrown by the SDK: an A2A error reply (definite, with its code), a
 * transport failure or 5xx/429/timeout (transient), or an agent protocol error (a reply that is
 * not valid A2A: wrong JSON-RPC id, unparsable event, …).
 */
export function classify(e: unknown, trace: HttpTrace, stop: AbortSignal): Failure {
  const message = chainText(e);
  if (stop.aborted) return { kind: "stopped", message };
  const err = e as { name?: string; envelopeCode?: unknown; code?: unknown; transport?: string; status?: unknown };
  if (typeof err.envelopeCode === "number") {
    return { kind: "definite", code: err.envelopeCode, message, httpStatus: trace.status };
  }
  if (err.name && err.name in A2A_CODES) {
    return { kind: "definite", code: A2A_CODES[err.name]!, message, httpStatus: trace.status };
  }
  if (err.name === "JsonRpcTransportError" || err.name === "RestTransportError") {
    const code = typeof err.code === "number" ? err.code : -32603;
    return { kind: "definite", code, message, httpStatus: trace.status };
  }
  if (err.transport === "grpc" && typeof err.status === "number") {
    // gRPC status codes without an A2A ErrorInfo.
    const g = err.status;
    if (g === 12) return { kind: "unserved", message, httpStatus: null };
    if (g === 14 && /ECONNREFUSED|No connection established/i.test(message)) return { kind: "unserved", message, httpStatus: null };
    // A message over the channel's size limit is the agent's fault, not a passing condition.
    if (g === 8 && /larger than max/i.test(message)) return { kind: "protocol", message, httpStatus: null };
    if (g === 14 || g === 4 || g === 8) return { kind: "transient", message, httpStatus: null, retryAfterMs: grpcRetryAfterMs(e) };
    // CANCELLED: our own abort, by the stop signal or by the request timeout (an indefinite outcome).
    if (g === 1) return { kind: "transient", message: `request timed out: ${message}`, httpStatus: null, retryAfterMs: null };
    return { kind: "protocol", message, httpStatus: null };
  }
  const status = trace.status;
  if (status === 404 || status === 405 || status === 415) return { kind: "unserved", message, httpStatus: status };
  if (/ECONNREFUSED/.test(message)) return { kind: "unserved", message, httpStatus: status };
  if (status !== null && (status >= 500 || status === 429 || status === 408)) {
    return { kind: "transient", message, httpStatus: status, retryAfterMs: trace.retryAfterMs };
  }
  if (err.name === "TimeoutError" || err.name === "AbortError") {
    return { kind: "transient", message: `request timed out: ${message}`, httpStatus: status, retryAfterMs: null };
  }
  // undici reports refused/reset connections and bodies cut short as TypeError ("fetch failed",
  // "terminated") with a cause carrying the socket error.
  if (err.name === "TypeError" && /fetch failed|terminated|socket|ECONN|other side closed/i.test(message)) {
    return { kind: "transient", message, httpStatus: status, retryAfterMs: null };
  }
  return { kind: "protocol", message, httpStatus: status };
}
