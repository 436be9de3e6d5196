// Which operations and response codes of openapi/openapi.yaml the contract suite exercised, per target, from the
// record test/contract/contract.test.ts writes. Exits 1 when an operation was exercised by no case against the
// reference server, 2 when the record is missing or unreadable.
//
//   tsx scripts/contract-coverage.ts [record]   (default .tmp/contract-coverage.json)
import SwaggerParser from '@apidevtools/swagger-parser';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { listOperations } from './lib/openapi-operations.js';
import { openapiPath, repoRoot } from './lib/paths.js';

export const targets = ['server', 'mock', 'proxy'] as const;
export type Target = (typeof targets)[number];

export interface CoverageEntry {
  operationId: string;
  status: number;
  case: string;
}
export interface CoverageRecord {
  targets: Record<Target, { exercised: CoverageEntry[]; notApplicable: (CoverageEntry & { reason: string })[] }>;
}

const recordPath = resolve(repoRoot, process.argv[2] ?? '.tmp/contract-coverage.json');

async function main(): Promise<number> {
  let record: CoverageRecord;
  try {
    record = JSON.parse(await readFile(recordPath, 'utf8')) as CoverageRecord;
    for (const t of targets) if (!Array.isArray(record.targets?.[t]?.exercised)) throw new Error(`no "${t}" target in the record`);
  } catch (error) {
    console.error(`contract-coverage: cannot read ${recordPath}: ${(error as Error).message}\nRun the contract suite first: npx vitest run test/contract`);
    return 2;
  }
  const operations = listOperations((await SwaggerParser.dereference(openapiPath)) as Record<string, unknown>);
  const hits = (t: Target, op: string, status?: string) =>
    record.targets[t].exercised.filter((e) => e.operationId === op && (status === undefined || String(e.status) === status)).length;

  const rows: string[][] = [['operation', 'request', 'status', ...targets]];
  const uncovered: string[] = [];
  const totals = Object.fromEntries(targets.map((t) => [t, { operations: 0, codes: 0 }])) as Record<Target, { operations: number; codes: number }>;
  let codes = 0;
  for (const op of operations) {
    for (const t of targets) if (hits(t, op.operationId) > 0) totals[t].operations++;
    if (hits('server', op.operationId) === 0) uncovered.push(`${op.operationId} (${op.method} ${op.path})`);
    op.responses.forEach((response, i) => {
      codes++;
      const cells = targets.map((t) => {
        const n = hits(t, op.operationId, response.status);
        if (n > 0) totals[t].codes++;
        return n > 0 ? `✓ ${n}` : '-';
      });
      rows.push([i === 0 ? op.operationId : '', i === 0 ? `${op.method} ${op.path}` : '', response.status, ...cells]);
    });
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const line = (r: string[]) => `| ${r.map((cell, c) => cell.padEnd(widths[c]!)).join(' | ')} |`;
  console.log(line(rows[0]!));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows.slice(1)) console.log(line(r));
  console.log('');
  const pct = (n: number, of: number) => `${n}/${of} (${Math.round((100 * n) / of)}%)`;
  for (const t of targets) {
    console.log(`${t.padEnd(6)}  operations ${pct(totals[t].operations, operations.length)}, response codes ${pct(totals[t].codes, codes)}`);
  }
  for (const t of targets) {
    for (const n of record.targets[t].notApplicable ?? []) console.log(`not applicable on ${t}: ${n.operationId} ${n.status} "${n.case}": ${n.reason}`);
  }
  if (uncovered.length > 0) {
    console.error(`\nNo case exercises these operations against the reference server:\n  ${uncovered.join('\n  ')}`);
    return 1;
  }
  return 0;
}

process.exitCode = await main();
