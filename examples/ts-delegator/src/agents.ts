// Agents: reading their cards through the SDK's card resolver, routing work to a capable agent,
// building an SDK `Client` per delegation, and classifying what a failed call means.

import { type AgentCard, type AgentInterface, verifyAgentCardSignature } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from "@a2a-js/sdk/client";
import { GrpcTransportFactory } from "@a2a-js/sdk/client/grpc";
import { credentials as grpcCredentials } from "@grpc/grpc-js";
import { Agent as UndiciAgent, setGlobalDispatcher } from "undici";
import { mediaTypeAccepted } from "./artifacts.js";
import { type DelegateRequest, log } from "./contract.js";

/** Freshness and validators of a cached public card (RFC 9111). */
export interface CardCache {
  /** Epoch ms until which the card is fresh (0: revalidate before every use). */
  freshUntil: number;
  etag: string | null;
  lastModified: string | null;
}

/**
 * What the delegator knows about one agent at one moment: the card in use and what it decided
 * from it. Replaced as a whole when the card changes, so a running delegation keeps the view it
 * started with.
 */
export interface AgentView {
  /** The card in use: the extended card once obtained, else the public card. */
  card: AgentCard;
  /** The public card's bytes as last fetched (an unchanged 200 keeps the view). */
  publicRaw: string;
  /** `card` is the extended card (GetExtendedAgentCard, A2A §3.1.11). */
  extended: boolean;
  cache: CardCache;
  /** The agent's credential goes on every request: the card's securityRequirements apply to every call (§7.3). */
  credentialOnEveryRequest: boolean;
  /** Required extensions this delegator supports: listed in `A2A-Extensions` on every request. */
  activeExtensions: string[];
  /** Required extensions it does not support: the agent is not used while any is listed. */
  unsupportedExtensions: string[];
}

/** One agent of `init.agents`: its current view once read, or why it could not be read. */
export interface AgentEntry {
  cardUrl: string;
  view: AgentView | null;
  error: string | null;
  /** `init.agent_credentials[cardUrl]`: a secret, sent to this agent only and never written. */
  credential: string | null;
  /** A fetch or revalidation in flight (one at a time per agent). */
  refreshing: Promise<void> | null;
}

/** Extensions this delegator supports (`init.extensions`). */
let supportedExtensions: string[] = [];

/** Sets the extensions this delegator supports (`init.extensions`). */
export function setSupportedExtensions(uris: string[]): void {
  supportedExtensions = [...uris];
}

/** The SDK's card resolver, with its opt-in 0.3 layer (0.3 cards are translated and tagged 0.3). */
const resolver = new DefaultAgentCardResolver({ legacyCompat: { enabled: true } });

/** Freshness when a card carries no caching headers (RFC 9111 heuristic; A2A §8.6.2 allows a default). */
const DEFAULT_CARD_MAX_AGE_MS = 5 * 60 * 1000;

/** Freshness and validators from a card response's headers (RFC 9111). */
function cacheOf(res: Response, now: number): CardCache {
  const cc = (res.headers.get("cache-control") ?? "").toLowerCase();
  const directives = cc.split(",").map((d) => d.trim());
  const etag = res.headers.get("etag");
  const lastModified = res.headers.get("last-modified");
  if (directives.includes("no-store")) return { freshUntil: 0, etag: null, lastModified: null };
  let lifetimeMs: number | null = null;
  if (directives.includes("no-cache")) lifetimeMs = 0;
  const ma = directives.map((d) => /^max-age\s*=\s*"?(\d+)"?$/.exec(d)).find((m) => m);
  if (lifetimeMs === null && ma) lifetimeMs = Number(ma[1]) * 1000;
  if (lifetimeMs === null) {
    const expires = Date.parse(res.headers.get("expires") ?? "");
    const date = Date.parse(res.headers.get("date") ?? "");
    if (!Number.isNaN(expires)) lifetimeMs = Math.max(0, expires - (Number.isNaN(date) ? now : date));
  }
  if (lifetimeMs === null) lifetimeMs = DEFAULT_CARD_MAX_AGE_MS;
  const age = Number(res.headers.get("age") ?? "0");
  const ageMs = Number.isFinite(age) && age > 0 ? age * 1000 : 0;
  return { freshUntil: now + Math.max(0, lifetimeMs - ageMs), etag, lastModified };
}

/** The kind of a security scheme in any of the card shapes the SDK hands out. */
function schemeInfo(s: unknown): { kind: string; scheme: string; location: string; name: string } | null {
  if (!s || typeof s !== "object") return null;
  const o = s as Record<string, unknown>;
  const inner = o.scheme as { $case?: string; value?: Record<string, unknown> } | undefined;
  let kind: string | null = null;
  let v: Record<string, unknown> = {};
  if (inner && typeof inner === "object" && typeof inner.$case === "string") {
    kind = inner.$case;
    v = inner.value ?? {};
  } else {
    for (const k of ["httpAuthSecurityScheme", "apiKeySecurityScheme", "oauth2SecurityScheme", "openIdConnectSecurityScheme", "mtlsSecurityScheme"]) {
      if (o[k] && typeof o[k] === "object") {
        kind = k;
        v = o[k] as Record<string, unknown>;
        break;
      }
    }
    if (kind === null && typeof o.type === "string") {
      const t: Record<string, string> = { http: "httpAuthSecurityScheme", apiKey: "apiKeySecurityScheme", oauth2: "oauth2SecurityScheme", openIdConnect: "openIdConnectSecurityScheme", mutualTLS: "mtlsSecurityScheme" };
      kind = t[o.type] ?? null;
      v = { ...o, location: o.in };
    }
  }
  if (kind === null) return null;
  const str = (x: unknown) => (typeof x === "string" ? x : "");
  return { kind, scheme: str(v.scheme), location: str(v.location), name: str(v.name) };
}

/**
 * Whether `credential` (an `Authorization` value such as `Bearer abc`) is of the scheme: an HTTP
 * scheme of that name, OAuth 2.0 or OpenID Connect for a Bearer token, an API key carried in
 * `Authorization`.
 */
function credentialOfScheme(s: unknown, credential: string): boolean {
  const info = schemeInfo(s);
  if (!info) return false;
  const kind = (credential.trim().split(/\s+/)[0] ?? "").toLowerCase();
  switch (info.kind) {
    case "httpAuthSecurityScheme":
      return kind !== "" && info.scheme.trim().toLowerCase() === kind;
    case "oauth2SecurityScheme":
    case "openIdConnectSecurityScheme":
      return kind === "bearer";
    case "apiKeySecurityScheme":
      return info.location.toLowerCase() === "header" && info.name.toLowerCase() === "authorization";
    default:
      return false;
  }
}

function schemesOf(card: AgentCard): Record<string, unknown> {
  const s = (card as unknown as { securitySchemes?: unknown }).securitySchemes;
  return s && typeof s === "object" ? (s as Record<string, unknown>) : {};
}

/** The public card declares a scheme `credential` is of: GetExtendedAgentCard may be authenticated with it (§3.1.11). */
function credentialFitsCard(card: AgentCard, credential: string): boolean {
  return Object.values(schemesOf(card)).some((s) => credentialOfScheme(s, credential));
}

/** The card's securityRequirements (every call, §7.3) can be met with `credential`. */
function credentialMeetsRequirements(card: AgentCard, credential: string): boolean {
  const reqs = (card as unknown as { securityRequirements?: unknown }).securityRequirements;
  if (!Array.isArray(reqs)) return false;
  const schemes = schemesOf(card);
  return reqs.some((r) => {
    const names = Object.keys((r as { schemes?: Record<string, unknown> })?.schemes ?? {});
    return names.length > 0 && names.every((n) => n in schemes && credentialOfScheme(schemes[n], credential));
  });
}

/** The URIs of the extensions `card` marks required, in card order, without repeats. */
function requiredExtensions(card: AgentCard): string[] {
  const out: string[] = [];
  for (const e of card.capabilities?.extensions ?? []) {
    if (e?.required && e.uri && !out.includes(e.uri)) out.push(e.uri);
  }
  return out;
}

/** The request headers every call to an agent carries (besides a scoped credential). */
export function agentHeaders(entry: AgentEntry, view: AgentView, withCredential: boolean): Record<string, string> {
  const h: Record<string, string> = {};
  // One header line, comma-separated (A2A §9.2, §11.2; gRPC: one metadata entry).
  if (view.activeExtensions.length > 0) h["A2A-Extensions"] = view.activeExtensions.join(", ");
  if (withCredential && entry.credential !== null) h["Authorization"] = entry.credential;
  return h;
}

/** How long reading one card (or the extended card) may take. */
const CARD_TIMEOUT_MS = 10000;

/**
 * Fetches the public card (conditionally when a view is cached), then, where the delegator is
 * entitled to it, the extended card. A 304 or an unchanged card keeps the view with its new
 * freshness; another card gives a new view (running delegations keep theirs).
 */
async function readAgent(entry: AgentEntry, timeoutMs: number): Promise<void> {
  const previous = entry.view;
  const headers: Record<string, string> = { "A2A-Version": "1.0" };
  if (previous?.cache.etag) headers["If-None-Match"] = previous.cache.etag;
  if (previous?.cache.lastModified) headers["If-Modified-Since"] = previous.cache.lastModified;
  const res = await fetch(entry.cardUrl, { headers, signal: AbortSignal.timeout(timeoutMs) });
  const now = Date.now();
  if (res.status === 304) {
    if (!previous) throw new Error(`the card answered 304 to an unconditional request`);
    const c = cacheOf(res, now);
    entry.view = { ...previous, cache: { ...c, etag: c.etag ?? previous.cache.etag, lastModified: c.lastModified ?? previous.cache.lastModified } };
    return;
  }
  if (!res.ok) throw new Error(`Failed to fetch Agent Card from ${entry.cardUrl}: ${res.status}`);
  const raw = await res.text();
  const cache = cacheOf(res, now);
  if (previous && previous.publicRaw === raw) {
    entry.view = { ...previous, cache };
    return;
  }
  // The SDK's normalisation: proto-JSON cards parsed, 0.3 cards translated.
  const publicCard = resolver.normalizeAgentCard(JSON.parse(raw));
  if (!publicCard || typeof publicCard !== "object") throw new Error("the card is not a JSON object");
  const unsigned = await signatureProblem(publicCard);
  if (unsigned !== null) {
    // Never used: nothing is sent to its interfaces (its card may be read again).
    entry.view = null;
    throw new Error(`card signature: ${unsigned}`);
  }
  const cred = entry.credential;
  let card = publicCard;
  let extended = false;
  const entitled = Boolean(publicCard.capabilities?.extendedAgentCard) && cred !== null && credentialFitsCard(publicCard, cred);
  const required = requiredExtensions(publicCard);
  const publicActive = required.filter((u) => supportedExtensions.includes(u));
  const view0: AgentView = {
    card: publicCard, publicRaw: raw, extended: false, cache,
    credentialOnEveryRequest: cred !== null && credentialMeetsRequirements(publicCard, cred),
    activeExtensions: publicActive,
    unsupportedExtensions: required.filter((u) => !supportedExtensions.includes(u)),
  };
  if (entitled) {
    const iface = firstInterface(publicCard);
    if (iface) {
      try {
        const client = await clientFor(publicCard, iface, { status: null, retryAfterMs: null });
        // The SDK's Client.getAgentCard calls GetExtendedAgentCard only when the card declares
        // capabilities.extendedAgentCard; the interface's tenant is applied by its decorator.
        const ext = await client.getAgentCard({
          serviceParameters: agentHeaders(entry, view0, true),
          signal: AbortSignal.timeout(CARD_TIMEOUT_MS),
        });
        if (ext && firstInterface(ext)) {
          card = ext;
          extended = true;
        } else {
          log(`${entry.cardUrl}: the extended card has no usable interface; the public card is used`);
        }
      } catch (e) {
        log(`${entry.cardUrl}: GetExtendedAgentCard failed (${(e as Error).message}); the public card is used`);
      }
    }
  }
  const required2 = extended ? [...required, ...requiredExtensions(card).filter((u) => !required.includes(u))] : required;
  entry.view = {
    ...view0, card, extended,
    activeExtensions: required2.filter((u) => supportedExtensions.includes(u)),
    unsupportedExtensions: required2.filter((u) => !supportedExtensions.includes(u)),
  };
  if (previous) log(`${entry.cardUrl}: the agent card changed; new work uses the new card`);
}

/** Reads one card at start (bounded in time). */
export async function loadCard(entry: AgentEntry, timeoutMs: number): Promise<void> {
  await refresh(entry, timeoutMs);
}

/** One fetch or revalidation at a time per agent; concurrent callers wait for it. */
async function refresh(entry: AgentEntry, timeoutMs: number): Promise<void> {
  if (entry.refreshing) return entry.refreshing;
  entry.refreshing = (async () => {
    try {
      await readAgent(entry, Math.min(timeoutMs, CARD_TIMEOUT_MS));
      entry.error = null;
    } catch (e) {
      // An agent whose card cannot be revalidated is used with the card it had.
      if (entry.view) log(`${entry.cardUrl}: revalidating the card failed (${(e as Error).message}); the cached card is used`);
      entry.error = (e as Error).message;
    } finally {
      entry.refreshing = null;
    }
  })();
  return entry.refreshing;
}

/**
 * The agent's view ready for new work: the cached one while fresh, else revalidated first
 * (If-None-Match / If-Modified-Since), or read when it never was.
 */
export async function freshView(entry: AgentEntry, timeoutMs: number): Promise<AgentView | null> {
  if (entry.refreshing) await entry.refreshing;
  if (!entry.view || Date.now() >= entry.view.cache.freshUntil) await refresh(entry, timeoutMs);
  return entry.view;
}

/**
 * `init.tls_roots`, read: the PEM bytes of the only authorities trusted for `https://` agents.
 * Set, every fetch goes through an undici `Agent` that trusts exactly them (A2A §7.2), gRPC
 * channels are TLS channels over them, and only `https://` interfaces are used (§7.1: no
 * plaintext fallback).
 */
let tlsRoots: Buffer | null = null;

/** Trust exactly the authorities of this PEM file from now on (see `tlsRoots`). */
export function setTlsRoots(pem: Buffer): void {
  tlsRoots = pem;
  // Node's global fetch reads its dispatcher from undici's global slot: every fetch of this
  // process (cards, A2A calls, artifact url parts) verifies against these roots only.
  setGlobalDispatcher(new UndiciAgent({ connect: { ca: pem } }));
}

/** `init.card_signatures`, checked: the trusted JWKs by `kid`, and whether a signature is required. */
let signaturePolicy: { keys: Map<string, Record<string, unknown>>; required: boolean } | null = null;

/** Reads `init.card_signatures` (absent: cards are used whatever their signatures). */
export function setSignaturePolicy(value: unknown): void {
  if (value === undefined || value === null) {
    signaturePolicy = null;
    return;
  }
  const v = value as { trusted_keys?: { keys?: unknown }; required?: unknown };
  const keys = v.trusted_keys?.keys;
  if (typeof value !== "object" || !Array.isArray(keys) || !keys.every((k) => typeof k === "object" && k !== null)) {
    throw new Error('card_signatures.trusted_keys: must be a JWKS ({"keys": [JWK, ...]})');
  }
  if (v.required !== undefined && typeof v.required !== "boolean") throw new Error("card_signatures.required: must be true or false");
  const byKid = new Map<string, Record<string, unknown>>();
  for (const k of keys as Record<string, unknown>[]) if (typeof k.kid === "string") byKid.set(k.kid, k);
  signaturePolicy = { keys: byKid, required: v.required === true };
}

/**
 * Why `card` must not be used under `init.card_signatures` (A2A §8.4.3), or null: one signature
 * must verify (the SDK's `verifyAgentCardSignature`: JWS over the JCS-canonicalised card without
 * `signatures` and default-valued members) with a trusted key named by its `kid` that has not
 * expired (a JWK `exp` in the past). The card's `jku` is not followed: a key found only there
 * proves nothing. An unsigned card is refused only when signatures are required.
 */
async function signatureProblem(card: AgentCard): Promise<string | null> {
  const policy = signaturePolicy;
  if (policy === null) return null;
  if ((card.signatures ?? []).length === 0) return policy.required ? "the card is unsigned and signatures are required" : null;
  const verify = verifyAgentCardSignature(async (kid) => {
    const jwk = policy.keys.get(kid);
    if (!jwk) throw new Error(`kid ${JSON.stringify(kid)} is not a trusted key`);
    if (typeof jwk.exp === "number" && jwk.exp * 1000 <= Date.now()) throw new Error(`key ${JSON.stringify(kid)} has expired`);
    const { exp: _exp, ...key } = jwk;
    return key as Awaited<ReturnType<Parameters<typeof verifyAgentCardSignature>[0]>>;
  });
  try {
    await verify(card);
    return null;
  } catch (e) {
    return `no signature verifies with a trusted, unexpired key (${(e as Error).message})`;
  }
}

/** The binding names this example speaks, as the SDK and the card spell them. */
export const SPOKEN_BINDINGS = ["JSONRPC", "HTTP+JSON", "GRPC"];

/** One interface of a card that this delegator can call. */
export interface Iface {
  binding: string;
  url: string;
  version: string;
  /** The card's interface as it is (its tenant included). */
  raw: AgentInterface;
}

/**
 * The interfaces of `card` this delegator speaks, in the order it tries them: card order, 1.x
 * interfaces first (a 0.x one only when the card has no usable 1.x interface), one per binding.
 */
export function usableInterfaces(card: AgentCard): Iface[] {
  const all = spokenInterfaces(card)
    .filter((i) => tlsRoots === null || i.url.toLowerCase().startsWith("https://"));
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

/** The interfaces of `card` over a binding this delegator speaks, whatever their scheme. */
function spokenInterfaces(card: AgentCard): Iface[] {
  return (card.supportedInterfaces ?? [])
    .filter((i) => SPOKEN_BINDINGS.some((b) => b.toLowerCase() === (i.protocolBinding ?? "").toLowerCase()))
    .map((i) => ({ binding: i.protocolBinding, url: i.url, version: i.protocolVersion || "1.0", raw: i }));
}

/** Whether `card` could be called but only in plaintext while TLS is required (`init.tls_roots`). */
export function plaintextOnly(card: AgentCard): boolean {
  return tlsRoots !== null && usableInterfaces(card).length === 0 && spokenInterfaces(card).length > 0;
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

/** Why agents that advertise the skill were passed over. */
export interface Passed {
  /** Agents reachable only over a binding this delegator does not speak. */
  unspoken: string[];
  /** Agents whose card lists only plain `http://` interfaces while TLS is required. */
  plaintext: string[];
  /** Agents whose card requires an extension this delegator does not support (`url: uris`). */
  extensions: string[];
}

/**
 * The first agent eligible for `req`: the skill is advertised (on the extended card where the
 * delegator holds it) with an output mode the request accepts, and every extension the card
 * requires is one this delegator supports. A stale card is revalidated before its agent is
 * considered.
 */
export async function route(agents: AgentEntry[], req: DelegateRequest, timeoutMs: number, passed: Passed): Promise<{ entry: AgentEntry; view: AgentView } | null> {
  for (const a of agents) {
    if (req.agent !== null && a.cardUrl !== req.agent) continue;
    const view = await freshView(a, timeoutMs);
    if (!view) continue;
    const card = view.card;
    // The resolver returns the card as JSON (repeated fields may be absent).
    const skill = (card.skills ?? []).find((s) => s.id === req.capability);
    if (!skill) continue;
    if (plaintextOnly(card)) {
      passed.plaintext.push(a.cardUrl);
      continue;
    }
    if (!firstInterface(card)) {
      passed.unspoken.push(a.cardUrl);
      continue;
    }
    if (view.unsupportedExtensions.length > 0) {
      passed.extensions.push(`${a.cardUrl} requires ${view.unsupportedExtensions.join(", ")}`);
      continue;
    }
    const own = skill.outputModes ?? [];
    const modes = own.length > 0 ? own : (card.defaultOutputModes ?? []);
    const ok = modes.length === 0 || modes.some((m) => mediaTypeAccepted(req.artifact_spec.mime_types, m));
    if (ok) return { entry: a, view };
  }
  return null;
}

/** What the last HTTP response of a delegation's client looked like (for retries). */
export interface HttpTrace {
  status: number | null;
  retryAfterMs: number | null;
}

/** The SDK's own limit on an SSE line and event (`parseSseStream`, 4 MiB): a longer one is refused either way. */
const SSE_MAX_LINE_BYTES = 4 * 1024 * 1024;

/**
 * Hands an SSE body on in whole lines, and errors the stream at the first line over `maxLine`
 * bytes without holding more of it. The SDK's `parseSseStream` appends every network chunk to one
 * string and searches it for a newline each time, so a long line is copied once per chunk
 * (quadratic, and the process grows by tens of MiB before its own 4 MiB check fires); given whole
 * lines it copies each once. Chunks of a partial line are kept as they came (no copy) and joined
 * once when its newline arrives.
 */
export function sseLines(maxLine: number): TransformStream<Uint8Array, Uint8Array> {
  let held: Uint8Array[] = [];
  let heldBytes = 0;
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      // Bytes since the last newline: the held ones, then this chunk's up to each newline.
      let lineStart = 0;
      let lastNl = -1;
      for (let i = chunk.indexOf(0x0a); i >= 0; i = chunk.indexOf(0x0a, i + 1)) {
        const len = (lineStart === 0 ? heldBytes : 0) + (i - lineStart);
        if (len > maxLine) return controller.error(new Error(`an SSE line of over ${maxLine} bytes was refused`));
        lastNl = i;
        lineStart = i + 1;
      }
      if (lastNl < 0) {
        held.push(chunk);
        heldBytes += chunk.byteLength;
        if (heldBytes > maxLine) {
          held = [];
          return controller.error(new Error(`an SSE line of over ${maxLine} bytes was refused`));
        }
        return;
      }
      const out = held.length === 0 ? chunk.subarray(0, lastNl + 1) : Buffer.concat([...held, chunk.subarray(0, lastNl + 1)]);
      controller.enqueue(out);
      const rest = chunk.subarray(lastNl + 1);
      held = rest.byteLength > 0 ? [rest] : [];
      heldBytes = rest.byteLength;
      if (heldBytes > maxLine) return controller.error(new Error(`an SSE line of over ${maxLine} bytes was refused`));
    },
    flush(controller) {
      if (heldBytes > 0) controller.enqueue(held.length === 1 ? held[0]! : Buffer.concat(held));
      held = [];
      heldBytes = 0;
    },
  });
}

/**
 * An SDK client for one interface of `card`. `fetch` is wrapped to see the HTTP status and
 * `Retry-After` of each response, which the SDK's errors do not carry, and to send HTTP+JSON 1.0
 * bodies as `application/a2a+json` (A2A §11.1): the SDK's RestTransport labels them
 * `application/json`.
 */
export async function clientFor(card: AgentCard, iface: Iface, trace: HttpTrace): Promise<Client> {
  const a2aJson = iface.binding.toUpperCase() === "HTTP+JSON" && iface.version.startsWith("1");
  const fetchImpl: typeof fetch = async (input, init) => {
    trace.status = null;
    trace.retryAfterMs = null;
    let req = init;
    if (a2aJson && init?.body !== undefined && init.body !== null) {
      const headers = new Headers(init.headers);
      headers.set("Content-Type", "application/a2a+json");
      req = { ...init, headers };
    }
    const res = await fetch(input, req);
    trace.status = res.status;
    const ra = res.headers.get("retry-after");
    if (ra !== null) {
      const secs = Number(ra);
      if (Number.isFinite(secs)) trace.retryAfterMs = secs * 1000;
      else if (!Number.isNaN(Date.parse(ra))) trace.retryAfterMs = Math.max(0, Date.parse(ra) - Date.now());
    }
    const type = (res.headers.get("content-type") ?? "").toLowerCase();
    if (res.body && type.startsWith("text/event-stream")) {
      return new Response(res.body.pipeThrough(sseLines(SSE_MAX_LINE_BYTES)), {
        status: res.status, statusText: res.statusText, headers: res.headers,
      });
    }
    return res;
  };
  const factory = new ClientFactory({
    transports: [
      new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } }),
      new RestTransportFactory({ fetchImpl, legacyCompat: { enabled: true } }),
      new GrpcTransportFactory({
        legacyCompat: { enabled: true },
        ...(tlsRoots === null ? {} : { grpcChannelCredentials: grpcCredentials.createSsl(tlsRoots) }),
      }),
    ],
    preferredTransports: [iface.binding.toUpperCase() as "JSONRPC"],
    cardResolver: resolver,
  });
  // The factory keeps one interface per binding (the last 1.0 one when a binding has several):
  // it is given a card holding only the chosen interface, so the SDK calls exactly its URL and
  // applies exactly its tenant (A2A §8.3.2).
  // The SDK's gRPC transport takes the URL as the channel target, which must be host:port:
  // a TLS card's `https://host:port` is not a target (the credentials above make it TLS).
  const raw = iface.binding.toUpperCase() === "GRPC"
    ? { ...iface.raw, url: iface.raw.url.replace(/^https?:\/\//i, "").replace(/\/$/, "") }
    : iface.raw;
  return factory.createFromAgentCard({ ...card, supportedInterfaces: [raw] });
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
