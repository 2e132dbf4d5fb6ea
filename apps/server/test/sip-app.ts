import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { freePortRange, LOOPBACK, PORT_BANDS } from '../src/engine/telephony/sip/sipp-test-support';
import { createTestApp, loginAs, seedUser } from './helpers';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * The whole server with real phone lines (TELEPHONY=sip) on loopback, for the runtime's SIP
 * tests: its SIP port (UDP and TCP) and RTP range are free ports picked at run time, its data
 * directory is a fresh temporary one, and a project owner is logged in. `close` tears it all down.
 */
export async function createSipTestApp(options: {
  /** Names the temporary data directory. */
  name: string;
  /** The project owner's e-mail. */
  email: string;
  /** How many RTP ports the media worker gets; 20 unless set. */
  rtpPorts?: number;
  /** More environment (SIP_PROXY, ...). */
  env?: Record<string, string>;
}) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `${options.name}-`));
  try {
    const sipPort = await freePortRange(1, { tcp: true });
    const rtpPorts = options.rtpPorts ?? 20;
    const rtpBase = await freePortRange(rtpPorts, { band: PORT_BANDS.rtp });
    const t = await createTestApp({
      env: {
        DATA_DIR: dataDir,
        TELEPHONY: 'sip',
        SIP_PORT: String(sipPort),
        SIP_HOST: LOOPBACK,
        RTP_PORT_MIN: String(rtpBase),
        RTP_PORT_MAX: String(rtpBase + rtpPorts - 1),
        ...options.env,
      },
    });
    try {
      await t.app.ready();
      const owner = await seedUser(t.db, { email: options.email });
      const headers = await loginAs(t.app, options.email);

      /** A project API call as the owner; the body is parsed when it is JSON, `raw` is the bytes. */
      const api = async (method: Method, url: string, payload?: unknown) => {
        const res = await t.app.inject({
          method,
          url: `/api/project/${owner.projectId}${url}`,
          headers,
          ...(payload === undefined ? {} : { payload: payload as object }),
        });
        const json = String(res.headers['content-type']).includes('json');
        return { status: res.statusCode, body: json ? res.json() : res.body, raw: res.rawPayload };
      };
      /** The `data` of a call that must succeed; the test fails with the body otherwise. */
      const must = async (method: Method, url: string, payload?: unknown) => {
        const res = await api(method, url, payload);
        expect(res.status, `${method} ${url}: ${JSON.stringify(res.body)}`).toBe(200);
        return res.body.data;
      };

      return {
        ...t,
        dataDir,
        sipPort,
        rtpBase,
        projectId: owner.projectId,
        userId: owner.userId,
        headers,
        api,
        must,
        /**
         * Resolves once the SIP runtime has loaded `count` trunks: it reloads them after a save,
         * and a carrier's first INVITE must not come before that.
         */
        async untilTrunksLoaded(count = 1) {
          for (let i = 0; i < 200 && (t.app.runtime.sipStats()?.trunks ?? 0) < count; i++) {
            await new Promise((resolve) => setTimeout(resolve, 25));
          }
          expect(t.app.runtime.sipStats()?.trunks).toBe(count);
        },
        async close() {
          await t.app.close();
          fs.rmSync(dataDir, { recursive: true, force: true });
        },
      };
    } catch (error) {
      await t.app.close();
      throw error;
    }
  } catch (error) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
}

export type SipTestApp = Awaited<ReturnType<typeof createSipTestApp>>;
