import type { AssistantConfig, SpeechVendor } from '@callpilot/contracts';
import type { AssistantSource } from '../call/ports';
import type { Clock } from '../clock';
import { ALIYUN_TOKEN_URL } from './aliyun-token';
import { createAliyunRecognizer } from './aliyun-transcriber';
import { createFunAsrRecognizer } from './funasr-recognizer';
import { createOpenAITranscriber } from './openai-transcriber';
import { createTencentRecognizer } from './tencent-recognizer';
import type { SpeechRecognizer } from './types';

/**
 * A project's speech-recognition profile as a call needs it, key decrypted. The assistants
 * module resolves it per call (`AssistantSource.recognizer`); the key goes no further than the
 * recogniser built from it.
 */
export interface RecognizerProfile {
  vendor: SpeechVendor;
  /** OpenAI-compatible base URL, FunASR ws(s):// server, Aliyun gateway, Tencent host. */
  baseUrl: string;
  /** OpenAI-compatible model, FunASR streaming mode, Tencent engine; unused by Aliyun. */
  model: string;
  /** Aliyun Appkey, Tencent AppID. */
  appId: string;
  /** Aliyun AccessKey ID, Tencent SecretId. */
  keyId: string;
  /** The secret: API key, FunASR proxy token, AccessKey Secret or SecretKey. */
  apiKey: string;
}

/**
 * Where CreateToken lives for an Aliyun gateway. Aliyun's own gateways
 * (`nls-gateway-cn-beijing.aliyuncs.com`, `nls-gateway.cn-shanghai.aliyuncs.com`, their -internal
 * forms) take tokens from nls-meta in the same region. Any other host is a proxy or a local stand-in
 * in front of both, so the token is asked of the same origin over http(s).
 */
export function aliyunTokenUrlFor(gatewayUrl: string): string {
  let url: URL;
  try {
    url = new URL(gatewayUrl);
  } catch {
    // The recogniser reports a malformed gateway itself, in Chinese.
    return ALIYUN_TOKEN_URL;
  }
  const region = /^nls-gateway[.-]([a-z0-9-]+?)(?:-internal)?\.aliyuncs\.com$/.exec(url.hostname)?.[1];
  if (region) return `https://nls-meta.${region}.aliyuncs.com/`;
  if (url.hostname.endsWith('.aliyuncs.com')) return ALIYUN_TOKEN_URL;
  return `${url.protocol === 'wss:' ? 'https:' : 'http:'}//${url.host}/`;
}

/** The recogniser a SIP leg (or a profile's 测试) listens with: the one place that knows each vendor. */
export function createRecognizer(
  profile: RecognizerProfile,
  options: { clock?: Clock; timeoutMs?: number } = {},
): SpeechRecognizer {
  // An empty field means the vendor's default; the recognisers know theirs.
  const orDefault = (value: string) => value || undefined;
  switch (profile.vendor) {
    case 'openai_compatible':
      return createOpenAITranscriber({
        baseUrl: profile.baseUrl,
        apiKey: profile.apiKey,
        model: profile.model,
        ...options,
      });
    case 'funasr':
      return createFunAsrRecognizer({
        url: profile.baseUrl,
        mode: profile.model === 'online' ? 'online' : '2pass',
        token: orDefault(profile.apiKey),
        ...options,
      });
    case 'aliyun_nls': {
      const gatewayUrl = orDefault(profile.baseUrl);
      return createAliyunRecognizer({
        appKey: profile.appId,
        accessKeyId: profile.keyId,
        accessKeySecret: profile.apiKey,
        gatewayUrl,
        tokenUrl: gatewayUrl ? aliyunTokenUrlFor(gatewayUrl) : undefined,
        ...options,
      });
    }
    case 'tencent':
      return createTencentRecognizer({
        appId: profile.appId,
        secretId: profile.keyId,
        secretKey: profile.apiKey,
        engine: orDefault(profile.model),
        host: orDefault(profile.baseUrl),
        ...options,
      });
  }
}

/**
 * The recogniser an assistant listens with on a real line: its own hearing's profile, else the
 * project's primary recogniser (语音配置). null when neither names one (or the profile is gone):
 * such a call still runs, understanding key presses only.
 */
export async function recognizerFor(
  source: Pick<AssistantSource, 'recognizer' | 'speechSettings'>,
  projectId: string,
  config: Pick<AssistantConfig, 'hearing'>,
  options: { clock?: Clock; timeoutMs?: number } = {},
): Promise<SpeechRecognizer | null> {
  const providerId =
    config.hearing.providerId ?? (await source.speechSettings(projectId)).recognitionPrimaryId;
  const profile = providerId ? await source.recognizer(projectId, providerId) : null;
  return profile ? createRecognizer(profile, options) : null;
}
