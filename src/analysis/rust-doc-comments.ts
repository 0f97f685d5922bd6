import { attributeGroup } from '../scope/rust-test-blocks.js';

/**
 * rustdoc runs the code blocks of a library's doc comments as doctests. For the fail-to-pass run
 * ("your tests on the base code"), the Player's doc comments go onto the base's items: the base's
 * text with each item's outer doc comment (`///` lines, `/** … *\/`) replaced by the Player's copy,
 * for the items both have, paired by kind and name (`fn clamp`, `impl Calc`) and occurrence; an item
 * only the Player has gets nothing (its code is not on the base), nor do fields and variants.
 * Undefined when no doc comment holding a code block (```` ``` ````) differs.
 */
export function withDocCommentsOf(base: string, player: string): string | undefined {
  const [baseItems, playerItems] = [documentedItems(base), documentedItems(player)];
  if (!baseItems || !playerItems) return undefined;
  const playerDocs = new Map(playerItems.map((item) => [item.key, docText(player, item)] as const));
  const edits: { start: number; end: number; text: string }[] = [];
  for (const item of baseItems) {
    const docs = playerDocs.get(item.key);
    const current = docText(base, item);
    if (docs === undefined || docs === current || !(docs + current).includes('```')) continue;
    edits.push({ start: item.start, end: item.start, text: docs });
    for (const range of item.docs) edits.push({ ...range, text: '' });
  }
  if (edits.length === 0) return undefined;
  let result = base;
  for (const edit of edits.sort((a, b) => b.start - a.start || b.end - a.end))
    result = result.slice(0, edit.start) + edit.text + result.slice(edit.end);
  return result;
}

interface Item {
  /** Kind and name, with its occurrence among the file's items of that kind and name. */
  key: string;
  /** Where its preamble (doc comments, attributes) starts: the start of its first line. */
  start: number;
  /** The doc comments' lines, each [start, end) with its line end. */
  docs: { start: number; end: number }[];
}

/** An item's kind and name as its first line says (`pub(crate) async fn f` is `fn f`). */
const ITEM_HEADER =
  /^(?:pub(?:\s*\([^)]*\))?\s+)?(?:(?:const|async|unsafe|default|extern(?:\s+"[^"]*")?)\s+)*(fn|struct|enum|trait|type|const|static|mod|union|macro_rules!)\s*(?:r#)?([A-Za-z_]\w*)/;

/**
 * Every item that starts a line, with its doc comments (maybe none). Undefined when a block doc
 * comment nests another comment or shares its last line with code: moved whole lines of it could
 * end it elsewhere or take code along, so the file is not spliced.
 */
function documentedItems(source: string): Item[] | undefined {
  const items: Item[] = [];
  const seen = new Map<string, number>();
  let at = 0;
  while (at < source.length) {
    const lineEnd = endOfLine(source, at);
    const first = at + /^[ \t]*/.exec(source.slice(at, lineEnd))![0].length;
    const unit = preamble(source, at, first);
    if (!unit) return undefined;
    const header = source.slice(unit.header, endOfLine(source, unit.header)).trim();
    const name = itemName(header);
    if (name !== undefined) {
      const count = seen.get(name) ?? 0;
      seen.set(name, count + 1);
      items.push({ key: `${name}#${count}`, start: at, docs: unit.docs });
    }
    at = unit.header > first ? endOfLine(source, unit.header) + 1 : lineEnd + 1;
  }
  return items;
}

/**
 * From a line's first character: its doc comments and attributes, in any order, and where the code
 * they are attached to starts (`first` itself when the line holds neither).
 */
function preamble(source: string, lineStart: number, first: number) {
  const docs: { start: number; end: number }[] = [];
  let at = first;
  let line = lineStart;
  for (;;) {
    if (/^\/\/\/(?!\/)/.test(source.slice(at, at + 4))) {
      const end = Math.min(endOfLine(source, at) + 1, source.length);
      docs.push({ start: line, end });
      at = end;
    } else if (/^\/\*\*(?![*/])/.test(source.slice(at, at + 4))) {
      const close = source.indexOf('*/', at + 3);
      if (close === -1 || source.slice(at + 3, close).includes('/*')) return undefined;
      const lineEnd = endOfLine(source, close);
      if (source.slice(close + 2, lineEnd).trim() !== '') return undefined;
      const end = Math.min(lineEnd + 1, source.length);
      docs.push({ start: line, end });
      at = end;
    } else if (source.startsWith('#[', at)) {
      at = attributeGroup(source, at).end;
    } else break;
    line = at;
    while (/\s/.test(source[at] ?? '')) if (source[at++] === '\n') line = at;
  }
  return { docs, header: at };
}

/** The kind and name an item's first line gives (`fn f`, `impl<T> Calc<T>`); none for other lines. */
function itemName(header: string): string | undefined {
  const item = ITEM_HEADER.exec(header);
  if (item) return `${item[1]} ${item[2]}`;
  if (!/^(?:unsafe\s+)?impl\b/.test(header)) return undefined;
  return header.replace(/\s*(?:\{.*)?$/, '').replace(/\s+/g, ' ');
}

function docText(source: string, item: Item): string {
  return item.docs.map((range) => source.slice(range.start, range.end)).join('');
}

function endOfLine(source: string, from: number): number {
  const end = source.indexOf('\n', from);
  return end === -1 ? source.length : end;
}
