import { randomInt, randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import path from 'node:path';
import type { AssistantVoice, CallEvent, TestCallRequest } from '@callpilot/contracts';
import { and, asc, desc, eq, inArray, isNotNull, isNull, lt } from 'drizzle-orm';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { assistants, calls, callTurns } from '../../db/schema';
import { type Clock, systemClock } from '../../engine/clock';
import { mixRecording } from '../../engine/recording/mix';
import { LocalRecordingStore, type RecordingStore } from '../../engine/recording/store';
import { cachedSynthesizer } from '../../engine/speech/cache';
import { createEspeakSynthesizer } from '../../engine/speech/espeak';
import type { SpeechSynthesizer } from '../../engine/speech/types';
import { createSimCarrier, type SimCarrier } from '../../engine/telephony/sim/sim-carrier';
import type { TelephonyAdapter } from '../../engine/telephony/types';
import { type Relay, startRelay } from '../../lib/relay';
import { loadAppSecret } from '../../lib/secret-box';
import { getAssistant, getPublishedVersion } from '../assistants/assistants.service';
import { providerResolver } from '../assistants/provider';
import type { ModuleOptions } from '../index';
import { embedderForProject } from '../knowledge/embedder';
import { CallEventHub, callIdOf } from './call-events';
import {
  type CallRunnerDeps,
  knowledgeQuestions,
  loadAssistantForCall,
  placeCall,
  SIM_CALLER_NUMBER,
} from './call-runner';
import { CallStore } from './call-store';
import { toSummary, toTurn } from './calls.service';
import {
  DEMO_CALL_COUNT,
  demoCallCount,
  findDemoProject,
  knowledgeSettled,
  seedDemoCalls,
} from './demo-calls';

export interface CallRuntime {
  hub: CallEventHub;
  store: CallStore;
  recordings: RecordingStore;
  carrier: TelephonyAdapter;
  /** For tasks and the demo: the runner's dependencies with this process's carrier and clock. */
  runnerDeps: CallRunnerDeps;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Runs `fn` when the runtime stops (open event streams end then); returns the unregister function. */
  onStop(fn: () => void): () => void;
  startTestCall(projectId: string, request: TestCallRequest): Promise<{ callId: string }>;
  /**
   * 挂断 for a 模拟通话 running in this process: the simulated callee hangs up (or, while it still
   * rings, the call is cancelled). False when the call is not running here.
   */
  hangUpTestCall(callId: string): boolean;
  /** Mixes pending recordings now (tests and the demo wait on it). */
  drainRecordings(): Promise<void>;
  /** Resolves when every call this process started has ended and been analysed. */
  idle(): Promise<void>;
  /**
   * Gives the demo project its call history (see demo-calls.ts) when it has fewer than the demo's
   * calls: on the first start, and again after an interrupted seeding. Resolves with the calls made.
   */
  ensureDemoCalls(email: string): Promise<number>;
}

/** The system clock running `scale` times faster, for the simulated carrier. */
export function scaledClock(scale: number): Clock {
  if (scale === 1) return systemClock;
  const origin = Date.now();
  return {
    now: () => origin + (Date.now() - origin) * scale,
    sleep: (ms, signal) => systemClock.sleep(ms / scale, signal),
  };
}

/** The other party sounds different from the assistant: a male voice for a female one and back. */
export const calleeVoiceFor = (voiceId: string) =>
  /\+m/.test(voiceId) || voiceId === 'cmn' ? 'cmn+f4' : 'cmn+m3';

/**
 * Mixes recordings one at a time in the background (the synthesiser is one worker thread), and
 * picks up where it stopped after a restart: pending rows are the queue.
 */
class RecordingWorker {
  private running: Promise<void> | null = null;
  private stopped = false;
  private again = false;

  constructor(
    private readonly deps: {
      db: ModuleOptions['db'];
      store: CallStore;
      recordings: RecordingStore;
      synthesizer: () => SpeechSynthesizer;
      log: FastifyBaseLogger;
    },
  ) {}

  kick(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.loop().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running?.catch(() => {});
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      for (;;) {
        if (this.stopped) return;
        const [row] = await this.deps.db
          .select()
          .from(calls)
          .where(eq(calls.recording, 'pending'))
          // Newest first: the call someone just made (a 模拟通话) is the one being waited for.
          .orderBy(desc(calls.startedAt))
          .limit(1);
        if (!row) break;
        await this.mix(row);
      }
    } while (this.again && !this.stopped);
  }

  private async voiceOf(row: typeof calls.$inferSelect): Promise<AssistantVoice> {
    const fallback: AssistantVoice = { provider: 'espeak', voiceId: 'cmn+f3', speed: 1, volume: 80 };
    if (!row.assistantId) return fallback;
    try {
      const config = row.assistantVersion
        ? (await getPublishedVersion(this.deps.db, row.projectId, row.assistantId, row.assistantVersion))
            ?.config
        : (await getAssistant(this.deps.db, row.projectId, row.assistantId)).config;
      return config?.voice ?? fallback;
    } catch {
      return fallback;
    }
  }

  private async mix(row: typeof calls.$inferSelect): Promise<void> {
    const { db, store, recordings, log } = this.deps;
    try {
      const turns = (
        await db.select().from(callTurns).where(eq(callTurns.callId, row.id)).orderBy(asc(callTurns.index))
      ).map(toTurn);
      const assistantVoice = await this.voiceOf(row);
      const mixed = await mixRecording({
        turns,
        synthesizer: this.deps.synthesizer(),
        assistantVoice,
        calleeVoice: { ...assistantVoice, voiceId: calleeVoiceFor(assistantVoice.voiceId), speed: 1 },
      });
      const key = `${row.projectId}/${row.id}.wav`;
      await recordings.put(key, mixed.wav);
      await store.recordingReady(row.projectId, row.id, key, Math.round(mixed.durationMs), mixed.turns);
    } catch (err) {
      log.warn({ err, callId: row.id }, 'recording mix failed');
      await store.recordingFailed(row.projectId, row.id).catch(() => {});
    }
  }
}

/**
 * What crosses processes for a call event: a reference small enough for NOTIFY (a turn with its
 * knowledge segments would not fit); the receiving process reads the rest from the database.
 */
type CallEventRef = { p: string; t: CallEvent['type']; c: string; i?: number };

async function eventFromRef(db: ModuleOptions['db'], ref: CallEventRef): Promise<CallEvent | null> {
  if (ref.t === 'turn') {
    const [turn] = await db
      .select()
      .from(callTurns)
      .where(and(eq(callTurns.callId, ref.c), eq(callTurns.index, ref.i ?? -1)))
      .limit(1);
    return turn ? { type: 'turn', callId: ref.c, turn: toTurn(turn) } : null;
  }
  const [row] = await db.select().from(calls).where(eq(calls.id, ref.c)).limit(1);
  if (!row) return null;
  if (ref.t === 'answered') {
    return row.answeredAt
      ? { type: 'answered', callId: ref.c, answeredAt: row.answeredAt.toISOString() }
      : null;
  }
  return { type: ref.t, call: toSummary(row) };
}

export function createCallRuntime(
  app: FastifyInstance,
  { db, database, env, clock: given }: ModuleOptions,
): CallRuntime {
  const hub = new CallEventHub();
  const store = new CallStore(db, hub);
  const recordings = new LocalRecordingStore(path.join(env.dataDir, 'recordings'));
  const clock = given ?? systemClock;
  const seed = randomInt(2 ** 31);
  const carrier: SimCarrier = createSimCarrier({ clock, seed });
  const scale = given ? 1 : env.SIM_TIME_SCALE;
  const forCall: (() => { clock: Clock; carrier: SimCarrier }) | undefined =
    scale === 1
      ? undefined
      : () => {
          const callClock = scaledClock(scale);
          return { clock: callClock, carrier: createSimCarrier({ clock: callClock, seed }) };
        };
  const secret = loadAppSecret(env);
  let synthesizer: SpeechSynthesizer | undefined;
  const worker = new RecordingWorker({
    db,
    store,
    recordings,
    // Created on first use: the WASM worker costs memory a server without calls never needs.
    synthesizer: () => {
      synthesizer ??= cachedSynthesizer(createEspeakSynthesizer());
      return synthesizer;
    },
    log: app.log,
  });
  const stopHandlers = new Set<() => void>();
  let relay: Relay | undefined;
  const running = new Set<Promise<unknown>>();
  const testCalls = new Map<string, { carrier: SimCarrier; cancel: AbortController }>();
  const abort = new AbortController();
  // Every running call waits on this one signal; hundreds of listeners are expected, not a leak.
  setMaxListeners(0, abort.signal);

  const runnerDeps: CallRunnerDeps = {
    db,
    store,
    carrier,
    clock,
    forCall,
    resolveProvider: providerResolver(db, env),
    embedderFor: (projectId) => embedderForProject(db, secret, projectId),
    enqueueRecording: () => void worker.kick(),
    onError: (err, context) => app.log.warn({ err, context }, 'call step failed'),
  };

  return {
    hub,
    store,
    recordings,
    carrier,
    runnerDeps,
    async start() {
      // Relayed events are read back one after another, so they are delivered in the order sent.
      let received = Promise.resolve();
      relay = await startRelay(
        database,
        'call_events',
        (payload) => {
          const ref = JSON.parse(payload) as CallEventRef;
          // Nobody here watches that project: nothing to read.
          if (hub.listenerCount(ref.p) === 0) return;
          received = received
            .then(() => eventFromRef(db, ref))
            .then((event) => {
              if (event) hub.deliver(ref.p, event);
            })
            .catch((err) => app.log.warn({ err }, 'relayed call event failed'));
        },
        (err) => app.log.warn({ err }, 'call event relay failed'),
      );
      const sender = relay;
      hub.relay = (projectId, event) => {
        const ref: CallEventRef = {
          p: projectId,
          t: event.type,
          c: callIdOf(event),
          ...(event.type === 'turn' ? { i: event.turn.index } : {}),
        };
        sender.send(JSON.stringify(ref));
      };
      // Calls a previous process left ringing or talking (a crash, kill -9) cannot resume: their
      // leg is gone. Embedded mode is one process, so every such row is stale; on PostgreSQL other
      // processes may be mid-call, so only rows older than the longest possible call are.
      const staleBefore = env.DATABASE_URL ? new Date(Date.now() - 3_700_000) : new Date();
      const stale = await db
        .update(calls)
        .set({ status: 'ended', endReason: 'interrupted', hangupBy: 'system', endedAt: new Date() })
        .where(and(inArray(calls.status, ['ringing', 'in_progress']), lt(calls.startedAt, staleBefore)))
        .returning({ id: calls.id });
      if (stale.length)
        app.log.warn({ count: stale.length }, 'calls interrupted by a restart marked interrupted');
      void worker.kick();
    },
    async stop() {
      abort.abort(new Error('server stopping'));
      hub.relay = null;
      await relay?.stop();
      for (const fn of stopHandlers) fn();
      stopHandlers.clear();
      await Promise.allSettled([...running]);
      await worker.stop();
      await carrier.close();
      await synthesizer?.close();
    },
    onStop(fn) {
      stopHandlers.add(fn);
      return () => stopHandlers.delete(fn);
    },
    async startTestCall(projectId, request) {
      const loaded = await loadAssistantForCall(
        db,
        projectId,
        request.assistantId,
        request.version ?? 'draft',
      );
      const callId = randomUUID();
      const calleeNumber = request.calleeNumber || `1380000${String(randomInt(10_000)).padStart(4, '0')}`;
      const questions =
        request.persona === 'asks_question' ? await knowledgeQuestions(db, loaded.config) : [];
      let created!: () => void;
      const createdOnce = new Promise<void>((resolve) => {
        created = resolve;
      });
      // The call's own carrier and a cancel switch, so 挂断 can reach exactly this call.
      const own = runnerDeps.forCall?.() ?? { clock: runnerDeps.clock, carrier };
      const cancel = new AbortController();
      testCalls.set(callId, { carrier: own.carrier as SimCarrier, cancel });
      const call = placeCall(
        { ...runnerDeps, forCall: () => own },
        {
          projectId,
          assistantId: request.assistantId,
          callerNumber: SIM_CALLER_NUMBER,
          calleeNumber,
          persona: request.persona,
          questions,
          variables: request.variables,
          callId,
          signal: AbortSignal.any([abort.signal, cancel.signal]),
          onCreated: () => created(),
        },
        loaded,
      );
      running.add(call);
      void call
        .finally(() => {
          running.delete(call);
          testCalls.delete(callId);
        })
        .catch(() => {});
      // Answer once the record exists (the console opens it at once); a failure before that is the request's.
      await Promise.race([createdOnce, call]);
      void call.catch((err) => app.log.error({ err, callId }, 'test call failed'));
      return { callId };
    },
    hangUpTestCall(callId) {
      const live = testCalls.get(callId);
      if (!live) return false;
      if (!live.carrier.hangUpRemote(callId)) live.cancel.abort(new Error('hung up while ringing'));
      return true;
    },
    drainRecordings: () => worker.kick(),
    async ensureDemoCalls(email) {
      const demo = await findDemoProject(db, email);
      if (!demo || (await demoCallCount(db, demo.projectId)) >= DEMO_CALL_COUNT) return 0;
      const [assistant] = await db
        .select({ id: assistants.id })
        .from(assistants)
        .where(
          and(
            eq(assistants.projectId, demo.projectId),
            isNotNull(assistants.publishedVersion),
            isNull(assistants.deletedAt),
          ),
        )
        .orderBy(asc(assistants.createdAt))
        .limit(1);
      if (!assistant) return 0;
      await knowledgeSettled(db, demo.projectId);
      const seeding = seedDemoCalls(runnerDeps, demo.projectId, assistant.id, {
        shouldStop: () => abort.signal.aborted,
      });
      running.add(seeding);
      try {
        const made = await seeding;
        app.log.info({ calls: made }, 'demo call history created');
        return made;
      } finally {
        running.delete(seeding);
      }
    },
    async idle() {
      while (running.size) await Promise.allSettled([...running]);
    },
  };
}
