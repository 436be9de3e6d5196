// Which declared answers (operation, status) of openapi/openapi.yaml the contract suite exercised, per target, from
// the record test/contract/contract.test.ts writes. Exits 1 when a declared answer was neither exercised on a target
// nor listed in test/contract/not-applicable.ts, or when a listed one was exercised after all; 2 when the record is
// missing or unreadable.
//
//   tsx scripts/contract-coverage.ts [record]   (default .tmp/contract-coverage.json)
import SwaggerParser from '@apidevtools/swagger-parser';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { listOperations } from './lib/openapi-operations.js';
import { openapiPath, repoRoot } from './lib/paths.js';
import { answersNotApplicable } from '../test/contract/not-applicable.js';

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
  const hits = (t: Target, op: string, status: string) =>
    record.targets[t].exercised.filter((e) => e.operationId === op && String(e.status) === status).length;
  const excepted = (t: Target, op: string, status: string) =>
    answersNotApplicable.find((a) => a.target === t && String(a.status) === status && (a.operations === undefined || a.operations.includes(op)));

  const rows: string[][] = [['operation', 'request', 'status', ...targets]];
  const problems: string[] = [];
  const totals = Object.fromEntries(targets.map((t) => [t, { exercised: 0, excepted: 0 }])) as Record<Target, { exercised: number; excepted: number }>;
  let answers = 0;
  for (const op of operations) {
    op.responses.forEach((response, i) => {
      answers++;
      const cells = targets.map((t) => {
        const n = hits(t, op.operationId, response.status);
        const exception = excepted(t, op.operationId, response.status);
        const where = `${t}: ${op.operationId} ${response.status} (${op.method} ${op.path})`;
        if (n > 0 && exception) problems.push(`${where} is exercised, but not-applicable.ts says it cannot be: ${exception.reason}`);
        if (n === 0 && !exception) problems.push(`${where} is neither exercised nor listed as not applicable`);
        if (n > 0) totals[t].exercised++;
        else if (exception) totals[t].excepted++;
        return n > 0 ? `✓ ${n}` : exception ? 'n/a' : '-';
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
    console.log(`${t.padEnd(6)}  declared answers exercised ${pct(totals[t].exercised, answers)}, not applicable ${totals[t].excepted}`);
  }
  for (const a of answersNotApplicable) console.log(`not applicable on ${a.target}: ${a.status} of ${a.operations?.join(', ') ?? 'every operation'}: ${a.reason}`);
  for (const t of targets) {
    for (const n of record.targets[t].notApplicable ?? []) {
      // Those an answer-level exception explains were listed with it above.
      if (!excepted(t, n.operationId, String(n.status))) console.log(`case not run on ${t}: "${n.case}": ${n.reason}`);
    }
  }
  if (problems.length > 0) {
    console.error(`\n${problems.join('\n')}`);
    return 1;
  }
  return 0;
}

process.exitCode = await main();
