// The durable delegation store: one JSON file per delegation under `<store_dir>/delegations/`,
// written to a temporary file, fsynced and renamed over the old one, so a SIGKILL at any point
// leaves either the previous or the new record. Artifacts live under `<store_dir>/artifacts/`.

import * as fs from "node:fs";
import * as path from "node:path";
import type { DelegateRequest, DelegationState } from "./contract.js";

/** `TS_DELEGATOR_TRACE=1`: log the duration of every save to stderr. */
const TRACE = Boolean(process.env.TS_DELEGATOR_TRACE);

/** One input or auth round of a delegation. */
export interface InputRound {
  round: number;
  kind: "input" | "auth";
  question: string;
  answer: string | null;
  /** `inputs.<key>` when answered from the delegation's data, `caller` when escalated. */
  source: string | null;
  answer_message_id: string | null;
  asked_at: string;
  answered_at: string | null;
  sent_at: string | null;
}

/** One committed (or, for dead letters, partial) artifact. */
export interface ArtifactRecord {
  artifact_id: string;
  name: string | null;
  media_type: string | null;
  bytes: number;
  sha256: string;
  path: string;
  agent_url: string;
  skill: string;
  task_id: string | null;
  committed: boolean;
}

/** One error met on the way. */
export interface ErrorRecord {
  at: string;
  op: string;
  code: number | null;
  http_status: number | null;
  transient: boolean;
  message: string;
}

/** The durable record of one delegation (what `snapshot_ok` lists). */
export interface DelegationRecord {
  id: string;
  seq: number;
  parent_id: string | null;
  request: DelegateRequest;
  agent_url: string | null;
  rpc_url: string | null;
  protocol_version: string | null;
  skill: string;
  message_ids: Record<string, string>;
  task_id: string | null;
  context_id: string | null;
  state: DelegationState;
  reason: string | null;
  budget_usd: number;
  budget_share: number;
  spend_usd: number;
  deadline: string;
  depth: number;
  chain: string[];
  refine_of: string | null;
  reference_task_ids: string[];
  streaming: boolean;
  /** sha256 of each push token configured (empty: this example does not use push; never a token). */
  push_token_sha256: string[];
  attempts: number;
  last_error: string | null;
  error_code: number | null;
  final_message: string | null;
  priority: string;
  created_at: string;
  updated_at: string;
  terminal_at: string | null;
  dlq: boolean;
  input_rounds: InputRound[];
  artifacts: ArtifactRecord[];
  errors: ErrorRecord[];
  /** Outbox flag: the `done` line of this final record was written and flushed. */
  done_reported: boolean;
}

/** The store: records in memory, each change made durable before it is reported. */
export class Store {
  readonly dir: string;
  private readonly recordsDir: string;
  readonly artifactsDir: string;
  private readonly records = new Map<string, DelegationRecord>();
  private nextSeq = 0;

  constructor(dir: string) {
    this.dir = dir;
    this.recordsDir = path.join(dir, "delegations");
    this.artifactsDir = path.join(dir, "artifacts");
    fs.mkdirSync(this.recordsDir, { recursive: true });
    fs.mkdirSync(this.artifactsDir, { recursive: true });
    for (const f of fs.readdirSync(this.recordsDir)) {
      if (!f.endsWith(".json")) continue;
      const file = path.join(this.recordsDir, f);
      let rec: DelegationRecord;
      try {
        rec = JSON.parse(fs.readFileSync(file, "utf8")) as DelegationRecord;
      } catch (e) {
        throw new Error(`store: unreadable record ${file}: ${(e as Error).message}`);
      }
      if (typeof rec.id !== "string" || typeof rec.seq !== "number") {
        throw new Error(`store: record ${file} lacks id or seq`);
      }
      this.records.set(rec.id, rec);
      this.nextSeq = Math.max(this.nextSeq, rec.seq + 1);
    }
  }

  get(id: string): DelegationRecord | undefined {
    return this.records.get(id);
  }

  has(id: string): boolean {
    return this.records.has(id);
  }

  /** Every record, oldest first. */
  all(): DelegationRecord[] {
    return [...this.records.values()].sort((a, b) => a.seq - b.seq);
  }

  allocSeq(): number {
    return this.nextSeq++;
  }

  /** Makes `rec` durable (temp file, fsync, rename; the directory is fsynced when the record is new). */
  save(rec: DelegationRecord): void {
    const t0 = TRACE ? performance.now() : 0;
    rec.updated_at = new Date().toISOString();
    const file = path.join(this.recordsDir, `${encodeURIComponent(rec.id)}.json`);
    const tmp = `${file}.tmp`;
    const fd = fs.openSync(tmp, "w");
    try {
      fs.writeSync(fd, JSON.stringify(rec));
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    const isNew = !fs.existsSync(file);
    fs.renameSync(tmp, file);
    if (isNew) {
      // A new name must survive too: fsync the directory once, when the record first appears.
      const dfd = fs.openSync(this.recordsDir, "r");
      try {
        fs.fsyncSync(dfd);
      } finally {
        fs.closeSync(dfd);
      }
    }
    this.records.set(rec.id, rec);
    if (TRACE) process.stderr.write(`[ts-delegator] save ${rec.id} ${rec.state} took ${(performance.now() - t0).toFixed(1)} ms\n`);
  }

  /** The directory holding one delegation's artifact files. */
  artifactDir(id: string): string {
    const d = path.join(this.artifactsDir, encodeURIComponent(id));
    fs.mkdirSync(d, { recursive: true });
    return d;
  }
}
