import { createHash } from 'node:crypto';
import { CLONED_VOICE_PREFIX, OFFLINE_VOICE_PROVIDER } from '@callpilot/contracts';
import type { Database } from '../../db/client';
import type { Clock } from '../../engine/clock';
import {
  type StreamingSynthesizer,
  type SynthesisVoice,
  streamingFromWhole,
} from '../../engine/speech/synthesis';
import { createSynthesizer } from '../../engine/speech/synthesizer';
import type { SpeechSynthesizer } from '../../engine/speech/types';
import { AppError } from '../../lib/errors';
import type { AppSecret } from '../../lib/secret-box';
import { resolveClonedVoice } from '../voice-clones/voice-clones.service';
import { resolveSynthesisProvider } from './synthesis-providers.service';

/** A voice as an assistant (or the project's fallback) names it. */
export interface NamedVoice extends SynthesisVoice {
  /** 'espeak' or a synthesis profile id of the project. */
  provider: string;
}

/** A voice ready to speak: its synthesiser and the voice as the vendor knows it. */
export interface ResolvedVoice {
  synthesizer: StreamingSynthesizer;
  /** The vendor's voice id: a cloned voice's own id never leaves the server. */
  voice: SynthesisVoice;
  /** Names the voice in caches (provider and our voice id, never the vendor's secret). */
  key: string;
}

/** Synthesisers kept per process: their pooled connections are what makes the next sentence fast. */
const MAX_POOLED = 50;

/**
 * Turns an assistant's voice into something that speaks, within its own project only: the
 * offline voice, a profile's preset voice, or a cloned voice (resolved to its vendor id here and
 * nowhere else). Synthesisers are kept per profile (keyed by a hash of its settings, so an edited
 * profile gets a new one) and reused across calls, keeping their connections warm.
 */
export function createVoiceResolver(
  db: Database,
  secret: AppSecret,
  options: { offline: () => SpeechSynthesizer; clock?: Clock },
) {
  const pool = new Map<string, StreamingSynthesizer>();
  let offline: StreamingSynthesizer | undefined;

  function pooled(profileKey: string, make: () => StreamingSynthesizer): StreamingSynthesizer {
    const hit = pool.get(profileKey);
    if (hit) {
      pool.delete(profileKey);
      pool.set(profileKey, hit);
      return hit;
    }
    const made = make();
    pool.set(profileKey, made);
    for (const [oldest, synthesizer] of pool) {
      if (pool.size <= MAX_POOLED) break;
      pool.delete(oldest);
      void synthesizer.close?.().catch(() => undefined);
    }
    return made;
  }

  return {
    async resolve(projectId: string, named: NamedVoice, timeoutMs?: number): Promise<ResolvedVoice> {
      const { provider, voiceId, speed, volume } = named;
      if (provider === OFFLINE_VOICE_PROVIDER) {
        offline ??= streamingFromWhole(options.offline());
        return { synthesizer: offline, voice: { voiceId, speed, volume }, key: `espeak:${voiceId}` };
      }
      let vendorVoiceId = voiceId;
      let cluster: string | undefined;
      if (voiceId.startsWith(CLONED_VOICE_PREFIX)) {
        const clone = await resolveClonedVoice(db, projectId, voiceId);
        if (!clone || clone.profileId !== provider) {
          throw new AppError(
            400,
            'VALIDATION_FAILED',
            '字段 voice.voiceId：复刻音色不存在、尚未可用或不属于该语音合成配置',
          );
        }
        vendorVoiceId = clone.vendorVoiceId;
        // Volcengine speaks its clones on their own cluster, whatever the profile uses for presets.
        if (clone.vendor === 'volcengine') cluster = 'volcano_icl';
      }
      const found = await resolveSynthesisProvider(db, secret, projectId, provider);
      if (!found) {
        throw new AppError(
          400,
          'VALIDATION_FAILED',
          '字段 voice.provider：音色所属的语音合成配置不存在或不属于本项目',
        );
      }
      const profile = cluster ? { ...found, model: cluster } : found;
      const profileKey = createHash('sha256')
        .update(JSON.stringify([provider, profile, timeoutMs ?? null]))
        .digest('hex');
      return {
        synthesizer: pooled(profileKey, () =>
          createSynthesizer(profile, { clock: options.clock, timeoutMs }),
        ),
        voice: { voiceId: vendorVoiceId, speed, volume },
        key: `${provider}:${voiceId}`,
      };
    },
    async close() {
      const all = [...pool.values()];
      pool.clear();
      await Promise.all(all.map((synthesizer) => synthesizer.close?.().catch(() => undefined)));
    },
  };
}

export type VoiceResolver = ReturnType<typeof createVoiceResolver>;
