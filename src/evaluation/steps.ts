/**
 * The steps of one call: which are in progress (progress messages and task status name them) and
 * the seconds spent in each (record_verdict's `timings`), so a slow turn says where it waited.
 * Steps may overlap (the trusted runs go side by side): their seconds do not add up to the call's.
 */
export const STEP = {
  candidate: 'candidate run',
  baseline: 'baseline run: base tests on the base code',
  trusted: "trusted run: base tests on the Player's code",
  failToPass: "fail-to-pass run: the Player's tests on the base code",
  newTests: "new-tests run: the Player's added tests apart",
  snapshots: 'snapshots',
  environment: 'environment check',
  git: 'git',
  integrity: 'integrity',
  requirements: 'requirements',
  gates: 'quality gates',
  records: 'records',
  /** The trusted runs this call started, from their start to their end; each run is a step too. */
  trustedRuns: 'trusted runs, side by side',
  /** Runs the candidate run started: the time this call waited for them. */
  earlyRuns: 'waiting for the trusted runs started with the candidate run',
} as const;

interface Active {
  name: string;
  /** Steps this one waits on, named instead of it while they are in progress. */
  inner?: Steps;
}

export class Steps {
  private readonly spentMs = new Map<string, number>();
  private readonly active = new Set<Active>();

  /** Runs `work` as the step `name`; while `inner` has steps in progress, they are named instead. */
  async time<T>(name: string, work: () => Promise<T>, inner?: Steps): Promise<T> {
    const entry: Active = { name, ...(inner ? { inner } : {}) };
    this.active.add(entry);
    const started = performance.now();
    try {
      return await work();
    } finally {
      this.active.delete(entry);
      this.add(name, performance.now() - started);
    }
  }

  /** Counts another call's steps as this one's (trusted runs this call started and waited for). */
  addAll(other: Steps): void {
    for (const [name, ms] of other.spentMs) this.add(name, ms);
  }

  inProgress(): string[] {
    const names = [...this.active].flatMap((entry) => {
      const inner = entry.inner?.inProgress() ?? [];
      return inner.length > 0 ? inner : [entry.name];
    });
    return [...new Set(names)];
  }

  /** Seconds per step, to the hundredth. */
  seconds(): Record<string, number> {
    return Object.fromEntries(
      [...this.spentMs].map(([name, ms]) => [name, Math.round(ms / 10) / 100]),
    );
  }

  private add(name: string, ms: number): void {
    this.spentMs.set(name, (this.spentMs.get(name) ?? 0) + ms);
  }
}

/** `work` timed as `name` when there are steps to count, else simply awaited. */
export function timed<T>(
  steps: Steps | undefined,
  name: string,
  work: () => Promise<T>,
  inner?: Steps,
): Promise<T> {
  return steps ? steps.time(name, work, inner) : work();
}
