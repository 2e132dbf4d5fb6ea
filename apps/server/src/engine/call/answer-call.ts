import type { InboundOffer } from '../telephony/types';
import { runFlowCall } from './flow-call';
import type { CallAssistant } from './ports';
import { type CallDeps, type CallOutcome, converse, ioFor } from './run-call';

/**
 * An inbound call from ring to analysis: the dialled number's route decides who answers (its
 * assistant, or its call flow); a number nobody answers is refused and recorded, and beyond the
 * project's concurrentCallin the caller hears busy. An answered call then runs exactly like an
 * outbound one.
 */
export async function answerCall(
  deps: CallDeps,
  offer: InboundOffer,
  options: {
    signal?: AbortSignal;
    shutdown?: AbortSignal;
    /** Told once the record exists (the console follows a 模拟来电 by its id). */
    onCreated?: (callId: string) => void;
  } = {},
): Promise<CallOutcome | null> {
  const { clock, ports } = deps;
  const io = ioFor(clock);
  const route = await io(ports.inbound.lookup(offer.to));
  const base = {
    id: offer.callId,
    direction: 'inbound' as const,
    callerNumber: offer.from,
    calleeNumber: offer.to,
    persona: offer.persona ?? null,
    startedAt: new Date(clock.now()),
  };
  if (!route) {
    // Not one of ours: nobody to record it for.
    await offer.reject('unavailable');
    return null;
  }
  if (route.flowId) {
    return runFlowCall(
      deps,
      offer,
      { projectId: route.projectId, flowId: route.flowId, callinLimit: route.callinLimit },
      options,
    );
  }
  let assistant: CallAssistant | null = null;
  if (route.assistantId) {
    try {
      assistant = await io(ports.assistants.forCall(route.projectId, route.assistantId));
    } catch (err) {
      // Unpublished or deleted since it was bound: the number answers nobody.
      deps.onError?.(err, 'inbound assistant');
    }
  }
  if (!assistant) {
    await io(
      ports.recorder.create({
        ...base,
        projectId: route.projectId,
        assistantId: null,
        assistantName: '',
        assistantVersion: null,
      }),
    );
    options.onCreated?.(offer.callId);
    await offer.reject('unavailable');
    await io(
      ports.recorder.end(route.projectId, offer.callId, {
        endReason: 'not_bound',
        hangupBy: 'system',
        endedAt: new Date(clock.now()),
      }),
    );
    return { callId: offer.callId, endReason: 'not_bound' };
  }
  const admitted = await io(
    ports.recorder.createInbound(
      {
        ...base,
        projectId: route.projectId,
        assistantId: assistant.assistantId,
        assistantName: assistant.name,
        assistantVersion: assistant.version,
      },
      route.callinLimit,
    ),
  );
  options.onCreated?.(offer.callId);
  if (admitted === 'over_limit') {
    await offer.reject('busy');
    return { callId: offer.callId, endReason: 'callin_limit' };
  }
  return converse(deps, {
    projectId: route.projectId,
    callId: offer.callId,
    assistant,
    variables: {},
    remoteNumber: offer.from,
    signal: options.signal,
    shutdown: options.shutdown,
    connect: async () => {
      // The caller gave up while it rang: for them, nobody answered.
      if (offer.cancelled.aborted) return { outcome: 'no_answer' };
      const media = deps.legMedia ? await io(deps.legMedia(route.projectId, assistant.config)) : undefined;
      return { leg: await offer.answer(media) };
    },
  });
}
