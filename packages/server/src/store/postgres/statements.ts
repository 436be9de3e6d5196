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

/** The most asks one batched statement carries; a larger batch goes as several. */
export const largestBatch = 32;

/**
 * The asks of a batched lookup as a VALUES list aliased `q`, with the parameters `$1`... each cast to its column's
 * type: `columns` names them, `types` types them. Why not one array parameter: PostgreSQL plans a prepared statement
 * for an array of unknown length as if it held ten elements, which makes a custom plan (a millisecond of planning, at
 * every execution) look cheaper than the generic one; a list of known length is planned once. The list is padded
 * with rows of nulls to a power of two, so a few shapes serve every batch.
 */
export function askedRows(asks: number, columns: readonly string[], types: readonly string[]): { sql: string; padding: number } {
  let size = 1;
  while (size < asks) size *= 2;
  const rows = Array.from({ length: size }, (_, row) => `(${types.map((type, column) => `$${row * types.length + column + 1}::${type}`).join(', ')})`);
  return { sql: `(VALUES ${rows.join(', ')}) AS q(${columns.join(', ')})`, padding: (size - asks) * types.length };
}
