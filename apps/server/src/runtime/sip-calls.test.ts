import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../test/helpers';
import { seedDemoContent } from '../modules/demo/demo-content';

/*
 * Real phone lines through the whole server: TELEPHONY=sip, an IP trunk whose peer is SIPp on
 * loopback, a number on that trunk bound to a published assistant. SIPp calls the number,
 * plays keys and speech and hangs up; the call is in the records with the assistant's opening
 * line and the line's own recording.
 * An INVITE from an address that is no trunk's peer is refused with 403 and leaves no record.
 */
const HOST = '127.0.0.1';
const PCAPS = '/usr/share/sip-tester';
const here = path.dirname(new URL(import.meta.url).pathname);
const PLAY = path.join(here, '..', 'engine', 'telephony', 'media', 'testdata', 'sipp-play-pcap.xml');
const NUMBER = '02160881000';
const sipPort = 15060 + Math.floor(Math.random() * 2000) * 2;
const rtpBase = 42000 + 2 * Math.floor(Math.random() * 4000);

let t: Awaited<ReturnType<typeof createTestApp>>;
let dataDir: string;
let projectId: string;
let headers: Record<string, string>;

function sipp(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('sipp', [...args, '-nostdin', '-timeout', '20', '-timeout_error'], {
      cwd: dataDir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, output: output.slice(-3000) }));
  });
}

const api = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) => {
  const res = await t.app.inject({
    method,
    url: `/api/project/${projectId}${url}`,
    headers,
    payload: payload as object,
  });
  return { status: res.statusCode, body: res.json() };
};

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sip-calls-'));
  t = await createTestApp({
    env: {
      DATA_DIR: dataDir,
      TELEPHONY: 'sip',
      SIP_PORT: String(sipPort),
      SIP_HOST: HOST,
      RTP_PORT_MIN: String(rtpBase),
      RTP_PORT_MAX: String(rtpBase + 19),
    },
  });
  await t.app.ready();
  const owner = await seedUser(t.db, { email: 'sip@example.com' });
  projectId = owner.projectId;
  headers = await loginAs(t.app, 'sip@example.com');
  const demo = await seedDemoContent(t.db, projectId, owner.userId);
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
  // The SIP runtime reloads its trunks after the save; the carrier's first INVITE waits for that.
  for (let i = 0; i < 200 && (t.app.runtime.sipStats()?.trunks ?? 0) < 1; i++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  expect(t.app.runtime.sipStats()?.trunks).toBe(1);
});

afterAll(async () => {
  await t?.app.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const scenario = () => {
  const file = path.join(dataDir, 'call.xml');
  fs.writeFileSync(
    file,
    fs.readFileSync(PLAY, 'utf8').replaceAll('__PCAPS__', PCAPS).replaceAll('sip:media@', 'sip:[service]@'),
  );
  return file;
};

describe('real SIP calls through the server', () => {
  it('answers a caller on a trunk number with its assistant and stores the line’s recording', async () => {
    const mediaPort = 24000 + 2 * Math.floor(Math.random() * 3000);
    const run = await sipp([
      ...['-sf', scenario(), '-s', NUMBER, '-m', '1', '-i', HOST, '-p', String(sipPort + 1)],
      ...['-mi', HOST, '-mp', String(mediaPort), `${HOST}:${sipPort}`],
    ]);
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
    expect(fs.existsSync(path.join(dataDir, 'line-recordings', `${call!.id}.wav`))).toBe(false);
  });

  it('refuses an INVITE from an address that is no trunk’s peer, and records nothing', async () => {
    const before = (await api('GET', '/calls?page=1&pageSize=10')).body.data.total;
    const run = await sipp([
      ...['-sn', 'uac', '-s', NUMBER, '-m', '1', '-i', '127.0.0.2', '-p', String(sipPort + 3)],
      ...['-recv_timeout', '3000', `${HOST}:${sipPort}`],
    ]);
    expect(run.code).not.toBe(0);
    const after = (await api('GET', '/calls?page=1&pageSize=10')).body.data.total;
    expect(after).toBe(before);
    expect(t.app.runtime.sipStats()?.refused).toBeGreaterThan(0);
  });
});
