import path from 'node:path';
import {
  autobuildStatus,
  OUTCOME_EXIT_CODES,
  readDriverSettings,
  runAutobuild,
  runFeature,
  type DriverSettings,
} from '../autobuild/driver.js';
import { readDriverValidation } from '../autobuild/validation.js';
import { CallerError } from '../errors/errors.js';
import { assertWorkTreeRoot } from '../repo/git.js';
import { assertTaskId } from '../tasks/task-id.js';
import { pathExists } from '../records/files.js';
import { parseOptions, type Print } from './options.js';

export const AUTOBUILD_USAGE = `  coachgate autobuild --task ID --player-cmd CMD --coach-cmd CMD [--max-turns N] [--auto-merge]
                      [--agent-timeout SECONDS] [--worktree REPO] [--plan FILE --validator-cmd CMD]
                      [--no-sandbox-player]
                                                   run the Player/Coach loop in .guardkit/worktrees/ID
                                                   with a fresh agent process per turn; exit 0 approved,
                                                   1 blocked, 3 max turns, 4 no verdict, 5 not merged,
                                                   6 validation failed (plan meta.validation). The
                                                   Player runs sandboxed (--sandbox-player, default)
                                                   and reaches coachgate at $COACHGATE_MCP_URL
  coachgate autobuild feature FEAT-ID --player-cmd CMD --coach-cmd CMD --auto-merge [...]
                                                   the feature's tasks wave by wave; stops at the first
                                                   task that is not approved (its exit code); the
                                                   feature file is the plan unless --plan is given
  coachgate autobuild status --task ID [--worktree REPO]
  coachgate autobuild resume --task ID [--worktree REPO] [--sandbox-player|--no-sandbox-player]
                                                   continue an interrupted run from its records`;

const DEFAULT_MAX_TURNS = 5;
const DEFAULT_AGENT_TIMEOUT_S = 1800;

export async function autobuildCommand(args: string[], print: Print): Promise<number> {
  const options = {
    task: { type: 'string' },
    worktree: { type: 'string' },
    'player-cmd': { type: 'string' },
    'coach-cmd': { type: 'string' },
    'max-turns': { type: 'string' },
    'agent-timeout': { type: 'string' },
    'auto-merge': { type: 'boolean' },
    plan: { type: 'string' },
    'validator-cmd': { type: 'string' },
    'sandbox-player': { type: 'boolean' },
    'no-sandbox-player': { type: 'boolean' },
  } as const;
  const { values, positionals } = parseOptions(args, options);
  const [action = 'run', featureId] = positionals;
  if (action === 'feature' && !featureId)
    throw new CallerError(
      'autobuild feature needs a feature id, e.g. coachgate autobuild feature FEAT-001 ...',
    );
  if (!values.task && action !== 'feature') throw new CallerError('autobuild needs --task ID');
  const repository = path.resolve(values.worktree ?? '.');
  // Before status and resume read records there: a missing path is no "no run to resume".
  await assertWorkTreeRoot(repository);
  if (action === 'status') {
    print((await autobuildStatus(repository, values.task!)).join('\n'));
    return 0;
  }
  const sandboxPlayer = sandboxPlayerFlag(values['sandbox-player'], values['no-sandbox-player']);
  let settings: DriverSettings;
  if (action === 'resume')
    settings = {
      ...(await readDriverSettings(repository, values.task!)),
      ...(sandboxPlayer === undefined ? {} : { sandbox_player: sandboxPlayer }),
    };
  else if (action === 'run' || action === 'feature') {
    if (!values['player-cmd'] || !values['coach-cmd'])
      throw new CallerError(
        'autobuild needs --player-cmd CMD and --coach-cmd CMD',
        'e.g. --player-cmd \'claude -p "$(cat "$COACHGATE_PROMPT_FILE")"\'',
      );
    const featurePlan =
      action === 'feature'
        ? path.join(repository, '.guardkit', 'features', `${assertTaskId(featureId!)}.yaml`)
        : undefined;
    // A missing feature file is reported by the feature run itself, in its own words.
    const plan =
      values.plan ?? (featurePlan && (await pathExists(featurePlan)) ? featurePlan : undefined);
    const validation = plan ? await readDriverValidation(plan, values['validator-cmd']) : null;
    if (!plan && values['validator-cmd'])
      throw new CallerError(
        '--validator-cmd needs --plan FILE: the plan whose meta.validation says what to run.',
      );
    settings = {
      ...(validation ? { validation } : {}),
      player_cmd: values['player-cmd'],
      coach_cmd: values['coach-cmd'],
      max_turns: positiveInteger(values['max-turns'], '--max-turns', DEFAULT_MAX_TURNS),
      auto_merge: values['auto-merge'] === true,
      sandbox_player: sandboxPlayer ?? true,
      agent_timeout_s: positiveInteger(
        values['agent-timeout'],
        '--agent-timeout',
        DEFAULT_AGENT_TIMEOUT_S,
      ),
    };
  } else
    throw new CallerError(
      `autobuild takes feature, status or resume, not ${JSON.stringify(action)}`,
    );
  // Ctrl-C kills the running agent's process tree; the records let `resume` pick up from there.
  const abort = new AbortController();
  const onInterrupt = () => abort.abort();
  process.once('SIGINT', onInterrupt);
  try {
    if (action === 'feature') {
      const results = await runFeature(repository, featureId!, settings, print, abort.signal);
      const last = results.at(-1);
      print(
        `AutoBuild feature ${featureId}: ${results.filter((result) => result.outcome === 'approved').length} task(s) approved${last && last.outcome !== 'approved' ? `, stopped at ${last.task_id} (${last.outcome})` : ''}`,
      );
      return last ? OUTCOME_EXIT_CODES[last.outcome] : 0;
    }
    const result = await runAutobuild(repository, values.task!, settings, print, abort.signal);
    print(
      `AutoBuild ${result.outcome.toUpperCase()} after ${result.turns} turn(s): ${result.detail}`,
    );
    return OUTCOME_EXIT_CODES[result.outcome];
  } finally {
    process.off('SIGINT', onInterrupt);
  }
}

/** `--sandbox-player` / `--no-sandbox-player`; undefined when neither is given. */
function sandboxPlayerFlag(on?: boolean, off?: boolean): boolean | undefined {
  if (on && off) throw new CallerError('Pass --sandbox-player or --no-sandbox-player, not both.');
  return off ? false : on ? true : undefined;
}

function positiveInteger(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1)
    throw new CallerError(`${name} must be a positive whole number, not ${JSON.stringify(value)}`);
  return parsed;
}
