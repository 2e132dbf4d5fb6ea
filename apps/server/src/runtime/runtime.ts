import { randomInt, randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import path from 'node:path';
import {
  type CallEvent,
  type FlowTestCallRequest,
  speechSettings,
  type TestCallRequest,
  type TestInboundCallRequest,
} from '@callpilot/contracts';
import { and, eq } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import type { Database, DatabaseHandle } from '../db/client';
import { calls, callTurns, projectLimits, projectNumbers } from '../db/schema';
import { answerCall } from '../engine/call/answer-call';
import { runFlowCall } from '../engine/call/flow-call';
import type { CallPorts } from '../engine/call/ports';
import { type CallDeps, placeCall, SIM_CALLER_NUMBER } from '../engine/call/run-call';
import { type Clock, systemClock } from '../engine/clock';
import type { Dialer } from '../engine/dialer/dialer';
import { LocalRecordingStore, type RecordingFs, type RecordingStore } from '../engine/recording/store';
import { cachedSynthesizer } from '../engine/speech/cache';
import { createEspeakSynthesizer } from '../engine/speech/espeak';
import { recognizerWithFallback } from '../engine/speech/fallback';
import { createRecognizer, recognizerFor } from '../engine/speech/recognizer';
import { wholeFromStreaming } from '../engine/speech/synthesis';
import type { SpeechSynthesizer } from '../engine/speech/types';
import { offlineVoiceFor } from '../engine/speech/voices';
import { normalizeForSpeech } from '../engine/speech/zh-normalize';
import { createSimCarrier, type SimCarrier } from '../engine/telephony/sim/sim-carrier';
import type { Env } from '../env';
import { AppError } from '../lib/errors';
import { type Relay, startRelay } from '../lib/relay';
import { loadAppSecret } from '../lib/secret-box';
import { providerResolver, recognizerResolver, synthesizerResolver } from '../modules/assistants/provider';
import { CallEventHub, callIdOf } from '../modules/calls/call-events';
import { CallRepository } from '../modules/calls/call-repository';
import { toSummary, toTurn } from '../modules/calls/calls.service';
import { demoMockBaseUrl, ensureDemoFlow } from '../modules/demo/demo-flow';
import { startBatchTestWorker } from '../modules/knowledge/batch-test.worker';
import { embedderForProject } from '../modules/knowledge/embedder';
import { llmAssistFor } from '../modules/knowledge/llm-assist';
import { startKnowledgeWorker } from '../modules/knowledge/worker';
import { DEFAULT_CALLIN_CAP } from '../modules/numbers/numbers.service';
import { processDirty, RollupWorker } from '../modules/reports/rollup-worker';
import type { SmsEndpoint } from '../modules/sms/providers/types';
import { createSmsClientResolver } from '../modules/sms/sms-clients';
import { SmsReceiptPoller, type SmsReceiptPollerOptions, SmsReviewPoller } from '../modules/sms/sms-cloud';
import { SmsSender } from '../modules/sms/sms-sender';
import {
  createVoiceResolver,
  type NamedVoice,
  type ResolvedVoice,
} from '../modules/synthesis-providers/voice-resolver';
import { createDialerStore } from '../modules/tasks/dialer-store';
import { TaskEventHub } from '../modules/tasks/task-events';
import { getTaskSummary } from '../modules/tasks/tasks.service';
import { trunkDirectory } from '../modules/trunks/trunk-directory';
import { CallWebhooks } from '../modules/webhooks/event-sources';
import { WebhookDispatcher } from '../modules/webhooks/webhook-dispatcher';
import { WEBHOOK_OUTBOX_CHANNEL, WebhookOutbox } from '../modules/webhooks/webhook-outbox';
import { createWebhookSender } from '../modules/webhooks/webhook-sender';
import type { Providers } from '../providers';
import { createCallPorts } from './call-ports';
import { type ApiCallPayload, type CallRequest, CallRequestQueue } from './call-requests';
import { callSpeech } from './call-speech';
import {
  DEMO_CALL_COUNT,
  demoAssistant,
  demoCallCount,
  ensureDemoNumber,
  findDemoProject,
  knowledgeSettled,
  seedDemoCalls,
  seedDemoFlowCalls,
} from './demo-calls';
import { ensureDemoTasks } from './demo-tasks';
import { flowHttpFor } from './flow-http';
import { LiveCalls } from './live-calls';
import { createMetrics } from './metrics';
import { RecordingWorker } from './recording-worker';
import { type SipRuntime, startSipRuntime } from './sip-runtime';
import { taskDialer } from './task-dialer';
import { simTrunkControl, type TrunkControl, TrunkControlUnavailableError } from './trunk-control';

export type Role = 'all' | 'api' | 'worker';

/** off: no demo in this process; failed: see the log (`demo calls failed`). */
export type DemoHistoryState = 'off' | 'producing' | 'ready' | 'failed';

export interface RuntimeOptions {
  database: DatabaseHandle;
  env: Env;
  log: FastifyBaseLogger;
  providers: Providers;
  /** The engine's clock; the system clock unless a test passes a simulated one. */
  clock?: Clock;
  /** The SIP trunks' control; the simulated carrier's (no trunk can work) unless given. */
  trunks?: TrunkControl;
  /** The recording store's file operations (tests: a disk that is full). */
  recordingFs?: RecordingFs;
  /** SMS vendors' endpoints (tests: local fake servers, private addresses allowed) and job timing. */
  sms?: {
    endpoints?: { aliyun?: SmsEndpoint; tencent?: SmsEndpoint };
    allowPrivate?: boolean;
    reviewPollMs?: number;
    receiptPoll?: Pick<
      SmsReceiptPollerOptions,
      'intervalMs' | 'afterMs' | 'everyMs' | 'maxAgeMs' | 'batchSize'
    >;
  };
}

/** How long the API waits for an engine process to take a call it asked for. */
const ENGINE_PICKUP_MS = 10_000;
/** Live calls of dead processes are looked for this often (and once at start). */
const ORPHAN_SWEEP_MS = 15_000;

/** The system clock running `scale` times faster, for the simulated carrier. */
export function scaledClock(scale: number): Clock {
  if (scale === 1) return systemClock;
  const origin = Date.now();
  return {
    now: () => origin + (Date.now() - origin) * scale,
    sleep: (ms, signal) => systemClock.sleep(ms / scale, signal),
  };
}

/**
 * What crosses processes for a call event: a reference small enough for NOTIFY (a turn with its
 * knowledge segments would not fit); the receiving process reads the rest from the database.
 */
type CallEventRef = { p: string; t: CallEvent['type']; c: string; i?: number };

async function eventFromRef(db: Database, ref: CallEventRef): Promise<CallEvent | null> {
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

/**
 * The composition root of the call engine, built once per process before the HTTP modules: the
 * clock, the telephony adapter, the call repository and its event hub and relay, the workers
 * (knowledge indexing, recordings), the dialer, crash recovery and the live calls. Route files
 * receive it; nothing under modules/ builds engine parts.
 *
 * Roles: `all` runs everything; `api` runs no engine and hands the calls it is asked for to an
 * engine process through the database; `worker` runs the engine and the workers without HTTP.
 */
export function createRuntime({
  database,
  env,
  log,
  providers,
  clock: given,
  trunks,
  sms: smsOptions,
  recordingFs,
}: RuntimeOptions) {
  const { db } = database;
  const role: Role = env.ROLE;
  const hasEngine = role !== 'api';
  const processId = `${role}-${randomUUID()}`;
  const clock = given ?? systemClock;
  const onError = (err: unknown) => log.warn({ err }, 'runtime step failed');

  const secret = loadAppSecret(env);
  // Every writer of this database (calls, tasks, do-not-call) enqueues through this outbox.
  const outbox = WebhookOutbox.attach(db, clock);
  outbox.onError = (err, type) => log.warn({ err, type }, 'webhook event not enqueued');
  const publicUrl = env.PUBLIC_BASE_URL ?? env.PUBLIC_URL ?? `http://localhost:${env.PORT}`;
  const hub = new CallEventHub();
  /** The report rollups, recomputed where the engine runs; an API process only marks hours. */
  const rollupWorker = new RollupWorker(db, { log });
  const repository = new CallRepository(db, hub, {
    owner: processId,
    singleProcess: database.kind === 'pglite',
    webhooks: new CallWebhooks(outbox, { secret, publicUrl }),
    onStatsDirty: () => rollupWorker.wake(),
  });
  const recordings: RecordingStore = new LocalRecordingStore(
    path.join(env.dataDir, 'recordings'),
    recordingFs,
  );
  const webhookSender = createWebhookSender({ allowPrivate: env.WEBHOOK_ALLOW_PRIVATE });
  /** Delivers the outbox where the engine runs; any process replays one delivery on request. */
  const webhookDispatcher = new WebhookDispatcher({
    db,
    outbox,
    secret,
    owner: processId,
    sender: webhookSender,
    email: providers.email,
    log,
    consoleUrl: env.PUBLIC_URL ?? env.PUBLIC_BASE_URL ?? null,
    vacuum: database.kind === 'pglite',
  });
  let stopOutboxListener: (() => Promise<void>) | undefined;
  /**
   * Each project's SMS provider client, rebuilt when its settings change: the sending worker, the
   * review submission and the pollers below all go through this one resolver.
   */
  const smsClients = createSmsClientResolver({
    db,
    env,
    outbox: providers.sms,
    endpoints: smsOptions?.endpoints,
    allowPrivate: smsOptions?.allowPrivate,
    clock,
  });
  /** Cloud review results and receipts nobody pushed, asked for where the engine runs. */
  const smsPollers = {
    reviews: new SmsReviewPoller({
      db,
      resolve: smsClients,
      log,
      clock,
      intervalMs: smsOptions?.reviewPollMs,
    }),
    receipts: new SmsReceiptPoller({ db, resolve: smsClients, log, clock, ...smsOptions?.receiptPoll }),
  };
  /** Sends queued SMS where the engine runs; other processes' sends wait for its next poll. */
  const smsSender = new SmsSender({ db, clients: smsClients, log });
  const embedderFor = (projectId: string) => embedderForProject(db, secret, projectId);
  const ports: CallPorts = createCallPorts({
    db,
    repository,
    resolveProvider: providerResolver(db, env),
    resolveRecognizer: recognizerResolver(db, env),
    resolveSynthesizer: synthesizerResolver(db, env),
    embedderFor,
    knowledgeAssistFor: (projectId, config) =>
      config.brain.providerId
        ? llmAssistFor(db, secret, projectId, config.brain.providerId, { model: config.brain.model })
        : Promise.resolve(undefined),
    recordings,
    onError: (err, context) => log.warn({ err, context }, 'call step failed'),
  });

  const seed = randomInt(2 ** 31);
  const carrier: SimCarrier = createSimCarrier({ clock, seed });
  // A test's simulated clock already compresses time; otherwise follow SIM_TIME_SCALE.
  const scale = given ? 1 : env.SIM_TIME_SCALE;
  /** The clock and carrier one call runs on: its own, scaled, when calls run faster than real time. */
  const simFor = (): { clock: Clock; carrier: SimCarrier } => {
    if (scale === 1) return { clock, carrier };
    const callClock = scaledClock(scale);
    return { clock: callClock, carrier: createSimCarrier({ clock: callClock, seed }) };
  };

  // One offline synthesiser per process, created on first use: its WASM worker costs memory a
  // process that never speaks does not need. Recordings go through a cache (lines repeat).
  let espeak: SpeechSynthesizer | undefined;
  const speech = () => {
    espeak ??= createEspeakSynthesizer();
    return espeak;
  };
  let cachedSpeech: SpeechSynthesizer | undefined;
  const cachedOfflineSpeech = () => {
    cachedSpeech ??= cachedSynthesizer(speech());
    return cachedSpeech;
  };
  /** Every voice a project can speak with, synthesisers kept warm across calls. */
  const voices = createVoiceResolver(db, secret, { offline: cachedOfflineSpeech, clock });
  const recordingWorker = new RecordingWorker({
    db,
    calls: repository,
    recordings,
    synthesizer: () => {
      cachedSpeech ??= cachedSynthesizer(speech());
      return cachedSpeech;
    },
    voiceSynthesizer: async (projectId, voice) => {
      const resolved = await voices.resolve(projectId, voice);
      const whole = wholeFromStreaming(resolved.synthesizer, {
        sampleRate: 16_000,
        fallback: { synthesizer: cachedOfflineSpeech(), voice: offlineVoiceFor(voice) },
        onFallback: (err) =>
          log.warn({ err, projectId }, 'assistant voice failed in a recording, offline voice used'),
      });
      return { ...whole, synthesize: (text) => whole.synthesize(normalizeForSpeech(text), resolved.voice) };
    },
    owner: processId,
    log,
    lineRecordings: path.join(env.dataDir, 'line-recordings'),
  });
  /** Real phone lines, when this process runs them (TELEPHONY=sip): started in start(). */
  let sip: SipRuntime | null = null;

  const flowHttp = flowHttpFor(env);

  /** The logger of one call: every line it writes names the call and its project. */
  const callLogger = (callId: string, projectId: string | null) => log.child({ callId, projectId });

  const live = new LiveCalls(repository, onError);
  const metrics = createMetrics({
    db,
    clock,
    callsInFlight: () => live.inFlight(),
    sipRegistrations: () => sip?.registrationStates() ?? null,
  });

  /**
   * What one call runs with. `callLog` is a function so a call whose project is learnt later
   * (a SIP INVITE, once its number is looked up) logs with it from then on.
   */
  const callDeps = (
    own: { clock: Clock; carrier: SimCarrier },
    callLog: FastifyBaseLogger | (() => FastifyBaseLogger) = log,
  ): CallDeps => {
    const logger = typeof callLog === 'function' ? callLog : () => callLog;
    return {
      ports,
      clock: own.clock,
      carrier: own.carrier,
      flowHttp,
      onError: (err, context) => logger().warn({ err, context }, 'call step failed'),
      onRecordingPending: () => void recordingWorker.kick(),
      onTurn: (turn, config) => metrics.turn(turn, config),
    };
  };

  const requests = new CallRequestQueue(db, onError);
  const stopHandlers = new Set<() => void>();
  const running = new Set<Promise<unknown>>();
  const shutdown = new AbortController();
  // Every running call waits on this one signal; hundreds of listeners are expected, not a leak.
  setMaxListeners(0, shutdown.signal);
  let callRelay: Relay | undefined;
  let taskRelay: Relay | undefined;
  let trunkRelay: Relay | undefined;
  let knowledgeWorker: ReturnType<typeof startKnowledgeWorker> | undefined;
  let batchTestWorker: ReturnType<typeof startBatchTestWorker> | undefined;
  let sweepTimer: NodeJS.Timeout | undefined;

  const keep = <T>(work: Promise<T>): Promise<T> => {
    running.add(work);
    void work.finally(() => running.delete(work)).catch(() => {});
    return work;
  };

  const taskEvents = new TaskEventHub(
    async (projectId, taskId) => ({
      type: 'task',
      task: await getTaskSummary(db, projectId, taskId, clock.now()),
    }),
    undefined,
    (err) => log.warn({ err }, 'task event failed'),
  );

  const seedingTasks = new Set<string>();
  // Claims and lease renewals on connections of their own: at concurrency 200 the calls' record
  // writes hold the shared pool, and a claim queued behind them leaves slots idle.
  const dialerDb = database.lane('dialer', 3);
  WebhookOutbox.share(dialerDb, db);
  const dialer: Dialer | null = hasEngine
    ? taskDialer({
        store: metrics.instrumentDialerStore(createDialerStore(dialerDb, { calls: repository })),
        database,
        ports,
        clock,
        processId,
        log,
        retryTimeScale: scale,
        ownsTask: (taskId) => !seedingTasks.has(taskId),
        onTaskChanged: (projectId, taskId) => taskChanged(projectId, taskId, false),
        run: (job, place) => {
          const own = simFor();
          const cancel = new AbortController();
          const callLog = callLogger(job.callId, job.task.projectId);
          const deps = callDeps(own, callLog);
          const line = sip;
          if (line) {
            // A task's caller number may be on a trunk: that call goes out on the real line.
            deps.carrier = line.route(own.carrier);
            deps.legMedia = lineMedia(line, callLog);
          }
          const call = keep(
            place(deps, {
              signal: AbortSignal.any([job.signal, cancel.signal, shutdown.signal]),
              shutdown: AbortSignal.any([job.signal, shutdown.signal]),
            }),
          );
          live.add(
            job.callId,
            { projectId: job.task.projectId, direction: 'outbound', hangUp: () => cancel.abort() },
            call,
          );
          return call;
        },
      })
    : null;

  /**
   * Trunk status and 测试呼叫 as this process can serve them: the SIP runtime's when it runs here;
   * in an API process of a deployment whose workers run SIP (TELEPHONY=sip, ROLE=api), the stored
   * status and a relay that makes the workers reload a changed trunk; else the simulator's.
   */
  function trunkControl(): TrunkControl {
    if (trunks) return trunks;
    const local = sip?.control;
    if (local) {
      return {
        ...local,
        unavailable: null,
        changed(trunkId) {
          local.changed(trunkId);
          trunkRelay?.send(trunkId);
        },
      };
    }
    if (env.TELEPHONY === 'sip' && !hasEngine) {
      const refusal = '测试呼叫需在运行通话引擎的进程上发起（ROLE=all 或 worker，TELEPHONY=sip）';
      return {
        unavailable: null,
        testCallRefusal: refusal,
        status: () => null,
        testCall: async () => {
          throw new TrunkControlUnavailableError(refusal);
        },
        changed: (trunkId) => trunkRelay?.send(trunkId),
      };
    }
    return simTrunkControl();
  }

  /**
   * A voice and ears on a real line (an assistant's, or a flow's settings): the voice with the
   * project's fallback voice behind it, the recogniser (or the project's primary) with the
   * project's fallback recogniser, and the project's timeouts (语音配置).
   */
  function lineMedia(
    _line: SipRuntime,
    callLog: FastifyBaseLogger | (() => FastifyBaseLogger),
  ): NonNullable<CallDeps['legMedia']> {
    return async (projectId, speech) => {
      const log = typeof callLog === 'function' ? callLog() : callLog;
      const settings = await ports.assistants.speechSettings(projectId).catch(() => speechSettings.parse({}));
      const onFallback = (kind: 'recognition' | 'synthesis', err: unknown) =>
        log.warn({ err, projectId, kind }, 'speech provider failed, fallback used');
      const heard = await recognizerFor(ports.assistants, projectId, speech, {
        clock,
        timeoutMs: settings.recognitionTimeoutMs,
      }).catch((err: unknown) => {
        log.warn({ err, projectId }, 'speech recogniser unavailable');
        return null;
      });
      const backupProfile =
        heard && settings.recognitionFallbackId
          ? await ports.assistants.recognizer(projectId, settings.recognitionFallbackId).catch(() => null)
          : null;
      const recognizer =
        heard && backupProfile
          ? recognizerWithFallback(heard, createRecognizer(backupProfile, { clock }), {
              clock,
              timeoutMs: settings.recognitionTimeoutMs,
              onFallback: (err) => onFallback('recognition', err),
            })
          : heard;

      const { voice } = speech;
      const resolve = (named: NamedVoice) =>
        voices.resolve(projectId, named).catch((err: unknown) => {
          log.warn({ err, projectId, provider: named.provider }, 'voice unavailable');
          return null;
        });
      // The assistant's voice, then the project's fallback voice, then the offline voice: a caller
      // always hears something, even when every vendor is down or a profile was deleted.
      const chain = [
        await resolve(voice),
        await resolve({ ...settings.synthesisFallback, speed: voice.speed, volume: voice.volume }),
        await resolve({ ...offlineVoiceFor(voice), speed: voice.speed, volume: voice.volume }),
      ].filter(
        (candidate, index, all): candidate is ResolvedVoice =>
          candidate !== null && all.findIndex((other) => other?.key === candidate.key) === index,
      );
      const [primary, fallback] = chain as [ResolvedVoice, ResolvedVoice | undefined];
      return callSpeech({
        clock,
        primary,
        fallback: fallback ?? null,
        firstAudioTimeoutMs: settings.synthesisTimeoutMs,
        recognizer,
        hotwords: speech.hearing.hotwords.join(' ') || undefined,
        normalize: normalizeForSpeech,
        onFallback,
      });
    };
  }

  /** Starts real phone lines: inbound INVITEs are answered like 模拟来电, by the number's binding. */
  async function startSip() {
    const line = await startSipRuntime({
      env,
      clock,
      log,
      directory: trunkDirectory(db, secret),
      synthesizer: () => {
        cachedSpeech ??= cachedSynthesizer(speech());
        return cachedSpeech;
      },
      recordingDir: path.join(env.dataDir, 'line-recordings'),
      onInviteFinal: (direction, status) => metrics.sipInvite(direction, status),
      projectOf: (callId) => live.projectOf(callId),
    });
    sip = line;
    line.adapter.onInbound((offer) => {
      let callLog = callLogger(offer.callId, null);
      const currentLog = () => callLog;
      const deps: CallDeps = {
        ...callDeps({ clock, carrier }, currentLog),
        carrier: line.adapter,
        legMedia: lineMedia(line, currentLog),
      };
      const cancel = new AbortController();
      const call = keep(
        answerCall(deps, offer, {
          signal: AbortSignal.any([shutdown.signal, cancel.signal]),
          shutdown: shutdown.signal,
        }),
      );
      // The project is known once the number is looked up; 挂断 is checked against it.
      void ports.inbound
        .lookup(offer.to)
        .then((route) => {
          if (!route) return;
          callLog = callLogger(offer.callId, route.projectId);
          live.add(
            offer.callId,
            { projectId: route.projectId, direction: 'inbound', hangUp: () => cancel.abort() },
            call,
          );
        })
        .catch(() => undefined);
      void call.catch((err) => callLog.error({ err }, 'inbound SIP call failed'));
    });
    log.info({ port: env.SIP_PORT, rtp: `${env.RTP_PORT_MIN}-${env.RTP_PORT_MAX}` }, 'SIP lines ready');
  }

  /** A task's counts or state changed here: tell this process's watchers, the others, and the dialer. */
  function taskChanged(projectId: string, taskId: string, wake: boolean) {
    taskEvents.changed(projectId, taskId);
    taskRelay?.send(`${projectId}/${taskId}`);
    if (wake) dialer?.wake();
  }

  /**
   * Runs a simulated call here on its own clock and carrier, and resolves once its record exists
   * (the console opens it at once); a failure before that is the request's. 挂断 reaches it
   * through the live calls: the simulated party hangs up, or a call still ringing is cancelled.
   */
  async function runSimulated(
    projectId: string,
    callId: string,
    direction: 'inbound' | 'outbound',
    start: (
      own: { clock: Clock; carrier: SimCarrier },
      signals: { signal: AbortSignal; shutdown: AbortSignal; onCreated: () => void },
      callLog: FastifyBaseLogger,
    ) => Promise<unknown>,
  ): Promise<void> {
    const callLog = callLogger(callId, projectId);
    const own = simFor();
    const cancel = new AbortController();
    let created!: () => void;
    const createdOnce = new Promise<void>((resolve) => {
      created = resolve;
    });
    const call = keep(
      start(
        own,
        {
          signal: AbortSignal.any([shutdown.signal, cancel.signal]),
          shutdown: shutdown.signal,
          onCreated: () => created(),
        },
        callLog,
      ),
    );
    const hangUp = () => {
      if (!own.carrier.hangUpRemote(callId)) cancel.abort(new Error('hung up while ringing'));
    };
    live.add(callId, { projectId, direction, hangUp }, call);
    await Promise.race([createdOnce, call]);
    void call.catch((err) => callLog.error({ err }, 'simulated call failed'));
  }

  /** 模拟通话: the assistant calls a simulated callee. */
  async function runTestCall(projectId: string, request: TestCallRequest, callId: string): Promise<void> {
    const loaded = await ports.assistants.forCall(projectId, request.assistantId, request.version ?? 'draft');
    const calleeNumber = request.calleeNumber || `1380000${String(randomInt(10_000)).padStart(4, '0')}`;
    const questions =
      request.persona === 'asks_question' ? await ports.knowledge.questions(loaded.config, 20) : [];
    await runSimulated(projectId, callId, 'outbound', (own, signals, callLog) =>
      placeCall(
        callDeps(own, callLog),
        {
          projectId,
          assistantId: request.assistantId,
          callerNumber: SIM_CALLER_NUMBER,
          calleeNumber,
          persona: request.persona,
          questions,
          variables: request.variables,
          callId,
          ...signals,
        },
        loaded,
      ),
    );
  }

  /**
   * A call of the open API: the assistant's published version dials the number like a task's
   * call (on a SIP trunk when the caller number is on one and this process runs SIP lines, else
   * on the simulated carrier), and the request is answered once the record exists.
   */
  async function runApiCall(projectId: string, request: ApiCallPayload, callId: string): Promise<void> {
    const loaded = await ports.assistants.forCall(projectId, request.assistantId, request.version);
    const questions =
      request.persona === 'asks_question' ? await ports.knowledge.questions(loaded.config, 20) : [];
    await runSimulated(projectId, callId, 'outbound', (own, signals, callLog) => {
      const deps = callDeps(own, callLog);
      const line = sip;
      if (line) {
        deps.carrier = line.route(own.carrier);
        deps.legMedia = lineMedia(line, callLog);
      }
      return placeCall(
        deps,
        {
          projectId,
          assistantId: request.assistantId,
          version: request.version,
          callerNumber: request.callerNumber,
          calleeNumber: request.calleeNumber,
          persona: request.persona,
          questions,
          variables: request.variables,
          callId,
          ...signals,
        },
        loaded,
      );
    });
  }

  /** 模拟来电: a simulated customer dials one of the project's numbers, routed as a real call is. */
  async function runInboundTestCall(
    projectId: string,
    request: TestInboundCallRequest,
    callId: string,
  ): Promise<void> {
    const route = await ports.inbound.lookup(request.number);
    if (!route || route.projectId !== projectId) {
      throw new AppError(404, 'NOT_FOUND', `号码 ${request.number} 不是本项目的号码`);
    }
    const questions =
      request.persona === 'asks_question' && route.assistantId
        ? await ports.assistants
            .forCall(projectId, route.assistantId)
            .then((a) => ports.knowledge.questions(a.config, 20))
            .catch(() => [])
        : [];
    const callerNumber = request.callerNumber || `1390000${String(randomInt(10_000)).padStart(4, '0')}`;
    await runSimulated(projectId, callId, 'inbound', async (own, signals, callLog) => {
      let answered: Promise<unknown> = Promise.resolve();
      const off = own.carrier.onInbound((offer) => {
        if (offer.callId === callId) answered = answerCall(callDeps(own, callLog), offer, signals);
      });
      try {
        await own.carrier.simulateInbound({
          callId,
          from: callerNumber,
          to: request.number,
          persona: request.persona,
          questions,
        });
      } finally {
        off();
      }
      return answered;
    });
  }

  const flowSource = () => {
    if (!ports.flows) throw new AppError(503, 'SERVICE_UNAVAILABLE', '通话流程暂不可用');
    return ports.flows;
  };

  /**
   * 模拟来电 from the flow editor: a simulated caller dials the flow (one of its numbers, if it has
   * any) and does what the script says; the DRAFT answers, recorded as a test call (no version).
   */
  async function runFlowTestCall(
    projectId: string,
    flowId: string,
    request: FlowTestCallRequest,
    callId: string,
  ): Promise<void> {
    await flowSource().forCall(projectId, flowId, 'draft');
    const [bound] = await db
      .select({ number: projectNumbers.number })
      .from(projectNumbers)
      .where(and(eq(projectNumbers.projectId, projectId), eq(projectNumbers.inboundFlowId, flowId)))
      .limit(1);
    const [limits] = await db
      .select({ hasBalance: projectLimits.hasBalance, concurrentCallin: projectLimits.concurrentCallin })
      .from(projectLimits)
      .where(eq(projectLimits.projectId, projectId))
      .limit(1);
    const callinLimit = limits?.hasBalance ? limits.concurrentCallin : DEFAULT_CALLIN_CAP;
    const callerNumber = request.callerNumber || `1390000${String(randomInt(10_000)).padStart(4, '0')}`;
    await runSimulated(projectId, callId, 'inbound', async (own, signals, callLog) => {
      let answered: Promise<unknown> = Promise.resolve();
      const off = own.carrier.onInbound((offer) => {
        if (offer.callId !== callId) return;
        answered = runFlowCall(
          callDeps(own, callLog),
          offer,
          { projectId, flowId, callinLimit, version: 'draft' },
          signals,
        );
      });
      try {
        await own.carrier.simulateInbound({
          callId,
          from: callerNumber,
          to: bound?.number ?? SIM_CALLER_NUMBER,
          // A scripted caller who, once the script is used up, presses the keys prompts ask for.
          persona: request.script.length > 0 ? 'interested' : undefined,
          script: request.script,
        });
      } finally {
        off();
      }
      return answered;
    });
  }

  async function runRequest(request: CallRequest): Promise<void> {
    if (request.kind === 'test') await runTestCall(request.projectId, request.payload, request.id);
    else if (request.kind === 'api_call') await runApiCall(request.projectId, request.payload, request.id);
    else if (request.kind === 'flow_test') {
      const { flowId, ...payload } = request.payload;
      await runFlowTestCall(request.projectId, flowId, payload, request.id);
    } else await runInboundTestCall(request.projectId, request.payload, request.id);
  }

  /**
   * Without an engine here, an engine process runs the call: the request goes through the
   * database, and this process answers once the call's record exists (its `started` event).
   */
  async function viaEngine(request: CallRequest): Promise<{ callId: string }> {
    let started!: () => void;
    const startedOnce = new Promise<void>((resolve) => {
      started = resolve;
    });
    const unsubscribe = hub.subscribe(
      request.projectId,
      (event) => event.type === 'started' && started(),
      request.id,
    );
    try {
      await requests.submit(request);
      let timer: NodeJS.Timeout | undefined;
      const outcome = await Promise.race([
        startedOnce.then(() => 'started' as const),
        new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), ENGINE_PICKUP_MS);
        }),
      ]);
      clearTimeout(timer);
      if (outcome === 'timeout') {
        const [row] = await db.select({ id: calls.id }).from(calls).where(eq(calls.id, request.id)).limit(1);
        if (!row && (await requests.withdraw(request.id))) {
          throw new AppError(503, 'SERVICE_UNAVAILABLE', '当前没有可用的通话引擎，请稍后重试');
        }
      }
      return { callId: request.id };
    } finally {
      unsubscribe();
    }
  }

  const runtime = {
    log,
    role,
    processId,
    hasEngine,
    clock,
    hub,
    calls: repository,
    recordings,
    taskEvents,
    /** The offline speech synthesiser of this process (voices and the editor's 试听). */
    speech,
    /** Assistants' voices (offline, profile presets, clones), ready to speak. */
    voices,
    /** The webhook outbox of this process and its dispatcher (started where the engine runs). */
    webhooks: { outbox, dispatcher: webhookDispatcher },
    /**
     * SMS: the provider client of a project (modules/sms/sms-clients.ts), the sending worker (woken
     * when one is queued), and the review and receipt pollers (tests call their poll()).
     */
    sms: { clients: smsClients, sender: smsSender, wake: () => smsSender.wake(), pollers: smsPollers },
    /** Trunk status and 测试呼叫 (runtime/trunk-control.ts): the SIP runtime's once it runs here. */
    get trunks(): TrunkControl {
      return trunkControl();
    },
    /** The Prometheus metrics of this process (runtime/metrics.ts), served at /metrics. */
    metrics,
    /** SIP stack, media and screening counters; null without SIP. */
    sipStats: () => sip?.stats() ?? null,

    /**
     * Takes this process's real lines out of Kamailio's rotation (SIGUSR2): OPTIONS and new
     * INVITEs get 503, the calls in progress run to their end. False when it runs no SIP.
     */
    drainSip(reason: string): boolean {
      sip?.drain(reason);
      return sip !== null;
    },

    async startTestCall(projectId: string, request: TestCallRequest): Promise<{ callId: string }> {
      const callId = randomUUID();
      if (!hasEngine) return viaEngine({ id: callId, projectId, kind: 'test', payload: request });
      await runTestCall(projectId, request, callId);
      return { callId };
    },

    async startInboundTestCall(
      projectId: string,
      request: TestInboundCallRequest,
    ): Promise<{ callId: string }> {
      const callId = randomUUID();
      if (!hasEngine) {
        // Checked here too, so a wrong number is a plain 404 and not a wait for an engine.
        const route = await ports.inbound.lookup(request.number);
        if (!route || route.projectId !== projectId) {
          throw new AppError(404, 'NOT_FOUND', `号码 ${request.number} 不是本项目的号码`);
        }
        return viaEngine({ id: callId, projectId, kind: 'inbound_test', payload: request });
      }
      await runInboundTestCall(projectId, request, callId);
      return { callId };
    },

    /**
     * 模拟来电 of a flow's draft (the editor's): resolves with the call's id once its record exists.
     * A flow that does not exist in the project is a 404 from `forCall`.
     */
    async startFlowTestCall(
      projectId: string,
      flowId: string,
      request: FlowTestCallRequest,
    ): Promise<{ callId: string }> {
      const callId = randomUUID();
      if (!hasEngine) {
        // Checked here too, so a wrong flow is a plain 404 and not a wait for an engine.
        await flowSource().forCall(projectId, flowId, 'draft');
        return viaEngine({ id: callId, projectId, kind: 'flow_test', payload: { ...request, flowId } });
      }
      await runFlowTestCall(projectId, flowId, request, callId);
      return { callId };
    },

    /**
     * A call of the open API, checked by the caller (modules/opendock): answers with its id once
     * its record exists ('ringing'), or, in a process without the engine, once an engine process
     * took it ('queued' if its record is not written yet).
     */
    async placeApiCall(
      projectId: string,
      request: ApiCallPayload,
    ): Promise<{ callId: string; status: 'queued' | 'ringing' }> {
      const callId = randomUUID();
      if (hasEngine) {
        await runApiCall(projectId, request, callId);
        return { callId, status: 'ringing' };
      }
      await viaEngine({ id: callId, projectId, kind: 'api_call', payload: request });
      const [row] = await db.select({ id: calls.id }).from(calls).where(eq(calls.id, callId)).limit(1);
      return { callId, status: row ? 'ringing' : 'queued' };
    },

    /** 挂断 a running simulated call, in whichever process runs it; false when none does. */
    hangUp: (callId: string) => live.hangUp(callId),

    /** A task was started, paused, edited...: dial now rather than at the next tick, tell every watcher. */
    taskChanged: (projectId: string, taskId: string) => taskChanged(projectId, taskId, true),

    /** New documents were queued: index now rather than at the next poll. */
    wakeKnowledge: () => knowledgeWorker?.wake(),

    /** A batch test was uploaded: run it now rather than at the next poll. */
    wakeBatchTests: () => batchTestWorker?.wake(),

    /** Runs `fn` when the runtime stops (open event streams end then); returns the unregister function. */
    onStop(fn: () => void): () => void {
      stopHandlers.add(fn);
      return () => stopHandlers.delete(fn);
    },

    /** Tasks this process's dialer must leave alone (the demo seeding dials them on its own clock). */
    seedingTasks,

    /** The engine's parts the demo seeding and the flow editor's 模拟 run with. */
    engine: { ports, callDeps, flowHttp },

    async start(): Promise<void> {
      // Relayed events are read back one after another, so they are delivered in the order sent.
      let received = Promise.resolve();
      callRelay = await startRelay(
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
            .catch((err) => log.warn({ err }, 'relayed call event failed'));
        },
        (err) => log.warn({ err }, 'call event relay failed'),
      );
      const sender = callRelay;
      hub.relay = (projectId, event) => {
        const ref: CallEventRef = {
          p: projectId,
          t: event.type,
          c: callIdOf(event),
          ...(event.type === 'turn' ? { i: event.turn.index } : {}),
        };
        sender.send(JSON.stringify(ref));
      };
      taskRelay = await startRelay(
        database,
        'task_events',
        (payload) => {
          const [projectId = '', taskId = ''] = payload.split('/');
          taskEvents.changed(projectId, taskId);
          // A task started through another process: this dialer may have its contacts to call.
          dialer?.wake();
        },
        (err) => log.warn({ err }, 'task event relay failed'),
      );
      // A trunk changed in another process: the SIP runtime here reloads it (registers again).
      trunkRelay = await startRelay(
        database,
        'trunk_events',
        (trunkId) => sip?.control.changed(trunkId),
        (err) => log.warn({ err }, 'trunk event relay failed'),
      );
      await live.start(database);
      if (!hasEngine) {
        await requests.connect(database);
        return;
      }
      const closed = await repository.closeOrphaned();
      if (closed.length)
        log.warn({ count: closed.length }, 'calls left live by a stopped process closed as interrupted');
      sweepTimer = setInterval(() => {
        repository.closeOrphaned().catch(onError);
        // A mix another process claimed and never finished (it died) is taken up once its claim expires.
        void recordingWorker.kick();
      }, ORPHAN_SWEEP_MS);
      sweepTimer.unref();
      knowledgeWorker = startKnowledgeWorker(db, {
        log,
        embedderFor: (database, projectId) => embedderForProject(database, secret, projectId),
      });
      batchTestWorker = startBatchTestWorker(db, {
        log,
        embedderFor: (database, projectId) => embedderForProject(database, secret, projectId),
        assistFor: (database, projectId, providerId) => llmAssistFor(database, secret, projectId, providerId),
      });
      void recordingWorker.kick();
      await rollupWorker.start();
      if (database.kind === 'postgres') {
        // Events enqueued by processes without a dispatcher (ROLE=api) arrive as NOTIFY.
        stopOutboxListener = await database.listen(WEBHOOK_OUTBOX_CHANNEL, () => webhookDispatcher.wake());
      }
      webhookDispatcher.start();
      webhookDispatcher.sweep().catch(onError);
      smsSender.start();
      smsPollers.reviews.start();
      smsPollers.receipts.start();
      if (env.TELEPHONY === 'sip') await startSip();
      await requests.serve(database, runRequest);
      dialer?.start();
    },

    async stop(): Promise<void> {
      // First, before any call is interrupted: Kamailio's next ping or INVITE gets 503 and the
      // proxy moves new calls to another worker while this one winds down.
      sip?.drain('shutdown');
      if (sweepTimer) clearInterval(sweepTimer);
      await requests.stop();
      shutdown.abort(new Error('server stopping'));
      hub.relay = null;
      await callRelay?.stop();
      await taskRelay?.stop();
      await trunkRelay?.stop();
      taskEvents.close();
      for (const fn of stopHandlers) fn();
      stopHandlers.clear();
      await dialer?.stop();
      await Promise.allSettled([...running]);
      await live.stop();
      await knowledgeWorker?.stop();
      await batchTestWorker?.stop();
      await sip?.stop();
      await recordingWorker.stop();
      await rollupWorker.stop();
      await smsSender.stop();
      await smsPollers.reviews.stop();
      await smsPollers.receipts.stop();
      // Last: the calls winding down above still enqueue their events; what is in flight is
      // delivered and recorded, what is not stays pending for the next process.
      await stopOutboxListener?.().catch(onError);
      await webhookDispatcher.stop();
      await webhookSender.close().catch(onError);
      await carrier.close();
      await voices.close();
      await espeak?.close();
    },

    /**
     * Gives the demo project its call history (outbound, inbound to the assistant's line, and
     * the hotline flow's) when it has fewer than the demo's calls: on the first start, and again
     * after an interrupted seeding.
     */
    async ensureDemoCalls(email: string): Promise<number> {
      const demo = await findDemoProject(db, email);
      if (!demo) return 0;
      const assistant = await demoAssistant(db, demo.projectId);
      if (!assistant) return 0;
      await ensureDemoNumber(db, demo.projectId, assistant.id);
      await ensureDemoFlow(db, demo.projectId, { assistantId: assistant.id, baseUrl: demoMockBaseUrl(env) });
      const shouldStop = () => shutdown.signal.aborted;
      let made = 0;
      if ((await demoCallCount(db, demo.projectId)) < DEMO_CALL_COUNT) {
        await knowledgeSettled(db, demo.projectId);
        made = await keep(seedDemoCalls(runtime.engine, db, demo.projectId, assistant.id, { shouldStop }));
        log.info({ calls: made }, 'demo call history created');
      }
      const hotline = await keep(seedDemoFlowCalls(runtime.engine, db, demo.projectId, { shouldStop }));
      if (hotline > 0) log.info({ calls: hotline }, 'demo hotline history created');
      return made + hotline;
    },

    /** The demo project's call tasks, dialled by the real dialer on simulated clocks. */
    ensureDemoTasks: (email: string) => keep(ensureDemoTasks(runtime, db, email)),

    /**
     * Where the demo's background history stands, for /healthz: a benchmark or an operator waits
     * for `ready` before timing requests, since producing it takes a core.
     */
    demoHistory: 'off' as DemoHistoryState,

    /** Produces the demo's calls and then its tasks in the background, tracking `demoHistory`. */
    async produceDemoHistory(email: string): Promise<void> {
      runtime.demoHistory = 'producing';
      try {
        await runtime.ensureDemoCalls(email);
        await runtime.ensureDemoTasks(email);
        // Recordings of the new calls are mixed by the worker; the history is complete once they are.
        await runtime.drainRecordings();
        runtime.demoHistory = 'ready';
      } catch (err) {
        runtime.demoHistory = 'failed';
        throw err;
      }
    },

    /** Recomputes every marked report hour now, without the debounce (tests and the demo). */
    settleReports: () => processDirty(db),

    /** Mixes pending recordings now (tests and the demo wait on it). */
    drainRecordings: () => recordingWorker.kick(),

    /** Resolves when every call this process started has ended and been analysed. */
    async idle(): Promise<void> {
      while (running.size) await Promise.allSettled([...running]);
    },
  };
  return runtime;
}

export type Runtime = ReturnType<typeof createRuntime>;
