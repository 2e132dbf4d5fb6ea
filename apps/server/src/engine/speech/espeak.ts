import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { AssistantVoice, VoiceOption } from '@callpilot/contracts';
import { AppError, badRequest } from '../../lib/errors';
import type { SpeechSynthesizer, SynthesizedSpeech } from './types';
import { readWav } from './wav';

/** espeak-ng's Mandarin with its voice variants; everything ships inside the package's WASM. */
export const ESPEAK_VOICES: readonly VoiceOption[] = [
  { provider: 'espeak', voiceId: 'cmn', name: '普通话（标准）', language: 'zh-CN' },
  { provider: 'espeak', voiceId: 'cmn+f3', name: '普通话女声', language: 'zh-CN' },
  { provider: 'espeak', voiceId: 'cmn+f4', name: '普通话女声（柔和）', language: 'zh-CN' },
  { provider: 'espeak', voiceId: 'cmn+m3', name: '普通话男声', language: 'zh-CN' },
  { provider: 'espeak', voiceId: 'cmn+m7', name: '普通话男声（低沉）', language: 'zh-CN' },
];

export const MAX_SYNTHESIS_CHARS = 500;
const BASE_WORDS_PER_MINUTE = 175;
const JOB_TIMEOUT_MS = 30_000;

/** Speed 1 is espeak's default rate; 0.5-2 maps onto its 80-450 words-per-minute range. */
export const wordsPerMinute = (speed: number) =>
  Math.round(Math.min(450, Math.max(80, BASE_WORDS_PER_MINUTE * speed)));
/** Volume 0-100 onto espeak's amplitude (0-200, 100 normal); 80, the default, is a little louder than normal. */
export const amplitude = (volume: number) => Math.round(Math.min(200, Math.max(0, volume * 1.5)));

/**
 * The worker runs plain JavaScript (no TypeScript loader in a worker, and the production bundle
 * has no separate worker file), so it is passed as source. It compiles the 18 MB WASM once and
 * instantiates it per job: espeak's command-line main() runs once per instance.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { pathToFileURL } = require('node:url');
const ready = (async () => {
  const { default: ESpeakNg } = await import(pathToFileURL(workerData.modulePath).href);
  const compiled = await WebAssembly.compile(fs.readFileSync(workerData.wasmPath));
  return { ESpeakNg, compiled };
})();
parentPort.on('message', async ({ id, text, args }) => {
  try {
    const { ESpeakNg, compiled } = await ready;
    const instance = await ESpeakNg({
      arguments: [...args, '-w', '/out.wav', '-f', '/in.txt'],
      preRun: [(module) => module.FS.writeFile('/in.txt', text)],
      print() {},
      printErr() {},
      instantiateWasm(imports, done) {
        WebAssembly.instantiate(compiled, imports).then((inst) => done(inst));
        return {};
      },
    });
    const wav = instance.FS.readFile('/out.wav');
    parentPort.postMessage({ id, wav }, [wav.buffer]);
  } catch (err) {
    parentPort.postMessage({ id, error: String((err && err.message) || err) });
  }
});
`;

interface Job {
  id: number;
  resolve: (wav: Buffer) => void;
  reject: (err: Error) => void;
}

const synthesisFailed = (cause: unknown) =>
  new AppError(503, 'SERVICE_UNAVAILABLE', '语音合成失败，请稍后重试', { cause });

/**
 * Offline Mandarin TTS through the npm espeak-ng WASM build. Synthesis takes a few hundred
 * milliseconds of CPU, so it runs in one worker thread, one job at a time, off the event loop.
 */
export function createEspeakSynthesizer(): SpeechSynthesizer {
  const require = createRequire(import.meta.url);
  const modulePath = require.resolve('espeak-ng');
  const wasmPath = modulePath.replace(/\.js$/, '.wasm');
  let worker: Worker | undefined;
  let nextId = 1;
  const pending = new Map<number, Job>();
  let queue: Promise<unknown> = Promise.resolve();

  const failAll = (err: Error) => {
    for (const job of pending.values()) job.reject(err);
    pending.clear();
  };

  function start(): Worker {
    if (worker) return worker;
    const created = new Worker(WORKER_SOURCE, { eval: true, workerData: { modulePath, wasmPath } });
    created.unref();
    created.on('message', (message: { id: number; wav?: Uint8Array; error?: string }) => {
      const job = pending.get(message.id);
      if (!job) return;
      pending.delete(message.id);
      if (message.wav)
        job.resolve(Buffer.from(message.wav.buffer, message.wav.byteOffset, message.wav.byteLength));
      else job.reject(new Error(message.error ?? 'espeak-ng failed'));
    });
    created.on('error', (err) => failAll(err));
    created.on('exit', () => {
      if (worker === created) worker = undefined;
      failAll(new Error('espeak-ng worker exited'));
    });
    worker = created;
    return created;
  }

  function run(text: string, args: string[]): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      const id = nextId++;
      const target = start();
      // A hung synthesis must not block every later one: drop the worker, the next job starts another.
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error('espeak-ng timed out'));
        void target.terminate();
      }, JOB_TIMEOUT_MS);
      pending.set(id, {
        id,
        resolve: (wav) => {
          clearTimeout(timer);
          resolve(wav);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      });
      target.postMessage({ id, text, args });
    });
  }

  return {
    voices: () => [...ESPEAK_VOICES],

    async synthesize(
      text,
      voice: Pick<AssistantVoice, 'voiceId' | 'speed' | 'volume'>,
    ): Promise<SynthesizedSpeech> {
      const spoken = text.trim();
      if (!spoken) throw badRequest('字段 text：请输入合成文本');
      if ([...spoken].length > MAX_SYNTHESIS_CHARS) {
        throw badRequest(`字段 text：合成文本不能超过 ${MAX_SYNTHESIS_CHARS} 个字符`);
      }
      // Only offered voices reach espeak: the id is passed on its command line.
      if (!ESPEAK_VOICES.some((option) => option.voiceId === voice.voiceId)) {
        throw badRequest('字段 voice.voiceId：音色不存在');
      }
      const args = [
        '-v',
        voice.voiceId,
        '-s',
        String(wordsPerMinute(voice.speed)),
        '-a',
        String(amplitude(voice.volume)),
      ];
      const job = queue.then(() => run(spoken, args));
      queue = job.catch(() => undefined);
      let audio: Buffer;
      try {
        audio = await job;
      } catch (err) {
        throw synthesisFailed(err);
      }
      return { audio, mimeType: 'audio/wav', durationMs: readWav(audio).durationMs };
    },

    async close() {
      const current = worker;
      worker = undefined;
      failAll(new Error('speech synthesizer closed'));
      if (current) await current.terminate();
    },
  };
}
