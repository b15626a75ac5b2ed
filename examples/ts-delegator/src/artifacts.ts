// Artifact reassembly and validation. Chunks are written to disk as they arrive (never buffered
// whole), joined by artifactId in order (`append: true`) or starting/replacing an artifact
// (`append: false`). Each part's bytes are: UTF-8 of a text part, the decoded bytes of a raw
// part, the JSON text of a data part (keys sorted), the fetched body of a url part. Validation: media type
// against the accepted list, size against max_size_bytes (checked while writing and while
// fetching a url), data parts against the JSON Schema subset in `schema.ts`.

import { createHash, type Hash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import type { Artifact, Part } from "@a2a-js/sdk";
import type { ArtifactSpec } from "./contract.js";
import type { ArtifactRecord } from "./store.js";
import { validateSchema } from "./schema.js";

/** An agent protocol error found while reassembling (e.g. append to an unknown artifact). */
export class ProtocolError extends Error {}

/** True when `mediaType` is covered by one of `accepted` (`*\/*`, `type/*`; parameters ignored). */
export function mediaTypeAccepted(accepted: string[], mediaType: string): boolean {
  const essence = (s: string) => (s.split(";")[0] ?? "").trim().toLowerCase();
  const m = essence(mediaType);
  return accepted.some((a) => {
    const e = essence(a);
    if (e === "*/*" || e === m) return true;
    if (e.endsWith("/*")) return m.startsWith(e.slice(0, -1));
    return false;
  });
}

/**
 * The JSON text of a data part: compact, object keys sorted. A data part is a protobuf `Struct`
 * whose key order no binding preserves (gRPC carries a map), so the bytes are made canonical
 * rather than taken from whatever order the parser happened to produce.
 */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => canonicalJson(x === undefined ? null : x)).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o).filter((k) => o[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(",")}}`;
  }
  return JSON.stringify(v) ?? "null";
}

/** A part's media type: its `mediaType`, else the default of its kind. */
export function partMediaType(p: Part): string {
  if (p.mediaType && p.mediaType.trim() !== "") return p.mediaType;
  switch (p.content?.$case) {
    case "text": return "text/plain";
    case "data": return "application/json";
    default: return "application/octet-stream";
  }
}

/**
 * The file name of an artifact: a counter, a filtered prefix of the agent-chosen id (letters,
 * digits, `.`, `_`, `-`; at most 32) and a hash of the whole id. The agent's ids, names and part
 * filenames never decide where a file goes (A2A §14.1.1): no separator, NUL or `..` survives, and
 * the length is bounded.
 */
export function artifactFileName(counter: number, id: string): string {
  const prefix = id.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 32);
  const hash = createHash("sha256").update(id, "utf8").digest("hex").slice(0, 16);
  return `${counter}-${prefix}-${hash}.bin`;
}

interface Assembling {
  id: string;
  name: string | null;
  mediaType: string | null;
  file: string;
  fd: number | null;
  bytes: number;
  hash: Hash;
  rejected: string | null;
  generation: number;
}

/** Where committed artifacts come from (recorded as provenance). */
export interface Provenance {
  agent_url: string;
  skill: string;
  task_id: string | null;
}

/** The outcome of committing: accepted artifacts and the reasons others were rejected. */
export interface CommitResult {
  accepted: ArtifactRecord[];
  rejected: string[];
}

/**
 * `init.fetch_origins` checked and normalised to WHATWG origins (`http://127.0.0.1:4100`);
 * absent: no list. Throws an Error naming a bad entry.
 */
export function parseFetchOrigins(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every((o) => typeof o === "string")) throw new Error("fetch_origins: must be an array of origins (scheme://host:port)");
  return (v as string[]).map((o) => {
    let u: URL;
    try {
      u = new URL(o);
    } catch {
      throw new Error(`fetch_origins: ${JSON.stringify(o)} is not a url`);
    }
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error(`fetch_origins: ${JSON.stringify(o)} is not an http(s) origin`);
    return u.origin;
  });
}

/**
 * Why a url part must not be fetched (A2A §14.1.1), or null: http(s) only, no userinfo, and an
 * origin of `init.fetch_origins` when that list is given. Checked before every request, each
 * redirect hop included.
 */
export function urlRefused(url: string, origins: string[]): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return "not a url";
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return `scheme ${JSON.stringify(u.protocol.replace(/:$/, ""))} is not fetched (only http and https)`;
  if (u.username !== "" || u.password !== "") return "a url with userinfo is not fetched";
  if (origins.length > 0 && !origins.includes(u.origin)) return `origin ${u.origin} is not an allowed fetch origin`;
  return null;
}

/** The most redirects followed for one url part (each hop checked by `urlRefused`). */
const MAX_REDIRECTS = 5;

/** Reassembles the artifacts of one task into files under `dir`. */
export class Assembler {
  private readonly artifacts = new Map<string, Assembling>();
  private counter = 0;

  constructor(
    private readonly dir: string,
    private readonly spec: ArtifactSpec,
    private readonly fetchTimeoutMs: number,
    private readonly fetchOrigins: string[] = [],
  ) {}

  /** Applies one `artifactUpdate` event. */
  async applyUpdate(artifact: Artifact, append: boolean, signal: AbortSignal): Promise<void> {
    const id = artifact.artifactId;
    let a = this.artifacts.get(id);
    if (append) {
      if (!a) throw new ProtocolError(`append to unknown artifact ${JSON.stringify(id)}`);
    } else {
      a = this.start(id, artifact.name || null);
    }
    if (artifact.name && !a.name) a.name = artifact.name;
    for (const p of artifact.parts) await this.writePart(a, p, signal);
  }

  /** Replaces everything with the artifacts of a task snapshot (GetTask, or a subscription's first event). */
  async replaceAll(artifacts: Artifact[], signal: AbortSignal): Promise<void> {
    for (const a of this.artifacts.values()) this.close(a);
    this.artifacts.clear();
    for (const art of artifacts) await this.applyUpdate(art, false, signal);
  }

  /** True when at least one artifact was started. */
  get isEmpty(): boolean {
    return this.artifacts.size === 0;
  }

  private start(id: string, name: string | null): Assembling {
    const old = this.artifacts.get(id);
    if (old) this.close(old);
    const file = path.join(this.dir, artifactFileName(this.counter++, id));
    const a: Assembling = {
      id, name, mediaType: null, file, fd: fs.openSync(file, "w"), bytes: 0,
      hash: createHash("sha256"), rejected: null, generation: (old?.generation ?? -1) + 1,
    };
    this.artifacts.set(id, a);
    return a;
  }

  private close(a: Assembling): void {
    if (a.fd !== null) {
      fs.closeSync(a.fd);
      a.fd = null;
    }
  }

  private reject(a: Assembling, why: string): void {
    if (a.rejected) return;
    a.rejected = why;
    this.close(a);
  }

  private write(a: Assembling, chunk: Uint8Array): void {
    if (a.rejected || a.fd === null) return;
    if (a.bytes + chunk.length > this.spec.max_size_bytes) {
      this.reject(a, `over max_size_bytes ${this.spec.max_size_bytes} (rejected at ${a.bytes + chunk.length} bytes)`);
      return;
    }
    fs.writeSync(a.fd, chunk);
    a.hash.update(chunk);
    a.bytes += chunk.length;
  }

  private async writePart(a: Assembling, p: Part, signal: AbortSignal): Promise<void> {
    const media = partMediaType(p);
    if (a.mediaType === null) a.mediaType = media;
    if (!mediaTypeAccepted(this.spec.mime_types, media)) {
      this.reject(a, `media type ${JSON.stringify(media)} is not accepted (accepted: ${this.spec.mime_types.join(", ")})`);
      return;
    }
    const c = p.content;
    if (!c) throw new ProtocolError(`artifact ${JSON.stringify(a.id)}: a part without content`);
    switch (c.$case) {
      case "text":
        this.write(a, Buffer.from(c.value, "utf8"));
        return;
      case "raw":
        this.write(a, c.value);
        return;
      case "data": {
        if (this.spec.schema !== null && this.spec.schema !== undefined) {
          const problem = validateSchema(this.spec.schema, c.value);
          if (problem) {
            this.reject(a, `data part violates the schema: ${problem}`);
            return;
          }
        }
        this.write(a, Buffer.from(canonicalJson(c.value), "utf8"));
        return;
      }
      case "url":
        await this.fetchUrl(a, c.value, signal);
        return;
    }
  }

  /**
   * Fetches a url part's body, streaming it to disk and enforcing the size bound while reading.
   * The url, and each redirect target (followed by hand), is checked first: a refused one is never
   * connected to and the artifact is rejected.
   */
  private async fetchUrl(a: Assembling, url: string, signal: AbortSignal): Promise<void> {
    const sig = AbortSignal.any([signal, AbortSignal.timeout(this.fetchTimeoutMs)]);
    let current = url;
    let res: Response | null = null;
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const why = urlRefused(current, this.fetchOrigins);
      if (why !== null) {
        this.reject(a, `url ${current} not fetched: ${why}`);
        return;
      }
      res = await fetch(current, { signal: sig, redirect: "manual" });
      const location = res.headers.get("location");
      if (res.status < 300 || res.status > 399 || location === null) break;
      await res.body?.cancel().catch(() => undefined);
      current = new URL(location, current).href;
      res = null;
    }
    if (res === null) {
      this.reject(a, `url ${url}: more than ${MAX_REDIRECTS} redirects`);
      return;
    }
    if (!res.ok || !res.body) throw new ProtocolError(`artifact ${JSON.stringify(a.id)}: fetching ${url} answered HTTP ${res.status}`);
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        this.write(a, value);
        if (a.rejected) break;
      }
    } finally {
      await reader.cancel().catch(() => undefined);
    }
  }

  /** Closes every file; returns the accepted artifacts and why the others were rejected. */
  commit(prov: Provenance): CommitResult {
    const accepted: ArtifactRecord[] = [];
    const rejected: string[] = [];
    for (const a of this.artifacts.values()) {
      this.close(a);
      if (a.rejected) {
        rejected.push(`artifact ${JSON.stringify(a.id)} rejected: ${a.rejected}`);
        fs.rmSync(a.file, { force: true });
        continue;
      }
      accepted.push({
        artifact_id: a.id, name: a.name, media_type: a.mediaType, bytes: a.bytes,
        sha256: a.hash.digest("hex"), path: a.file, agent_url: prov.agent_url, skill: prov.skill,
        task_id: prov.task_id, committed: true,
      });
    }
    // Committed files now belong to the record: nothing here may remove them any more.
    this.artifacts.clear();
    return { accepted, rejected };
  }

  /** Closes every file and records what was received so far, uncommitted (for dead letters). */
  partial(prov: Provenance): ArtifactRecord[] {
    const out: ArtifactRecord[] = [];
    for (const a of this.artifacts.values()) {
      this.close(a);
      out.push({
        artifact_id: a.id, name: a.name, media_type: a.mediaType, bytes: a.bytes,
        sha256: a.hash.copy().digest("hex"), path: a.file, agent_url: prov.agent_url,
        skill: prov.skill, task_id: prov.task_id, committed: false,
      });
    }
    return out;
  }

  /** Closes and removes everything (nothing is committed). */
  discard(): void {
    for (const a of this.artifacts.values()) {
      this.close(a);
      fs.rmSync(a.file, { force: true });
    }
    this.artifacts.clear();
  }
}
