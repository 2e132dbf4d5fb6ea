// Issue #14 budgets for the assistant's hearing and voice on real lines, on loopback. The process
// under test is this one: the SIP stack, the media worker and the `sip` adapter
// (engine/telephony/sip), each call's `runCallSession` (engine/session/call-session.ts) with the
// LLM brain (`createOpenAIBrain`), and the leg media from `callSpeech` (runtime/call-speech.ts):
// CosyVoice over DashScope as the voice (`createCosyVoiceSynthesizer`) and FunASR as the ears
// (`createFunAsrRecognizer`, 2pass streaming). No database: calls are answered and their sessions
// built by hand, as bench/src/sip.ts builds its auto-answer handler.
//
// Two child processes keep their timing apart from the process under test:
//  - lib/speech-fakes.ts: the providers, answering with the fixed delays (recognition final
//    150 ms after the end flag, first LLM token 300 ms, first TTS audio 150 ms), and saying what
//    delays they actually gave;
//  - lib/speech-caller.ts: 100 callers (a UAC on the engine's SIP stack, one RTP socket each) saying
//    a Mandarin sentence synthesised once with the offline espeak voice, and timing at the caller
//    the last voiced packet sent and the first voiced reply packet received.
//
//  reply     end of the caller's speech → first voiced RTP packet of the reply, p95 over 100
//            concurrent calls × 3 turns ≤ (150 + 300 + 150 + hang) + 120 ms. The hang exercised is
//            the SIP leg's 300 ms early end (call-leg.ts EARLY_END_SILENCE_MS): the fake recogniser's
//            partial is the whole sentence with its full stop well before the caller stops, so the
//            turn ends 300 ms into silence rather than at the VAD's 700 ms. Printed with the
//            turns' own latency breakdown (endpointMs, recognitionMs, firstTokenMs,
//            firstSentenceMs, firstAudioMs, replyStartMs) and the delays the fakes measured.
//  barge-in  the caller talks over a long reply (ten sentences, the model still writing): the
//            assistant's voice stops at the caller ≤ 300 ms after the caller's first voiced packet
//            (p95), and the DashScope fake sees every later sentence's task never started or
//            closed by the engine.
//  failover  CosyVoice fails mid-sentence on some tasks (task-failed or a dropped connection,
//            after audio started) and the FunASR stream breaks mid-utterance on every third
//            connection, with fallbacks (Tencent TTS fake, a second FunASR fake): 0 turns lost
//            (every utterance gets a reply the caller hears); fallbacks used are printed.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type AssistantConfig, assistantConfig, type CallTurn } from '@callpilot/contracts';
import { createOpenAIBrain } from '../../apps/server/src/engine/brain/openai-brain';
import { systemClock } from '../../apps/server/src/engine/clock';
import { runCallSession } from '../../apps/server/src/engine/session/call-session';
import type { SessionResult } from '../../apps/server/src/engine/session/types';
import { createCosyVoiceSynthesizer } from '../../apps/server/src/engine/speech/cosyvoice-synthesizer';
import { createEspeakSynthesizer } from '../../apps/server/src/engine/speech/espeak';
import { recognizerWithFallback } from '../../apps/server/src/engine/speech/fallback';
import { createFunAsrRecognizer } from '../../apps/server/src/engine/speech/funasr-recognizer';
import { wavToPcm } from '../../apps/server/src/engine/speech/resample';
import type { StreamingSynthesizer } from '../../apps/server/src/engine/speech/synthesis';
import { createTencentSynthesizer } from '../../apps/server/src/engine/speech/tencent-synthesizer';
import { loadVad, type Vad } from '../../apps/server/src/engine/speech/vad';
import { MediaEngine } from '../../apps/server/src/engine/telephony/media/media-engine';
import { LINE_AUDIO_BATCH_MS } from '../../apps/server/src/engine/telephony/media/protocol';
import { EARLY_END_SILENCE_MS } from '../../apps/server/src/engine/telephony/sip/call-leg';
import { createSipAdapter, type SipAdapter } from '../../apps/server/src/engine/telephony/sip/sip-adapter';
import { createSipStack } from '../../apps/server/src/engine/telephony/sip/stack';
import { callSpeech } from '../../apps/server/src/runtime/call-speech';
import { nextMessage, type Scope, spawnTsModule, tempDir, withScope } from './lib/proc';
import { type BudgetResult, budget, fmtInt, fmtMs, fmtRatio, table } from './lib/report';
import type { CallerLoad, CallerMessage, CallerPlan, CallerRequest, CallResult } from './lib/speech-caller';
import type { FakesMessage, FakesReady, FakesReport, FakesRequest } from './lib/speech-fakes';
import {
  CALLER_SENTENCE,
  callIndexOf,
  callMarker,
  callOfSentence,
  FIRST_AUDIO_DELAY_MS,
  FIRST_TOKEN_DELAY_MS,
  KEYS,
  OPENING_LINE,
  percentile,
  RECOGNITION_FINAL_DELAY_MS,
  type SpeechPart,
  voicedMs,
} from './lib/speech-script';

const HOST = '127.0.0.1';
const here = path.dirname(fileURLToPath(import.meta.url));
const CALLS = Number(process.env.SPEECH_BENCH_CALLS ?? 100);
const TURNS = 3;
/** New calls per second: 100 calls are all up within 4 s. */
const RATE = 25;
const PARTS = new Set(
  (process.env.SPEECH_BENCH_PARTS ?? 'reply,barge,failover').split(',').map((p) => p.trim()),
);

const REPLY_SLACK_MS = 120;
const HANG_MS = EARLY_END_SILENCE_MS;
const REPLY_BASELINE_MS = RECOGNITION_FINAL_DELAY_MS + FIRST_TOKEN_DELAY_MS + FIRST_AUDIO_DELAY_MS + HANG_MS;
const REPLY_BUDGET_MS = REPLY_BASELINE_MS + REPLY_SLACK_MS;
const BARGE_BUDGET_MS = 300;

const COSYVOICE_VOICE = { voiceId: 'longxiaochun_v2', speed: 1, volume: 80 };
const TENCENT_VOICE = { voiceId: '101001', speed: 1, volume: 80 };

const fmtMs1 = (ms: number) => (Number.isFinite(ms) ? `${ms.toFixed(0)} ms` : 'n/a');
const p = (values: number[], q: number) => (values.length > 0 ? percentile(values, q) : Number.NaN);

// --- children -----------------------------------------------------------------------------------

interface Fakes extends FakesReady {
  part(part: SpeechPart): Promise<void>;
  report(): Promise<FakesReport>;
}

async function startFakes(scope: Scope): Promise<Fakes> {
  const child = spawnTsModule(scope, 'speech fakes', path.join(here, 'lib', 'speech-fakes.ts'), {});
  const send = (request: FakesRequest) => child.proc.send(request);
  scope.defer(() => {
    if (!child.hasExited() && child.proc.connected) send({ type: 'stop' });
  });
  const ready = await nextMessage<FakesMessage, 'ready'>(child, 'ready', 30_000);
  return {
    ...ready,
    async part(part) {
      const done = nextMessage<FakesMessage, 'part-ready'>(child, 'part-ready', 10_000);
      send({ type: 'part', part });
      await done;
    },
    async report() {
      const reply = nextMessage<FakesMessage, 'report'>(child, 'report', 30_000);
      send({ type: 'report' });
      return (await reply).report;
    },
  };
}

interface Callers {
  run(plan: CallerPlan, limitMs: number): Promise<{ calls: CallResult[]; load: CallerLoad }>;
}

async function startCallers(scope: Scope): Promise<Callers> {
  const child = spawnTsModule(scope, 'speech callers', path.join(here, 'lib', 'speech-caller.ts'), {});
  const send = (request: CallerRequest) => child.proc.send(request);
  scope.defer(() => {
    if (!child.hasExited() && child.proc.connected) send({ type: 'stop' });
  });
  await nextMessage<CallerMessage, 'ready'>(child, 'ready', 30_000);
  return {
    async run(plan, limitMs) {
      const done = nextMessage<CallerMessage, 'done'>(child, 'done', limitMs);
      send({ type: 'run', plan });
      const { calls, load } = await done;
      return { calls, load };
    },
  };
}

// --- the process under test --------------------------------------------------------------------

interface EngineTurn {
  call: number;
  turn: CallTurn;
}

interface UnderTest {
  adapter: SipAdapter;
  sipPort: number;
  turns: EngineTurn[];
  sessions: { call: number; result: SessionResult }[];
  fallbacks: { recognition: number; synthesis: number };
  failures: string[];
  engine: MediaEngine;
  peakLegs: number;
  closeVoices(): Promise<void>;
}

function configFor(index: number): AssistantConfig {
  return assistantConfig.parse({
    openingLine: OPENING_LINE,
    systemPrompt: `${callMarker(index)}你是课程顾问，回答客户关于课程的问题。`,
    // Long enough that a turn never runs out of time, and never the model's end of call.
    conversation: { maxTurns: 20, silenceTimeoutSec: 15 },
  });
}

/**
 * A fresh SIP stack, media worker and adapter answering every call with the assistant: its
 * session, the LLM brain, CosyVoice and FunASR (with their fallbacks in the failover part).
 */
async function startUnderTest(scope: Scope, vad: Vad, fakes: Fakes, part: SpeechPart): Promise<UnderTest> {
  const stack = await createSipStack({
    host: HOST,
    port: 0,
    protocols: ['udp'],
    agent: { userAgent: 'CallPilot speech bench' },
  });
  scope.defer(() => stack.close());
  const rtpBase = 20_000 + 2 * Math.floor(Math.random() * 10_000);
  const engine = await MediaEngine.start({
    rtpPortMin: rtpBase,
    rtpPortMax: rtpBase + 999,
    bindAddress: HOST,
    // As the server's real lines run it (runtime/sip-runtime.ts).
    audioBatchMs: LINE_AUDIO_BATCH_MS,
  });
  scope.defer(() => engine.close());
  const failures: string[] = [];
  const note = (context: string, err: unknown) => {
    if (failures.length < 20)
      failures.push(`${context}: ${err instanceof Error ? err.message : String(err)}`);
  };
  const adapter = createSipAdapter({
    stack,
    media: engine,
    vad,
    clock: systemClock,
    mediaAddress: HOST,
    recordingDir: tempDir(scope, 'speech-recordings'),
    defaultMedia: () => ({ recognizer: null, synthesize: async () => new Int16Array(0) }),
    onError: (err, context) => note(context, err),
  });
  scope.defer(() => adapter.close());

  const cosyVoice: StreamingSynthesizer = createCosyVoiceSynthesizer({
    apiKey: KEYS.dashscope,
    url: fakes.dashscope,
    clock: systemClock,
  });
  const tencent: StreamingSynthesizer = createTencentSynthesizer({ ...KEYS.tencent, host: fakes.tencent });
  const funasr = createFunAsrRecognizer({ url: fakes.funasr, mode: '2pass', clock: systemClock });
  const funasrFallback = createFunAsrRecognizer({
    url: fakes.funasrFallback,
    mode: '2pass',
    clock: systemClock,
  });
  const brain = createOpenAIBrain({ baseUrl: fakes.llm, apiKey: KEYS.llm, model: 'bench-chat' });
  const failover = part === 'failover';

  const state: UnderTest = {
    adapter,
    sipPort: stack.transport.local.port,
    turns: [],
    sessions: [],
    fallbacks: { recognition: 0, synthesis: 0 },
    failures,
    engine,
    peakLegs: 0,
    async closeVoices() {
      await cosyVoice.close?.();
      await tencent.close?.();
    },
  };
  scope.defer(() => state.closeVoices());

  adapter.onInbound((offer) => {
    const call = callIndexOf(offer.from);
    void (async () => {
      // Per call, as a real line gets them: each call's fallbacks keep their own view of the primary.
      const recognizer = failover
        ? recognizerWithFallback(funasr, funasrFallback, {
            clock: systemClock,
            timeoutMs: 5000,
            onFallback: () => state.fallbacks.recognition++,
          })
        : funasr;
      const media = callSpeech({
        clock: systemClock,
        primary: { key: 'bench-cosyvoice:longxiaochun_v2', synthesizer: cosyVoice, voice: COSYVOICE_VOICE },
        fallback: failover
          ? { key: 'bench-tencent:101001', synthesizer: tencent, voice: TENCENT_VOICE }
          : null,
        firstAudioTimeoutMs: 3000,
        recognizer,
        onFallback: () => state.fallbacks.synthesis++,
      });
      const leg = await offer.answer(media);
      state.peakLegs = Math.max(state.peakLegs, adapter.activeLegs);
      const result = await runCallSession(
        { callId: offer.callId, config: configFor(call), leg, remoteNumber: offer.from },
        { clock: systemClock, brain, retrieve: async () => null, optOut: async () => {} },
        { onTurn: (turn) => void state.turns.push({ call, turn }) },
      );
      state.sessions.push({ call, result });
      if (result.error) note(`call ${call} session`, result.error);
    })().catch((err) => note(`call ${call}`, err));
  });
  return state;
}

async function settle(ours: UnderTest, calls: number) {
  const deadline = performance.now() + 15_000;
  while (performance.now() < deadline) {
    if (ours.sessions.length >= calls && ours.adapter.activeLegs === 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/** Runs one part's calls against a fresh process under test; returns what everybody saw. */
async function runPart(vad: Vad, fakes: Fakes, callers: Callers, speech: string, part: SpeechPart) {
  return withScope(async (scope) => {
    await fakes.part(part);
    const ours = await startUnderTest(scope, vad, fakes, part);
    const elu0 = performance.eventLoopUtilization();
    const started = performance.now();
    const { calls, load } = await callers.run(
      { target: { host: HOST, port: ours.sipPort }, calls: CALLS, rate: RATE, part, turns: TURNS, speech },
      180_000,
    );
    const wallMs = performance.now() - started;
    const mainBusy = performance.eventLoopUtilization(elu0).utilization;
    const settled = await settle(ours, calls.filter((c) => c.answered).length);
    const media = await ours.engine.stats();
    const report = await fakes.report();
    console.log(
      `  ${calls.filter((c) => c.answered).length} of ${calls.length} calls answered in ${(wallMs / 1000).toFixed(1)} s, ` +
        `${ours.peakLegs} up at once; ` +
        `main thread busy ${(mainBusy * 100).toFixed(0)}%, media send lateness p99 ${media.latenessP99Ms.toFixed(1)} ms; ` +
        `callers' event loop busy ${(load.busy * 100).toFixed(0)}%, its delay p99 ${load.delayP99Ms.toFixed(1)} ms ` +
        `(max ${load.delayMaxMs.toFixed(0)} ms; load average ${os.loadavg()[0]?.toFixed(1)})` +
        (settled ? '' : '; sessions or legs still open 15 s after the calls'),
    );
    const callerErrors = calls.filter((c) => c.error).map((c) => `call ${c.index}: ${c.error}`);
    if (callerErrors.length > 0) console.log(`  caller errors: ${callerErrors.slice(0, 5).join('; ')}`);
    if (ours.failures.length > 0)
      console.log(`  engine onError (faults injected in failover): ${ours.failures.slice(0, 5).join('; ')}`);
    if (process.env.SPEECH_BENCH_DUMP) {
      // Everything each side saw, for looking into one call: SPEECH_BENCH_DUMP=/tmp/speech.
      const file = `${process.env.SPEECH_BENCH_DUMP}-${part}.json`;
      fs.writeFileSync(file, JSON.stringify({ calls, turns: ours.turns, report }, null, 1));
      console.log(`  raw figures written to ${file}`);
    }
    const problems = report.recognitions.flatMap((r) => (r.problem ? [r.problem] : []));
    if (problems.length > 0) console.log(`  recogniser fake refused: ${problems.slice(0, 3).join('; ')}`);
    return { calls, ours, report, settled };
  });
}

type PartRun = Awaited<ReturnType<typeof runPart>>;

const assistantLatencies = (run: PartRun) =>
  run.ours.turns.flatMap(({ turn }) => (turn.speaker === 'assistant' && turn.latency ? [turn.latency] : []));

// --- reply: end of speech → first reply packet -------------------------------------------------

function replyResults(run: PartRun): BudgetResult[] {
  const turns = run.calls.flatMap((c) => c.turns);
  const answered = turns.filter((t) => t.replyAt !== null);
  const replyStart = answered.map((t) => (t.replyAt as number) - t.lastVoicedAt);
  const lost = turns.length - answered.length;
  const talkedOver = turns.filter((t) => t.talkedOver > 0).length;
  const latencies = assistantLatencies(run).filter((l) => l.replyStartMs !== undefined);
  const stage = (pick: (l: (typeof latencies)[number]) => number | undefined) =>
    latencies.flatMap((l) => {
      const v = pick(l);
      return v === undefined ? [] : [v];
    });
  const { report } = run;
  const finalDelays = report.recognitions.flatMap((r) => (r.finalDelayMs === null ? [] : [r.finalDelayMs]));
  const tokenDelays = report.llm.flatMap((r) => (r.firstTokenMs === null ? [] : [r.firstTokenMs]));
  const audioDelays = report.tasks.flatMap((t) =>
    t.at.firstFrame !== undefined && t.at.text !== undefined ? [t.at.firstFrame - t.at.text] : [],
  );
  const endpoint = stage((l) => l.endpointMs);
  const earlyEnds = endpoint.filter((ms) => ms < 600).length;
  const row = (name: string, values: number[], configured: string) => [
    name,
    fmtInt(values.length),
    fmtMs1(p(values, 50)),
    fmtMs1(p(values, 95)),
    fmtMs1(p(values, 99)),
    configured,
  ];
  console.log(
    table(
      ['stage (engine turns; fakes as they measured)', 'n', 'p50', 'p95', 'p99', 'configured'],
      [
        row('endpoint: last voiced frame → end of turn', endpoint, `${HANG_MS} ms hang`),
        row(
          'recognition: end of turn → final',
          stage((l) => l.recognitionMs),
          '',
        ),
        row('  FunASR fake: end flag → final', finalDelays, `${RECOGNITION_FINAL_DELAY_MS} ms`),
        row(
          'first token: final → first LLM token',
          stage((l) => l.firstTokenMs),
          '',
        ),
        row('  chat fake: request → first token', tokenDelays, `${FIRST_TOKEN_DELAY_MS} ms`),
        row(
          'first sentence: final → first whole sentence',
          stage((l) => l.firstSentenceMs),
          '',
        ),
        row(
          'first audio: sentence → first TTS audio',
          stage((l) => l.firstAudioMs),
          '',
        ),
        row('  DashScope fake: text → first frame', audioDelays, `${FIRST_AUDIO_DELAY_MS} ms`),
        row(
          'reply start, engine: end of speech → first play',
          stage((l) => l.replyStartMs),
          '',
        ),
        row('reply start at the caller (budgeted)', replyStart, `≤ ${REPLY_BUDGET_MS} ms`),
      ],
    ),
  );
  // Where the time above the configured delays goes, turn by turn: the caller's k-th utterance of a
  // call and the k-th answered assistant turn of the same call are the same turn.
  const excess = {
    hang: [] as number[],
    recognition: [] as number[],
    firstToken: [] as number[],
    sentence: [] as number[],
    firstAudio: [] as number[],
    glue: [] as number[],
    media: [] as number[],
  };
  for (const c of run.calls) {
    const engineTurns = run.ours.turns
      .filter(({ call, turn }) => call === c.index && turn.latency?.replyStartMs !== undefined)
      .map(({ turn }) => turn.latency!);
    c.turns.forEach((t, k) => {
      const l = engineTurns[k];
      if (t.replyAt === null || !l || l.endpointMs === undefined || l.replyStartMs === undefined) return;
      const firstSentence = l.firstSentenceMs ?? l.firstTokenMs;
      const firstAudio = l.firstAudioMs ?? 0;
      excess.hang.push(l.endpointMs - HANG_MS);
      excess.recognition.push(l.recognitionMs - RECOGNITION_FINAL_DELAY_MS);
      excess.firstToken.push(l.firstTokenMs - FIRST_TOKEN_DELAY_MS);
      excess.sentence.push(firstSentence - l.firstTokenMs);
      excess.firstAudio.push(firstAudio - FIRST_AUDIO_DELAY_MS);
      excess.glue.push(l.replyStartMs - (l.endpointMs + l.recognitionMs + firstSentence + firstAudio));
      excess.media.push(t.replyAt - t.lastVoicedAt - l.replyStartMs);
    });
  }
  const over = (name: string, values: number[]) => [name, fmtMs1(p(values, 50)), fmtMs1(p(values, 95))];
  console.log(
    table(
      ['above the configured delays, per turn', 'p50', 'p95'],
      [
        over('hang beyond the early end', excess.hang),
        over('recognition beyond the final delay', excess.recognition),
        over('first token beyond the model delay (HTTP, client)', excess.firstToken),
        over('first token → first whole sentence', excess.sentence),
        over('first audio beyond the TTS delay (connect, run-task)', excess.firstAudio),
        over('session glue (listen, retrieval, sentence to play)', excess.glue),
        over('media path (jitter buffer, batches to VAD, send tick)', excess.media),
      ],
    ),
  );
  const measuredBaseline = p(finalDelays, 50) + p(tokenDelays, 50) + p(audioDelays, 50) + HANG_MS;
  const p95 = p(replyStart, 95);
  console.log(
    `  hang in force: ${earlyEnds} of ${endpoint.length} turns ended on the ${HANG_MS} ms early end ` +
      `(stable, finished partial), the rest on the VAD's 700 ms; baseline ${REPLY_BASELINE_MS} ms configured ` +
      `(${RECOGNITION_FINAL_DELAY_MS} + ${FIRST_TOKEN_DELAY_MS} + ${FIRST_AUDIO_DELAY_MS} + ${HANG_MS}), ` +
      `${fmtMs1(measuredBaseline)} from the fakes' medians + hang; p95 ${fmtRatio(p95 / REPLY_BASELINE_MS)} baseline`,
  );
  if (talkedOver > 0)
    console.log(`  ${talkedOver} turns: the reply started while the caller was still talking`);
  const ok = lost === 0 && run.calls.every((c) => c.answered) && turns.length === CALLS * TURNS;
  return [
    budget(
      `speech: reply start p95 over ${CALLS} calls`,
      ok && p95 <= REPLY_BUDGET_MS,
      `p50 ${fmtMs1(p(replyStart, 50))}, p95 ${fmtMs1(p95)}, p99 ${fmtMs1(p(replyStart, 99))} over ${answered.length} turns ` +
        `(budget ${REPLY_BUDGET_MS} ms = ${REPLY_BASELINE_MS} + ${REPLY_SLACK_MS}; ${fmtRatio(p95 / REPLY_BUDGET_MS)} of it)` +
        (lost > 0 ? `; ${lost} turns got no reply` : ''),
    ),
  ];
}

// --- barge-in ----------------------------------------------------------------------------------

function bargeResults(run: PartRun): BudgetResult[] {
  const barged = run.calls.filter((c) => c.barge?.playing);
  const stops = barged.map((c) => {
    const b = c.barge!;
    return b.stoppedAt === null ? 0 : b.stoppedAt - b.firstVoicedAt;
  });
  const notPlaying = run.calls.filter((c) => c.barge && !c.barge.playing).length;
  const noBarge = run.calls.filter((c) => !c.barge).length;
  // The long reply's TTS tasks by call, against when that caller cut in. A task that started after
  // the cut-in but within the playback budget was asked for before the engine could know.
  const grace = BARGE_BUDGET_MS;
  let startedLate = 0;
  let renderedOn = 0;
  let closed = 0;
  let finishedBefore = 0;
  let neverStarted = 0;
  let callsCancelling = 0;
  const closedAfter: number[] = [];
  const sentences = 10;
  const outliers: string[] = [];
  for (const c of barged) {
    const cutIn = c.barge!.firstVoicedAt;
    const stop = c.barge!.stoppedAt === null ? 0 : c.barge!.stoppedAt - cutIn;
    const tasks = run.report.tasks.filter((t) => callOfSentence(t.texts.join('')) === c.index);
    const late = tasks.filter((t) => t.at.run > cutIn + grace);
    // Rendered to its end although the caller had cut in and the engine had stopped the voice: the
    // fake notes a closed task only once the close reaches it, so a close is never "late".
    const notCancelled = tasks.filter(
      (t) =>
        (t.state === 'finished' && (t.at.end ?? 0) > cutIn + Math.max(grace, stop)) || t.state === 'started',
    );
    const closedHere = tasks.filter((t) => t.state === 'abandoned' || t.state === 'superseded');
    startedLate += late.length;
    renderedOn += notCancelled.length;
    closed += closedHere.length;
    for (const t of closedHere) if (t.at.end !== undefined) closedAfter.push(t.at.end - cutIn);
    finishedBefore +=
      tasks.filter((t) => t.state === 'finished').length -
      notCancelled.filter((t) => t.state === 'finished').length;
    const never = Math.max(0, sentences - tasks.length);
    neverStarted += never;
    if (closedHere.length + never > 0) callsCancelling++;
    if ((stop > BARGE_BUDGET_MS || late.length + notCancelled.length > 0) && outliers.length < 3) {
      const at = (t: number | undefined) => (t === undefined ? '-' : `${Math.round(t - cutIn)}`);
      outliers.push(
        `call ${c.index}: voice stopped ${fmtMs1(stop)} after the cut-in; tasks (state run/first audio/end, ms from the cut-in): ` +
          tasks.map((t) => `${t.state} ${at(t.at.run)}/${at(t.at.firstFrame)}/${at(t.at.end)}`).join(', '),
      );
    }
  }
  const answers = run.calls.filter((c) => c.turns[1]?.replyAt != null).length;
  console.log(
    table(
      ['barge-in', 'calls', 'p50', 'p95', 'p99', 'max', 'budget'],
      [
        [
          "caller's first voiced packet → assistant's voice stops",
          fmtInt(stops.length),
          fmtMs1(p(stops, 50)),
          fmtMs1(p(stops, 95)),
          fmtMs1(p(stops, 99)),
          fmtMs1(stops.length ? Math.max(...stops) : Number.NaN),
          `≤ ${BARGE_BUDGET_MS} ms`,
        ],
      ],
    ),
  );
  console.log(
    `  the long reply's ${sentences} sentences × ${barged.length} calls at the DashScope fake: ${finishedBefore} ` +
      `synthesised before the cut-in, ${closed} closed by the engine mid-task (the fake saw the close ` +
      `${fmtMs1(p(closedAfter, 50))} after the cut-in, p95 ${fmtMs1(p(closedAfter, 95))}), ${neverStarted} never started; ` +
      `${startedLate} started later than ${grace} ms after the cut-in, ${renderedOn} rendered to their end after the voice stopped. ` +
      `${answers} of ${run.calls.length} interruptions answered` +
      (notPlaying + noBarge > 0
        ? `; ${notPlaying} cut-ins fell in a pause, ${noBarge} calls never got to cut in`
        : ''),
  );
  for (const line of outliers) console.log(`  ${line}`);
  const p95 = p(stops, 95);
  const enough = barged.length >= CALLS * 0.9;
  return [
    budget(
      'speech: barge-in stops playback, p95',
      enough && p95 <= BARGE_BUDGET_MS,
      `p95 ${fmtMs1(p95)} over ${stops.length} calls (budget ${BARGE_BUDGET_MS} ms, ${fmtRatio(p95 / BARGE_BUDGET_MS)} of it)`,
    ),
    budget(
      'speech: barge-in cancels pending synthesis',
      enough && startedLate === 0 && renderedOn === 0 && callsCancelling === barged.length,
      `${closed} tasks closed mid-synthesis, ${neverStarted} sentences never sent; ${startedLate} started after the ` +
        `cut-in, ${renderedOn} rendered on after the voice stopped; ${callsCancelling} of ${barged.length} calls had synthesis to cancel`,
    ),
  ];
}

// --- failover ----------------------------------------------------------------------------------

function failoverResults(run: PartRun): BudgetResult[] {
  const turns = run.calls.flatMap((c) => c.turns);
  const expected = CALLS * TURNS;
  const heard = turns.filter((t) => t.replyAt !== null).length;
  const lost = expected - heard;
  const latencies = assistantLatencies(run);
  const turnFallbacks = (kind: 'recognition' | 'synthesis') =>
    latencies.filter((l) => l.fallbacks?.includes(kind)).length;
  const { report } = run;
  const broken = report.recognitions.filter((r) => r.broken !== null);
  const failedTasks = report.tasks.filter(
    (t) => t.errorCode === 'InternalError' || t.errorCode === 'dropped',
  );
  console.log(
    table(
      ['failover', 'injected at the fakes', 'fallback calls', 'turns marked fallback'],
      [
        [
          'recognition (FunASR stream broke mid-utterance)',
          `${broken.filter((r) => r.broken === 'drop').length} dropped, ${broken.filter((r) => r.broken === 'error').length} errors`,
          `${fmtInt(state(run).recognition)} (fallback fake served ${report.fallbackRecognitions.length})`,
          fmtInt(turnFallbacks('recognition')),
        ],
        [
          'synthesis (CosyVoice failed after its first audio)',
          `${failedTasks.filter((t) => t.errorCode === 'dropped').length} dropped, ${failedTasks.filter((t) => t.errorCode === 'InternalError').length} task-failed`,
          `${fmtInt(state(run).synthesis)} (Tencent fake spoke ${report.fallbackSyntheses})`,
          fmtInt(turnFallbacks('synthesis')),
        ],
      ],
    ),
  );
  const exercised = broken.length > 0 && failedTasks.length > 0;
  return [
    budget(
      'speech: 0 turns lost with providers failing mid-stream',
      lost === 0 && exercised && run.calls.every((c) => c.answered),
      `${heard} of ${expected} utterances answered at the caller; fallbacks used: recognition ` +
        `${turnFallbacks('recognition')} turns, synthesis ${turnFallbacks('synthesis')} turns` +
        (exercised ? '' : '; the fakes injected no failure of one kind, nothing was tested'),
    ),
  ];
}

const state = (run: PartRun) => run.ours.fallbacks;

// --- the caller's sentence ---------------------------------------------------------------------

async function callerSpeech(): Promise<{ base64: string; ms: number; voiced: number }> {
  const espeak = createEspeakSynthesizer();
  try {
    const speech = await espeak.synthesize(CALLER_SENTENCE, { voiceId: 'cmn', speed: 1, volume: 80 });
    const pcm = wavToPcm(speech.audio, 8000);
    const bytes = Buffer.alloc(pcm.length * 2);
    for (let i = 0; i < pcm.length; i++) bytes.writeInt16LE(pcm[i] as number, i * 2);
    return { base64: bytes.toString('base64'), ms: pcm.length / 8, voiced: voicedMs(pcm) };
  } finally {
    await espeak.close();
  }
}

export async function speechBenchmark(): Promise<BudgetResult[]> {
  const unknown = [...PARTS].filter((part) => !['reply', 'barge', 'failover'].includes(part));
  if (unknown.length > 0)
    throw new Error(`SPEECH_BENCH_PARTS: unknown ${unknown.join(', ')} (reply, barge, failover)`);
  if (!(CALLS > 0)) throw new Error('SPEECH_BENCH_CALLS must be positive');
  return withScope(async (scope) => {
    const speech = await callerSpeech();
    console.log(
      `  ${os.availableParallelism()} cores; ${CALLS} calls at ${RATE}/s; the caller says “${CALLER_SENTENCE}” ` +
        `(espeak, ${fmtMs(speech.ms)}, ${fmtMs(speech.voiced)} voiced)`,
    );
    const vad = await loadVad();
    const fakes = await startFakes(scope);
    const callers = await startCallers(scope);
    const results: BudgetResult[] = [];
    if (PARTS.has('reply')) {
      console.log(
        `  -- reply: end of speech → first reply packet, ${CALLS} calls × ${TURNS} turns ` +
          `(FunASR final +${RECOGNITION_FINAL_DELAY_MS} ms, first token +${FIRST_TOKEN_DELAY_MS} ms, ` +
          `CosyVoice first audio +${FIRST_AUDIO_DELAY_MS} ms)`,
      );
      results.push(...replyResults(await runPart(vad, fakes, callers, speech.base64, 'reply')));
    }
    if (PARTS.has('barge')) {
      console.log(`  -- barge-in: ${CALLS} callers talk over a ten-sentence reply about a second into it`);
      results.push(...bargeResults(await runPart(vad, fakes, callers, speech.base64, 'barge')));
    }
    if (PARTS.has('failover')) {
      console.log(
        `  -- failover: CosyVoice failing mid-sentence now and then, every third FunASR stream breaking ` +
          `mid-utterance; Tencent TTS and a second FunASR behind them`,
      );
      results.push(...failoverResults(await runPart(vad, fakes, callers, speech.base64, 'failover')));
    }
    return results;
  });
}
