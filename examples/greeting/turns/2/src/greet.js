/** Greets a person by name, ignoring spaces around it. */
export function greet(name) {
  const trimmed = typeof name === 'string' ? name.trim() : '';
  if (trimmed === '') {
    throw new TypeError('name is required');
  }
  return `Hello, ${trimmed}!`;
}
