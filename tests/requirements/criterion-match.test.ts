import { describe, expect, it } from 'vitest';
import { matchCriterion } from '../../src/requirements/criterion-match.js';
import { parseTaskMarkdown, type AcceptanceCriterion } from '../../src/tasks/task.js';
import { SAMPLE_TASK } from '../helpers/git-repo.js';

const SAMPLE = parseTaskMarkdown(SAMPLE_TASK, 'TASK-001.md').acceptance_criteria;

function criteria(...texts: string[]): AcceptanceCriterion[] {
  return texts.map((text, index) => ({
    id: `AC-${String(index + 1).padStart(3, '0')}`,
    text,
    checked: false,
  }));
}

const matchedId = (claim: string, list: AcceptanceCriterion[] = SAMPLE) =>
  matchCriterion(claim, list)?.id;

describe('matchCriterion by id', () => {
  it.each([
    'AC-2',
    'AC-002',
    'ac-2',
    'ac2',
    'AC 2',
    'AC_02',
    'AC - 0002',
    '**AC-002**',
    '`AC-002`',
    '[AC-002]',
    '- [x] AC-002',
    '* AC-2',
    'AC-002: empty names raise',
    '**AC-002** Empty names raise',
    'AC-2) done',
  ])('reads %j as AC-002', (claim) => {
    expect(matchedId(claim)).toBe('AC-002');
  });

  it('compares the number as a number, not as a prefix', () => {
    const list = criteria(
      'one',
      'two',
      'three',
      'four',
      'five',
      'six',
      'seven',
      'eight',
      'nine',
      'ten',
    );
    expect(matchedId('AC-1', list)).toBe('AC-001');
    expect(matchedId('AC-10', list)).toBe('AC-010');
    expect(matchedId('AC-0010', list)).toBe('AC-010');
    expect(matchedId('AC-11', list)).toBeUndefined();
  });

  it('needs the same prefix and a number that ends where the id ends', () => {
    expect(matchedId('REQ-1')).toBeUndefined();
    expect(matchedId('AC-1a')).toBeUndefined();
    expect(matchedId('AC-10')).toBeUndefined();
  });

  it('matches explicit ids with dotted or lettered numbers, and ids without a number word for word', () => {
    const list: AcceptanceCriterion[] = [
      { id: 'AC-2.1', text: 'first', checked: false },
      { id: 'AC-3b', text: 'second', checked: false },
      { id: 'AC-setup', text: 'third', checked: false },
    ];
    expect(matchedId('ac-02.1: done', list)).toBe('AC-2.1');
    expect(matchedId('AC-3B', list)).toBe('AC-3b');
    expect(matchedId('**AC-setup**: database ready', list)).toBe('AC-setup');
    expect(matchedId('AC-setups', list)).toBeUndefined();
  });

  it('falls back to the text when the id names no criterion', () => {
    expect(matchedId('AC-009: Empty names raise a ValueError with a helpful message')).toBe(
      'AC-002',
    );
    // Looks like an id ("Python 3") but is ordinary text.
    expect(matchedId('Python 3 support', criteria('Python 3 support is added'))).toBe('AC-001');
  });
});

describe('matchCriterion by text', () => {
  it('ignores case, whitespace, punctuation, checkbox and bullet marks, backticks and bold', () => {
    expect(matchedId('- [x] `greet(name)`   returns "Hello, <name>!"')).toBe('AC-001');
    expect(matchedId('GREET NAME RETURNS HELLO NAME')).toBe('AC-001');
    expect(matchedId('**Tests cover both cases.**')).toBe('AC-003');
    expect(matchedId('1. tests cover both cases')).toBe('AC-003');
  });

  it('matches containment either way, on whole words, when the contained text is specific enough', () => {
    const list = criteria('Empty names raise a ValueError with a helpful message');
    expect(matchedId('empty names raise', list)).toBe('AC-001');
    expect(
      matchedId('Done: empty names raise a ValueError with a helpful message, tested', list),
    ).toBe('AC-001');
    expect(matchedId('ValueError with', list)).toBe('AC-001'); // two words but 15 characters
    expect(matchedId('names raise', list)).toBeUndefined(); // two words, 11 characters
    expect(matchedId('empty name raise', list)).toBeUndefined(); // "name" is not the word "names"
  });

  it('matches by keyword Jaccard from 0.7 up, ignoring stop words', () => {
    const list = criteria(
      'parser accepts nested arrays objects strings numbers booleans nulls comments',
    );
    // 7 shared of 10 distinct keywords = 0.7; the stop words do not count.
    expect(
      matchedId('the comments and the nulls of booleans numbers strings objects arrays', list),
    ).toBe('AC-001');
    // 8 shared of 11 = 0.727.
    expect(
      matchedId('comments nulls booleans numbers strings objects arrays nested dates', list),
    ).toBe('AC-001');
    // 9 shared of 13 = 0.692.
    expect(
      matchedId(
        'comments nulls booleans numbers strings objects arrays nested parser plus dates times',
        list,
      ),
    ).toBeUndefined();
    // 6 shared of 10 = 0.6.
    expect(matchedId('comments nulls booleans numbers strings objects', list)).toBeUndefined();
  });

  it('picks the best Jaccard score, then the first criterion', () => {
    const list = criteria(
      'alpha beta gamma delta epsilon zeta eta theta',
      'alpha beta gamma delta epsilon zeta eta',
      'alpha beta gamma delta epsilon zeta eta',
    );
    expect(matchedId('eta zeta epsilon delta gamma beta alpha', list)).toBe('AC-002');
  });

  it('returns undefined for a blank claim or when there are no criteria', () => {
    expect(matchedId('   ')).toBeUndefined();
    expect(matchedId('- [x] ')).toBeUndefined();
    expect(matchedId('AC-001', [])).toBeUndefined();
  });
});

describe('matchCriterion rule order', () => {
  it('prefers the id over a text that names another criterion', () => {
    expect(matchedId('AC-002: greet(name) returns "Hello, <name>!"')).toBe('AC-002');
  });

  it('prefers text equality over containment, even in a later criterion', () => {
    const list = criteria('greet returns hello for every name', 'greet returns hello');
    expect(matchedId('Greet returns hello.', list)).toBe('AC-002');
  });

  it('prefers containment over keyword overlap, even in a later criterion', () => {
    const list = criteria('delta gamma beta alpha', 'we handle alpha beta gamma delta');
    expect(matchedId('alpha beta gamma delta', list)).toBe('AC-002');
  });

  it('breaks ties by file order', () => {
    expect(matchedId('same text here', criteria('same text here', 'same text here'))).toBe(
      'AC-001',
    );
    expect(
      matchedId(
        'cache is cleared',
        criteria('the cache is cleared on logout', 'the cache is cleared on restart'),
      ),
    ).toBe('AC-001');
  });
});
