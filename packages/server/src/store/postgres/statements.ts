// The hot statements as named (prepared) ones: PostgreSQL parses and plans each once per connection instead of on
// every request, which on a busy small machine is a good part of a short query's cost.
const names = new Map<string, string>();

/** A query config naming `text`, the same name for the same text. */
export function statement(text: string, values: unknown[]): { name: string; text: string; values: unknown[] } {
  let name = names.get(text);
  if (name === undefined) {
    name = `tokenbell_${names.size + 1}`;
    names.set(text, name);
  }
  return { name, text, values };
}
