import type { Database } from '../../db/client';
import type { Env } from '../../env';
import { loadAppSecret } from '../../lib/secret-box';
import { resolveProvider } from '../llm-providers/llm-providers.service';
import { resolveSpeechProvider } from '../speech-providers/speech-providers.service';
import { resolveSynthesisProvider } from '../synthesis-providers/synthesis-providers.service';
import type { RecognizerResolver, SynthesizerResolver } from './call-config';
import type { ProviderResolver } from './test-chat';

/** The project's provider profile, key decrypted, for the brain; the key goes no further. */
export function providerResolver(db: Database, env: Env): ProviderResolver {
  const secret = loadAppSecret(env);
  return async (projectId, providerId) => {
    const provider = await resolveProvider(db, secret, projectId, providerId);
    return provider && { baseUrl: provider.baseUrl, model: provider.model, apiKey: provider.apiKey };
  };
}

/** The project's speech-recognition profile, key decrypted, for a call's recogniser. */
export function recognizerResolver(db: Database, env: Env): RecognizerResolver {
  const secret = loadAppSecret(env);
  return (projectId, providerId) => resolveSpeechProvider(db, secret, projectId, providerId);
}

/** The project's speech-synthesis profile, key decrypted, for a call's voice. */
export function synthesizerResolver(db: Database, env: Env): SynthesizerResolver {
  const secret = loadAppSecret(env);
  return (projectId, providerId) => resolveSynthesisProvider(db, secret, projectId, providerId);
}
