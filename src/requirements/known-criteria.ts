import { matchCriterion } from './criterion-match.js';
import { CallerError } from '../errors/errors.js';
import type { AcceptanceCriterion } from '../tasks/task.js';

/** Most criteria a refusal lists by id and text; the rest are counted. */
const LISTED = 20;

/**
 * Refuses criterion references that name none of the task's criteria (by id or text, as claims are
 * matched), listing the valid ones: an unknown id would otherwise be dropped silently and the caller
 * told nothing. `field` says where the references came from, e.g. `evidence[].criterion`.
 */
export function assertKnownCriteria(
  taskId: string,
  criteria: readonly AcceptanceCriterion[],
  references: readonly string[],
  field: string,
): void {
  const unknown = [
    ...new Set(
      references
        .filter((reference) => reference.trim() !== '')
        .filter((reference) => !matchCriterion(reference, criteria)),
    ),
  ];
  if (unknown.length === 0) return;
  throw new CallerError(
    `${field} names ${unknown.map((label) => JSON.stringify(label)).join(', ')}, which ${taskId} does not have.`,
    criteria.length === 0
      ? `${taskId} has no acceptance criteria: add a "## Acceptance Criteria" checklist to its task file.`
      : `Use one of: ${criteriaList(criteria)}.`,
    { unknown_criteria: unknown, valid_criteria: criteria.map((criterion) => criterion.id) },
  );
}

function criteriaList(criteria: readonly AcceptanceCriterion[]): string {
  const listed = criteria
    .slice(0, LISTED)
    .map((criterion) => `${criterion.id} (${shorten(criterion.text)})`);
  const more = criteria.length > LISTED ? ` and ${criteria.length - LISTED} more` : '';
  return `${listed.join(', ')}${more}`;
}

function shorten(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}
