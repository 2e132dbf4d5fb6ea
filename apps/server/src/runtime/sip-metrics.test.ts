import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../test/helpers';
import type { DatabaseHandle } from '../db/client';
import { systemClock } from '../engine/clock';
import { createSipStack } from '../engine/telephony/sip/stack';
import type { IncomingInvite } from '../engine/telephony/sip/user-agent';
import { createMetrics } from './metrics';
import { parseExposition } from './metrics.test-helper';

const OFFER =
  'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 8\r\n';

describe('SIP INVITE outcome metrics', () => {
  let database: DatabaseHandle;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.close();
  });

  it('counts final responses to INVITEs both ways, by status class', async () => {
    const metrics = createMetrics({
      db: database.db,
      clock: systemClock,
      callsInFlight: () => ({ inbound: 0, outbound: 0 }),
      sipRegistrations: () => null,
    });
    const onInviteFinal = (direction: 'inbound' | 'outbound', status: number | null) =>
      metrics.sipInvite(direction, status);
    const caller = await createSipStack({
      host: '127.0.0.1',
      port: 0,
      protocols: ['udp'],
      agent: { onInviteFinal },
    });
    const callee = await createSipStack({
      host: '127.0.0.1',
      port: 0,
      protocols: ['udp'],
      agent: { onInviteFinal },
    });
    try {
      const port = callee.transport.local.port;
      let answer: (invite: IncomingInvite) => void = (invite) => invite.reject(486, 'Busy Here');
      let acked: Promise<unknown> = Promise.resolve();
      callee.agent.onInvite((invite) => answer(invite));
      const call = () =>
        caller.agent.invite({
          uri: `sip:13800000000@127.0.0.1:${port}`,
          from: '<sip:02160881000@127.0.0.1>',
          to: `<sip:13800000000@127.0.0.1:${port}>`,
          destination: { protocol: 'udp', address: '127.0.0.1', port },
          sdp: OFFER,
        });
      expect(await call()).toMatchObject({ answered: false, status: 486 });
      answer = (invite) => {
        acked = invite.answer(OFFER.replace('4000', '4002'));
      };
      const answered = await call();
      if (!answered.answered) throw new Error(`not answered: ${answered.status}`);
      await acked;
      await answered.session.bye();

      const m = parseExposition((await metrics.scrape()).body);
      expect(m.types.get('callpilot_sip_invites_total')).toBe('counter');
      for (const direction of ['inbound', 'outbound']) {
        expect(m.value('callpilot_sip_invites_total', { direction, status_class: '4xx' }), direction).toBe(1);
        expect(m.value('callpilot_sip_invites_total', { direction, status_class: '2xx' }), direction).toBe(1);
      }
    } finally {
      await caller.close();
      await callee.close();
    }
  });
});
