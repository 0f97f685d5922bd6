import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { treeFingerprint } from '../repo/fingerprint.js';

/**
 * Calls that outlived their client (it timed out or went away): they run to the end and store their
 * records, and their answer waits here for the next identical call on the same tree, which gets it
 * without running again. Process-wide, so a client that reconnects (a new HTTP session) finds it too.
 */

/** What makes two calls the same: tool, role, base, worktree and input (src/tools/tool.ts). */
export interface CallIdentity {
  key: string;
  worktree: string;
}

/** A call that may outlive its client, with the tree it started on. */
export interface TrackedCall extends CallIdentity {
  startedAt: string;
  /** An answer is served only for the tree it was made for. */
  tree(): Promise<string | undefined>;
}

interface Detached {
  call: TrackedCall;
  result: Promise<CallToolResult>;
  why: string;
}

/** An unclaimed answer is dropped this long after its call ended. */
const KEEP_MS = 60 * 60 * 1000;
/** As the runs report their progress: hosts may allow 5 s of silence. */
const PROGRESS_INTERVAL_MS = 2_500;
/** Answers hold whole run records: the oldest beyond this many are dropped. */
const MAX_KEPT = 16;

const detached = new Map<string, Detached>();

/**
 * `detachable`: a plain call, whose client may stop waiting; its tree is read beside the call as it
 * starts. A task's tree is read only if an earlier call's answer waits for it.
 */
export function track(call: CallIdentity, detachable: boolean): TrackedCall {
  let tree: Promise<string | undefined> | undefined;
  const read = () => (tree ??= treeFingerprint(call.worktree).catch(() => undefined));
  if (detachable) void read();
  return { ...call, startedAt: new Date().toISOString(), tree: read };
}

/** Keeps a call's answer for the next identical call; `why`: how its client stopped waiting. */
export function detach(call: TrackedCall, result: Promise<CallToolResult>, why: string): void {
  const entry: Detached = { call, result, why };
  detached.delete(call.key);
  detached.set(call.key, entry);
  for (const key of [...detached.keys()].slice(0, -MAX_KEPT)) detached.delete(key);
  const drop = () => setTimeout(() => forget(call.key, entry), KEEP_MS).unref();
  result.then(drop, drop);
}

/**
 * The answer of an earlier identical call whose client stopped waiting, awaited if it still runs,
 * when this call starts on the tree that one started on; undefined otherwise. It is handed out
 * once, unless the claiming call's own client stopped waiting too (`signal`).
 */
export async function claim(
  call: TrackedCall,
  signal: AbortSignal,
  onWait: (message: string) => void,
): Promise<CallToolResult | undefined> {
  const entry = detached.get(call.key);
  if (!entry) return undefined;
  const [then, now] = await Promise.all([entry.call.tree(), call.tree()]);
  if (then === undefined || then !== now) {
    forget(call.key, entry);
    return undefined;
  }
  const since = Date.parse(entry.call.startedAt);
  const wait = () =>
    onWait(
      `waiting for the same call started ${Math.round((Date.now() - since) / 1000)} s ago, whose client ${entry.why}`,
    );
  wait();
  const heartbeat = setInterval(wait, PROGRESS_INTERVAL_MS);
  const result = await entry.result.catch(() => undefined).finally(() => clearInterval(heartbeat));
  if (!result || !signal.aborted) forget(call.key, entry);
  return result && served(result, entry);
}

function forget(key: string, entry: Detached): void {
  if (detached.get(key) === entry) detached.delete(key);
}

/** The answer, saying where it came from: nothing was run for this call. */
function served(result: CallToolResult, entry: Detached): CallToolResult {
  // A call that waited on an earlier one and lost its client too passes that one's answer on.
  if (result._meta?.[SERVED_META]) return result;
  const note = `Served from the same call started at ${entry.call.startedAt}, whose client ${entry.why}; it ran to the end on this same tree, so nothing was run again.`;
  return {
    ...result,
    content: [{ type: 'text', text: note }, ...result.content],
    _meta: {
      ...result._meta,
      [SERVED_META]: { started_at: entry.call.startedAt, client: entry.why },
    },
  };
}

/** `_meta` key of an answer served from an earlier call. */
export const SERVED_META = 'coachgate/served-from-earlier-call';
