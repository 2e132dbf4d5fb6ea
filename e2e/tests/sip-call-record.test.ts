import fs from 'node:fs';
import type {
  AssistantSummary,
  AssistantVersion,
  CallDetail,
  CallList,
  ProjectNumber,
  Trunk,
  TrunkStatus,
} from '@callpilot/contracts';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { readWav } from '../../apps/server/src/engine/speech/wav';
import { launchBrowser } from '../support/browser';
import { expectVisible, openLoggedIn, textOf } from '../support/console';
import { DEMO_ASSISTANT, demoSettled, openProjectApi, type ProjectApi } from '../support/project-api';
import { tempDir } from '../support/server';
import {
  freePortRange,
  hasSipp,
  inboundCallerScenario,
  type SippRun,
  sippPath,
  sippUac,
  sippUas,
  TRUNK_FAR_END_SCENARIO,
} from '../support/sipp';

/*
 * A real phone call in the console: SIPp on loopback is a carrier's caller on an IP trunk. It dials
 * a number of that trunk bound to the demo assistant, says a few words and hangs up. 通话记录 then
 * shows the call as 呼入 from that caller, with the assistant's opening line in its transcript and
 * the line's own stereo recording (caller left, assistant right) playable for as long as the call
 * lasted. The e2e server runs TELEPHONY=sip on inject('sipPort') (support/global-setup.ts).
 */
const baseUrl = inject('baseUrl');
let browser: Browser;
let context: BrowserContext | undefined;
let api: ProjectApi;
let workDir: string;
const sipps: SippRun[] = [];
let trunkId: string | undefined;
let number: string | undefined;

if (!hasSipp)
  console.warn(`\n*** ${sippPath} is missing: the real SIP call-record e2e test is SKIPPED ***\n`);

beforeAll(async () => {
  if (!hasSipp) return;
  workDir = tempDir('e2e-sip-call');
  browser = await launchBrowser();
  api = await openProjectApi(baseUrl, inject('demoEmail'), inject('demoPassword'));
  // The demo's background calls load the server; a real line's audio runs in real time beside them.
  await demoSettled(api, 240_000);
}, 250_000);
afterAll(async () => {
  for (const sipp of sipps) sipp.kill();
  await context?.close();
  // The number first: a trunk with numbers on it is someone's line.
  // Said, not thrown: a failed clean-up must not hide the test's own failure.
  const loud = (what: string) => (err: unknown) => console.warn(`clean-up: ${what} not deleted:`, err);
  if (number) await api.call('DELETE', `/numbers/${number}`).catch(loud(`number ${number}`));
  if (trunkId) await api.call('DELETE', `/trunks/${trunkId}`).catch(loud(`trunk ${trunkId}`));
  await browser?.close();
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
});

const digits = (count: number) => String(Math.floor(Math.random() * 10 ** count)).padStart(count, '0');

/** SIPp's exit code once it stopped by itself, at most `ms` later. */
async function exitOf(sipp: SippRun, ms: number): Promise<number | string> {
  return Promise.race([
    sipp.exited,
    new Promise<string>((resolve) => setTimeout(() => resolve(`still running after ${ms} ms`), ms)),
  ]);
}

/** `{{name}}` filled with each variable's sample, as a call without a contact's values hears it. */
function heardOpeningLine(config: AssistantVersion['config']): string {
  const samples = new Map(config.variables.map((variable) => [variable.name, variable.sample]));
  return config.openingLine.replace(/\{\{([^{}]+)\}\}/g, (whole, name: string) => samples.get(name) || whole);
}

/**
 * A recording is stored after the call; until then the detail page says 录音生成中 with a 刷新
 * link. Refreshes until the player's 播放 button can be pressed (wavesurfer decoded the file).
 */
async function waitForPlayer(p: Page, timeoutMs: number) {
  const recording = p.getByRole('region', { name: '录音' });
  const play = recording.getByRole('button', { name: '播放', exact: true });
  const refresh = recording.getByRole('button', { name: '刷新', exact: true });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await play.isVisible()) && (await play.isEnabled())) return;
    if (await refresh.isVisible()) await refresh.click().catch(() => undefined);
    await p.waitForTimeout(1000);
  }
  throw new Error(`the recording did not become playable in ${timeoutMs} ms: ${await textOf(recording)}`);
}

type Wav = { channels: number; sampleRate: number; bits: number; seconds: number; samples: Int16Array };

/** The format and PCM samples of a WAV file, read as the server reads the recordings it stores. */
function parseWav(bytes: Buffer): Wav {
  const info = readWav(bytes);
  // Whole 16-bit samples only: an unclosed streaming writer may leave a torn last one.
  const data = bytes.subarray(info.dataOffset, info.dataOffset + info.dataBytes - (info.dataBytes % 2));
  const samples = new Int16Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.length));
  return {
    channels: info.channels,
    sampleRate: info.sampleRate,
    bits: info.bitsPerSample,
    samples,
    seconds: samples.length / info.channels / info.sampleRate,
  };
}

/** RMS of each 100 ms window of one channel of interleaved 16-bit stereo. */
function windowRms(wav: Wav, channel: 0 | 1): number[] {
  const frame = wav.sampleRate / 10;
  const frames = Math.floor(wav.samples.length / 2);
  const out: number[] = [];
  for (let start = 0; start + frame <= frames; start += frame) {
    let sum = 0;
    for (let i = start; i < start + frame; i++) {
      const sample = wav.samples[2 * i + channel]!;
      sum += sample * sample;
    }
    out.push(Math.sqrt(sum / frame));
  }
  return out;
}

/** About -30 dBFS: speech is well above it, the silence sent between words well below. */
const SPEAKING_RMS = 1000;
const TIME_DISPLAY = /^(\d\d):(\d\d) \/ (\d\d):(\d\d)$/;

describe.skipIf(!hasSipp)('a real SIP call in 通话记录', () => {
  it('shows a trunk caller’s call as 呼入, with the opening line in its transcript and its stereo line recording playable', async () => {
    const sipPort = inject('sipPort');
    // 1. The carrier: an IP trunk whose peer is 127.0.0.1. Its signalling address is a SIPp that
    // answers OPTIONS, so the trunk showing 可达 proves the SIP runtime has loaded it (and will
    // admit INVITEs from 127.0.0.1) before the caller dials.
    const carrierPort = await freePortRange(1);
    const carrier = sippUas({
      scenario: TRUNK_FAR_END_SCENARIO,
      port: carrierPort,
      mediaPort: await freePortRange(4),
      workDir,
      seconds: 170,
    });
    sipps.push(carrier);
    const trunk = await api.call<Trunk>('POST', '/trunks', {
      name: `E2E 来电中继 ${digits(5)}`,
      kind: 'ip',
      signallingAddress: `127.0.0.1:${carrierPort}`,
      peerAddresses: ['127.0.0.1'],
    });
    trunkId = trunk.id;
    await expect
      .poll(async () => (await api.get<TrunkStatus>(`/trunks/${trunk.id}/status`)).optionsStatus, {
        timeout: 30_000,
        message: carrier.log(),
      })
      .toBe(200);

    // 2. A Shanghai landline on that trunk, answered by the demo's published assistant.
    number = `0216${digits(7)}`;
    const created = await api.call<ProjectNumber>('POST', '/numbers', {
      number,
      label: 'E2E 真实来电',
      trunkId: trunk.id,
    });
    expect(created.trunkId).toBe(trunk.id);
    const assistants = await api.get<{ items: AssistantSummary[] }>(
      `/assistants?keyword=${encodeURIComponent(DEMO_ASSISTANT)}&pageSize=50`,
    );
    const assistant = assistants.items.find((candidate) => candidate.name === DEMO_ASSISTANT);
    expect(assistant, `the demo assistant ${DEMO_ASSISTANT}`).toBeDefined();
    const bound = await api.call<ProjectNumber>('PUT', `/numbers/${number}/inbound`, {
      assistantId: assistant!.id,
    });
    expect(bound.inboundAssistantName).toBe(DEMO_ASSISTANT);
    // The published version answers the number: its 开场白 is what the caller hears first.
    const [published] = await api.get<AssistantVersion[]>(`/assistants/${assistant!.id}/versions`);
    expect(published?.config.openingLine).toBeTruthy();
    const openingLine = heardOpeningLine(published!.config);

    // 3. The caller: INVITE with PCMA, 5 s of listening, then speech until its BYE 9 s after the ACK.
    const caller = `139${digits(8)}`;
    const call = sippUac({
      scenario: inboundCallerScenario(workDir),
      target: `127.0.0.1:${sipPort}`,
      number,
      keys: { caller },
      port: await freePortRange(1),
      mediaPort: await freePortRange(4),
      workDir,
      seconds: 45,
    });
    sipps.push(call);
    // SIPp's own verdict: answered with 200, nothing unexpected, its BYE answered.
    expect(await exitOf(call, 50_000), call.log()).toBe(0);

    // The record ends (and its line recording is stored) a moment after the BYE.
    let recorded: CallDetail | undefined;
    await expect
      .poll(
        async () => {
          const list = await api.get<CallList>(`/calls?number=${caller}&page=1&pageSize=10`);
          const id = list.items[0]?.id;
          recorded = id ? await api.get<CallDetail>(`/calls/${encodeURIComponent(id)}`) : undefined;
          return recorded ? `${recorded.status}/${recorded.recording}` : 'not listed';
        },
        { timeout: 60_000, interval: 1000 },
      )
      .toBe('ended/ready');
    const talkSeconds = (Date.parse(recorded!.endedAt!) - Date.parse(recorded!.answeredAt!)) / 1000;
    // The caller held the line about 9 s after the 200; a loaded machine adds to it, never takes away.
    expect(talkSeconds, JSON.stringify(recorded)).toBeGreaterThan(7);
    expect(talkSeconds).toBeLessThan(30);

    // 4. The console: 通话记录, found by the caller's number.
    const opened = await openLoggedIn(browser, baseUrl, inject('demoEmail'), inject('demoPassword'));
    context = opened.context;
    const p = opened.page;
    // What the detail page asks for and then loads as its player's source.
    const signedUrls: string[] = [];
    const fetchedRecordings: string[] = [];
    p.on('response', (res) => {
      if (
        res.request().method() === 'GET' &&
        /\/recording-url$/.test(new URL(res.url()).pathname) &&
        res.ok()
      )
        void res
          .json()
          .then((body: { data: { url: string } }) => signedUrls.push(body.data.url))
          .catch(() => undefined);
    });
    p.on('request', (req) => {
      if (new URL(req.url()).pathname.startsWith('/api/recordings/')) fetchedRecordings.push(req.url());
    });

    await p.getByRole('link', { name: '通话记录', exact: true }).click();
    await p.waitForURL((url) => url.pathname === '/call-record/list');
    await expectVisible(p.getByRole('heading', { name: '通话记录' }), 'the call record list');
    await p.getByLabel('号码', { exact: true }).fill(caller);
    await p.getByRole('button', { name: '查询', exact: true }).click();
    await expect
      .poll(() => textOf(p.locator('.ant-pagination-total-text')), { timeout: 15_000 })
      .toBe('共 1 条');
    const row = p.locator(`.ant-table-tbody tr[data-row-key="${recorded!.id}"]`);
    await expectVisible(row, 'the row of the SIPp call');
    const rowText = await textOf(row);
    expect(rowText).toContain('呼入');
    expect(rowText).toContain(caller);
    expect(rowText).toContain(number);
    expect(rowText).toContain(DEMO_ASSISTANT);

    // 5. Its detail: who called whom, and the assistant's opening line as the first turn.
    await row.getByRole('link', { name: '详情', exact: true }).click();
    await p.waitForURL((url) => url.pathname === `/call-record/detail/${encodeURIComponent(recorded!.id)}`);
    const facts = p.getByRole('region', { name: '通话信息' });
    await expectVisible(facts, 'the call facts', 20_000);
    expect(await textOf(facts)).toContain('方向呼入');
    expect(await textOf(facts)).toContain(`主叫${caller}`);
    expect(await textOf(facts)).toContain(`被叫${number}`);
    expect(await textOf(facts)).toContain(`小助手${DEMO_ASSISTANT}`);
    const turns = p.getByRole('list', { name: '对话记录' }).locator('> li');
    await expect.poll(() => turns.count(), { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    expect(await textOf(turns.first())).toMatch(/^小助手 ?00:0\d/);
    expect(await textOf(turns.first())).toContain(openingLine.replace(/\s+/g, ' ').trim());
    expect(recorded!.turns[0]).toMatchObject({ speaker: 'assistant', text: openingLine });

    // 6. The recording: playable, as long as the call, from the URL the page was handed.
    await waitForPlayer(p, 60_000);
    const recording = p.getByRole('region', { name: '录音' });
    const shown = await textOf(recording.getByText(TIME_DISPLAY));
    const [, m1, s1, m2, s2] = TIME_DISPLAY.exec(shown) ?? [];
    expect(Number(m1) * 60 + Number(s1), shown).toBe(0);
    // The player floors to whole seconds: the decoded length, not the length the API guessed.
    const playerSeconds = Number(m2) * 60 + Number(s2);
    expect(
      Math.abs(playerSeconds - talkSeconds),
      `player ${shown}, call ${talkSeconds} s`,
    ).toBeLessThanOrEqual(2);

    expect(signedUrls.length, 'the page asked for the recording URL').toBeGreaterThan(0);
    const url = new URL(signedUrls.at(-1)!, baseUrl).href;
    expect(fetchedRecordings, 'the player loaded the URL the page was handed').toContain(url);
    const res = await fetch(url);
    expect(res.status).toBe(200);
    const wav = parseWav(Buffer.from(await res.arrayBuffer()));
    expect({ channels: wav.channels, sampleRate: wav.sampleRate, bits: wav.bits }).toEqual({
      channels: 2,
      sampleRate: 8000,
      bits: 16,
    });
    expect(Math.abs(wav.seconds - talkSeconds), `WAV ${wav.seconds} s, call ${talkSeconds} s`).toBeLessThan(
      2,
    );
    expect(Math.floor(wav.seconds)).toBe(playerSeconds);

    const left = windowRms(wav, 0);
    const right = windowRms(wav, 1);
    const loud = (windows: number[]) => windows.filter((rms) => rms > SPEAKING_RMS).length;
    const summary = `caller (left) loud windows ${loud(left)}, assistant (right) ${loud(right)}, of ${left.length}`;
    // The assistant speaks its opening line from the answer: seconds of it before the caller's
    // words (which may barge in and stop it, as a person would).
    expect(loud(right), summary).toBeGreaterThanOrEqual(15);
    // Where the transcript places the opening line, so clicking that turn plays it.
    const assistantFrom = right.findIndex((rms) => rms > SPEAKING_RMS) / 10;
    const turnFrom = recorded!.turns[0]!.startMs / 1000;
    expect(
      Math.abs(assistantFrom - turnFrom),
      `voice at ${assistantFrom} s, turn at ${turnFrom} s`,
    ).toBeLessThan(1);
    // The caller listened for 5 s, then spoke: heard on the left only then, never the assistant there.
    expect(loud(left), summary).toBeGreaterThanOrEqual(10);
    expect(loud(left.slice(0, 45)), `${summary}; the caller's first 4.5 s`).toBe(0);
  }, 240_000);
});
