/**
 * Turns task trackers' files (given as text, never read here) into the dependency edges that
 * `analyzeGraph` takes. Anything that cannot be read is reported in `problems` instead of being dropped
 * silently, because a skipped line could hide exactly the cycle the caller is looking for.
 */
import { yaml } from '../config/yaml.js';
import type { DependencyEdge } from './graph.js';

export interface GraphSource {
  /** Ids the source defines; edges to anything else come out of `analyzeGraph` as dangling. */
  nodes: string[];
  edges: DependencyEdge[];
  problems: string[];
}

/** Beads dependency types that hold work back; `related` and `discovered-from` are only links. */
export const BLOCKING_BEADS_TYPES: readonly string[] = ['blocks', 'parent-child'];

/**
 * `.beads/issues.jsonl` or `bd export` output: one issue per line, `{id, dependencies: [{issue_id?,
 * depends_on_id, type}]}`. `issue_id` (default: the line's `id`) depends on `depends_on_id`. Only
 * dependencies whose type is in `edgeTypes` become edges. Export lines of another `_type` (e.g. "memory")
 * are not issues and are skipped.
 */
export function edgesFromBeads(
  jsonlText: string,
  edgeTypes: readonly string[] = BLOCKING_BEADS_TYPES,
): GraphSource {
  const counted = new Set(edgeTypes);
  const source = new SourceBuilder();
  jsonlText.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === '') return;
    const where = `line ${index + 1}`;
    const issue = parseJson(line);
    if (issue instanceof Error) return source.problem(where, `not valid JSON (${issue.message})`);
    if (!isRecord(issue)) return source.problem(where, 'not a JSON object');
    if (issue._type !== undefined && issue._type !== 'issue') return;
    const id = issue.id;
    if (!isId(id)) return source.problem(where, 'issue has no string "id"');
    source.node(where, id);

    const dependencies = issue.dependencies ?? [];
    if (!Array.isArray(dependencies))
      return source.problem(where, '"dependencies" is not an array');
    dependencies.forEach((dependency: unknown, position) => {
      const at = `${where}: dependencies[${position}]`;
      if (!isRecord(dependency)) return source.problem(at, 'not an object');
      const dependent = dependency.issue_id ?? id;
      if (!isId(dependent)) return source.problem(at, '"issue_id" is not a string');
      if (!isId(dependency.depends_on_id)) return source.problem(at, 'no string "depends_on_id"');
      if (typeof dependency.type !== 'string') return source.problem(at, 'no string "type"');
      if (!counted.has(dependency.type)) return;
      source.edge(dependent, dependency.depends_on_id, dependency.type);
    });
  });
  return source.build();
}

/** GuardKit `.guardkit/features/<FEAT>.yaml`: `tasks: [{id, dependencies: [...]}]`. */
export function edgesFromFeature(yamlText: string): GraphSource {
  const source = new SourceBuilder();
  const document = yaml().parseDocument(yamlText);
  for (const error of document.errors)
    source.problem('feature file', `not valid YAML (${firstLine(error.message)})`);
  if (document.errors.length > 0) return source.build();
  let feature: unknown;
  try {
    feature = document.toJS();
  } catch (error) {
    // An alias bomb: yaml stops expanding past its alias-count bound, and says so.
    source.problem('feature file', `cannot be expanded (${firstLine((error as Error).message)})`);
    return source.build();
  }
  if (!isRecord(feature) || !Array.isArray(feature.tasks)) {
    source.problem('feature file', 'has no "tasks" list');
    return source.build();
  }
  addTasks(source, feature.tasks);
  return source.build();
}

/** Already-parsed task front matter (`id` plus the ids it depends on). */
export function edgesFromTasks(tasks: { id: string; dependencies: string[] }[]): GraphSource {
  const source = new SourceBuilder();
  addTasks(source, tasks);
  return source.build();
}

function addTasks(source: SourceBuilder, tasks: unknown[]): void {
  tasks.forEach((task, index) => {
    const where = `tasks[${index}]`;
    if (!isRecord(task)) return source.problem(where, 'not an object');
    const id = task.id;
    if (!isId(id)) return source.problem(where, 'task has no string "id"');
    source.node(where, id);
    const dependencies = task.dependencies ?? [];
    if (!Array.isArray(dependencies))
      return source.problem(where, `"dependencies" of ${id} is not a list`);
    dependencies.forEach((dependency: unknown, position) => {
      if (!isId(dependency))
        return source.problem(`${where}.dependencies[${position}]`, 'not a string id');
      source.edge(id, dependency);
    });
  });
}

class SourceBuilder {
  private readonly firstSeen = new Map<string, string>();
  private readonly edges: DependencyEdge[] = [];
  private readonly problems: string[] = [];

  node(where: string, id: string): void {
    const earlier = this.firstSeen.get(id);
    if (earlier === undefined) this.firstSeen.set(id, where);
    else
      this.problem(
        where,
        `duplicate id ${id} (first defined at ${earlier}); dependencies of both are used`,
      );
  }

  edge(from: string, to: string, type?: string): void {
    this.edges.push(type === undefined ? { from, to } : { from, to, type });
  }

  problem(where: string, reason: string): void {
    this.problems.push(`${where}: ${reason}`);
  }

  build(): GraphSource {
    return { nodes: [...this.firstSeen.keys()], edges: this.edges, problems: this.problems };
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    return error as Error;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isId(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

/** yaml's messages continue with a multi-line excerpt of the file; the first line names the position. */
function firstLine(message: string): string {
  return (message.split('\n', 1)[0] ?? message).replace(/:$/, '');
}
