// The driver contract (docs/driver-protocol.md) as the TypeScript side sees it: the requests the
// harness sends, the lines the delegator writes, and the one writer of stdout.

/** Final outcomes a `done` line may carry. */
export type Outcome =
  | "COMPLETED" | "FAILED" | "CANCELED" | "REJECTED" | "ANSWERED_DIRECT"
  | "LOST" | "DEAD_LETTERED" | "REFUSED" | "SEND_FAILED";

/** Every state a delegation can be in (A2A task states without prefix, plus local ones). */
export type DelegationState =
  | Outcome | "SUBMITTED" | "WORKING" | "INPUT_REQUIRED" | "AUTH_REQUIRED" | "UNSPECIFIED"
  | "SENDING";

export const FINAL_STATES: ReadonlySet<string> = new Set<Outcome>([
  "COMPLETED", "FAILED", "CANCELED", "REJECTED", "ANSWERED_DIRECT",
  "LOST", "DEAD_LETTERED", "REFUSED", "SEND_FAILED",
]);

/** `init.options`, with the reference delegator's defaults. */
export interface Options {
  max_depth: number;
  input_round_cap: number;
  deadline_margin_ms: number;
  budget_reserve_fraction: number;
  retry_base_ms: number;
  retry_cap_ms: number;
  poll_interval_ms: number;
  seed: number;
  request_timeout_ms: number;
}

export const DEFAULT_OPTIONS: Options = {
  max_depth: 3,
  input_round_cap: 3,
  deadline_margin_ms: 2000,
  budget_reserve_fraction: 0.1,
  retry_base_ms: 2000,
  retry_cap_ms: 60000,
  poll_interval_ms: 500,
  seed: 0,
  request_timeout_ms: 30000,
};

/** `delegate.artifact_spec` with defaults applied. */
export interface ArtifactSpec {
  mime_types: string[];
  max_size_bytes: number;
  streaming_preferred: boolean;
  schema: unknown;
}

/** A fan-out child as given in `delegate.children`. */
export interface ChildRequest {
  id: string;
  capability: string;
  text: string;
  inputs?: Record<string, unknown>;
  artifact_spec?: Partial<ArtifactSpec>;
  max_retries?: number;
  priority?: string;
}

/** An accepted `delegate` request, defaults applied. */
export interface DelegateRequest {
  id: string;
  capability: string;
  text: string;
  inputs: Record<string, unknown>;
  artifact_spec: ArtifactSpec;
  timeout_seconds: number;
  deadline: string | null;
  budget_usd: number;
  max_retries: number;
  priority: string;
  depth: number;
  chain: string[];
  children: ChildRequest[] | null;
  agent: string | null;
  refine_of: string | null;
}

/** One committed artifact as reported in `done.artifacts`. */
export interface ReportedArtifact {
  artifact_id: string;
  name: string | null;
  bytes: number;
  sha256: string;
  media_type: string | null;
  path: string;
}

/** Thrown for a malformed request: answered with `error` `bad_request`. */
export class BadRequest extends Error {}

/** Writes one protocol line to stdout with a single write (stdout to a pipe is synchronous). */
export function emit(line: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify(line) + "\n");
}

/** Writes a diagnostic to stderr, which the harness keeps as the delegator's log. */
export function log(msg: string): void {
  process.stderr.write(`[ts-delegator] ${new Date().toISOString()} ${msg}\n`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function intIn(obj: Record<string, unknown>, field: string, dflt: number, lo: number, hi: number): number {
  const v = obj[field];
  if (v === undefined || v === null) return dflt;
  if (typeof v !== "number" || !Number.isInteger(v) || v < lo || v > hi) {
    throw new BadRequest(`${field}: must be an integer between ${lo} and ${hi}, got ${JSON.stringify(v)}`);
  }
  return v;
}

function str(obj: Record<string, unknown>, field: string, required: boolean): string | null {
  const v = obj[field];
  if (v === undefined || v === null) {
    if (required) throw new BadRequest(`${field}: required string is missing`);
    return null;
  }
  if (typeof v !== "string") throw new BadRequest(`${field}: must be a string`);
  return v;
}

function parseSpec(v: unknown, field: string, base?: ArtifactSpec): ArtifactSpec {
  const d: ArtifactSpec = base ?? {
    mime_types: ["application/json"],
    max_size_bytes: 10 * 1024 * 1024,
    streaming_preferred: true,
    schema: null,
  };
  if (v === undefined || v === null) return { ...d };
  if (!isObject(v)) throw new BadRequest(`${field}: must be an object`);
  let mime = d.mime_types;
  if (v.mime_types !== undefined) {
    if (!Array.isArray(v.mime_types) || v.mime_types.length === 0 || !v.mime_types.every((m) => typeof m === "string")) {
      throw new BadRequest(`${field}.mime_types: must be a non-empty array of strings`);
    }
    mime = v.mime_types as string[];
  }
  const size = intIn(v, "max_size_bytes", d.max_size_bytes, 1, 4 * 1024 * 1024 * 1024);
  let streaming = d.streaming_preferred;
  if (v.streaming_preferred !== undefined) {
    if (typeof v.streaming_preferred !== "boolean") throw new BadRequest(`${field}.streaming_preferred: must be a boolean`);
    streaming = v.streaming_preferred;
  }
  return { mime_types: mime, max_size_bytes: size, streaming_preferred: streaming, schema: v.schema ?? d.schema };
}

/** Validates a `delegate` line and applies the contract's defaults. */
export function parseDelegate(msg: Record<string, unknown>): DelegateRequest {
  const id = str(msg, "id", true)!;
  if (id.length < 1 || id.length > 128) throw new BadRequest("id: must be 1..128 characters");
  const capability = str(msg, "capability", true)!;
  const text = str(msg, "text", true)!;
  const inputs = msg.inputs ?? {};
  if (!isObject(inputs)) throw new BadRequest("inputs: must be an object");
  const deadline = str(msg, "deadline", false);
  if (deadline !== null && Number.isNaN(Date.parse(deadline))) throw new BadRequest("deadline: not an RFC 3339 time");
  let budget = 1.0;
  if (msg.budget_usd !== undefined && msg.budget_usd !== null) {
    if (typeof msg.budget_usd !== "number" || !(msg.budget_usd >= 0)) throw new BadRequest("budget_usd: must be a number >= 0");
    budget = msg.budget_usd;
  }
  const priority = str(msg, "priority", false) ?? "normal";
  if (!["low", "normal", "high", "critical"].includes(priority)) throw new BadRequest(`priority: unknown value ${priority}`);
  const chain = msg.chain ?? [];
  if (!Array.isArray(chain) || !chain.every((c) => typeof c === "string")) throw new BadRequest("chain: must be an array of URLs");
  let children: ChildRequest[] | null = null;
  if (msg.children !== undefined && msg.children !== null) {
    if (!Array.isArray(msg.children) || msg.children.length === 0) throw new BadRequest("children: must be a non-empty array");
    children = msg.children.map((c, i) => {
      if (!isObject(c)) throw new BadRequest(`children[${i}]: must be an object`);
      const cid = str(c, "id", true)!;
      return {
        id: cid,
        capability: str(c, "capability", true)!,
        text: str(c, "text", true)!,
        inputs: isObject(c.inputs) ? c.inputs : undefined,
        artifact_spec: isObject(c.artifact_spec) ? (c.artifact_spec as Partial<ArtifactSpec>) : undefined,
        max_retries: c.max_retries === undefined ? undefined : intIn(c, "max_retries", 3, 0, 10),
        priority: typeof c.priority === "string" ? c.priority : undefined,
      };
    });
  }
  return {
    id,
    capability,
    text,
    inputs: inputs as Record<string, unknown>,
    artifact_spec: parseSpec(msg.artifact_spec, "artifact_spec"),
    timeout_seconds: intIn(msg, "timeout_seconds", 300, 10, 3600),
    deadline,
    budget_usd: budget,
    max_retries: intIn(msg, "max_retries", 3, 0, 10),
    priority,
    depth: intIn(msg, "depth", 0, 0, Number.MAX_SAFE_INTEGER),
    chain: chain as string[],
    children,
    agent: str(msg, "agent", false),
    refine_of: str(msg, "refine_of", false),
  };
}

/** The request of one fan-out child, inheriting what the child does not set. */
export function childRequest(parent: DelegateRequest, c: ChildRequest): DelegateRequest {
  return {
    ...parent,
    id: c.id,
    capability: c.capability,
    text: c.text,
    inputs: c.inputs ?? parent.inputs,
    artifact_spec: parseSpec(c.artifact_spec, `children.${c.id}.artifact_spec`, parent.artifact_spec),
    max_retries: c.max_retries ?? parent.max_retries,
    priority: c.priority ?? parent.priority,
    children: null,
    refine_of: null,
  };
}

/** Reads `init.options` over the defaults; unknown options are ignored. */
export function parseOptions(v: unknown): Options {
  const o = { ...DEFAULT_OPTIONS };
  if (!isObject(v)) return o;
  for (const k of Object.keys(o) as (keyof Options)[]) {
    const x = v[k];
    if (typeof x === "number" && Number.isFinite(x)) o[k] = x;
  }
  return o;
}
