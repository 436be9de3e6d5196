const entries = ['@tokenbell/server', '@tokenbell/server/testing', '@tokenbell/server/vitest', '@tokenbell/server/playwright', '@tokenbell/server/jest', '@tokenbell/server/jest/teardown', '@tokenbell/sdk', '@tokenbell/sdk/test-helpers'];
const loaded = {};
for (const name of entries) {
  const m = require(name);
  loaded[name] = Object.keys(m).sort();
  if (typeof m === 'function') loaded[name] = ['(function)', ...loaded[name]];
}
console.log(JSON.stringify(loaded));
