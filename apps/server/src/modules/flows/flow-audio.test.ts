import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { memberships } from '../../db/schema';
import { readWav } from '../../engine/speech/wav';
import { ULAW_ENCODE } from '../../engine/telephony/media/g711';

/** 放音 audio: uploads of any WAV become 8 kHz mono prompts that calls play. */

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
type Headers = Record<string, string>;
let t: TestApp;
let dataDir: string;
let a: { userId: string; projectId: string };
let b: { userId: string; projectId: string };
let member: Headers;
let outsider: Headers;
let audioUrl: string;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flow-audio-'));
  t = await createTestApp({ env: { DATA_DIR: dataDir } });
  a = await seedUser(t.db, { email: 'owner@example.com' });
  const m = await seedUser(t.db, { email: 'member@example.com', project: null });
  await t.db.insert(memberships).values({ projectId: a.projectId, userId: m.userId, role: 'member' });
  b = await seedUser(t.db, { email: 'other@example.com' });
  member = await loginAs(t.app, 'member@example.com');
  outsider = await loginAs(t.app, 'other@example.com');
  audioUrl = `/api/project/${a.projectId}/flows/audio`;
});
afterAll(async () => {
  await t?.app.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** A WAV file of a 440 Hz tone, in the layout given. */
function toneWav(options: {
  seconds: number;
  rate: number;
  channels?: number;
  encoding?: 'pcm16' | 'pcm24' | 'float' | 'ulaw';
}): Buffer {
  const { seconds, rate, channels = 1, encoding = 'pcm16' } = options;
  const frames = Math.round(seconds * rate);
  const width = encoding === 'pcm24' ? 3 : encoding === 'float' ? 4 : encoding === 'ulaw' ? 1 : 2;
  const tag = encoding === 'float' ? 3 : encoding === 'ulaw' ? 7 : 1;
  const data = Buffer.alloc(frames * channels * width);
  for (let i = 0; i < frames; i++) {
    const value = Math.round(Math.sin((2 * Math.PI * 440 * i) / rate) * 12_000);
    for (let ch = 0; ch < channels; ch++) {
      const at = (i * channels + ch) * width;
      if (encoding === 'pcm16') data.writeInt16LE(value, at);
      else if (encoding === 'pcm24') data.writeIntLE(value * 256, at, 3);
      else if (encoding === 'float') data.writeFloatLE(value / 32768, at);
      else data[at] = ULAW_ENCODE[value & 0xffff] as number;
    }
  }
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(tag, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * channels * width, 28);
  header.writeUInt16LE(channels * width, 32);
  header.writeUInt16LE(width * 8, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

/** A multipart body as a browser's FormData would send it. */
function form(file: Buffer | null, fileName = '欢迎语.wav', fields: Record<string, string> = {}) {
  const boundary = `----flowaudio${randomUUID()}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields))
    parts.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`),
    );
  if (file) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: audio/wav\r\n\r\n`,
      ),
      file,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return {
    payload: Buffer.concat(parts),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}

const upload = (headers: Headers, body: ReturnType<typeof form>, url = audioUrl) =>
  t.app.inject({ method: 'POST', url, headers: { ...headers, ...body.headers }, payload: body.payload });

describe('flow audio (放音音频)', () => {
  it('stores any WAV as 8 kHz mono, lists, serves and hands it to calls', async () => {
    const stereo = await upload(member, form(toneWav({ seconds: 1.5, rate: 16_000, channels: 2 })));
    expect(stereo.statusCode, stereo.body).toBe(200);
    expect(stereo.json().data).toMatchObject({ name: '欢迎语', durationMs: 1500 });
    const id = stereo.json().data.id as string;

    const named = await upload(
      member,
      form(toneWav({ seconds: 0.5, rate: 8000, encoding: 'ulaw' }), 'prompt.wav', { name: '夜间提示' }),
    );
    expect(named.json().data).toMatchObject({ name: '夜间提示', durationMs: 500 });
    for (const encoding of ['pcm24', 'float'] as const) {
      const res = await upload(member, form(toneWav({ seconds: 0.25, rate: 44_100, encoding })));
      expect(res.statusCode, encoding).toBe(200);
      expect(res.json().data.durationMs).toBe(250);
    }

    const list = await t.app.inject({ method: 'GET', url: audioUrl, headers: member });
    expect(list.json().data).toHaveLength(4);
    expect(list.json().data.map((f: { name: string }) => f.name)).toContain('夜间提示');

    const wav = await t.app.inject({ method: 'GET', url: `${audioUrl}/${id}`, headers: member });
    expect(wav.statusCode).toBe(200);
    expect(wav.headers['content-type']).toBe('audio/wav');
    expect(readWav(wav.rawPayload)).toMatchObject({
      sampleRate: 8000,
      channels: 1,
      bitsPerSample: 16,
      durationMs: 1500,
    });

    const samples = await t.app.runtime.engine.ports.flows!.audio(a.projectId, id);
    expect(samples).toBeInstanceOf(Int16Array);
    expect(samples!.length).toBe(12_000);
    // The tone survives the conversion (not silence).
    expect(Math.max(...samples!.slice(1000, 2000))).toBeGreaterThan(8000);
    expect(await t.app.runtime.engine.ports.flows!.audio(b.projectId, id)).toBeNull();
  });

  it('refuses what is not a usable WAV with the reason, storing nothing', async () => {
    const before = (await t.app.inject({ method: 'GET', url: audioUrl, headers: member })).json().data.length;
    const cases: [ReturnType<typeof form>, number, string][] = [
      [
        form(Buffer.from('ID3 not a wave at all')),
        400,
        '字段 file：不是有效的 WAV 文件，请上传 WAV 格式的音频',
      ],
      [
        form(toneWav({ seconds: 121, rate: 8000 })),
        400,
        '字段 file：音频时长不能超过 120 秒（该文件约 121 秒）',
      ],
      [form(Buffer.alloc(5 * 1024 * 1024 + 10)), 413, '字段 file：音频文件不能超过 5 MB'],
      [form(null, '', { name: '空' }), 400, '字段 file：请选择要上传的 WAV 音频文件'],
    ];
    for (const [body, status, message] of cases) {
      const res = await upload(member, body);
      expect(res.statusCode, message).toBe(status);
      expect(res.json().message).toBe(message);
    }
    const json = await t.app.inject({
      method: 'POST',
      url: audioUrl,
      headers: member,
      payload: { file: 'x' },
    });
    expect(json.statusCode).toBe(400);
    expect(json.json().message).toContain('multipart/form-data');
    const after = (await t.app.inject({ method: 'GET', url: audioUrl, headers: member })).json().data.length;
    expect(after).toBe(before);
    expect(fs.readdirSync(path.join(dataDir, 'recordings', a.projectId, 'flow-audio'))).toHaveLength(before);
  });

  it('refuses to delete audio a live version plays; deletes it once replaced; closed to other projects', async () => {
    const res = await upload(member, form(toneWav({ seconds: 1, rate: 8000 }), 'busy.wav'));
    const id = res.json().data.id as string;
    const flows = `/api/project/${a.projectId}/flows`;
    const flow = (
      await t.app.inject({ method: 'POST', url: flows, headers: member, payload: { name: '放音' } })
    ).json().data;
    const graph = (audioId: string | null) => ({
      nodes: [
        { id: 'start', type: 'start' },
        { id: 'play', type: 'play', name: '提示', data: { text: '', audioId } },
        { id: 'bye', type: 'hangup' },
      ],
      edges: [
        { id: 'e1', source: 'start', sourceHandle: 'next', target: 'play' },
        { id: 'e2', source: 'play', sourceHandle: 'next', target: 'bye' },
      ],
    });
    const put = (audioId: string | null) =>
      t.app.inject({
        method: 'PUT',
        url: `${flows}/${flow.id}/draft`,
        headers: member,
        payload: { graph: graph(audioId) },
      });
    const publish = () =>
      t.app.inject({ method: 'POST', url: `${flows}/${flow.id}/publish`, headers: member, payload: {} });

    // Another project's audio is not this flow's to play.
    const theirs = await upload(
      outsider,
      form(toneWav({ seconds: 1, rate: 8000 })),
      `/api/project/${b.projectId}/flows/audio`,
    );
    expect((await put(theirs.json().data.id)).json().data.issues).toEqual([
      expect.objectContaining({ nodeId: 'play', message: '「提示」：音频文件不存在或已删除，请重新选择' }),
    ]);
    expect((await publish()).statusCode).toBe(400);

    await put(id);
    expect((await publish()).statusCode).toBe(200);
    const refused = await t.app.inject({ method: 'DELETE', url: `${audioUrl}/${id}`, headers: member });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().message).toBe('音频正被流程「放音」的已发布版本播放，请先在流程中替换并重新发布');

    for (const [method, url] of [
      ['GET', `${audioUrl}/${id}`],
      ['DELETE', `${audioUrl}/${id}`],
      ['GET', audioUrl],
    ] as const) {
      expect((await t.app.inject({ method, url, headers: outsider })).statusCode, `${method} ${url}`).toBe(
        403,
      );
      const sideways = url.replace(a.projectId, b.projectId);
      if (sideways.endsWith(id))
        expect((await t.app.inject({ method, url: sideways, headers: outsider })).statusCode).toBe(404);
    }
    expect((await upload(outsider, form(toneWav({ seconds: 1, rate: 8000 })))).statusCode).toBe(403);

    await t.app.inject({
      method: 'PUT',
      url: `${flows}/${flow.id}/draft`,
      headers: member,
      payload: {
        graph: {
          ...graph(null),
          nodes: graph(null).nodes.map((n) => (n.id === 'play' ? { ...n, data: { text: '您好' } } : n)),
        },
      },
    });
    expect((await publish()).statusCode).toBe(200);
    expect(
      (await t.app.inject({ method: 'DELETE', url: `${audioUrl}/${id}`, headers: member })).statusCode,
    ).toBe(200);
    expect(
      (await t.app.inject({ method: 'GET', url: `${audioUrl}/${id}`, headers: member })).statusCode,
    ).toBe(404);
    expect(await t.app.runtime.engine.ports.flows!.audio(a.projectId, id)).toBeNull();
  });
});
