import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/test-helpers.ts'],
  format: ['esm', 'cjs'],
  // Shared modules go to chunks of their own in both formats, so that each error class exists once and an error the
  // test helpers throw is an instance of the class the main entry exports (esbuild splits only ESM unless asked).
  splitting: true,
  // Rollup then writes the CommonJS chunks. Without it tsup converts esbuild's ESM chunks with sucrase, whose source
  // maps list the intermediate file by its absolute path on the build machine, without its content.
  treeshake: true,
  dts: true,
  sourcemap: true,
  // Never emptied: a server started from this checkout may load a chunk of the SDK after a rebuild. Outputs nothing
  // imports any more stay until the pack removes them (scripts/build-for-pack.mjs).
  clean: false,
  target: 'es2022',
  platform: 'neutral',
});
