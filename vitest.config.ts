import { defineConfig } from 'vitest/config';

// Three projects: `unit` (pure functions, store on :memory:, API through app.request()) runs in parallel;
// `integration` needs the real Docker engine and Caddy, shares one engine, and runs file by file;
// `journeys` (issue 35) are long scenarios across every feature, one daemon per file, same engine rules.
export default defineConfig({
  test: {
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 20_000 },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          fileParallelism: false,
          testTimeout: 180_000,
          hookTimeout: 600_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'journeys',
          include: ['test/journeys/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          fileParallelism: false,
          testTimeout: 300_000,
          hookTimeout: 600_000,
        },
      },
    ],
  },
});
