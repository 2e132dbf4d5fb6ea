import {
  type CallTurn,
  type EndReason,
  FLOW_NODE_LABELS,
  type FlowGraph,
  type FlowStep,
  type HangupBy,
} from '@callpilot/contracts';
import { runFlow } from '../flow/interpreter';
import type {
  FlowAssistantOutcome,
  FlowAssistantRequest,
  FlowDeps,
  FlowHttpResult,
  FlowRunResult,
  LoadedFlow,
} from '../flow/types';
import type { SessionResult } from '../session/types';
import type { CallLeg, InboundOffer, LegMedia } from '../telephony/types';
import { fillConfig } from './fill-config';
import type { CallAssistant, NewCallRecord } from './ports';
import { afterCall, type CallDeps, type CallOutcome, type CallSpeech, ioFor, talk } from './run-call';

/** Where an inbound call goes when a number is bound to a flow. */
export interface FlowCallRoute {
  projectId: string;
  flowId: string;
  /** The project's concurrentCallin: beyond it the caller hears busy. */
  callinLimit: number;
  /** 'draft': the editor's 模拟来电 runs the unpublished draft; otherwise the live version. */
  version?: 'draft';
}

export interface FlowCallOptions {
  signal?: AbortSignal;
  /** Aborted when the process stops: a call cut off by it ends as 系统中断. */
  shutdown?: AbortSignal;
  /** Told once the record exists (the console follows a 模拟来电 by its id). */
  onCreated?: (callId: string) => void;
  /** Starting variables of the flow. */
  variables?: Record<string, string>;
}

/** The voice a flow's prompts are spoken in and the recogniser its speech nodes listen with. */
export const flowSpeech = (graph: FlowGraph): CallSpeech => ({
  voice: graph.settings.voice,
  hearing: { providerId: graph.settings.recognizerId, hotwords: [] },
});

/**
 * An assistant, in the flow that lent it the line, offers a person whenever it would allow one:
 * where people answer is the flow's own transfer exit, so an assistant without a transfer number
 * of its own still hands a caller who asks for one back (the brains offer a transfer only with a
 * number; this one is never dialled, the handed-off session dials nothing).
 */
export function lentConfig(config: CallAssistant['config']): CallAssistant['config'] {
  const c = config.conversation;
  if (c.transferWhen === 'never' || c.transferNumber) return config;
  return { ...config, conversation: { ...c, transferNumber: 'flow' } };
}

/** How an assistant node's conversation ended, as the flow continues with it. */
export function assistantOutcome(session: SessionResult): FlowAssistantOutcome['outcome'] {
  if (session.transferRequested) return 'transfer';
  if (session.endReason === 'callee_hangup') return 'hangup';
  if (session.endReason === 'failed') return 'failed';
  return 'completed';
}

/** No HTTP client wired (engine tests of other nodes): the node takes its failure exit. */
const noHttp = async (): Promise<FlowHttpResult> => ({
  ok: false,
  status: null,
  error: 'HTTP 请求不可用',
  ms: 0,
});

const MAX_SUMMARY_PARTS = 12;

/**
 * The path of a flow call as a person would note it, for a call no assistant graded:
 * '按键 1 → 账单查询 → 挂机（非工作时间）'.
 */
export function flowPathSummary(path: FlowStep[], endReason: EndReason): string {
  if (path.length === 0) return endReason === 'no_answer' ? '来电者在接听前挂断。' : '通话未进入流程。';
  const parts: string[] = [];
  for (const step of path) {
    let part: string | null;
    switch (step.nodeType) {
      case 'start':
        part = null;
        break;
      case 'menu':
        part = step.exit?.startsWith('key:')
          ? `按键 ${step.exit.slice(4)}`
          : step.exit && step.detail
            ? `${step.nodeName}：${step.detail}`
            : step.nodeName;
        break;
      case 'condition':
      case 'speech':
      case 'transfer':
      case 'voicemail':
      case 'http':
        // The call ending in the node has its detail said once, at the end.
        part = step.detail && step.exit !== null ? `${step.nodeName}：${step.detail}` : step.nodeName;
        break;
      case 'hangup':
        part = step.detail && step.detail !== '挂机' ? `挂机（${step.detail}）` : '挂机';
        break;
      default:
        part = step.nodeName || FLOW_NODE_LABELS[step.nodeType];
    }
    if (part && parts.at(-1) !== part) parts.push(part);
  }
  const last = path.at(-1);
  if (endReason === 'callee_hangup' && last?.exit === null) parts.push('来电者挂机');
  const shown =
    parts.length > MAX_SUMMARY_PARTS ? [...parts.slice(0, MAX_SUMMARY_PARTS - 2), '…', parts.at(-1)] : parts;
  return shown.join(' → ');
}

/** What a person would note down from a flow call no assistant graded. */
function flowFields(result: FlowRunResult): Record<string, string> {
  const fields: Record<string, string> = {};
  const keys = result.turns.flatMap((t) => (t.speaker === 'callee' && t.dtmf ? [t.dtmf] : [])).join(' ');
  if (keys) fields.客户按键 = keys;
  if (result.voicemail?.text) fields.留言 = result.voicemail.text;
  if (result.transfer?.ok) fields.转接号码 = result.transfer.number;
  return fields;
}

/**
 * An inbound call answered by a call flow, from ring to analysis: recorded like any call (with the
 * flow, its version and the path it takes), admitted within concurrentCallin, answered with the
 * flow's voice, run by the interpreter, and handed to the post-call pipeline every call shares.
 * An assistant node borrows the same line (with the assistant's voice on a real line) and gives it
 * back. Never throws for a call that went wrong: it ends as `failed` with the reason reported.
 */
export async function runFlowCall(
  deps: CallDeps,
  offer: InboundOffer,
  route: FlowCallRoute,
  options: FlowCallOptions = {},
): Promise<CallOutcome> {
  const { clock, ports } = deps;
  const io = ioFor(clock);
  const { projectId } = route;
  const callId = offer.callId;
  const at = () => new Date(clock.now());
  const base: NewCallRecord = {
    id: callId,
    projectId,
    direction: 'inbound',
    callerNumber: offer.from,
    calleeNumber: offer.to,
    persona: offer.persona ?? null,
    assistantId: null,
    assistantName: '',
    assistantVersion: null,
    variables: options.variables ?? {},
    flowId: route.flowId,
    startedAt: at(),
  };

  const flows = ports.flows;
  let flow: LoadedFlow | null = null;
  try {
    if (!flows) throw new Error('flows are not available to this engine');
    flow = await io(flows.forCall(projectId, route.flowId, route.version));
  } catch (err) {
    // Unpublished or deleted since it was bound: the number answers nobody.
    deps.onError?.(err, 'inbound flow');
  }
  if (!flow || !flows) {
    await io(ports.recorder.create(base));
    options.onCreated?.(callId);
    await offer.reject('unavailable');
    await io(
      ports.recorder.end(projectId, callId, { endReason: 'not_bound', hangupBy: 'system', endedAt: at() }),
    );
    return { callId, endReason: 'not_bound' };
  }
  const loaded = flow;
  const admitted = await io(
    ports.recorder.createInbound(
      { ...base, flowName: loaded.name, flowVersion: loaded.version },
      route.callinLimit,
    ),
  );
  options.onCreated?.(callId);
  if (admitted === 'over_limit') {
    await offer.reject('busy');
    return { callId, endReason: 'callin_limit' };
  }

  let endReason: EndReason = 'failed';
  let hangupBy: HangupBy = 'system';
  let endedAt = at();
  let result: FlowRunResult | null = null;
  let leg: CallLeg | null = null;
  const sessions: { assistant: CallAssistant; config: CallAssistant['config']; session: SessionResult }[] =
    [];
  // Steps and turns are written in the order they happen, one at a time, whatever the interpreter awaits.
  let writes: Promise<void> = Promise.resolve();
  const write = (context: string, work: () => Promise<void>) => {
    writes = writes.then(work).catch((err) => deps.onError?.(err, context));
    return writes;
  };
  try {
    if (offer.cancelled.aborted) {
      // The caller gave up while it rang: for them, nobody answered.
      endReason = 'no_answer';
    } else {
      const flowMedia = deps.legMedia
        ? await io(deps.legMedia(projectId, flowSpeech(loaded.graph)))
        : undefined;
      const line = await offer.answer(flowMedia);
      leg = line;
      await io(ports.recorder.answered(projectId, callId, new Date(line.answeredAt)));

      const runAssistant = async (request: FlowAssistantRequest): Promise<FlowAssistantOutcome> => {
        const assistant = await io(
          ports.assistants.forCall(projectId, request.assistantId, request.version ?? undefined),
        );
        const config = fillConfig(assistant.config, request.variables);
        let lent: LegMedia | undefined;
        if (request.leg.useMedia && deps.legMedia) {
          lent = await io(deps.legMedia(projectId, assistant.config));
          request.leg.useMedia(lent);
        }
        try {
          const session = await talk(
            deps,
            {
              projectId,
              callId,
              config: lentConfig(config),
              leg: request.leg,
              remoteNumber: offer.from,
              signal: request.signal,
              handoff: true,
            },
            ({ index: _index, ...turn }: CallTurn) => request.onTurn(turn),
          );
          deps.observe?.(callId, session);
          if (session.error) deps.onError?.(session.error, 'session');
          sessions.push({ assistant, config, session });
          return {
            outcome: assistantOutcome(session),
            grade: session.liveGrade?.grade ?? null,
            assistantId: assistant.assistantId,
            assistantName: assistant.name,
            version: assistant.version,
          };
        } finally {
          // The flow speaks with its own voice again.
          if (lent && flowMedia) request.leg.useMedia?.(flowMedia);
        }
      };

      const flowDeps: FlowDeps = {
        clock,
        // A subflow runs its live version, whichever version (or draft) called it.
        loadSubflow: (flowId) => io(flows.forCall(projectId, flowId)),
        http: deps.flowHttp ?? noHttp,
        sendSms: (to, content) =>
          io(
            ports.actions.sendSms({
              projectId,
              callId,
              to,
              template: 'flow_sms',
              variables: { content, flowName: loaded.name },
            }),
          ),
        runAssistant,
        audio: (audioId) => io(flows.audio(projectId, audioId)),
      };
      result = await runFlow(
        {
          flow: loaded,
          leg: line,
          callId,
          caller: offer.from,
          callee: offer.to,
          variables: options.variables,
          signal: options.signal,
        },
        flowDeps,
        {
          onStep: (step) => write('flow step', () => io(ports.recorder.flowStep(projectId, callId, step))),
          onTurn: (turn) => write('turn', () => io(ports.recorder.turn(projectId, callId, turn))),
        },
      );
      // A transferred call is over for us too: the bridge or the far end has the caller now.
      if (!line.ended) await line.hangup().catch(() => undefined);
      endReason = result.endReason;
      hangupBy = result.hangupBy;
      endedAt = new Date(result.endedAt);
      if (result.error) deps.onError?.(result.error, 'flow');
    }
  } catch (err) {
    deps.onError?.(err, 'call');
    endReason = 'failed';
    hangupBy = 'system';
    endedAt = at();
    if (leg && !leg.ended) await leg.hangup().catch(() => undefined);
  }
  await writes;
  if (options.shutdown?.aborted) {
    // Cut off by our own shutdown, not by the caller.
    endReason = 'interrupted';
    hangupBy = 'system';
  }
  const transfer = result?.transfer?.ok
    ? { number: result.transfer.number, at: new Date(result.transfer.at) }
    : null;
  await io(ports.recorder.end(projectId, callId, { endReason, hangupBy, endedAt, transfer }));
  const graded = sessions.at(-1);
  await afterCall(deps, {
    projectId,
    callId,
    endReason,
    turns: result?.turns ?? [],
    analysis: graded
      ? { config: graded.config, liveGrade: graded.session.liveGrade }
      : {
          summary: flowPathSummary(result?.path ?? [], endReason),
          fields: result ? flowFields(result) : {},
        },
    sessions: sessions.map(({ assistant, session }) => ({ assistantName: assistant.name, session })),
    remoteNumber: offer.from,
    recorded: leg !== null,
    lineRecorded: leg?.recordsLine === true,
  });
  return { callId, endReason };
}
