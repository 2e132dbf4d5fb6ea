import { type CallTurn, type FlowGraph, type FlowStep, flowGraph } from '@callpilot/contracts';
import { VirtualClock } from '../../clock';
import { runFlow } from '../interpreter';
import type { FlowDeps, FlowEvents, FlowRunResult, LoadedFlow } from '../types';
import { type CallerAction, ScriptLeg, type ScriptTransfer } from './script-leg';

/**
 * Flows written compactly for tests and the bench: nodes as [id, type, data], edges as
 * [source, exit, target], parsed through the contracts so every unset setting has its default.
 */
export type NodeSpec = [id: string, type: string, data?: Record<string, unknown>, name?: string];
export type EdgeSpec = [source: string, exit: string, target: string];

export function buildGraph(nodes: NodeSpec[], edges: EdgeSpec[]): FlowGraph {
  return flowGraph.parse({
    nodes: nodes.map(([id, type, data, name], i) => ({
      id,
      type,
      name: name ?? '',
      position: { x: 0, y: i * 100 },
      ...(data ? { data } : {}),
    })),
    edges: edges.map(([source, sourceHandle, target], i) => ({
      id: `e${i}`,
      source,
      sourceHandle,
      target,
    })),
  });
}

export function buildFlow(
  nodes: NodeSpec[],
  edges: EdgeSpec[],
  meta: { flowId?: string; name?: string; version?: number | null } = {},
): LoadedFlow {
  return {
    flowId: meta.flowId ?? 'flow-main',
    name: meta.name ?? '测试流程',
    version: meta.version === undefined ? 1 : meta.version,
    graph: buildGraph(nodes, edges),
  };
}

export interface ScriptedRun {
  flow: LoadedFlow;
  script?: CallerAction[];
  transfers?: ScriptTransfer[];
  /** China time the call is answered at (default a Wednesday, 2026-11-18 10:00). */
  at?: string;
  caller?: string;
  callee?: string;
  variables?: Record<string, string>;
  deps?: Partial<Omit<FlowDeps, 'clock'>>;
  signal?: AbortSignal;
  whenScriptEnds?: 'silence' | 'hangup';
  clock?: VirtualClock;
  /** Called once the leg exists (e.g. to hang it up at some clock time). */
  onLeg?: (leg: ScriptLeg, clock: VirtualClock) => void;
}

export interface ScriptedOutcome {
  result: FlowRunResult;
  leg: ScriptLeg;
  clock: VirtualClock;
  /** What the events reported, in order. */
  steps: Array<{ step: FlowStep; variables: Record<string, string> }>;
  turns: CallTurn[];
  waits: Array<{ nodeId: string; kind: string; timeoutSec: number }>;
  sms: Array<{ to: string; content: string }>;
}

/** Runs a flow over a ScriptLeg on a virtual clock until the call is over. */
export async function runScripted(run: ScriptedRun): Promise<ScriptedOutcome> {
  const clock =
    run.clock ?? new VirtualClock({ startAt: Date.parse(`${run.at ?? '2026-11-18T10:00'}:00+08:00`) });
  const leg = new ScriptLeg({
    clock,
    script: run.script ?? [],
    transfers: run.transfers,
    from: run.caller ?? '13800138000',
    to: run.callee ?? '4008001234',
    whenScriptEnds: run.whenScriptEnds,
  });
  run.onLeg?.(leg, clock);
  const steps: ScriptedOutcome['steps'] = [];
  const turns: CallTurn[] = [];
  const waits: ScriptedOutcome['waits'] = [];
  const sms: ScriptedOutcome['sms'] = [];
  const deps: FlowDeps = {
    clock,
    loadSubflow: async (flowId) => {
      throw new Error(`子流程 ${flowId} 不存在`);
    },
    http: async () => ({ ok: false, status: null, error: '未配置', ms: 0 }),
    sendSms: async (to, content) => {
      sms.push({ to, content });
    },
    runAssistant: async (request) => ({
      outcome: 'completed',
      grade: null,
      assistantId: request.assistantId,
      assistantName: '测试小助手',
      version: request.version,
    }),
    ...run.deps,
  };
  const events: FlowEvents = {
    onStep: (step, variables) => {
      steps.push({ step, variables: { ...variables } });
    },
    onTurn: (turn) => {
      turns.push(turn);
    },
    onWaiting: (waiting) => {
      waits.push(waiting);
    },
  };
  const result = await clock.run(() =>
    runFlow(
      {
        flow: run.flow,
        leg,
        callId: 'call-flow-1',
        caller: leg.from,
        callee: leg.to,
        variables: run.variables,
        signal: run.signal,
      },
      deps,
      events,
    ),
  );
  return { result, leg, clock, steps, turns, waits, sms };
}

/** The path as `nodeId:exit` (exit null as `nodeId:-`), the shortest thing to assert a route with. */
export const route = (result: FlowRunResult) => result.path.map((s) => `${s.nodeId}:${s.exit ?? '-'}`);

/** What the caller heard, line by line. */
export const heard = (result: FlowRunResult) =>
  result.turns.filter((t) => t.speaker === 'assistant').map((t) => t.text);
