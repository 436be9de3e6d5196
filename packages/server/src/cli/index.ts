#!/usr/bin/env node
// `tokenbell`'s entry: it turns on Node's module compile cache before anything else is imported, so that the
// server's modules and dependencies (main.ts onwards, all imported after this) start from V8's cached code on every
// start but the first. Node has it from 22.8 (module.enableCompileCache); on Node 20 there is nothing to turn on.
// The call itself honours NODE_DISABLE_COMPILE_CACHE=1 and a NODE_COMPILE_CACHE directory.
import module from 'node:module';

(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
await import('./main.js');
