import { SYNTHESIS_VENDOR_LABELS, type SynthesisVendor } from '@callpilot/contracts';
import { ProviderError } from '../brain/openai-client';
import type { Clock } from '../clock';
import { createOpenAISynthesizer } from './openai-synthesizer';
import { type StreamingSynthesizer, SYNTHESIS_SERVICE } from './synthesis';

/**
 * A project's speech-synthesis profile as a call needs it, key decrypted. The assistants module
 * resolves it per call (`AssistantSource.synthesizer`); the key goes no further than the
 * synthesiser built from it.
 */
export interface SynthesizerProfile {
  vendor: SynthesisVendor;
  /** OpenAI-compatible base URL, DashScope or NLS websocket, Tencent host, Volcengine origin. */
  baseUrl: string;
  /** OpenAI-compatible or CosyVoice model, Volcengine cluster; unused by the others. */
  model: string;
  /** Aliyun Appkey, Tencent AppID, Volcengine APP ID. */
  appId: string;
  /** Aliyun AccessKey ID, Tencent SecretId. */
  keyId: string;
  /** The secret: API key, AccessKey Secret, SecretKey or Access Token. */
  apiKey: string;
}

/** The synthesiser a call (or a profile's 测试, or a 试听) speaks with: the one place that knows each vendor. */
export function createSynthesizer(
  profile: SynthesizerProfile,
  options: { clock?: Clock; timeoutMs?: number } = {},
): StreamingSynthesizer {
  switch (profile.vendor) {
    case 'openai_compatible':
      return createOpenAISynthesizer({
        baseUrl: profile.baseUrl,
        apiKey: profile.apiKey,
        model: profile.model,
        ...options,
      });
    // CosyVoice, Aliyun NLS, Tencent and Volcengine synthesisers come from parallel branches and
    // are wired in here when they merge; until then their profiles say so instead of failing later.
    default:
      throw new ProviderError(
        'bad_request',
        `暂不支持该语音合成服务（${SYNTHESIS_VENDOR_LABELS[profile.vendor]}）`,
        undefined,
        SYNTHESIS_SERVICE.id,
      );
  }
}
