import { createHash } from 'node:crypto';
import { CallerError } from '../errors/errors.js';

/** One Coach turn as seen by stall detection. */
export interface StallTurn {
  feedback: string;
  criteria_passed: number;
  failing_tests?: string[];
  /** Fingerprint of the Player's working tree after its pass; equal hashes mean nothing changed. */
  tree_hash?: string;
  /** The recorded turn number; reports use it instead of the position in the history when present. */
  turn?: number;
  /**
   * The latest Player turn recorded when the Coach gave this feedback. Feedback given again before the
   * Player records a newer turn is left out: it says nothing about the Player's progress.
   */
  player_turn?: number;
}

export type StallReason = 'repeated_feedback' | 'same_failures' | 'no_changes' | 'oscillation';

export interface StallReport {
  stalled: boolean;
  reason: StallReason | null;
  /** Turn at which the first rule fired: the entry's `turn` when given, else its 1-based position. */
  first_stalled_turn: number | null;
  /** One short hex signature of the normalised feedback per turn. */
  signatures: string[];
  recommendation: string;
}

const DEFAULT_THRESHOLD = 3;
/** Partial progress (criteria_passed > 0) gets this many extra turns before repeated feedback counts as a stall. */
const PARTIAL_PROGRESS_EXTRA_TURNS = 2;
const SIGNATURE_LENGTH = 12;

const FILE_EXTENSIONS =
  'py|pyi|ts|tsx|mts|cts|js|jsx|mjs|cjs|json|ya?ml|toml|ini|cfg|md|txt|sql|go|rs|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|sh|html|css|scss|xml|vue|svelte|lock|log';

interface Replacement {
  pattern: RegExp;
  placeholder: string;
  /** Only matches this accepts are replaced; the others stay as written. */
  accept?: (match: string) => boolean;
}

/**
 * Applied in order. Order matters: timestamps and UUIDs contain digits and dashes, test ids and paths contain
 * numbers and names, so each broader shape is replaced before the narrower ones it contains.
 */
const REPLACEMENTS: readonly Replacement[] = [
  // ISO timestamps and dates, then bare clock times.
  {
    pattern:
      /\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b/gi,
    placeholder: '<time>',
  },
  { pattern: /\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b/g, placeholder: '<time>' },
  {
    pattern: /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi,
    placeholder: '<uuid>',
  },
  // JS test titles: `file.test.ts > suite > name` (vitest) run to the end of the line or a dash separator;
  // jest prints failing tests as `● suite › name`.
  {
    pattern: /[\w./\\@-]+\.(?:test|spec)\.[cm]?[jt]sx?(?:\s*>\s+(?:(?!\s[-—]\s)[^\n>])+)+/g,
    placeholder: '<test>',
  },
  { pattern: /●[ \t]+[^\n]+/g, placeholder: '<test>' },
  // pytest-style node ids: `path::Class::test[param]`.
  {
    pattern: /[\w./\\@-]+(?:\[[^\]\n]*\])?(?:::[\w.-]+(?:\[[^\]\n]*\])?)+/g,
    placeholder: '<test>',
  },
  {
    pattern: /(?<![\w.])(?:~|[A-Za-z]:)?[\w.@+-]*(?:[/\\][\w.@+-]+)+[/\\]?/g,
    placeholder: '<path>',
    accept: isPath,
  },
  {
    pattern: new RegExp(`\\b[\\w-]+(?:\\.[\\w-]+)*\\.(?:${FILE_EXTENSIONS})\\b`, 'g'),
    placeholder: '<path>',
  },
  { pattern: /:\d+(?::\d+)?\b/g, placeholder: ':<line>' },
  { pattern: /\bline\s+\d+/gi, placeholder: 'line <line>' },
  { pattern: /\b0x[0-9a-f]+\b/gi, placeholder: '<hex>' },
  // ≥7 hex chars with at least one digit and one letter: commit ids, object ids; not plain words or numbers.
  { pattern: /\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b/gi, placeholder: '<hex>' },
  {
    pattern:
      /\b(?:\d+(?:\.\d+)?(?:h|m|min)\s?)?\d+(?:\.\d+)?\s?(?:ns|µs|us|ms|s|secs?|seconds?|mins?|minutes?|hours?)\b/g,
    placeholder: '<duration>',
  },
  { pattern: /\d+(?:\.\d+)?\s?%/g, placeholder: '<pct>' },
  // Bare test function and class names: test_x, TestFoo, FooTest(s).
  { pattern: /\btest_\w+/gi, placeholder: '<test>' },
  { pattern: /\bTest[A-Z0-9]\w*/g, placeholder: '<test>' },
  { pattern: /\b[A-Z][A-Za-z0-9]*Tests?\b/g, placeholder: '<test>' },
  { pattern: /\d+(?:[.,]\d+)*/g, placeholder: '<n>' },
];

/** A slash-containing token is a path when it is absolute, explicitly relative, deep, or names a file. */
function isPath(candidate: string): boolean {
  if (/^(?:~|[A-Za-z]:)?[/\\]/.test(candidate) || /^\.{1,2}[/\\]/.test(candidate)) return true;
  const separators = candidate.match(/[/\\]/g)?.length ?? 0;
  return separators >= 2 || /\.[A-Za-z]\w{0,7}$/.test(candidate);
}

/**
 * Feedback with its turn-to-turn variable parts (test ids, paths, line numbers, durations, counts, hashes,
 * timestamps) replaced by placeholders, lowercased and whitespace-collapsed. The words stay, so different
 * kinds of feedback keep different normal forms.
 */
export function normaliseFeedback(text: string): string {
  let normalised = text;
  for (const { pattern, placeholder, accept } of REPLACEMENTS) {
    normalised = normalised.replace(pattern, (match) =>
      accept && !accept(match) ? match : placeholder,
    );
  }
  return normalised.toLowerCase().replace(/\s+/g, ' ').trim();
}

export function feedbackSignature(text: string): string {
  return createHash('sha256')
    .update(normaliseFeedback(text))
    .digest('hex')
    .slice(0, SIGNATURE_LENGTH);
}

interface Detection {
  reason: StallReason;
  recommendation: string;
}

type Rule = (
  history: StallTurn[],
  signatures: string[],
  end: number,
  threshold: number,
) => Detection | null;

/** Identical feedback over the window, and the best criteria_passed in it no better than before it. */
const repeatedFeedback: Rule = (history, signatures, end, threshold) => {
  const shortWindow = history.slice(Math.max(0, end - threshold), end);
  const windowSize = shortWindow.some((turn) => turn.criteria_passed > 0)
    ? threshold + PARTIAL_PROGRESS_EXTRA_TURNS
    : threshold;
  if (end < windowSize) return null;
  const start = end - windowSize;
  const windowSignatures = signatures.slice(start, end);
  if (windowSignatures.some((signature) => signature !== windowSignatures[0])) return null;
  // Without earlier turns, the window's first turn is the baseline progress is measured against.
  const baseline = start > 0 ? bestCriteria(history.slice(0, start)) : history[0]!.criteria_passed;
  if (bestCriteria(history.slice(start, end)) > baseline) return null;
  return {
    reason: 'repeated_feedback',
    recommendation:
      `Stop the loop and escalate to a human: the Coach feedback has not changed in ${windowSize} turns ` +
      `(turns ${turnLabel(history, start + 1)}-${turnLabel(history, end)}) and criteria_passed has not improved. Repeating the same approach will not ` +
      'converge; change it: fix the root cause the feedback names (environment, fixture, dependency, ' +
      'configuration) instead of editing code around individual tests, split or narrow the task, or ask for ' +
      'the missing information.',
  };
};

/** The same non-empty set of failing tests in `threshold` consecutive turns. */
const sameFailures: Rule = (history, _signatures, end, threshold) => {
  if (end < threshold) return null;
  const sets = history.slice(end - threshold, end).map((turn) => failureSetKey(turn.failing_tests));
  if (sets[0] === null || sets.some((key) => key !== sets[0])) return null;
  const tests = [...new Set(history[end - 1]!.failing_tests)].sort();
  const listed =
    tests.slice(0, 5).join(', ') + (tests.length > 5 ? `, and ${tests.length - 5} more` : '');
  return {
    reason: 'same_failures',
    recommendation:
      `Stop the loop and escalate: the same ${tests.length} failing test(s) failed in ${threshold} consecutive ` +
      `turns (turns ${turnLabel(history, end - threshold + 1)}-${turnLabel(history, end)}): ${listed}. The Player's changes are not reaching the cause; ` +
      'run these tests in isolation and read the full failure output, or hand them to a human.',
  };
};

/** Two consecutive turns with the same defined tree hash: the Player changed nothing. */
const noChanges: Rule = (history, _signatures, end) => {
  if (end < 2) return null;
  const previous = history[end - 2]!.tree_hash;
  const current = history[end - 1]!.tree_hash;
  if (current === undefined || current !== previous) return null;
  return {
    reason: 'no_changes',
    recommendation:
      `Stop the loop: the Player made no changes between turns ${turnLabel(history, end - 1)} and ${turnLabel(history, end)} ` +
      `(tree ${current.slice(0, SIGNATURE_LENGTH)}). Check that the Player received the feedback and can write ` +
      'to the workspace; if it cannot make progress, escalate to a human.',
  };
};

/** A-B-A-B in the last four signatures: the Player keeps undoing its own fixes. */
const oscillation: Rule = (history, signatures, end) => {
  if (end < 4) return null;
  const [a1, b1, a2, b2] = signatures.slice(end - 4, end);
  if (a1 === b1 || a1 !== a2 || b1 !== b2) return null;
  return {
    reason: 'oscillation',
    recommendation:
      `Stop the loop: the feedback alternates between two states (turns ${turnLabel(history, end - 3)}-${turnLabel(history, end)}), so fixing one ` +
      'problem reintroduces the other. Address both problems together in one turn, or escalate to a human.',
  };
};

/** In tie-break order: when several rules fire at the same turn, the first one is reported. */
const RULES: readonly Rule[] = [repeatedFeedback, sameFailures, noChanges, oscillation];

/** The recorded turn number of the 1-based position, when the history carries turn numbers. */
function turnLabel(history: StallTurn[], position: number): number {
  return history[position - 1]?.turn ?? position;
}

function bestCriteria(turns: StallTurn[]): number {
  return Math.max(...turns.map((turn) => turn.criteria_passed));
}

function failureSetKey(failingTests: string[] | undefined): string | null {
  if (!failingTests || failingTests.length === 0) return null;
  return [...new Set(failingTests)].sort().join('\n');
}

/**
 * One feedback turn per Player turn: an entry whose player_turn is not newer than the one kept before it
 * is dropped, so feedback recorded twice without the Player acting (two calls in a row, a Coach reviewing
 * without a report) can never make a rule fire. Entries without player_turn are all kept.
 */
function afterDistinctPlayerTurns(history: StallTurn[]): StallTurn[] {
  let lastPlayerTurn: number | undefined;
  return history.filter((turn) => {
    if (turn.player_turn === undefined) return true;
    if (lastPlayerTurn !== undefined && turn.player_turn <= lastPlayerTurn) return false;
    lastPlayerTurn = turn.player_turn;
    return true;
  });
}

/**
 * Replays the history turn by turn and reports the first turn at which any stall rule fires, so the
 * answer for a given turn never changes as later turns are appended.
 */
export function detectStall(
  fullHistory: StallTurn[],
  options: { threshold?: number } = {},
): StallReport {
  const history = afterDistinctPlayerTurns(fullHistory);
  const threshold = options.threshold ?? DEFAULT_THRESHOLD;
  if (!Number.isInteger(threshold) || threshold < 2) {
    throw new CallerError(
      `Stall threshold must be an integer of at least 2, got ${threshold}.`,
      'Pass threshold >= 2 or omit it to use the default of 3.',
    );
  }
  const signatures = history.map((turn) => feedbackSignature(turn.feedback));
  for (let end = 1; end <= history.length; end++) {
    for (const rule of RULES) {
      const detection = rule(history, signatures, end, threshold);
      if (detection) {
        return {
          stalled: true,
          first_stalled_turn: turnLabel(history, end),
          signatures,
          ...detection,
        };
      }
    }
  }
  return {
    stalled: false,
    reason: null,
    first_stalled_turn: null,
    signatures,
    recommendation:
      history.length === 0
        ? 'Continue: no turns recorded yet.'
        : `Continue: no stall detected in ${history.length} turn(s).`,
  };
}
