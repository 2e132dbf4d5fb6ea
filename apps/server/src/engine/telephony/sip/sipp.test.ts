import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../clock';
import { freePortRange, runSipp, sippOrWarn } from './sipp-test-support';
import { createSipTimers } from './timers';
import { createResponse, createTransactionLayer, newTag } from './transaction';
import { createSipTransport, type SipTransport } from './transport';

/**
 * Interop on loopback: SIPp's built-in `uac` scenario (INVITE, ACK, BYE) against the transport
 * and transaction layers with a minimal answering TU. SIPp parses what we send with its own
 * parser and fails the call on anything unexpected, which our own tests cannot catch.
 */
const haveSipp = sippOrWarn('SIPp interop test');

let transport: SipTransport | undefined;
afterEach(async () => {
  await transport?.close();
  transport = undefined;
});

describe.skipIf(!haveSipp)('SIPp uac scenario against the transaction layer', () => {
  it.each([
    ['UDP', 'u1'],
    ['TCP', 't1'],
  ])(
    'completes a call over %s: 180, 200, ACK to the TU, BYE answered, nothing left behind',
    async (_name, mode) => {
      const clock = new VirtualClock({ startAt: 0 });
      transport = await createSipTransport({ host: '127.0.0.1', port: 0 });
      const layer = createTransactionLayer({ transport, timers: createSipTimers(clock) });
      const port = transport.local.port;
      const seen: string[] = [];
      layer.onRequest((request, tx) => {
        seen.push(request.method);
        if (request.method !== 'INVITE') {
          tx.respond(createResponse(request, 200, 'OK', newTag()));
          return;
        }
        const tag = newTag();
        tx.respond(createResponse(request, 180, 'Ringing', tag));
        const ok = createResponse(request, 200, 'OK', tag);
        ok.headers.append('Contact', `<sip:assistant@127.0.0.1:${port}>`);
        tx.respond(ok);
      });
      layer.onAck((ack) => seen.push(ack.method));

      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sipp-'));
      try {
        const { code, errors, output } = await runSipp({
          scenario: 'uac',
          dir,
          // Free for TCP too: SIPp listens on it in the TCP run.
          port: await freePortRange(1, { tcp: true }),
          remote: `127.0.0.1:${port}`,
          timeoutS: 5,
          args: ['-t', mode, '-d', '0'],
        });
        expect({ code, unexpected: errors }, output).toEqual({ code: 0, unexpected: '' });
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
      expect(seen).toEqual(['INVITE', 'ACK', 'BYE']);
      expect(transport.stats()).toMatchObject({ dropped: 0, badRequests: 0, sendErrors: 0 });
      // The INVITE waits in Accepted (timer L) and the BYE's transaction in Completed (timer J).
      await clock.advance(64 * 500);
      expect(layer.size()).toBe(0);
    },
  );
});
