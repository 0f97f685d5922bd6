import { yaml } from '../config/yaml.js';
import { CallerError } from '../errors/errors.js';

export interface AcceptanceCriterion {
  id: string;
  text: string;
  checked: boolean;
}

export interface TaskDocument {
  id?: string;
  title: string;
  status: string;
  task_type: string;
  dependencies: string[];
  acceptance_criteria: AcceptanceCriterion[];
  /** The whole file text: the requirements contract both agents share. */
  requirements: string;
}

const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;
const CHECKBOX = /^\s*[-*+]\s+\[([ xX])\]\s?(.*)$/;
const CRITERION_ID =
  /^(?:\*\*|__)?(AC-[A-Za-z0-9._-]+?)(?:\*\*|__)?\s*[:.)\-–—]?\s*(?:\*\*|__)?\s+/;

/** Parses a GuardKit task file: YAML front matter plus a `## Acceptance Criteria` checklist. */
export function parseTaskMarkdown(text: string, source: string): TaskDocument {
  const match = FRONT_MATTER.exec(text);
  let meta: Record<string, unknown> = {};
  if (match) {
    let parsed: unknown;
    try {
      parsed = yaml().parse(match[1]!);
    } catch (error) {
      throw new CallerError(
        `${source}: the YAML front matter does not parse: ${(error as Error).message.split('\n')[0]}.`,
        'Fix the front matter between the --- lines.',
      );
    }
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      meta = parsed as Record<string, unknown>;
  }
  const body = match ? text.slice(match[0].length) : text;
  return {
    id: stringField(meta.id),
    title: stringField(meta.title) ?? firstHeading(body) ?? '',
    status: stringField(meta.status) ?? 'unknown',
    task_type: stringField(meta.task_type) ?? 'feature',
    dependencies: listField(meta.depends_on ?? meta.dependencies),
    acceptance_criteria: parseAcceptanceCriteria(body),
    requirements: text,
  };
}

/** The checklist items under `## Acceptance Criteria`; continuation lines belong to the item above. */
export function parseAcceptanceCriteria(body: string): AcceptanceCriterion[] {
  const lines = body.split(/\r?\n/);
  const start = lines.findIndex((line) => /^#{2,3}\s+acceptance criteria\b/i.test(line.trim()));
  if (start < 0) return [];
  const items: { checked: boolean; lines: string[] }[] = [];
  for (const line of lines.slice(start + 1)) {
    if (/^#{1,3}\s/.test(line)) break;
    const box = CHECKBOX.exec(line);
    if (box) {
      items.push({ checked: box[1] !== ' ', lines: [box[2]!.trim()] });
    } else if (
      items.length > 0 &&
      line.trim() !== '' &&
      /^\s+\S/.test(line) &&
      !/^\s*[-*+]\s/.test(line)
    ) {
      items.at(-1)!.lines.push(line.trim());
    }
  }
  return items.map((item, index) => {
    // Continuation lines join with one space; spaces inside a line are the criterion's own.
    const joined = item.lines.join(' ').trim();
    const marker = CRITERION_ID.exec(joined);
    return {
      id: marker ? marker[1]! : `AC-${String(index + 1).padStart(3, '0')}`,
      text: marker ? joined.slice(marker[0].length).trim() : joined,
      checked: item.checked,
    };
  });
}

function stringField(value: unknown): string | undefined {
  if (typeof value === 'string' && value.trim() !== '') return value.trim();
  if (typeof value === 'number') return String(value);
  return undefined;
}

function listField(value: unknown): string[] {
  if (Array.isArray(value)) return value.map((item) => String(item).trim()).filter(Boolean);
  if (typeof value === 'string')
    return value
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
  return [];
}

function firstHeading(body: string): string | undefined {
  return /^#\s+(.+)$/m.exec(body)?.[1]?.trim();
}
