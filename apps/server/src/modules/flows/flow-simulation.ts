import { randomUUID } from 'node:crypto';
import type {
  FlowGraph,
  FlowSimulationInput,
  FlowSimulationStart,
  FlowSimulationState,
  FlowStep,
} from '@callpilot/contracts';
import { and, eq } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { callFlows } from '../../db/schema';
import { createBrain } from '../../engine/brain/create-brain';
import { fillConfig } from '../../engine/call/fill-config';
import { assistantOutcome, lentConfig } from '../../engine/call/flow-call';
import type { CallPorts } from '../../engine/call/ports';
import { type Clock, systemClock } from '../../engine/clock';
import { runFlow } from '../../engine/flow/interpreter';
import type {
  FlowAssistantOutcome,
  FlowAssistantRequest,
  FlowDeps,
  FlowEvents,
  FlowRunResult,
} from '../../engine/flow/types';
import { runCallSession } from '../../engine/session/call-session';
import { cachedSynthesizer } from '../../engine/speech/cache';
import type { SpeechSynthesizer } from '../../engine/speech/types';
import { offlineVoiceFor } from '../../engine/speech/voices';
import { encodeWav } from '../../engine/speech/wav';
import { normalizeForSpeech } from '../../engine/speech/zh-normalize';
import { AppError, conflict, notFound } from '../../lib/errors';
import { SimulatorLeg } from './flow-simulator-leg';

/**
 * 模拟 in the flow editor: the draft as the editor holds it, run by the real interpreter over a
 * SimulatorLeg whose caller is the person at the console.
 *
 * Sessions live in the memory of the API process that started them: behind a load balancer the
 * simulation routes need sticky sessions (or a single API process), or a later request lands on a
 * process that does not know the session and answers 404.
 */

export const SIMULATION_IDLE_MS = 10 * 60_000;
export const MAX_SIMULATIONS_PER_PROJECT = 20;
export const TOO_MANY_SIMULATIONS = '同时进行的模拟过多，请关闭其他模拟后再试';
/** A request waits at most this long for the flow to wait again; then it answers with the flow still running. */
const SETTLE_CAP_MS = 60_000;
export const SIMULATED_SMS = '（模拟）短信未实际发送';

type SimulatedStep = FlowSimulationState['steps'][number];
type Waiting = NonNullable<FlowSimulationState['waiting']>;

export interface FlowSimulationDeps {
  ports: CallPorts;
  /** HTTP nodes' requests, through the same guard as calls (private addresses refused). */
  http: FlowDeps['http'];
  /** The offline synthesiser prompts are spoken in for the console. */
  speech: () => SpeechSynthesizer;
  onError: (err: unknown, context: string) => void;
  clock?: Clock;
}

interface Prompt {
  nodeId: string;
  /** The node is known for sure once the step of the node that spoke it arrived. */
  settled: boolean;
  text: string;
  pcm: Int16Array | null;
}

/** The flow as its name; a simulation of another project's flow is refused as if it did not exist. */
export async function simulatedFlowName(db: Database, projectId: string, flowId: string): Promise<string> {
  const [row] = await db
    .select({ name: callFlows.name })
    .from(callFlows)
    .where(and(eq(callFlows.projectId, projectId), eq(callFlows.id, flowId)))
    .limit(1);
  if (!row) throw notFound('流程不存在或已删除');
  return row.name;
}

/** One simulated call of a draft. */
class FlowSimulation {
  readonly id = randomUUID();
  readonly steps: SimulatedStep[] = [];
  readonly prompts: Prompt[] = [];
  waiting: Waiting | null = null;
  ended: FlowSimulationState['ended'] = null;
  variables: Record<string, string> = {};
  readonly leg: SimulatorLeg;
  readonly abort = new AbortController();
  run: Promise<void> = Promise.resolve();
  expiry: NodeJS.Timeout | undefined;
  /** Told when the flow waits again or ended: the request in progress answers then. */
  private settleWaiters: (() => void)[] = [];
  /** The waiting the interpreter announced for the node it is in (cleared when a node finishes). */
  private announced: Waiting | null = null;

  constructor(
    readonly projectId: string,
    readonly flowId: string,
    private readonly flowName: string,
    readonly graph: FlowGraph,
    private readonly request: FlowSimulationStart,
    private readonly deps: FlowSimulationDeps,
  ) {
    const clock = deps.clock ?? systemClock;
    this.leg = new SimulatorLeg(this.id, request.callerNumber, request.calleeNumber, clock, {
      onPrompt: ({ text, pcm }) => {
        this.prompts.push({
          nodeId: this.announced?.nodeId ?? this.currentNodeId(),
          settled: false,
          text: text || '（播放录音）',
          pcm,
        });
      },
      onListen: (timeoutMs) => {
        // Deferred a turn, so an announcement made right after listen() began still counts.
        setImmediate(() => {
          if (this.ended || !this.leg.listening) return;
          this.waiting = this.announced ?? this.guessWaiting(timeoutMs);
          for (const prompt of this.prompts) if (!prompt.settled) prompt.nodeId = this.waiting.nodeId;
          this.settle();
        });
      },
    });
  }

  /** Starts the flow and answers once it waits for the caller or ended. */
  start(): Promise<void> {
    const settled = this.nextSettle();
    const clock = this.deps.clock ?? systemClock;
    const flowDeps: FlowDeps = {
      clock,
      loadSubflow: async (flowId) => {
        if (!this.deps.ports.flows) throw new Error('flows are not available in this process');
        return this.deps.ports.flows.forCall(this.projectId, flowId);
      },
      http: this.deps.http,
      // A simulation has no side effects: the message is shown in the step log, never sent.
      sendSms: async () => {},
      runAssistant: (request) => this.runAssistant(request),
      audio: this.deps.ports.flows
        ? (audioId) => this.deps.ports.flows!.audio(this.projectId, audioId)
        : undefined,
    };
    const events: FlowEvents = {
      onStep: (step, variables) => this.onStep(step, variables),
      onWaiting: (waiting) => {
        this.announced = waiting;
      },
    };
    this.run = runFlow(
      {
        flow: { flowId: this.flowId, name: this.flowName, version: null, graph: this.graph },
        leg: this.leg,
        callId: this.id,
        caller: this.request.callerNumber,
        callee: this.request.calleeNumber,
        signal: this.abort.signal,
      },
      flowDeps,
      events,
    ).then(
      (result) => this.finish(result),
      (err: unknown) => {
        // runFlow reports failures in its result; this is a bug, so the console still hears of it.
        this.deps.onError(err, 'flow simulation');
        this.finish(null);
      },
    );
    return settled;
  }

  /** Hands the console's input to the waiting flow and answers once it waits again or ended. */
  input(input: FlowSimulationInput): Promise<void> {
    if (this.ended) throw conflict('模拟已结束，请重新开始');
    // A hang-up ends the line whatever the flow is doing; anything else answers a waiting node.
    if (input.kind !== 'hangup' && !this.leg.listening)
      throw conflict('流程正在运行，请等它等待输入后再操作');
    const settled = this.nextSettle();
    this.waiting = null;
    this.leg.deliver(input);
    return settled;
  }

  state(audioUrl: (index: number) => string): FlowSimulationState {
    return {
      simulationId: this.id,
      steps: this.steps,
      prompts: this.prompts.map((p, index) => ({
        nodeId: p.nodeId,
        text: p.text,
        audioUrl: audioUrl(index),
      })),
      waiting: this.ended ? null : this.waiting,
      ended: this.ended,
      variables: this.variables,
    };
  }

  /** Ends the simulated call (the console closed it or it idled out); `run` settles after. */
  stop() {
    if (this.ended) return;
    this.abort.abort(new Error('simulation closed'));
    void this.leg.hangup();
  }

  private nextSettle(): Promise<void> {
    return new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      timer = setTimeout(() => {
        this.settleWaiters = this.settleWaiters.filter((w) => w !== done);
        resolve();
      }, SETTLE_CAP_MS);
      timer.unref();
      this.settleWaiters.push(done);
    });
  }

  private settle() {
    const waiters = this.settleWaiters;
    this.settleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** What the flow waits for when the interpreter did not say (an assistant's turn): the node it is in. */
  private guessWaiting(timeoutMs: number): Waiting {
    const nodeId = this.currentNodeId();
    const type = this.graph.nodes.find((n) => n.id === nodeId)?.type;
    const kind = type === 'menu' || type === 'collect' ? 'digits' : type === 'speech' ? 'speech' : 'any';
    return { nodeId, kind, timeoutSec: Math.round(timeoutMs / 100) / 10 };
  }

  /** The node the flow is in now: after the last step of this flow, along the exit it took. */
  private currentNodeId(): string {
    const last = this.steps.findLast((s) => s.flowId === null);
    if (!last) return this.graph.nodes.find((n) => n.type === 'start')?.id ?? '';
    if (last.exit === null) return last.nodeId;
    const edge = this.graph.edges.find((e) => e.source === last.nodeId && e.sourceHandle === last.exit);
    return edge?.target ?? last.nodeId;
  }

  private onStep(step: FlowStep, variables: Readonly<Record<string, string>>) {
    for (const prompt of this.prompts)
      if (!prompt.settled) {
        prompt.nodeId = step.nodeId;
        prompt.settled = true;
      }
    this.announced = null;
    this.variables = { ...variables };
    this.steps.push({ ...step, detail: this.simulatedDetail(step), variables: { ...variables } });
  }

  /** What only a simulation says about a step: nothing was sent, nobody was dialled. */
  private simulatedDetail(step: FlowStep): string {
    const add = (note: string) =>
      step.detail.includes(note) ? step.detail : [step.detail, note].filter(Boolean).join(' · ');
    if (step.nodeType === 'sms') return add(SIMULATED_SMS);
    if (step.nodeType === 'transfer' && step.exit === null && this.leg.transferredTo)
      return add(`（模拟）已转接至 ${this.leg.transferredTo}`);
    return step.detail;
  }

  private finish(result: FlowRunResult | null) {
    if (result) this.variables = { ...result.variables };
    const last = this.steps.findLast((s) => s.flowId === null) ?? null;
    this.ended = { reason: endText(result), nodeId: last?.nodeId ?? null };
    this.waiting = null;
    if (result?.error) this.deps.onError(result.error, 'flow simulation');
    this.settle();
  }

  /**
   * 转智能小助手 in a simulation: the assistant's chosen (or live) version with its real brain,
   * over the same line, so the console talks to it. Nothing it does leaves the simulation: an
   * opt-out does not reach the do-not-call list.
   */
  private async runAssistant(request: FlowAssistantRequest): Promise<FlowAssistantOutcome> {
    const { ports } = this.deps;
    const assistant = await ports.assistants.forCall(
      this.projectId,
      request.assistantId,
      request.version ?? undefined,
    );
    // As a flow call lends the line (engine/call/flow-call.ts), but with its own deps: an opt-out
    // said to a simulation must not reach the project's do-not-call list.
    const config = lentConfig(fillConfig(assistant.config, request.variables));
    const provider = config.brain.providerId
      ? await ports.assistants.provider(this.projectId, config.brain.providerId)
      : null;
    const session = await runCallSession(
      {
        callId: this.id,
        config,
        leg: request.leg,
        remoteNumber: this.request.callerNumber,
        signal: request.signal,
        handoff: true,
      },
      {
        clock: this.deps.clock ?? systemClock,
        brain: createBrain({ config, provider }),
        retrieve: async (query) =>
          config.knowledge.baseIds.length === 0
            ? null
            : ports.knowledge.retrieve(this.projectId, config, query),
        optOut: async () => {},
      },
      { onTurn: ({ index: _index, ...turn }) => request.onTurn(turn) },
    );
    if (session.error) this.deps.onError(session.error, 'flow simulation assistant');
    return {
      outcome: assistantOutcome(session),
      grade: session.liveGrade?.grade ?? null,
      assistantId: assistant.assistantId,
      assistantName: assistant.name,
      version: assistant.version,
    };
  }
}

/** Why the simulated call ended, as the console shows it. */
function endText(result: FlowRunResult | null): string {
  if (!result) return '流程运行出错，模拟已结束';
  switch (result.endReason) {
    case 'transferred':
      return `（模拟）已转接至 ${result.transfer?.number ?? ''}`.trim();
    case 'callee_hangup':
      return '来电方已挂机';
    case 'failed':
      return '流程运行出错，模拟已结束';
    default:
      return result.endLabel ? `流程结束：${result.endLabel}` : '流程结束';
  }
}

/** Every simulation of this process, by id; each belongs to the project that started it. */
export class FlowSimulations {
  private readonly sessions = new Map<string, FlowSimulation>();
  private synthesizer: SpeechSynthesizer | undefined;

  constructor(private readonly deps: FlowSimulationDeps) {}

  async start(
    projectId: string,
    flowId: string,
    flowName: string,
    request: FlowSimulationStart,
  ): Promise<FlowSimulation> {
    const own = [...this.sessions.values()].filter((s) => s.projectId === projectId);
    if (own.filter((s) => !s.ended).length >= MAX_SIMULATIONS_PER_PROJECT)
      throw conflict(TOO_MANY_SIMULATIONS);
    // Finished simulations stay readable (their prompts can still be played) until the console
    // closes them; past the limit the oldest go first.
    const finished = own.filter((s) => s.ended);
    for (const old of finished.slice(0, Math.max(0, finished.length - MAX_SIMULATIONS_PER_PROJECT + 1)))
      this.drop(old);
    const simulation = new FlowSimulation(projectId, flowId, flowName, request.graph, request, this.deps);
    this.sessions.set(simulation.id, simulation);
    this.touch(simulation);
    await simulation.start();
    return simulation;
  }

  /** A simulation of this project's flow; anything else is unknown (404), whoever asks. */
  get(projectId: string, flowId: string, simulationId: string): FlowSimulation {
    const simulation = this.sessions.get(simulationId);
    if (!simulation || simulation.projectId !== projectId || simulation.flowId !== flowId)
      throw notFound('模拟不存在或已过期，请重新开始');
    this.touch(simulation);
    return simulation;
  }

  async input(simulation: FlowSimulation, input: FlowSimulationInput): Promise<void> {
    await simulation.input(input);
    this.touch(simulation);
  }

  async end(simulation: FlowSimulation): Promise<void> {
    this.drop(simulation);
    await simulation.run;
  }

  /** The prompt as a WAV: an uploaded prompt as it is, a spoken line in the offline voice. */
  async promptAudio(simulation: FlowSimulation, index: number): Promise<Buffer> {
    const prompt = simulation.prompts[index];
    if (!prompt) throw notFound('提示音不存在');
    if (prompt.pcm) return encodeWav(prompt.pcm, 8000);
    this.synthesizer ??= cachedSynthesizer(this.deps.speech(), 8 * 1024 * 1024);
    const voice = offlineVoiceFor(simulation.graph.settings.voice);
    try {
      const speech = await this.synthesizer.synthesize(normalizeForSpeech(prompt.text), voice);
      return speech.audio;
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw new AppError(503, 'SERVICE_UNAVAILABLE', '语音合成失败，请稍后重试', { cause: err });
    }
  }

  /** Ends every simulation (the server is stopping). */
  async close(): Promise<void> {
    const all = [...this.sessions.values()];
    for (const simulation of all) this.drop(simulation);
    await Promise.allSettled(all.map((s) => s.run));
  }

  private touch(simulation: FlowSimulation) {
    clearTimeout(simulation.expiry);
    simulation.expiry = setTimeout(() => void this.end(simulation), SIMULATION_IDLE_MS);
    simulation.expiry.unref();
  }

  private drop(simulation: FlowSimulation) {
    clearTimeout(simulation.expiry);
    this.sessions.delete(simulation.id);
    simulation.stop();
  }
}

export type { FlowSimulation };
