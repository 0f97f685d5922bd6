import { describe, expect, it } from 'vitest';
import { rustTestModules } from '../../src/analysis/rust-test-modules.js';

describe('rustTestModules', () => {
  it('finds #[cfg(test)] mod files, #![cfg(test)] files and the modules they declare', () => {
    const sources = new Map([
      [
        'src/lib.rs',
        [
          'pub mod shapes;',
          '// #[cfg(test)] mod commented;',
          'const GLOB: &str = "/* not a comment";',
          '#[cfg(test)]',
          'mod tests;',
          '#[cfg(all(test, feature = "slow"))]',
          '#[path = "extra_checks.rs"]',
          'mod extra;',
          'mod marked;',
        ].join('\n'),
      ],
      ['src/tests.rs', 'use super::*;\nmod helpers;\n#[test]\nfn t() {}\n'],
      ['src/tests/helpers.rs', 'pub fn h() {}\n'],
      ['src/extra_checks.rs', ''],
      ['src/commented.rs', ''],
      ['src/shapes.rs', '#[cfg(test)]\npub(crate) mod unit;\n#[cfg(not(test))]\nmod real;\n'],
      ['src/shapes/unit/mod.rs', ''],
      ['src/shapes/real.rs', ''],
      ['src/marked.rs', '//! Unit tests.\n#![allow(dead_code)]\n#![cfg(test)]\nfn x() {}\n'],
      ['src/later.rs', "fn f<'a>(x: &'a str) {}\n#![cfg(test)]\n"],
    ]);
    expect(rustTestModules(sources).sort()).toEqual([
      'src/extra_checks.rs',
      'src/marked.rs',
      'src/shapes/unit/mod.rs',
      'src/tests.rs',
      'src/tests/helpers.rs',
    ]);
  });
});
