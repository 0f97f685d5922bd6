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

interface Detached {
  worktree: string;
  result: Promise<CallToolResult>;
  /** The tree as the call left it: its answer is served only while the tree is unchanged. */
  tree: Promise<string | undefined>;
  startedAt: string;
  why: string;
}

/** An unclaimed answer is dropped this long after its call ended. */
const KEEP_MS = 60 * 60 * 1000;
/** Answers hold whole run records: the oldest beyond this many are dropped. */
const MAX_KEPT = 16;

const detached = new Map<string, Detached>();

/** Keeps a call's answer for the next identical call; `why`: how its client stopped waiting. */
export function detach(
  call: CallIdentity,
  result: Promise<CallToolResult>,
  startedAt: string,
  why: string,
): void {
  const tree = result.then(
    () => treeFingerprint(call.worktree).catch(() => undefined),
    () => undefined,
  );
  const entry: Detached = { worktree: call.worktree, result, tree, startedAt, why };
  detached.delete(call.key);
  detached.set(call.key, entry);
  for (const key of [...detached.keys()].slice(0, -MAX_KEPT)) detached.delete(key);
  void tree.then(() => setTimeout(() => forget(call.key, entry), KEEP_MS).unref());
}

/**
 * The answer of an earlier identical call whose client stopped waiting, awaited if it still runs,
 * when the tree is the one it left; undefined otherwise. It is handed out once, unless the
 * claiming call's own client stopped waiting too (`signal`).
 */
export async function claim(
  call: CallIdentity,
  signal: AbortSignal,
  onWait: (message: string) => void,
): Promise<CallToolResult | undefined> {
  const entry = detached.get(call.key);
  if (!entry) return undefined;
  onWait(`waiting for the same call started at ${entry.startedAt}, whose client ${entry.why}`);
  const [result, tree] = await Promise.all([entry.result.catch(() => undefined), entry.tree]);
  const now = tree && (await treeFingerprint(call.worktree).catch(() => undefined));
  if (!result || !tree || now !== tree) {
    forget(call.key, entry);
    return undefined;
  }
  if (!signal.aborted) forget(call.key, entry);
  return served(result, entry);
}

function forget(key: string, entry: Detached): void {
  if (detached.get(key) === entry) detached.delete(key);
}

/** The answer, saying where it came from: nothing was run for this call. */
function served(result: CallToolResult, entry: Detached): CallToolResult {
  const note = `Served from the same call started at ${entry.startedAt}, whose client ${entry.why}; it ran to the end on an unchanged tree, so nothing was run again.`;
  return {
    ...result,
    content: [{ type: 'text', text: note }, ...result.content],
    _meta: {
      ...result._meta,
      [SERVED_META]: { started_at: entry.startedAt, client: entry.why },
    },
  };
}

/** `_meta` key of an answer served from an earlier call. */
export const SERVED_META = 'coachgate/served-from-earlier-call';
