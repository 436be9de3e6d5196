import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The SDK must run unchanged in browsers, Deno, Bun and Node, so src may rely on Web APIs only.
const src = fileURLToPath(new URL('../src', import.meta.url));
const files = readdirSync(src, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts'))
  .map((f) => join(src, f));
const builtins = new Set(builtinModules.flatMap((m) => [m, m.split('/')[0]!]));
const specifier = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"]([^'"]+)['"]/g;

describe('portability of src/', () => {
  it('has source files to check', () => {
    expect(files.length).toBeGreaterThanOrEqual(5);
  });

  it.each(files.map((f) => [relative(src, f), f]))('%s imports no Node built-ins and uses no Node globals', (_name, file) => {
    const text = readFileSync(file, 'utf8');
    const imported = [...text.matchAll(specifier)].map((m) => m[1]!);
    expect(imported.filter((s) => s.startsWith('node:') || builtins.has(s))).toEqual([]);
    expect(text).not.toMatch(/\brequire\s*\(/);
    expect(text).not.toMatch(/\b(?:Buffer|process|__dirname|__filename)\b/);
  });

  // jose (Web Crypto, no Node built-ins) verifies id_tokens, imported by the OpenID Connect helpers alone.
  it('depends on openapi-fetch and jose only at run time', () => {
    const runtime = files.flatMap((f) =>
      [...readFileSync(f, 'utf8').matchAll(/^import\s+(?!type\b)[^;]*?from\s*['"]([^'"]+)['"]/gm)].map((m) => m[1]!),
    );
    // jose only when an id_token is verified (openid.ts), so that a CommonJS loader without ES modules can require the SDK.
    const deferred = files.flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/\bimport\(['"]([^'"]+)['"]\)/g)].map((m) => m[1]!));
    expect(new Set(runtime.filter((s) => !s.startsWith('.')))).toEqual(new Set(['openapi-fetch']));
    expect(new Set(deferred)).toEqual(new Set(['jose']));
  });
});
