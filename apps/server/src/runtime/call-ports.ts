import type { AssistantConfig } from '@callpilot/contracts';
import type { Database } from '../db/client';
import type { CallPorts } from '../engine/call/ports';
import type { RecordingStore } from '../engine/recording/store';
import type { RecognizerResolver, SynthesizerResolver } from '../modules/assistants/call-config';
import { assistantSource } from '../modules/assistants/call-config';
import type { ProviderResolver } from '../modules/assistants/test-chat';
import type { CallRepository } from '../modules/calls/call-repository';
import { doNotCallList } from '../modules/do-not-call/do-not-call.service';
import { flowSource } from '../modules/flows/flow-source';
import type { LlmAssist } from '../modules/knowledge/answer';
import { knowledgeSource } from '../modules/knowledge/call-knowledge';
import type { Embedder } from '../modules/knowledge/embedder';
import { inboundRoutes } from '../modules/numbers/numbers.service';
import { sendCallSms, sendFollowUpSms } from '../modules/sms/sms-follow-up';

/** The modules' implementations of the engine's ports, wired once (the runtime, and the benchmarks). */
export function createCallPorts(options: {
  db: Database;
  repository: CallRepository;
  resolveProvider: ProviderResolver;
  resolveRecognizer: RecognizerResolver;
  resolveSynthesizer: SynthesizerResolver;
  embedderFor: (projectId: string) => Promise<Embedder | undefined>;
  /** An assistant's model as knowledge rewriter and re-ranker (llm-assist.ts); absent, none runs. */
  knowledgeAssistFor?: (projectId: string, config: AssistantConfig) => Promise<LlmAssist | undefined>;
  /** Where uploaded flow prompts are stored (beside the recordings); absent, none is found (benchmarks). */
  recordings?: RecordingStore;
  onError: (err: unknown, context: string) => void;
}): CallPorts {
  const { db } = options;
  return {
    assistants: assistantSource(
      db,
      options.resolveProvider,
      options.resolveRecognizer,
      options.resolveSynthesizer,
    ),
    flows: flowSource(db, options.recordings),
    knowledge: knowledgeSource(db, {
      embedderFor: options.embedderFor,
      assistFor: options.knowledgeAssistFor,
      onError: options.onError,
    }),
    doNotCall: doNotCallList(db),
    recorder: options.repository,
    inbound: inboundRoutes(db),
    actions: {
      // Every SMS of a call is a record in the SMS module's queue, sent by its worker.
      sendSms: async (request) => {
        await sendCallSms(db, request, { onError: options.onError });
      },
      afterCall: async (call) => {
        await sendFollowUpSms(db, call, { onError: options.onError });
      },
    },
  };
}
