// The speech bench's providers, in a process of their own so that their fixed delays are not
// stretched by the process under test (and do not load it): the FunASR fake (primary and a second
// one as the fallback recogniser, apps/server/src/engine/speech/testing/funasr-server.ts), the
// DashScope CosyVoice fake (primary voice) and the Tencent TTS fake (fallback voice), and a small
// OpenAI-compatible chat server of our own that streams its answer after a fixed first-token delay.
//
// Started with child_process.fork; IPC: the first message out is 'ready' with the addresses and
// keys; 'part' sets up a part (replies, fault injection) and starts its figures afresh; 'report'
// answers with what the servers saw since; 'stop' exits.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type DashScopeTask,
  startDashScopeTtsServer,
} from '../../../apps/server/src/engine/speech/testing/dashscope-tts-server';
import {
  type FunAsrListen,
  startFunAsrServer,
} from '../../../apps/server/src/engine/speech/testing/funasr-server';
import { startTencentTtsServer } from '../../../apps/server/src/engine/speech/testing/tencent-tts-server';
import {
  CALLER_PARTIALS,
  CALLER_SENTENCE,
  callOfPrompt,
  FIRST_AUDIO_DELAY_MS,
  FIRST_TOKEN_DELAY_MS,
  KEYS,
  longReply,
  PARTIAL_STEP_MS,
  RECOGNITION_FINAL_DELAY_MS,
  SHORT_REPLY,
  type SpeechPart,
  voicedMs,
  wallClock,
} from './speech-script';

export interface FakesReady {
  type: 'ready';
  funasr: string;
  funasrFallback: string;
  dashscope: string;
  tencent: string;
  llm: string;
}

export interface LlmRequestSeen {
  callIndex: number;
  /** Received → first content chunk written, ms. */
  firstTokenMs: number | null;
  reply: 'short' | 'long';
  aborted: boolean;
}

export interface RecognitionSeen {
  /** End flag → final sent, ms; null when no final went out. */
  finalDelayMs: number | null;
  /** How the fake broke this connection mid-utterance, if it did. */
  broken: 'drop' | 'error' | null;
  /** An error the fake raised on its own (pacing, protocol): a client bug, never expected. */
  problem: string | null;
  mode: string;
}

export interface FakesReport {
  recognitions: RecognitionSeen[];
  fallbackRecognitions: RecognitionSeen[];
  llm: LlmRequestSeen[];
  llmRefused: number;
  tasks: DashScopeTask[];
  /** Connections the fallback voice (Tencent) accepted, and the audio frames it sent. */
  fallbackSyntheses: number;
  fallbackFrames: number;
  fallbackRefused: number;
}

export type FakesRequest = { type: 'part'; part: SpeechPart } | { type: 'report' } | { type: 'stop' };
export type FakesMessage = FakesReady | { type: 'part-ready' } | { type: 'report'; report: FakesReport };

/** The fake recogniser's script: see CALLER_PARTIALS. */
const recognise: FunAsrListen = ({ pcm, final }) => {
  const voiced = voicedMs(pcm);
  if (voiced === 0) return '';
  if (final) return CALLER_SENTENCE;
  return CALLER_PARTIALS[Math.min(CALLER_PARTIALS.length - 1, Math.floor(voiced / PARTIAL_STEP_MS))] ?? '';
};

/**
 * A model on the OpenAI chat-completions protocol (POST /v1/chat/completions, `stream: true`,
 * server-sent `chat.completion.chunk`s, `data: [DONE]`), bearer key checked with OpenAI's 401 body.
 * The first content chunk leaves FIRST_TOKEN_DELAY_MS after the request, the rest 4 characters per
 * `paceMs` (about 130 characters a second at 30 ms, a fast hosted model).
 */
async function startChatServer(state: {
  longFirst: boolean;
  paceMs: number;
  seen: LlmRequestSeen[];
  refused: number;
}) {
  const server = http.createServer((req, res) => {
    const received = wallClock();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.headers.authorization !== `Bearer ${KEYS.llm}`) {
        state.refused++;
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: {
              message: 'Incorrect API key provided.',
              type: 'invalid_request_error',
              code: 'invalid_api_key',
            },
          }),
        );
        return;
      }
      if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }));
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        model: string;
        stream?: boolean;
        messages: { role: string; content: string | null }[];
      };
      const system = body.messages.find((m) => m.role === 'system')?.content ?? '';
      const callIndex = callOfPrompt(system);
      const userTurns = body.messages.filter((m) => m.role === 'user').length;
      const long = state.longFirst && userTurns === 1;
      const text = long ? longReply(callIndex) : SHORT_REPLY;
      const seen: LlmRequestSeen = {
        callIndex,
        firstTokenMs: null,
        reply: long ? 'long' : 'short',
        aborted: false,
      };
      state.seen.push(seen);
      const id = `chatcmpl-bench-${state.seen.length}`;
      const created = Math.floor(Date.now() / 1000);
      const chunk = (delta: object, finish: string | null = null) =>
        `data: ${JSON.stringify({
          id,
          object: 'chat.completion.chunk',
          created,
          model: body.model,
          choices: [{ index: 0, delta, finish_reason: finish }],
        })}\n\n`;
      const chars = [...text];
      const pieces: string[] = [];
      for (let i = 0; i < chars.length; i += 4) pieces.push(chars.slice(i, i + 4).join(''));
      let closed = false;
      res.on('close', () => {
        closed = true;
        if (!res.writableEnded) seen.aborted = true;
      });
      const timers: NodeJS.Timeout[] = [];
      const at = (ms: number, fn: () => void) => timers.push(setTimeout(() => !closed && fn(), ms));
      const due = received + FIRST_TOKEN_DELAY_MS;
      at(Math.max(0, due - wallClock()), () => {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.write(chunk({ role: 'assistant', content: '' }));
        pieces.forEach((piece, n) => {
          const send = () => {
            if (n === 0) seen.firstTokenMs = wallClock() - received;
            res.write(chunk({ content: piece }));
            if (n === pieces.length - 1) {
              res.write(chunk({}, 'stop'));
              res.end('data: [DONE]\n\n');
            }
          };
          if (n === 0) send();
          else at(n * state.paceMs, send);
        });
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` };
}

async function main() {
  const send = process.send?.bind(process);
  if (!send) throw new Error('speech-fakes must be started with child_process.fork');

  const funasr = await startFunAsrServer({ listen: recognise });
  const funasrFallback = await startFunAsrServer({ listen: recognise });
  funasr.finalDelay(RECOGNITION_FINAL_DELAY_MS);
  funasrFallback.finalDelay(RECOGNITION_FINAL_DELAY_MS);
  // 2x real time after the first frame, as a vendor streams: playback never waits for it, and a
  // sentence is still being rendered for a while after it started playing.
  const dashscope = await startDashScopeTtsServer({
    apiKey: KEYS.dashscope,
    firstAudioDelayMs: FIRST_AUDIO_DELAY_MS,
    frameMs: 100,
    interFrameDelayMs: 50,
    maxConcurrentTasks: 2000,
  });
  const tencent = await startTencentTtsServer({
    ...KEYS.tencent,
    firstAudioDelayMs: FIRST_AUDIO_DELAY_MS,
    msPerChar: 60,
    frameMs: 100,
    frameIntervalMs: 50,
    maxConcurrent: 2000,
  });
  const chat = { longFirst: false, paceMs: 30, seen: [] as LlmRequestSeen[], refused: 0 };
  const llm = await startChatServer(chat);

  let failover = false;
  let faultTimer: NodeJS.Timeout | undefined;
  const marks = { asr: 0, asrFallback: 0, tasks: 0, tencent: 0, llm: 0, llmRefused: 0 };
  /** How each primary connection closed, by index: what broke is read from this, not from the plan. */
  const closings = new Map<number, { code: number; byServer: boolean }>();

  // In the failover part every third streaming connection of the primary breaks once it has had
  // 600 ms of audio, in the middle of the caller's sentence: alternately the server process dies
  // (no close frame) and the Python server's error result. Set for the next connection as each
  // one is accepted; two accepted in the same tick shift the pattern, which changes nothing.
  void (async () => {
    for (let n = 1; ; n++) {
      await funasr.connected(n);
      const index = n - 1;
      void funasr.sessions[index]?.closed.then((closing) => closings.set(index, closing));
      const how = failover && n % 3 === 2 ? (n % 2 === 0 ? 'drop' : 'error') : null;
      funasr.failMidStream(how ? { afterAudioMs: 600, how } : null);
    }
  })();

  const seenOf = (
    session: (typeof funasr.sessions)[number],
    closing: { code: number; byServer: boolean } | undefined,
  ): RecognitionSeen => {
    const errors = session.results.flatMap((result) =>
      typeof result.error === 'string' ? [result.error] : [],
    );
    // The injected failure's text (funasr-server.ts); any other error is the client's mistake.
    const errored = errors.some((error) => error.includes('CUDA'));
    return {
      problem: errors.find((error) => !error.includes('CUDA')) ?? null,
      finalDelayMs:
        session.endedAt !== undefined && session.finalAt !== undefined
          ? session.finalAt - session.endedAt
          : null,
      // ws reports 1006 for a socket the server terminated: the fake's "process died".
      broken: errored ? 'error' : closing?.byServer && closing.code === 1006 ? 'drop' : null,
      mode: String(session.config?.mode ?? ''),
    };
  };

  process.on('message', (message: FakesRequest) => {
    if (message.type === 'part') {
      failover = message.part === 'failover';
      chat.longFirst = message.part === 'barge';
      // Slower in the barge-in part: the model is still writing when the caller cuts in.
      chat.paceMs = message.part === 'barge' ? 60 : 30;
      clearInterval(faultTimer);
      faultTimer = undefined;
      if (failover) {
        // Now and then the next CosyVoice task fails after its first audio frame or two: a
        // task-failed InternalError, or the connection dropped.
        let n = 0;
        faultTimer = setInterval(() => {
          n++;
          dashscope.failNext(
            n % 2 === 0 ? { afterFrames: 1, kind: 'task-failed' } : { afterFrames: 2, kind: 'drop' },
          );
        }, 400);
      } else {
        dashscope.failNext(null);
      }
      marks.asr = funasr.sessions.length;
      marks.asrFallback = funasrFallback.sessions.length;
      marks.tasks = dashscope.received.length;
      marks.tencent = tencent.connections.length;
      marks.llm = chat.seen.length;
      marks.llmRefused = chat.refused;
      send({ type: 'part-ready' } satisfies FakesMessage);
    } else if (message.type === 'report') {
      const fallbackConnections = tencent.connections.slice(marks.tencent);
      const report: FakesReport = {
        recognitions: funasr.sessions.slice(marks.asr).map((s, i) => seenOf(s, closings.get(marks.asr + i))),
        fallbackRecognitions: funasrFallback.sessions
          .slice(marks.asrFallback)
          .map((s) => seenOf(s, undefined)),
        llm: chat.seen.slice(marks.llm),
        llmRefused: chat.refused - marks.llmRefused,
        tasks: dashscope.received.slice(marks.tasks),
        fallbackSyntheses: fallbackConnections.filter((c) => c.handshakeCode === 0).length,
        fallbackFrames: fallbackConnections.reduce((sum, c) => sum + c.framesSent, 0),
        fallbackRefused: fallbackConnections.filter((c) => c.handshakeCode !== 0 && c.handshakeCode !== null)
          .length,
      };
      send({ type: 'report', report } satisfies FakesMessage);
    } else if (message.type === 'stop') {
      clearInterval(faultTimer);
      void Promise.allSettled([
        funasr.close(),
        funasrFallback.close(),
        dashscope.close(),
        tencent.close(),
        new Promise<void>((resolve) => llm.server.close(() => resolve())),
      ]).then(() => process.exit(0));
      llm.server.closeAllConnections();
    }
  });
  process.on('disconnect', () => process.exit(0));

  send({
    type: 'ready',
    funasr: funasr.url,
    funasrFallback: funasrFallback.url,
    dashscope: dashscope.url,
    tencent: tencent.url,
    llm: llm.url,
  } satisfies FakesMessage);
}

void main();
