import type { AssistantConfig } from '@callpilot/contracts';
import { createOpenAIBrain } from './openai-brain';
import { createScriptBrain } from './script-brain';
import type { Brain } from './types';

export interface BrainProvider {
  baseUrl: string;
  model: string;
  apiKey: string;
}

/**
 * The brain for one assistant: its provider profile's chat model when one resolves, otherwise
 * the offline script brain (离线脚本模式). A provider id that no longer resolves (profile deleted)
 * arrives here as null and falls back to the script rather than failing the call.
 */
export function createBrain(options: {
  config: AssistantConfig;
  provider: BrainProvider | null;
  fetch?: typeof fetch;
  timeoutMs?: number;
}): Brain {
  if (!options.provider) return createScriptBrain();
  return createOpenAIBrain({ ...options.provider, fetch: options.fetch, timeoutMs: options.timeoutMs });
}
