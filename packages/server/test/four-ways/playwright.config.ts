import { defineConfig } from '@playwright/test';

// The tokenbell fixture needs no browser: the suite uses Playwright's `request`. tokenbellOptions could be set in
// `use`; without them the fixture takes tokenbell.seed.json from the working directory.
export default defineConfig({ testDir: 'playwright', reporter: 'list', workers: 1 });
