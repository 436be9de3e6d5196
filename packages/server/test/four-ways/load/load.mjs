const entries = ['@tokenbell/server', '@tokenbell/server/testing', '@tokenbell/server/vitest', '@tokenbell/server/playwright', '@tokenbell/server/jest', '@tokenbell/server/jest/teardown', '@tokenbell/sdk', '@tokenbell/sdk/test-helpers'];
const loaded = {};
for (const name of entries) loaded[name] = Object.keys(await import(name)).sort();
console.log(JSON.stringify(loaded));
