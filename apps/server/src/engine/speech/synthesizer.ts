import type { SynthesisVendor } from '@callpilot/contracts';
import type { Clock } from '../clock';
import { createAliyunSynthesizer } from './aliyun-synthesizer';
import { createCosyVoiceSynthesizer } from './cosyvoice-synthesizer';
import { createOpenAISynthesizer } from './openai-synthesizer';
import { aliyunTokenUrlFor } from './recognizer';
import type { StreamingSynthesizer } from './synthesis';
import { createTencentSynthesizer } from './tencent-synthesizer';
import { createVolcengineSynthesizer } from './volcengine-synthesizer';

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
  // An empty field means the vendor's default; the synthesisers know theirs.
  const orDefault = (value: string) => value || undefined;
  switch (profile.vendor) {
    case 'openai_compatible':
      return createOpenAISynthesizer({
        baseUrl: profile.baseUrl,
        apiKey: profile.apiKey,
        model: profile.model,
        ...options,
      });
    case 'cosyvoice':
      return createCosyVoiceSynthesizer({
        apiKey: profile.apiKey,
        url: orDefault(profile.baseUrl),
        model: orDefault(profile.model),
        ...options,
      });
    case 'aliyun_nls': {
      const gatewayUrl = orDefault(profile.baseUrl);
      return createAliyunSynthesizer({
        appKey: profile.appId,
        accessKeyId: profile.keyId,
        accessKeySecret: profile.apiKey,
        gatewayUrl,
        tokenUrl: gatewayUrl ? aliyunTokenUrlFor(gatewayUrl) : undefined,
        ...options,
      });
    }
    case 'tencent':
      return createTencentSynthesizer({
        appId: profile.appId,
        secretId: profile.keyId,
        secretKey: profile.apiKey,
        host: orDefault(profile.baseUrl),
        ...options,
      });
    case 'volcengine':
      return createVolcengineSynthesizer({
        appId: profile.appId,
        token: profile.apiKey,
        cluster: profile.model || 'volcano_tts',
        baseUrl: orDefault(profile.baseUrl),
        ...options,
      });
  }
}
