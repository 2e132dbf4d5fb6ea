import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSipTestApp, type SipTestApp } from '../../test/sip-app';
import {
  freeMediaPort,
  freeUdpPort,
  killSipps,
  playPcapScenario,
  runSipp,
} from '../engine/telephony/sip/sipp-test-support';
import { seedDemoContent } from '../modules/demo/demo-content';

/*
 * Real phone lines through the whole server: TELEPHONY=sip, an IP trunk whose peer is SIPp on
 * loopback, a number on that trunk bound to a published assistant. SIPp calls the number,
 * plays keys and speech and hangs up; the call is in the records with the assistant's opening
 * line and the line's own recording.
 * An INVITE from an address that is no trunk's peer is refused with 403 and leaves no record.
 */
const HOST = '127.0.0.1';
const NUMBER = '02160881000';

let t: SipTestApp;

const api = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) => t.api(method, url, payload);

beforeAll(async () => {
  t = await createSipTestApp({ name: 'sip-calls', email: 'sip@example.com' });
  const demo = await seedDemoContent(t.db, t.projectId, t.userId);
  const trunk = await api('POST', '/trunks', {
    name: '本机测试线路',
    kind: 'ip',
    signallingAddress: `${HOST}:5999`,
    peerAddresses: [HOST],
  });
  expect(trunk.status, JSON.stringify(trunk.body)).toBe(200);
  const number = await api('POST', '/numbers', {
    number: NUMBER,
    label: '总机',
    trunkId: trunk.body.data.id,
  });
  expect(number.status, JSON.stringify(number.body)).toBe(200);
  const bound = await api('PUT', `/numbers/${NUMBER}/inbound`, { assistantId: demo.publishedAssistantId });
  expect(bound.status, JSON.stringify(bound.body)).toBe(200);
  await t.untilTrunksLoaded(1);
});

afterAll(async () => {
  killSipps();
  await t?.close();
});

describe('real SIP calls through the server', () => {
  it('answers a caller on a trunk number with its assistant and stores the line’s recording', async () => {
    const run = await runSipp({
      // The play scenario calls sip:media@; here it dials the trunk's number (-s).
      scenario: playPcapScenario(t.dataDir, { 'sip:media@': 'sip:[service]@' }),
      dir: t.dataDir,
      port: await freeUdpPort(),
      mediaPort: await freeMediaPort(),
      remote: `${HOST}:${t.sipPort}`,
      args: ['-s', NUMBER],
    });
    expect(run.code, run.output).toBe(0);
    let call: { id: string; direction: string; endReason: string | null; status: string } | undefined;
    for (let i = 0; i < 100 && call?.status !== 'ended'; i++) {
      const list = await api('GET', '/calls?page=1&pageSize=10');
      call = list.body.data.items[0];
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(call).toMatchObject({ direction: 'inbound', status: 'ended' });
    const detail = await api('GET', `/calls/${call!.id}`);
    const turns = detail.body.data.turns as { speaker: string; text: string }[];
    // The assistant spoke first: its opening line is the first turn.
    expect(turns[0]?.speaker).toBe('assistant');
    expect(turns[0]?.text.length).toBeGreaterThan(0);
    // The recording is the line's own stereo WAV, stored once the call ended.
    let recording = detail.body.data.recording as string;
    for (let i = 0; i < 100 && recording !== 'ready'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      recording = (await api('GET', `/calls/${call!.id}`)).body.data.recording;
    }
    expect(recording).toBe('ready');
    expect(fs.existsSync(path.join(t.dataDir, 'line-recordings', `${call!.id}.wav`))).toBe(false);
  });

  it('refuses an INVITE from an address that is no trunk’s peer, and records nothing', async () => {
    const before = (await api('GET', '/calls?page=1&pageSize=10')).body.data.total;
    const stranger = '127.0.0.2';
    const run = await runSipp({
      scenario: 'uac',
      dir: t.dataDir,
      host: stranger,
      port: await freeUdpPort(stranger),
      remote: `${HOST}:${t.sipPort}`,
      args: ['-s', NUMBER, '-recv_timeout', '3000'],
    });
    expect(run.code).not.toBe(0);
    const after = (await api('GET', '/calls?page=1&pageSize=10')).body.data.total;
    expect(after).toBe(before);
    expect(t.app.runtime.sipStats()?.refused).toBeGreaterThan(0);
  });
});
