// How the build writes into a dist/ that a server may be running from (npm start in another terminal): a file whose
// content is already right is left alone, and one that changes is written beside it and renamed over it, so a reader
// sees the old file or the new one, never half of one.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

/** Writes `content` to `file` unless it holds it already; says whether it wrote. */
export function update(file, content) {
  const bytes = Buffer.from(content);
  if (existsSync(file) && readFileSync(file).equals(bytes)) return false;
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, bytes);
  renameSync(temporary, file);
  return true;
}
