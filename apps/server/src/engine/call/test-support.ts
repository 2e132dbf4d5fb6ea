import {
  type AssistantConfig,
  assistantConfig,
  type CallTurn,
  type FlowStep,
  type RetrievedSegment,
  speechSettings,
} from '@callpilot/contracts';
import { findTemplate } from '../../modules/assistants/assistants.templates';
import { VirtualClock } from '../clock';
import type { LoadedFlow } from '../flow/types';
import { createSimCarrier, type SimTransferFailure } from '../telephony/sim/sim-carrier';
import type {
  CallAnalysisRecord,
  CallEnd,
  CallPorts,
  CallSmsRequest,
  InboundRoute,
  KnowledgeLookup,
  NewCallRecord,
} from './ports';
import type { CallDeps } from './run-call';

/**
 * A knowledge lookup as the knowledge module would give it: answered from `segments` when there
 * are any (confidence the best score), else refused with nothing found; `over` adjusts it.
 */
export const knowledgeLookup = (
  segments: RetrievedSegment[],
  over: Partial<KnowledgeLookup> = {},
): KnowledgeLookup => ({
  verdict: segments.length > 0 ? 'answer' : 'no_match',
  confidence: segments[0]?.score ?? 0,
  threshold: 0.3,
  segments,
  nearest: null,
  rewriteMs: null,
  rerankMs: null,
  ...over,
});

/*
 * Tests only: the engine's ports in memory, recording what a call writes and in which order, and
 * the clock and simulated carrier a call runs on.
 */

/** The customer follow-up template's config, as the engine's tests run it. */
export const followUpConfig = (): AssistantConfig => {
  const template = findTemplate('customer-follow-up');
  if (!template) throw new Error('template missing');
  return assistantConfig.parse(template.config);
};

export interface Memory {
  /** Each write's kind in order; consecutive turns (or steps) count once. */
  writes: string[];
  calls: Map<string, NewCallRecord & { status: string; endReason?: string; end?: CallEnd }>;
  turns: Map<string, CallTurn[]>;
  steps: Map<string, FlowStep[]>;
  analyses: Map<string, CallAnalysisRecord>;
  sms: CallSmsRequest[];
}

export function memoryPorts(
  options: {
    route?: InboundRoute | null;
    providerUrl?: string;
    cfg?: AssistantConfig;
    /** Flows by id; absent: the engine runs without flows. */
    flows?: Record<string, LoadedFlow>;
  } = {},
) {
  const memory: Memory = {
    writes: [],
    calls: new Map(),
    turns: new Map(),
    steps: new Map(),
    analyses: new Map(),
    sms: [],
  };
  const cfg = options.cfg ?? followUpConfig();
  const live = () =>
    [...memory.calls.values()].filter((c) => c.status !== 'ended' && c.direction === 'inbound');
  const once = (write: string) => {
    if (memory.writes.at(-1) !== write) memory.writes.push(write);
  };
  const flows = options.flows;
  const callPorts: CallPorts = {
    assistants: {
      forCall: async (_projectId, assistantId) => ({
        assistantId,
        name: '回访助手',
        version: 3,
        config: cfg,
      }),
      provider: async () =>
        options.providerUrl ? { baseUrl: options.providerUrl, model: 'test-model', apiKey: 'sk-test' } : null,
      recognizer: async () => null,
      synthesizer: async () => null,
      speechSettings: async () => speechSettings.parse({}),
    },
    ...(flows
      ? {
          flows: {
            forCall: async (_projectId, flowId, version) => {
              const flow = flows[flowId];
              if (!flow) throw new Error(`流程 ${flowId} 不存在`);
              return version === 'draft' ? { ...flow, version: null } : flow;
            },
            audio: async () => null,
          },
        }
      : {}),
    knowledge: { retrieve: async () => knowledgeLookup([]), questions: async () => [] },
    doNotCall: {
      optOut: async (_p, phone) => {
        memory.writes.push(`opt-out ${phone}`);
      },
    },
    inbound: {
      lookup: async () =>
        options.route === undefined
          ? { projectId: 'p1', assistantId: 'a1', flowId: null, callinLimit: 2 }
          : options.route,
    },
    recorder: {
      create: async (call) => {
        memory.calls.set(call.id, { ...call, status: 'ringing' });
        memory.writes.push('create');
      },
      createInbound: async (call, limit) => {
        const admitted = live().length < limit;
        memory.calls.set(call.id, {
          ...call,
          status: admitted ? 'ringing' : 'ended',
          ...(admitted ? {} : { endReason: 'callin_limit' }),
        });
        memory.writes.push(admitted ? 'create' : 'create over_limit');
        return admitted ? 'admitted' : 'over_limit';
      },
      answered: async (_p, id) => {
        memory.calls.get(id)!.status = 'in_progress';
        memory.writes.push('answered');
      },
      turn: async (_p, id, turn) => {
        memory.turns.set(id, [...(memory.turns.get(id) ?? []), turn]);
        once('turn');
      },
      flowStep: async (_p, id, step) => {
        memory.steps.set(id, [...(memory.steps.get(id) ?? []), step]);
        once('step');
      },
      end: async (_p, id, end) => {
        Object.assign(memory.calls.get(id)!, { status: 'ended', endReason: end.endReason, end });
        memory.writes.push(`end ${end.endReason}`);
      },
      analysis: async (_p, id, analysis) => {
        memory.analyses.set(id, analysis);
        memory.writes.push('analysis');
      },
      recordingPending: async () => {
        memory.writes.push('recording');
      },
    },
    actions: {
      sendSms: async (request) => {
        memory.sms.push(request);
        memory.writes.push('sms');
      },
      afterCall: async () => {
        memory.writes.push('after call');
      },
    },
  };
  return { callPorts, memory };
}

/** A simulated clock (a Monday morning, China time) and carrier for calls over `callPorts`. */
export function depsWith(
  callPorts: CallPorts,
  seed = 7,
  transferFails?: (number: string) => SimTransferFailure,
) {
  const clock = new VirtualClock({ startAt: Date.parse('2026-03-02T10:00:00+08:00') });
  const carrier = createSimCarrier({ clock, seed, ...(transferFails ? { transferFails } : {}) });
  const deps: CallDeps = { ports: callPorts, clock, carrier };
  return { clock, carrier, deps };
}
