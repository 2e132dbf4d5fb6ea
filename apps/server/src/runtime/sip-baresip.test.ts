import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSipTestApp, type SipTestApp } from '../../test/sip-app';
import {
  type FakeTranscriptionServer,
  type HeardUtterance,
  startFakeTranscriptionServer,
} from '../engine/speech/fake-transcription-server';
import { wavToPcm } from '../engine/speech/resample';
import { encodeWav, readWav } from '../engine/speech/wav';
import { freePortRange, PORT_BANDS } from '../engine/telephony/sip/sipp-test-support';
import { seedDemoContent } from '../modules/demo/demo-content';

/*
 * A task calls a softphone over a real SIP trunk: Debian's baresip on loopback, auto-answering,
 * recording what it hears (its sndfile module) and speaking from WAV files (its aufile module).
 * The softphone is driven like a person would: it listens to the opening line, presses 1, then
 * says "不需要了" (espeak speech, which the local transcription server "recognises").
 *
 * What is checked is what each side notices: on baresip's recording, the opening line at the
 * level it was synthesised; in the call record, the key press and the recognised words as the
 * callee's turns, the assistant answering the key and ending the call as an opt-out (the number
 * put on the do-not-call list); the call's own recording carries both voices.
 */
const BARESIP = '/usr/bin/baresip';
const HOST = '127.0.0.1';
const NUMBER = '02160881000';
const CALLEE = '13800138000';
const OPENING_LINE = '您好，我是星河宽带的客服小安，想回访一下您的宽带使用情况。';
const SAID = '不需要了';
const MODEL = 'whisper-1';
const API_KEY = 'sk-local-test';
const haveBaresip = fs.existsSync(BARESIP);
if (!haveBaresip) {
  console.warn(`SKIPPED sip-baresip.test.ts: ${BARESIP} is missing (apt-get install baresip-core).`);
}

const rms = (pcm: Int16Array, from = 0, to = pcm.length) => {
  let sum = 0;
  const end = Math.min(to, pcm.length);
  for (let i = from; i < end; i++) sum += (pcm[i] as number) ** 2;
  return end > from ? Math.sqrt(sum / (end - from)) : 0;
};

/** 8 kHz mono 16-bit PCM of a WAV file, one channel picked out of a stereo one. */
function channelOf(wav: Buffer, channel: number): Int16Array {
  const info = readWav(wav);
  const frames = Math.floor(info.dataBytes / (2 * info.channels));
  const pcm = new Int16Array(frames);
  for (let i = 0; i < frames; i++)
    pcm[i] = wav.readInt16LE(info.dataOffset + (i * info.channels + channel) * 2);
  return pcm;
}

const silence = (ms: number) => new Int16Array((8000 * ms) / 1000);

/**
 * baresip 1.0 with its TCP control interface (netstring-framed JSON): commands in, call events
 * out. It listens on `sipPort` (UDP and TCP) and `sipPort + 1` (TLS); control is on `sipPort + 2`.
 */
class Baresip {
  readonly events: { type: string; param?: string }[] = [];
  output = '';
  private socket: net.Socket | null = null;
  private buffer = Buffer.alloc(0);
  private waiters: (() => void)[] = [];
  private readonly child: ChildProcess;

  constructor(
    readonly dir: string,
    readonly sipPort: number,
    rtpBase: number,
    source: string,
  ) {
    fs.writeFileSync(
      path.join(dir, 'config'),
      [
        'module_path /usr/lib/baresip/modules',
        `sip_listen ${HOST}:${sipPort}`,
        `rtp_ports ${rtpBase}-${rtpBase + 9}`,
        // No audio player: received audio still runs through the decode filters, so sndfile
        // records it, and nothing needs a sound card.
        `audio_source aufile,${source}`,
        `audio_alert aufile,${source}`,
        `snd_path ${dir}`,
        'module g711.so',
        'module aufile.so',
        'module sndfile.so',
        'module_app account.so',
        'module_app menu.so',
        'module_app ctrl_tcp.so',
        `ctrl_tcp_listen ${HOST}:${sipPort + 2}`,
        '',
      ].join('\n'),
    );
    fs.writeFileSync(path.join(dir, 'accounts'), `<sip:${CALLEE}@${HOST}>;regint=0;answermode=auto\n`);
    this.child = spawn(BARESIP, ['-f', dir], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    const collect = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString()).slice(-20_000);
    };
    this.child.stdout?.on('data', collect);
    this.child.stderr?.on('data', collect);
  }

  async connect(): Promise<void> {
    for (let i = 0; i < 100; i++) {
      if (this.output.includes('baresip is ready')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const socket = net.connect(this.sipPort + 2, HOST);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', (err) => reject(new Error(`baresip control: ${err.message}\n${this.output}`)));
    });
    socket.on('data', (chunk) => this.receive(chunk));
    this.socket = socket;
  }

  private receive(chunk: Buffer) {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const colon = this.buffer.indexOf(':');
      if (colon < 0) return;
      const length = Number(this.buffer.subarray(0, colon).toString());
      if (this.buffer.length < colon + 1 + length + 1) return;
      const message = JSON.parse(this.buffer.subarray(colon + 1, colon + 1 + length).toString());
      this.buffer = this.buffer.subarray(colon + 1 + length + 1);
      if (message.event) this.events.push({ type: message.type, param: message.param });
      for (const wake of this.waiters.splice(0)) wake();
    }
  }

  command(command: string, params: string) {
    const body = Buffer.from(JSON.stringify({ command, params }));
    this.socket?.write(Buffer.concat([Buffer.from(`${body.length}:`), body, Buffer.from(',')]));
  }

  async waitFor(type: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.events.some((event) => event.type === type)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`baresip: no ${type} within ${timeoutMs} ms\n${this.output}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** What baresip decoded from the call (sndfile's `dump-<time>-dec.wav`), once the file is closed. */
  async heard(): Promise<Buffer> {
    for (let i = 0; i < 50; i++) {
      const name = fs.readdirSync(this.dir).find((file) => file.endsWith('-dec.wav'));
      if (name) {
        const wav = fs.readFileSync(path.join(this.dir, name));
        // libsndfile writes the real sizes into the header when the call's audio is torn down.
        if (wav.length > 44 && wav.readUInt32LE(4) === wav.length - 8) return wav;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`baresip wrote no closed recording\n${this.output}`);
  }

  async stop(): Promise<void> {
    this.socket?.destroy();
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
  }
}

describe.skipIf(!haveBaresip)('baresip as the far end of a task call', () => {
  let t: SipTestApp;
  let phoneDir: string;
  let assistantId: string;
  let lines: { fallbackReply: string; optOutReply: string };
  let recogniser: FakeTranscriptionServer;
  let phone: Baresip;

  const api = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) => t.api(method, url, payload);
  const must = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) =>
    t.must(method, url, payload);

  beforeAll(async () => {
    recogniser = await startFakeTranscriptionServer({
      apiKey: API_KEY,
      model: MODEL,
      // The softphone says one thing; anything else the VAD might pass on is no words.
      hear: (_utterance, index) => (index === 0 ? SAID : ''),
    });
    t = await createSipTestApp({ name: 'sip-baresip', email: 'baresip@example.com' });
    phoneDir = path.join(t.dataDir, 'baresip');
    fs.mkdirSync(phoneDir);
    // baresip listens on UDP and TCP (SIP), TLS one above, its control two above; the server's
    // RTP range is not bound until a call starts, so the phone's must stay clear of it by name.
    const phonePort = await freePortRange(3, { tcp: true });
    const phoneRtp = await freePortRange(10, { band: PORT_BANDS.rtp, avoid: [[t.rtpBase, 20]] });
    assistantId = (await seedDemoContent(t.db, t.projectId, t.userId)).publishedAssistantId;

    // The demo assistant, given ears: the local transcription server as its recognition profile.
    const profile = await must('POST', '/speech-providers', {
      name: '本机识别',
      baseUrl: recogniser.baseUrl,
      model: MODEL,
      apiKey: API_KEY,
    });
    const draft = await must('GET', `/assistants/${assistantId}`);
    lines = draft.config.conversation;
    await must('PUT', `/assistants/${assistantId}`, {
      name: draft.name,
      description: draft.description,
      use: draft.use,
      status: draft.status,
      // A shorter opening line than the demo's 16 seconds keeps the call (and the test) short.
      config: { ...draft.config, openingLine: OPENING_LINE, hearing: { providerId: profile.id } },
    });
    await must('POST', `/assistants/${assistantId}/publish`, { note: '接入语音识别' });

    const trunk = await must('POST', '/trunks', {
      name: '本机软电话',
      kind: 'ip',
      signallingAddress: `${HOST}:${phonePort}`,
      peerAddresses: [HOST],
    });
    await must('POST', '/numbers', { number: NUMBER, label: '外呼', trunkId: trunk.id });

    fs.writeFileSync(path.join(phoneDir, 'quiet.wav'), encodeWav(silence(90_000), 8000));
    phone = new Baresip(phoneDir, phonePort, phoneRtp, path.join(phoneDir, 'quiet.wav'));
    await phone.connect();
  }, 60_000);

  afterAll(async () => {
    await phone?.stop();
    await t?.close();
    await recogniser?.close();
  });

  it('hears the opening line, and the assistant acts on a key press and on recognised speech', async () => {
    const voice = { voiceId: 'cmn', speed: 1, volume: 80 };
    const spoken = wavToPcm((await t.app.runtime.speech().synthesize(SAID, voice)).audio, 8000);
    // Silence after the words: aufile ends the call when its file runs out.
    const utterance = new Int16Array(spoken.length + silence(60_000).length);
    utterance.set(spoken, 0);
    fs.writeFileSync(path.join(phoneDir, 'answer.wav'), encodeWav(utterance, 8000));

    const today = new Date(Date.now() + 8 * 3600_000);
    const day = (offset: number) =>
      new Date(today.getTime() + offset * 86_400_000).toISOString().slice(0, 10);
    const task = await must('POST', '/tasks', {
      name: '软电话回访',
      assistantId,
      callerNumbers: [NUMBER],
      startDate: day(-1),
      endDate: day(1),
      windows: [{ days: [1, 2, 3, 4, 5, 6, 7], start: '00:00', end: '24:00' }],
      skipHolidays: false,
      concurrency: 1,
      retryRules: {},
      dailyCapPerNumber: 0,
    });
    const pasted = await must('POST', `/tasks/${task.id}/imports/paste`, { text: CALLEE });
    await must('POST', `/tasks/${task.id}/imports/${pasted.importId}/commit`, {
      importId: pasted.importId,
      mapping: pasted.mapping,
    });
    await must('POST', `/tasks/${task.id}/actions/start`);

    await phone.waitFor('CALL_ESTABLISHED', 15_000);
    type Turn = { speaker: string; text: string; dtmf: string | null; startMs: number; endMs: number };
    let callId = '';
    const turnsNow = async (): Promise<Turn[]> => {
      if (!callId) callId = (await must('GET', '/calls?page=1&pageSize=5')).items[0]?.id ?? '';
      return callId ? (await must('GET', `/calls/${callId}`)).turns : [];
    };
    const waitTurns = async (count: number, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      let turns = await turnsNow();
      while (turns.length < count && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        turns = await turnsNow();
      }
      expect(turns.length, `${JSON.stringify(turns)}\n${phone.output}`).toBeGreaterThanOrEqual(count);
      return turns;
    };

    // The opening line has been played out: the callee presses 1.
    await waitTurns(1, 30_000);
    phone.command('sndcode', '1');
    // The key is in the record: the callee speaks while the assistant replies to it (the reply
    // is cut short when its playback has begun by then, and heard out otherwise).
    await waitTurns(2, 10_000);
    await new Promise((r) => setTimeout(r, 1000));
    phone.command('ausrc', `aufile,${path.join(phoneDir, 'answer.wav')}`);
    await phone.waitFor('CALL_CLOSED', 30_000);

    let call = await must('GET', `/calls/${callId}`);
    for (let i = 0; i < 200 && call.recording !== 'ready'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      call = await must('GET', `/calls/${callId}`);
    }
    const turns = call.turns as Turn[];
    const opening = turns[0] as Turn;
    expect(call).toMatchObject({
      direction: 'outbound',
      status: 'ended',
      endReason: 'opt_out',
      recording: 'ready',
    });
    expect(turns.map((turn) => [turn.speaker, turn.dtmf, turn.text])).toEqual([
      ['assistant', null, OPENING_LINE],
      ['callee', '1', ''],
      // The key is the callee's answer: the assistant replies to it (the script brain has no
      // knowledge for a key, so with its fallback line) rather than asking whether anyone is there.
      ['assistant', null, lines.fallbackReply],
      ['callee', null, SAID],
      ['assistant', null, lines.optOutReply],
    ]);
    expect(call.fields).toMatchObject({ 客户按键: '1' });
    expect(call.intentGrade).toBe('D');
    // The opt-out is honoured beyond this call.
    const blocked = await must('GET', '/do-not-call?page=1&pageSize=10');
    expect(blocked.items.map((item: { phone: string }) => item.phone)).toContain(CALLEE);

    // The recogniser got the softphone's words: about as long as what was said, not noise.
    const heard = recogniser.requests.find((request) => request.utterance)?.utterance as HeardUtterance;
    const saidMs = (spoken.length / 8000) * 1000;
    expect(heard.durationMs).toBeGreaterThan(saidMs * 0.5);
    expect(heard.durationMs).toBeLessThan(saidMs + 1500);

    // baresip heard the opening line: as long as it, and at the level it was synthesised.
    const line = wavToPcm((await t.app.runtime.speech().synthesize(opening.text, voice)).audio, 8000);
    const received = channelOf(await phone.heard(), 0);
    const lineSamples = line.length;
    expect(received.length).toBeGreaterThanOrEqual(lineSamples);
    const onset = received.findIndex((_, i) => i % 160 === 0 && rms(received, i, i + 160) > 300);
    expect(onset).toBeGreaterThanOrEqual(0);
    const before = rms(received, 0, onset);
    const during = rms(received, onset, onset + lineSamples);
    expect(before).toBeLessThan(50);
    expect(during).toBeGreaterThan(rms(line) * 0.6);
    expect(during).toBeLessThan(rms(line) * 1.5);

    // The call's recording is the line's: the callee's words on the left, the assistant on the right.
    const recording = await api('GET', `/calls/${callId}/recording`);
    expect(recording.status).toBe(200);
    const said = turns[3] as Turn;
    const left = channelOf(recording.raw, 0);
    const right = channelOf(recording.raw, 1);
    expect(rms(left, said.startMs * 8, said.endMs * 8)).toBeGreaterThan(rms(spoken) * 0.3);
    expect(rms(right, opening.startMs * 8, opening.endMs * 8)).toBeGreaterThan(rms(line) * 0.6);
  }, 90_000);
});
