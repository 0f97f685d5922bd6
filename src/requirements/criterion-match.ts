import type { AcceptanceCriterion } from '../tasks/task.js';

/** Leading list decoration a claim may carry when copied from the task file: `- [x] `, `* `, `1. `. */
const LIST_MARK = /^\s*(?:(?:[-*+]|\d+[.)])\s+)?(?:\[[ xX]\]\s*)?/;
/**
 * A criterion id at the start of a text: letters, an optional separator, then a number that may carry
 * dotted parts or a letter suffix (`AC-001`, `ac1`, `AC 2.1`, `**AC-3b**:`). Markdown emphasis, backticks
 * and brackets around it are ignored.
 */
const LEADING_ID = /^[*_`([]*(\p{L}+)[\s_-]*(\d(?:[\p{L}\p{N}]|\.(?=\p{N}))*)(?![\p{L}\p{N}])/u;
/** Too common to tell two criteria apart; everything else of two or more characters is a keyword. */
const STOP_WORDS = new Set([
  'an',
  'the',
  'and',
  'or',
  'of',
  'to',
  'in',
  'on',
  'for',
  'with',
  'by',
  'as',
  'at',
  'from',
  'into',
  'is',
  'are',
  'be',
  'been',
  'it',
  'its',
  'this',
  'that',
  'these',
  'those',
  'when',
  'then',
  'should',
  'must',
  'shall',
  'will',
  'can',
  'has',
  'have',
]);
/** A contained text shorter than this (and under three words) would match nearly anything. */
const MIN_CONTAINED_WORDS = 3;
const MIN_CONTAINED_CHARS = 12;

/**
 * The criterion a claim refers to, or undefined. Rules are tried in order over all criteria and the first
 * rule that matches wins: (1) id (`AC-1` = `AC-001` = `ac1`, also at the start of a longer claim),
 * (2) normalised text equality, (3) normalised containment either way, (4) keyword Jaccard ≥ 0.7.
 * Within a rule the first criterion in file order wins; for Jaccard the best score wins, then file order.
 */
export function matchCriterion(
  claim: string,
  criteria: readonly AcceptanceCriterion[],
): AcceptanceCriterion | undefined {
  const text = normaliseText(claim);
  if (text === '') return undefined;
  const claimId = idKey(claim);
  const byId = criteria.find((criterion) => sameId(criterion.id, claimId, text));
  if (byId) return byId;
  const texts = criteria.map((criterion) => normaliseText(criterion.text));
  const index =
    firstIndex(texts, (candidate) => candidate === text) ??
    firstIndex(texts, (candidate) => containsEitherWay(candidate, text)) ??
    bestKeywordMatch(texts, text);
  return index === undefined ? undefined : criteria[index];
}

/**
 * Comparable form of a leading criterion id: prefix lower-cased, leading zeros of each number dropped
 * (`AC-001` → `ac-1`, `AC-02.10` → `ac-2.10`); undefined when the text does not start with one.
 */
function idKey(text: string): string | undefined {
  const match = LEADING_ID.exec(text.replace(LIST_MARK, ''));
  if (!match) return undefined;
  const number = match[2]!.toLowerCase().replace(/(^|\.)0+(?=\d)/g, '$1');
  return `${match[1]!.toLowerCase()}-${number}`;
}

/** Lower case, list marks dropped, every run of punctuation, markdown markup or whitespace made one space. */
function normaliseText(text: string): string {
  return text
    .normalize('NFKC')
    .replace(LIST_MARK, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** Distinct keywords of a normalised text: words of two or more characters that are not stop words. */
function keywords(normalised: string): Set<string> {
  return new Set(normalised.split(' ').filter((word) => word.length >= 2 && !STOP_WORDS.has(word)));
}

function sameId(
  criterionId: string,
  claimId: string | undefined,
  normalisedClaim: string,
): boolean {
  const key = idKey(criterionId);
  if (key !== undefined) return key === claimId;
  // An id without a number (e.g. `AC-setup`) matches when the claim starts with it, word for word.
  return `${normalisedClaim} `.startsWith(`${normaliseText(criterionId)} `);
}

function containsEitherWay(a: string, b: string): boolean {
  return contains(a, b) || contains(b, a);
}

/** Whole-word containment of a text long enough to be specific. */
function contains(outer: string, inner: string): boolean {
  const specific =
    inner.split(' ').length >= MIN_CONTAINED_WORDS || inner.length >= MIN_CONTAINED_CHARS;
  return specific && ` ${outer} `.includes(` ${inner} `);
}

function bestKeywordMatch(texts: readonly string[], text: string): number | undefined {
  const claimWords = keywords(text);
  let best: { index: number; shared: number; union: number } | undefined;
  texts.forEach((candidate, index) => {
    const words = keywords(candidate);
    const shared = [...words].filter((word) => claimWords.has(word)).length;
    const union = words.size + claimWords.size - shared;
    // Integer cross-multiplication keeps the 0.7 boundary exact.
    if (union === 0 || shared * 10 < union * 7) return;
    if (!best || shared * best.union > best.shared * union) best = { index, shared, union };
  });
  return best?.index;
}

function firstIndex(texts: readonly string[], test: (text: string) => boolean): number | undefined {
  const index = texts.findIndex(test);
  return index < 0 ? undefined : index;
}
