import { defineConfig } from 'vitest/config';

// Two projects: `unit` (pure functions, store on :memory:, API through app.request()) runs in parallel;
// `integration` needs the real Docker engine and Caddy, shares one engine, and runs file by file.
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
    ],
  },
});
