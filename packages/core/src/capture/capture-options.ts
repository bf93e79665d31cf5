import type { Collection } from "../collection.js";
import { ValidationError } from "../errors.js";

/**
 * How captured writes are enqueued. Every field documents its default; `resolveCaptureOptions`
 * fills and validates them once.
 */
export interface CaptureOptions {
  /** Tag of jobs the trigger inserts (metrics, alert scoping). Default "capture". */
  tag?: string;
  /** Priority of those jobs; lower runs first. Default 1, the writer's default. */
  priority?: number;
  /**
   * Delay before a captured job is due. Default 60000 ms, the writer's default grace. A captured
   * write has no direct sync to race, so 0 is a sound choice: the job is due at once and the
   * trigger NOTIFYs listening drainers on commit.
   */
  graceMs?: number;
}

export interface ResolvedCaptureOptions {
  readonly tag: string;
  readonly priority: number;
  readonly graceMs: number;
}

/** The transaction-local setting the writer sets to the collection's name while its own statements run. */
export const WRITER_SETTING = "tether.writer";

/** The LISTEN/NOTIFY channel drainers wake on when due-now work is enqueued. */
export const WAKE_CHANNEL = "tether_wake";

const TAG = /^[A-Za-z0-9_.:-]{1,200}$/;

export function resolveCaptureOptions(opts: CaptureOptions = {}): ResolvedCaptureOptions {
  const tag = opts.tag ?? "capture";
  const priority = opts.priority ?? 1;
  const graceMs = opts.graceMs ?? 60_000;
  if (typeof tag !== "string" || !TAG.test(tag)) throw new ValidationError("capture.tag", "must be 1-200 characters of letters, digits and _ . : -");
  if (!Number.isInteger(priority) || priority < 0 || priority > 1_000_000) throw new ValidationError("capture.priority", "must be an integer in 0..1000000");
  if (!Number.isInteger(graceMs) || graceMs < 0 || graceMs > 86_400_000) throw new ValidationError("capture.graceMs", "must be an integer number of milliseconds in 0..86400000");
  return { tag, priority, graceMs };
}

/** Names of the functions and triggers capture installs for one collection. */
export interface CaptureNames {
  /** The bump function, and its BEFORE UPDATE trigger. */
  bump: string;
  /** The BEFORE INSERT trigger (it runs the bump function). */
  bumpInsert: string;
  insert: string;
  update: string;
  delete: string;
}

export function captureNames(collection: Collection<any>): CaptureNames {
  // Trigger and function names are at most 63 bytes; collection names are short lower-case words.
  if (collection.name.length > 40) throw new ValidationError("collection.name", "capture needs a collection name of at most 40 characters");
  const base = `tether_capture_${collection.name}`;
  return { bump: `${base}_bump`, bumpInsert: `${base}_bumpins`, insert: `${base}_ins`, update: `${base}_upd`, delete: `${base}_del` };
}
