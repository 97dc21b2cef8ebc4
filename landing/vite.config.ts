/// <reference types="vitest/config" />
import { vitePlugin as remix } from '@remix-run/dev';
import { defineConfig } from 'vite';

declare module '@remix-run/node' {
  interface Future {
    v3_singleFetch: true;
  }
}

export default defineConfig({
  plugins: [
    !process.env.VITEST &&
      remix({
        future: {
          v3_fetcherPersist: true,
          v3_relativeSplatPath: true,
          v3_throwAbortReason: true,
          v3_singleFetch: true,
          v3_lazyRouteDiscovery: true,
        },
      }),
  ],
  // Declared up front: otherwise, on a fresh machine, Vite discovers these on the first page load and reloads it.
  optimizeDeps: {
    include: [
      '@remix-run/node',
      '@remix-run/react',
      'react',
      'react-dom',
      'react-dom/client',
      'react/jsx-runtime',
      'react/jsx-dev-runtime',
      // What the browser reaches through @stickers/shared (a linked workspace, so Vite reads its source).
      'libphonenumber-js/min',
      'proxy-addr',
    ],
  },
  resolve: { alias: { '~': new URL('./app', import.meta.url).pathname } },
  server: { port: Number(process.env.PORT ?? 3001) },
  test: {
    include: ['app/**/*.test.ts', 'test/**/*.test.ts'],
    setupFiles: ['test/spool-setup.ts'],
    testTimeout: 20000,
    // Four files at a time even on two cores: most of their time is spent waiting on real timers and sockets (the
    // spool's replays, the landing's HTTP), so the suite takes about 17 s instead of 40 s.
    maxWorkers: 4,
    minWorkers: 4,
  },
});
