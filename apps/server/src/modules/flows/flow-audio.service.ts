import { randomUUID } from 'node:crypto';
import { FLOW_AUDIO_RULES, type FlowAudio } from '@callpilot/contracts';
import { and, asc, desc, eq, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { callFlows, callFlowVersions, flowAudio } from '../../db/schema';
import type { RecordingStore } from '../../engine/recording/store';
import { resample } from '../../engine/speech/resample';
import { encodeWav } from '../../engine/speech/wav';
import { ALAW_DECODE, ULAW_DECODE } from '../../engine/telephony/media/g711';
import { AppError, conflict, notFound } from '../../lib/errors';

/**
 * Prompts a 放音 node plays instead of synthesised text. Whatever WAV is uploaded is stored once as
 * the line's format (8 kHz mono 16-bit), so a call plays it without converting anything.
 */

export const FLOW_AUDIO_RATE = 8000;
const FIELD = 'file';
const invalid = (message: string) => new AppError(400, 'VALIDATION_FAILED', `字段 ${FIELD}：${message}`);
const missing = () => notFound('音频文件不存在或已删除');

/** Where an upload lives in the recording store: beside the project's recordings, apart from calls. */
export const flowAudioKey = (projectId: string, audioId: string) => `${projectId}/flow-audio/${audioId}.wav`;

const toDto = (row: typeof flowAudio.$inferSelect): FlowAudio => ({
  id: row.id,
  name: row.name,
  durationMs: row.durationMs,
  createdAt: row.createdAt.toISOString(),
});

const WAVE_FORMAT = { pcm: 1, float: 3, alaw: 6, ulaw: 7, extensible: 0xfffe } as const;

/**
 * Mono samples of a WAV as recorded (PCM 8/16/24/32-bit, 32-bit float, G.711 A-law/μ-law, the
 * extensible header of any of them), at the file's own rate. Prompts recorded for phone systems
 * are often G.711 already; editors export 24-bit or float.
 */
export function decodeWav(wav: Buffer): { samples: Int16Array; sampleRate: number } {
  if (wav.length < 12 || wav.toString('ascii', 0, 4) !== 'RIFF' || wav.toString('ascii', 8, 12) !== 'WAVE')
    throw invalid('不是有效的 WAV 文件，请上传 WAV 格式的音频');
  let offset = 12;
  let format: { tag: number; channels: number; rate: number; bits: number } | undefined;
  while (offset + 8 <= wav.length) {
    const id = wav.toString('ascii', offset, offset + 4);
    const size = wav.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      if (body + 16 > wav.length) break;
      let tag = wav.readUInt16LE(body);
      // WAVE_FORMAT_EXTENSIBLE names the real format in the first two bytes of its sub-format GUID.
      if (tag === WAVE_FORMAT.extensible && size >= 40 && body + 26 <= wav.length)
        tag = wav.readUInt16LE(body + 24);
      format = {
        tag,
        channels: wav.readUInt16LE(body + 2),
        rate: wav.readUInt32LE(body + 4),
        bits: wav.readUInt16LE(body + 14),
      };
    } else if (id === 'data') {
      if (!format) break;
      const length = Math.min(size || Number.MAX_SAFE_INTEGER, wav.length - body);
      return { samples: mixDown(wav.subarray(body, body + length), format), sampleRate: format.rate };
    }
    offset = body + size + (size % 2);
  }
  throw invalid('WAV 文件不完整（缺少格式或音频数据），请重新导出后上传');
}

function mixDown(
  data: Buffer,
  format: { tag: number; channels: number; rate: number; bits: number },
): Int16Array {
  const { tag, channels, bits, rate } = format;
  if (channels < 1 || channels > 8) throw invalid(`不支持 ${channels} 声道的音频`);
  if (rate < 8000 || rate > 192_000)
    throw invalid(`不支持 ${rate} Hz 的采样率（须在 8000 至 192000 Hz 之间）`);
  let read: (at: number) => number;
  let width: number;
  if (tag === WAVE_FORMAT.pcm && bits === 16) {
    width = 2;
    read = (at) => data.readInt16LE(at);
  } else if (tag === WAVE_FORMAT.pcm && bits === 8) {
    width = 1;
    read = (at) => ((data[at] as number) - 128) << 8;
  } else if (tag === WAVE_FORMAT.pcm && bits === 24) {
    width = 3;
    read = (at) => data.readIntLE(at, 3) >> 8;
  } else if (tag === WAVE_FORMAT.pcm && bits === 32) {
    width = 4;
    read = (at) => data.readInt32LE(at) >> 16;
  } else if (tag === WAVE_FORMAT.float && bits === 32) {
    width = 4;
    read = (at) => Math.max(-32768, Math.min(32767, Math.round(data.readFloatLE(at) * 32767)));
  } else if ((tag === WAVE_FORMAT.alaw || tag === WAVE_FORMAT.ulaw) && bits === 8) {
    width = 1;
    const table = tag === WAVE_FORMAT.alaw ? ALAW_DECODE : ULAW_DECODE;
    read = (at) => table[data[at] as number] as number;
  } else {
    throw invalid(`不支持该 WAV 编码（格式 ${tag}，${bits} 位），请上传 PCM、A-law 或 μ-law 编码的 WAV`);
  }
  const frames = Math.floor(data.length / (width * channels));
  const out = new Int16Array(frames);
  for (let i = 0; i < frames; i++) {
    let sum = 0;
    for (let ch = 0; ch < channels; ch++) sum += read((i * channels + ch) * width);
    out[i] = Math.round(sum / channels);
  }
  return out;
}

/** The upload's name: the one given, else the file's without its extension. */
function audioName(given: string | undefined, fileName: string): string {
  const name = (given?.trim() || fileName.replace(/\.[^.]*$/, '').trim() || '音频').slice(
    0,
    FLOW_AUDIO_RULES.nameMax,
  );
  return name;
}

export async function uploadFlowAudio(
  db: Database,
  store: RecordingStore,
  projectId: string,
  userId: string | null,
  upload: { name?: string; file?: { fileName: string; bytes: Buffer; truncated: boolean } },
): Promise<FlowAudio> {
  const { file } = upload;
  if (!file) throw invalid('请选择要上传的 WAV 音频文件');
  if (file.truncated || file.bytes.length > FLOW_AUDIO_RULES.maxBytes)
    throw new AppError(
      413,
      'PAYLOAD_TOO_LARGE',
      `字段 ${FIELD}：音频文件不能超过 ${FLOW_AUDIO_RULES.maxBytes / 1024 / 1024} MB`,
    );
  const decoded = decodeWav(file.bytes);
  const durationMs = Math.round((decoded.samples.length / decoded.sampleRate) * 1000);
  if (decoded.samples.length === 0) throw invalid('音频文件没有声音内容');
  if (durationMs > FLOW_AUDIO_RULES.maxSeconds * 1000)
    throw invalid(
      `音频时长不能超过 ${FLOW_AUDIO_RULES.maxSeconds} 秒（该文件约 ${Math.round(durationMs / 1000)} 秒）`,
    );
  const samples = resample(decoded.samples, decoded.sampleRate, FLOW_AUDIO_RATE);
  const id = randomUUID();
  const storageKey = flowAudioKey(projectId, id);
  await store.put(storageKey, encodeWav(samples, FLOW_AUDIO_RATE));
  try {
    const [row] = await db
      .insert(flowAudio)
      .values({
        id,
        projectId,
        name: audioName(upload.name, file.fileName),
        storageKey,
        durationMs: Math.round((samples.length / FLOW_AUDIO_RATE) * 1000),
        createdBy: userId,
      })
      .returning();
    return toDto(row!);
  } catch (err) {
    await store.delete(storageKey);
    throw err;
  }
}

export async function listFlowAudio(db: Database, projectId: string): Promise<FlowAudio[]> {
  const rows = await db
    .select()
    .from(flowAudio)
    .where(eq(flowAudio.projectId, projectId))
    .orderBy(desc(flowAudio.createdAt), asc(flowAudio.id));
  return rows.map(toDto);
}

async function findAudio(db: Database, projectId: string, audioId: string) {
  const [row] = await db
    .select()
    .from(flowAudio)
    .where(and(eq(flowAudio.projectId, projectId), eq(flowAudio.id, audioId)))
    .limit(1);
  return row;
}

async function readStored(store: RecordingStore, key: string): Promise<Buffer | null> {
  if ((await store.size(key)) === null) return null;
  const chunks: Buffer[] = [];
  for await (const chunk of store.stream(key)) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

/** The stored WAV (8 kHz mono) of an upload. */
export async function readFlowAudio(
  db: Database,
  store: RecordingStore,
  projectId: string,
  audioId: string,
): Promise<Buffer> {
  const row = await findAudio(db, projectId, audioId);
  if (!row) throw missing();
  const wav = await readStored(store, row.storageKey);
  if (!wav) throw missing();
  return wav;
}

/** For calls: an upload's samples at the line's rate, or null when it is gone. */
export async function flowAudioSamples(
  db: Database,
  store: RecordingStore,
  projectId: string,
  audioId: string,
): Promise<Int16Array | null> {
  const row = await findAudio(db, projectId, audioId);
  if (!row) return null;
  const wav = await readStored(store, row.storageKey);
  if (!wav) return null;
  const decoded = decodeWav(wav);
  return decoded.sampleRate === FLOW_AUDIO_RATE
    ? decoded.samples
    : resample(decoded.samples, decoded.sampleRate, FLOW_AUDIO_RATE);
}

/** Refused while a live version plays it: calls in progress and to come would go silent. */
export async function deleteFlowAudio(
  db: Database,
  store: RecordingStore,
  projectId: string,
  audioId: string,
): Promise<void> {
  const row = await findAudio(db, projectId, audioId);
  if (!row) throw missing();
  const probe = JSON.stringify([{ type: 'play', data: { audioId } }]);
  const users = await db
    .select({ name: callFlows.name })
    .from(callFlows)
    .innerJoin(
      callFlowVersions,
      and(
        eq(callFlowVersions.flowId, callFlows.id),
        eq(callFlowVersions.version, callFlows.publishedVersion),
      ),
    )
    .where(
      and(eq(callFlows.projectId, projectId), sql`${callFlowVersions.graph}->'nodes' @> ${probe}::jsonb`),
    )
    .orderBy(asc(callFlows.name));
  if (users.length > 0)
    throw conflict(
      `音频正被流程「${users.map((u) => u.name).join('」「')}」的已发布版本播放，请先在流程中替换并重新发布`,
    );
  await db.delete(flowAudio).where(and(eq(flowAudio.projectId, projectId), eq(flowAudio.id, audioId)));
  await store.delete(row.storageKey);
}
