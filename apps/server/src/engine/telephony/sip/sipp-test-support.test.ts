import type dgram from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bindUdp,
  closeUdp,
  freePortRange,
  freeUdpPort,
  killSipps,
  runSipp,
  sippOrWarn,
  untilSippListens,
} from './sipp-test-support';

/*
 * The SIPp harness every SIP test leans on: a helper that waited forever, or called a failed
 * SIPp run a pass, would make those tests pass or hang for the wrong reason.
 */

const haveSipp = sippOrWarn('SIPp harness tests');
let dir: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sipp-support-'));
});
afterAll(() => {
  killSipps();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('free ports', () => {
  it('hands out a range starting on an even port, free for UDP and TCP, clear of ranges to avoid', async () => {
    const band = [24000, 24200] as const;
    const taken = [24000, 100] as const;
    const base = await freePortRange(6, { tcp: true, band, avoid: [taken] });
    expect(base % 2).toBe(0);
    expect(base).toBeGreaterThanOrEqual(taken[0] + taken[1]);
    expect(base + 6).toBeLessThanOrEqual(band[1]);
    for (let port = base; port < base + 6; port++) {
      const udp = await bindUdp(port);
      expect(udp, `UDP ${port}`).not.toBeNull();
      await closeUdp(udp!);
      const server = net.createServer();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => resolve());
      });
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('never hands out a port that is bound', async () => {
    const band: readonly [number, number] = [25000, 25010];
    const held: dgram.Socket[] = [];
    // Everything in the band but 25006-25007 is taken.
    for (let port = band[0]; port < band[1]; port++) {
      if (port === 25006 || port === 25007) continue;
      const socket = await bindUdp(port);
      if (socket) held.push(socket);
    }
    try {
      if (held.length === 8) expect(await freePortRange(2, { band })).toBe(25006);
      await expect(freePortRange(4, { band })).rejects.toThrow('no 4 free consecutive ports');
    } finally {
      await Promise.all(held.map(closeUdp));
    }
  });
});

describe.skipIf(!haveSipp)('running SIPp', () => {
  it('reports a call nobody answers as failed, with SIPp’s account of it', async () => {
    const nobody = await freeUdpPort();
    const result = await runSipp({
      scenario: 'uac',
      dir,
      port: await freeUdpPort(),
      remote: `127.0.0.1:${nobody}`,
      timeoutS: 1,
    });
    expect(result.code).not.toBe(0);
    expect(result.output.length).toBeGreaterThan(0);
  });

  it('stops waiting for SIPp to listen as soon as it exits, saying why', async () => {
    const port = await freeUdpPort();
    const run = runSipp({ scenario: path.join(dir, 'missing.xml'), dir, port });
    await expect(untilSippListens(port, run)).rejects.toThrow(/SIPp ended before SIPp listening/);
  });

  it('waits until a SIPp UAS listens, and kills what is still running', async () => {
    const port = await freeUdpPort();
    const run = runSipp({ scenario: 'uas', dir, port, timeoutS: 30 });
    await untilSippListens(port, run);
    killSipps();
    expect(await run).toMatchObject({ code: null, signal: 'SIGKILL' });
  });
});
