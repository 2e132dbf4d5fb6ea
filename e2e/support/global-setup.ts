import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { type RunningServer, repoRoot, startServer, stopServer, tempDir } from './server';
import { freePortRange, PORT_BANDS } from './sipp';

declare module 'vitest' {
  export interface ProvidedContext {
    baseUrl: string;
    demoEmail: string;
    demoPassword: string;
    /** The running server's DATA_DIR, so a test can read the development outbox with the admin CLI. */
    dataDir: string;
    /** SALES_PHONE of the running server, shown in the "project not activated" dialog. */
    salesPhone: string;
    /** Owner of a project that the admin CLI switched off before the server started. */
    disabledEmail: string;
    disabledPassword: string;
    /** Owner of a project with balance limits and no 声音克隆 quota (ttsCloneLimit 0). */
    limitedEmail: string;
    limitedPassword: string;
    /** The same server reached on another loopback address, white-labelled for that host. */
    oemBaseUrl: string;
    oemName: string;
    /** The logo as the server hands it out: a data: URI of the file given to `oem:set --logo`. */
    oemLogo: string;
    /** The server's SIP port (UDP and TCP on 127.0.0.1), for a test that calls it as a carrier would. */
    sipPort: number;
  }
}

export const DEMO_PASSWORD = 'e2e-demo-pass';
const SALES_PHONE = '400-818-6666';
const DISABLED_EMAIL = 'disabled-owner@example.com';
const DISABLED_PASSWORD = 'disabled-pass-1';
const LIMITED_EMAIL = 'limited-owner@example.com';
const LIMITED_PASSWORD = 'limited-pass-1';
const OEM_HOST = '127.0.0.2';
const OEM_NAME = '合作伙伴外呼';
/** Twenty calls' RTP ports (one even port each, RTCP unused): more than the e2e tests place at once. */
const RTP_PORTS = 40;
const OEM_LOGO_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 32 32">' +
  '<rect width="32" height="32" rx="6" fill="#12a150"/><circle cx="16" cy="16" r="8" fill="#fff"/></svg>\n';

/** `npm run admin -- ...` on the given DATA_DIR; the embedded database allows it only while no server runs. */
function admin(dataDir: string, ...args: string[]): string {
  const r = spawnSync('npm', ['run', '--silent', 'admin', '--', ...args], {
    cwd: repoRoot,
    env: { ...process.env, NODE_ENV: 'production', DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (r.status !== 0) {
    throw new Error(
      `npm run admin -- ${args.join(' ')} failed (${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`,
    );
  }
  return r.stdout;
}

/**
 * The server listens on 127.0.0.1 only (a fixed demo password must not reach the network), and a
 * socket bound to 127.0.0.1 does not accept connections to 127.0.0.2. This forwards 127.0.0.2:port
 * byte for byte to it, so the browser sees a second origin (Host: 127.0.0.2:port) on the same server.
 */
function forwardLoopback(fromHost: string, port: number): Promise<{ close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const forwarder = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    }
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  const close = () =>
    new Promise<void>((resolve) => {
      forwarder.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });
  return new Promise((resolve, reject) => {
    forwarder.once('error', reject);
    forwarder.listen(port, fromHost, () => resolve({ close }));
  });
}

/** One real `npm start` on a data directory prepared with the admin CLI serves the browser tests. */
export default async function setup(project: TestProject) {
  const dataDir = tempDir('e2e-data');
  const logoFile = path.join(dataDir, 'partner-logo.svg');
  let sipPort = 0;
  let server: RunningServer | undefined;
  let forwarder: { close: () => Promise<void> } | undefined;
  try {
    // Before the start: the embedded database is single-process and the CLI refuses while a server runs.
    fs.writeFileSync(logoFile, OEM_LOGO_SVG);
    admin(
      dataDir,
      'user:create',
      '--email',
      DISABLED_EMAIL,
      '--password',
      DISABLED_PASSWORD,
      '--project',
      '停用项目',
    );
    admin(dataDir, 'project:update', '--owner', DISABLED_EMAIL, '--disabled', 'true');
    // The demo project has no balance limits (everything open); this one has them, without cloning.
    admin(
      dataDir,
      'user:create',
      '--email',
      LIMITED_EMAIL,
      '--password',
      LIMITED_PASSWORD,
      '--project',
      '限额项目',
    );
    admin(
      dataDir,
      'project:update',
      '--owner',
      LIMITED_EMAIL,
      '--has-balance',
      'true',
      '--tts-clone-limit',
      '0',
    );
    admin(dataDir, 'oem:set', '--host', OEM_HOST, '--name', OEM_NAME, '--logo', logoFile);
    sipPort = await freePortRange(1, { tcp: true });
    const rtpPortMin = await freePortRange(RTP_PORTS, { band: PORT_BANDS.rtp });
    server = await startServer(
      // Vitest sets NODE_ENV=test, and `npm start` builds a stale console with it: vite then bundles
      // React's development build, which would be tested here and left in apps/web/dist for others.
      {
        NODE_ENV: 'production',
        DATA_DIR: dataDir,
        DEMO_PASSWORD,
        SALES_PHONE,
        // The simulated carrier's clock runs 20× real time, so a 模拟通话 ends within seconds.
        SIM_TIME_SCALE: '20',
        // Real lines for trunks (线路管理's 测试呼叫); numbers without a trunk stay simulated.
        TELEPHONY: 'sip',
        SIP_HOST: '127.0.0.1',
        SIP_PORT: String(sipPort),
        RTP_PORT_MIN: String(rtpPortMin),
        RTP_PORT_MAX: String(rtpPortMin + RTP_PORTS - 1),
        // The 开发者选项 test's webhook receiver listens on loopback.
        WEBHOOK_ALLOW_PRIVATE: 'true',
      },
      { command: 'npm-start', timeoutMs: 180_000 },
    );
    forwarder = await forwardLoopback(OEM_HOST, server.port);
  } catch (err) {
    if (server) await stopServer(server);
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  project.provide('baseUrl', server.url);
  project.provide('demoEmail', 'demo@example.com');
  project.provide('demoPassword', DEMO_PASSWORD);
  project.provide('dataDir', dataDir);
  project.provide('salesPhone', SALES_PHONE);
  project.provide('disabledEmail', DISABLED_EMAIL);
  project.provide('disabledPassword', DISABLED_PASSWORD);
  project.provide('limitedEmail', LIMITED_EMAIL);
  project.provide('limitedPassword', LIMITED_PASSWORD);
  project.provide('oemBaseUrl', `http://${OEM_HOST}:${server.port}`);
  project.provide('oemName', OEM_NAME);
  project.provide('sipPort', sipPort);
  project.provide('oemLogo', `data:image/svg+xml;base64,${Buffer.from(OEM_LOGO_SVG).toString('base64')}`);
  return async () => {
    await forwarder?.close();
    if (server) await stopServer(server);
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
}
