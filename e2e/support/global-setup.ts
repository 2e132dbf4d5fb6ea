import fs from 'node:fs';
import type { TestProject } from 'vitest/node';
import { type RunningServer, startServer, stopServer, tempDir } from './server';

declare module 'vitest' {
  export interface ProvidedContext {
    baseUrl: string;
    demoEmail: string;
    demoPassword: string;
    /** The running server's DATA_DIR, so a test can read the development outbox with the admin CLI. */
    dataDir: string;
  }
}

export const DEMO_PASSWORD = 'e2e-demo-pass';

/** One real `npm start` on an empty data directory serves the browser tests. */
export default async function setup(project: TestProject) {
  const dataDir = tempDir('e2e-data');
  let server: RunningServer | undefined;
  try {
    server = await startServer(
      { DATA_DIR: dataDir, DEMO_PASSWORD },
      { command: 'npm-start', timeoutMs: 180_000 },
    );
  } catch (err) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  project.provide('baseUrl', server.url);
  project.provide('demoEmail', 'demo@example.com');
  project.provide('demoPassword', DEMO_PASSWORD);
  project.provide('dataDir', dataDir);
  return async () => {
    if (server) await stopServer(server);
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
}
