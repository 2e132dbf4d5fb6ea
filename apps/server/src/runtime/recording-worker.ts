import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AssistantVoice } from '@callpilot/contracts';
import { asc, eq } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../db/client';
import { callTurns } from '../db/schema';
import { mixRecording } from '../engine/recording/mix';
import { type RecordingStore, recordingFailureReason } from '../engine/recording/store';
import type { SpeechSynthesizer } from '../engine/speech/types';
import { offlineVoiceFor } from '../engine/speech/voices';
import { callVoice } from '../modules/assistants/call-config';
import type { CallRepository } from '../modules/calls/call-repository';
import { toTurn } from '../modules/calls/calls.service';
import { isOfflineVoice } from '../modules/synthesis-providers/synthesis-providers.service';

/** A mix takes seconds; a claim this long outlives any mix but not a dead process for long. */
const RECORDING_LEASE_MS = 120_000;

/**
 * The call's record can end before the media worker has closed the line's WAV (they finish in
 * parallel): its sizes are written last, so until then the file may still lack its tail.
 */
const LINE_CLOSE_WAIT_MS = 5_000;
const WAV_HEADER_BYTES = 44;

/**
 * A real line's stereo WAV once its writer has closed it, or null when there is none. A file
 * whose writer never closed it (the process died mid-call) is kept as captured, with its sizes.
 */
async function closedLineRecording(file: string): Promise<Buffer | null> {
  const deadline = Date.now() + LINE_CLOSE_WAIT_MS;
  for (;;) {
    const bytes = await readFile(file).catch(() => null);
    if (!bytes || bytes.length <= WAV_HEADER_BYTES || bytes.readUInt32LE(40) !== 0) return bytes;
    if (Date.now() >= deadline) {
      bytes.writeUInt32LE(bytes.length - 8, 4);
      bytes.writeUInt32LE(bytes.length - WAV_HEADER_BYTES, 40);
      return bytes;
    }
    await sleep(100);
  }
}

/** The other party sounds different from the assistant: a male voice for a female one and back. */
export const calleeVoiceFor = (voiceId: string) =>
  /\+m/.test(voiceId) || voiceId === 'cmn' ? 'cmn+f4' : 'cmn+m3';

/**
 * Mixes recordings one at a time in the background (the synthesiser is one worker thread). Each
 * pending recording is claimed with a lease first, so several processes on one PostgreSQL never
 * mix the same call, and a mix cut off by a crash is taken up again once its lease runs out.
 */
export class RecordingWorker {
  private running: Promise<void> | null = null;
  private stopped = false;
  private again = false;

  constructor(
    private readonly deps: {
      db: Database;
      calls: CallRepository;
      recordings: RecordingStore;
      synthesizer: () => SpeechSynthesizer;
      /**
       * The assistant's own voice for its turns (a provider's preset or cloned voice); absent or
       * null: the offline voice speaks them.
       */
      voiceSynthesizer?: (projectId: string, voice: AssistantVoice) => Promise<SpeechSynthesizer | null>;
      /**
       * Where real-line calls left their stereo WAV (the media worker writes it as the call runs):
       * such a call's recording is that file, not a mix of synthesised turns.
       */
      lineRecordings?: string;
      /** Names this worker's claims. */
      owner: string;
      log: Pick<FastifyBaseLogger, 'warn'>;
    },
  ) {}

  kick(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.loop().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running?.catch(() => {});
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      for (;;) {
        if (this.stopped) return;
        const row = await this.deps.calls.claimRecording(this.deps.owner, RECORDING_LEASE_MS);
        if (!row) break;
        await this.mix(row);
      }
    } while (this.again && !this.stopped);
  }

  private async mix(row: NonNullable<Awaited<ReturnType<CallRepository['claimRecording']>>>) {
    const { db, calls, recordings, log, owner } = this.deps;
    try {
      const turns = (
        await db.select().from(callTurns).where(eq(callTurns.callId, row.id)).orderBy(asc(callTurns.index))
      ).map(toTurn);
      const key = `${row.projectId}/${row.id}.wav`;
      const line = this.deps.lineRecordings ? path.join(this.deps.lineRecordings, `${row.id}.wav`) : null;
      const recorded = line ? await closedLineRecording(line) : null;
      if (line && recorded && recorded.length > WAV_HEADER_BYTES) {
        await recordings.put(key, recorded);
        // Stored: the local copy goes before the call says so, so nothing outlives a ready recording.
        await rm(line, { force: true });
        await calls.recordingReady(row.projectId, row.id, owner, {
          key,
          // 8 kHz, 16-bit, two channels: 32 bytes a millisecond.
          durationMs: Math.round((recorded.length - WAV_HEADER_BYTES) / 32),
          turns: turns.map(({ index, startMs, endMs }) => ({ index, startMs, endMs })),
        });
        return;
      }
      if (row.recordingSource === 'line') {
        // The media worker's file is gone or empty (its disk failed, or DATA_DIR is not shared by
        // the process that ran the call): a mix of synthesised turns would pass off a
        // re-enactment as the real call, so the call says it has no recording.
        log.warn({ callId: row.id, projectId: row.projectId, file: line }, 'line recording missing');
        await calls.recordingFailed(row.projectId, row.id, owner, '线路录音文件缺失');
        return;
      }
      const voice = await callVoice(db, row.projectId, row.assistantId, row.assistantVersion);
      // A simulated call is heard in the assistant's real voice when it has one; the caller's
      // side, and an assistant whose voice cannot be reached, in offline voices.
      const own = isOfflineVoice(voice)
        ? null
        : await this.deps.voiceSynthesizer?.(row.projectId, voice).catch((err: unknown) => {
            log.warn(
              { err, callId: row.id, projectId: row.projectId },
              'assistant voice unavailable for the recording',
            );
            return null;
          });
      const assistantVoice = own ? voice : offlineVoiceFor(voice);
      const mixed = await mixRecording({
        turns,
        synthesizer: this.deps.synthesizer(),
        assistantSynthesizer: own ?? undefined,
        assistantVoice,
        calleeVoice: {
          ...offlineVoiceFor(voice),
          voiceId: calleeVoiceFor(offlineVoiceFor(voice).voiceId),
          speed: 1,
        },
      });
      await recordings.put(key, mixed.wav);
      await calls.recordingReady(row.projectId, row.id, owner, {
        key,
        durationMs: Math.round(mixed.durationMs),
        turns: mixed.turns,
      });
    } catch (err) {
      log.warn({ err, callId: row.id, projectId: row.projectId }, 'recording mix failed');
      await calls.recordingFailed(row.projectId, row.id, owner, recordingFailureReason(err)).catch(() => {});
    }
  }
}
