import { assertKnownCriteria } from '../requirements/known-criteria.js';
import type { EvidenceInput } from '../requirements/requirements.js';
import { loadTask } from '../repo/tasks.js';
import { latestRun } from '../records/runs.js';
import type { WaitOptions } from '../evaluation/early-runs.js';
import type { TaskScope } from './task-scope.js';
import { validateRequirements, type RequirementsValidation } from './validate-requirements.js';
import { latestRunEvaluation } from './verdict-evidence.js';

/**
 * validate_requirements: the criteria as record_verdict would judge the same evidence now. The approval
 * checks cited tests against the fail-to-pass run (the Player's tests on the base code), so this awaits
 * the same trusted runs — started beside the candidate run and shared with the approval, never a run
 * of its own — rather than saying "met" for a test that passes without the change. A latest run that
 * did not pass had its trusted runs stopped and asks for feedback, not an approval: none are started
 * for it here (the approval, if asked, checks fail-to-pass itself).
 */
export async function checkRequirements(
  scope: TaskScope,
  evidence: EvidenceInput[],
  wait: WaitOptions,
): Promise<RequirementsValidation> {
  const task = await loadTask(scope.worktree, scope.taskId, scope.base.commit);
  assertKnownCriteria(
    scope.taskId,
    task.acceptance_criteria,
    evidence.map((item) => item.criterion),
    'evidence[].criterion',
  );
  const latest = await latestRun(scope.worktree, scope.taskId);
  const evaluated =
    latest.state === 'ok' && latest.value.status === 'passed'
      ? await latestRunEvaluation(scope, [], wait)
      : undefined;
  return validateRequirements(scope, evidence, {
    task,
    run: latest,
    ...(evaluated ? { passingOnBaseCode: evaluated.result.passing_on_base_code } : {}),
  });
}
