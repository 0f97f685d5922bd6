import { linesOf } from './layout-task.js';

/** A Go assertion helper the base tests call: `check.Equal(t, got, want)` fails the test. */
export const GO_CHECK = linesOf(
  'package check',
  '',
  'import "testing"',
  '',
  'func Equal(t *testing.T, got, want string) {',
  '\tt.Helper()',
  '\tif got != want {',
  '\t\tt.Fatalf("got %q, want %q", got, want)',
  '\t}',
  '}',
);
