import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

export interface PackResult {
  filename: string;
  size: number;
  files: { path: string }[];
}

/**
 * `npm pack --json` of the package in `dir`, its prepack build included. The build's log comes ahead of the JSON on
 * stdout, coloured under CI=true (whose escape sequences hold `[`), so the JSON is found as the line that is a lone `[`.
 */
export async function npmPack(dir: string, destination: string): Promise<PackResult & { file: string }> {
  const { stdout } = await run(npm, ['pack', '--json', '--pack-destination', destination], {
    cwd: dir,
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
  });
  const start = stdout.search(/^\[\s*$/m);
  if (start < 0) throw new Error(`npm pack printed no JSON in ${dir}:\n${stdout.slice(-2000)}`);
  const [pack] = JSON.parse(stdout.slice(start)) as PackResult[];
  return { ...pack!, file: join(destination, pack!.filename) };
}
