// The callers of the speech bench, in a process of their own: a UAC on the engine's own SIP stack
// (engine/telephony/sip) and one RTP socket per call, sending a 20 ms A-law packet every tick
// (speech when the caller talks, A-law silence otherwise, as a phone does) and timing, here at the
// caller, what a person on the line would notice: the last voiced packet it sent, the first voiced
// packet of the reply, and when the assistant's voice stopped after the caller cut in. A packet is
// voiced when its decoded RMS is above VOICED_RMS; the engine's idle packets are A-law silence.
//
// Started with child_process.fork. IPC: 'ready' first; 'run' places a part's calls and answers
// 'done' with every call's timings (wall-clock ms, speech-script.ts `wallClock`); 'stop' exits.
import dgram from 'node:dgram';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeG711, encodeG711 } from '../../../apps/server/src/engine/telephony/media/g711';
import { applyAnswer, createOffer } from '../../../apps/server/src/engine/telephony/sip/sdp';
import { createSipStack, type SipStack } from '../../../apps/server/src/engine/telephony/sip/stack';
import type { InviteSession } from '../../../apps/server/src/engine/telephony/sip/user-agent';
import {
  callerNumber,
  FRAME_SAMPLES,
  frameRms,
  type SpeechPart,
  VOICED_RMS,
  wallClock,
} from './speech-script';

const HOST = '127.0.0.1';
const PERIOD_MS = 20;
/** A gap this long in the assistant's voice is the end of what it was saying. */
const QUIET_MS = 600;
/** After a barge-in, the assistant has stopped once its voice leaves a gap this long. */
const STOPPED_GAP_MS = 400;
/** How long a caller waits for a reply before counting the turn as lost. */
const REPLY_WAIT_MS = 10_000;

export interface CallerPlan {
  target: { host: string; port: number };
  calls: number;
  /** New calls per second. */
  rate: number;
  part: SpeechPart;
  /** Utterances after the opening line (reply, failover); the barge-in part has its own two. */
  turns: number;
  /** What the caller says: 8 kHz 16-bit mono PCM, little-endian, base64. */
  speech: string;
}

export interface TurnResult {
  /** When the caller's first and last voiced packets left. */
  firstVoicedAt: number;
  lastVoicedAt: number;
  /** The first voiced packet of the answer after the caller's last one; null: none came. */
  replyAt: number | null;
  /** Voiced packets of the assistant that arrived while the caller was still talking. */
  talkedOver: number;
}

export interface BargeResult {
  /** The long reply's first voiced packet. */
  replyStartedAt: number;
  /** The assistant was audible in the 100 ms before the caller cut in. */
  playing: boolean;
  /** The caller's first voiced packet of the interruption. */
  firstVoicedAt: number;
  /** The assistant's last voiced packet before it went quiet; null: none after the cut-in. */
  stoppedAt: number | null;
}

export interface CallResult {
  index: number;
  answered: boolean;
  error?: string;
  /** INVITE → 200, ms. */
  setupMs: number;
  openingHeard: boolean;
  turns: TurnResult[];
  barge?: BargeResult;
  /** Who hung up: we do once our turns are done. */
  endedBy: 'caller' | 'assistant' | null;
}

export type CallerRequest = { type: 'run'; plan: CallerPlan } | { type: 'stop' };
/** How busy the callers' own event loop was: a late receive would inflate what they measure. */
export interface CallerLoad {
  busy: number;
  delayP99Ms: number;
  delayMaxMs: number;
}

export type CallerMessage = { type: 'ready' } | { type: 'done'; calls: CallResult[]; load: CallerLoad };

interface Frame {
  payload: Uint8Array;
  voiced: boolean;
}

const SILENCE: Frame = { payload: new Uint8Array(FRAME_SAMPLES).fill(0xd5), voiced: false };

/** One call's media: what it sends each tick, and the assistant's voiced packets as they came. */
class Line {
  readonly voicedAt: number[] = [];
  lastVoicedAt: number;
  private seq = Math.floor(Math.random() * 65536);
  private ts = Math.floor(Math.random() * 2 ** 32);
  private readonly ssrc = Math.floor(Math.random() * 2 ** 32);
  private readonly header = Buffer.alloc(12);
  private queue: Frame[] = [];
  private at = 0;
  private speaking: {
    first: number | null;
    last: number | null;
    done: (r: { first: number; last: number }) => void;
  } | null = null;
  private voicedWaiters: { after: number; resolve: (at: number) => void }[] = [];
  remote: { address: string; port: number; payloadType: number } | null = null;

  constructor(readonly socket: dgram.Socket) {
    this.lastVoicedAt = wallClock();
    const pcm = new Int16Array(FRAME_SAMPLES);
    socket.on('message', (datagram) => {
      if (datagram.length < 12 || datagram[0]! >> 6 !== 2) return;
      const payloadType = datagram[1]! & 0x7f;
      // Telephone events and comfort noise carry no voice.
      if (payloadType !== 8 && payloadType !== 0) return;
      const offset = 12 + 4 * (datagram[0]! & 0x0f);
      const payload = datagram.subarray(offset, offset + FRAME_SAMPLES);
      decodeG711(payloadType === 8 ? 'PCMA' : 'PCMU', payload, pcm);
      if (frameRms(pcm, 0, payload.length) <= VOICED_RMS) return;
      const now = wallClock();
      this.voicedAt.push(now);
      this.lastVoicedAt = now;
      if (this.voicedWaiters.length === 0) return;
      const ready = this.voicedWaiters.filter((w) => now > w.after);
      this.voicedWaiters = this.voicedWaiters.filter((w) => now <= w.after);
      for (const waiter of ready) waiter.resolve(now);
    });
  }

  /** One tick: the next frame of speech, or silence. */
  tick() {
    if (!this.remote) return;
    const frame = this.queue[this.at] ?? SILENCE;
    if (this.at < this.queue.length) this.at++;
    const h = this.header;
    h[0] = 0x80;
    h[1] = this.remote.payloadType;
    h.writeUInt16BE(this.seq, 2);
    h.writeUInt32BE(this.ts, 4);
    h.writeUInt32BE(this.ssrc, 8);
    this.socket.send([h, frame.payload], this.remote.port, this.remote.address);
    this.seq = (this.seq + 1) & 0xffff;
    this.ts = (this.ts + FRAME_SAMPLES) >>> 0;
    const speaking = this.speaking;
    if (!speaking) return;
    if (frame.voiced) {
      const now = wallClock();
      speaking.first ??= now;
      speaking.last = now;
    }
    if (this.at >= this.queue.length) {
      this.speaking = null;
      this.queue = [];
      this.at = 0;
      const now = wallClock();
      speaking.done({ first: speaking.first ?? now, last: speaking.last ?? now });
    }
  }

  /** Says `frames`; resolves once the last is sent, with when the first and last voiced ones left. */
  speak(frames: Frame[]): Promise<{ first: number; last: number }> {
    return new Promise((resolve) => {
      this.queue = frames;
      this.at = 0;
      this.speaking = { first: null, last: null, done: resolve };
    });
  }

  /** The first voiced packet received after `after`, or null after `timeoutMs`. */
  async waitVoiced(after: number, timeoutMs: number): Promise<number | null> {
    const already = this.voicedAt.find((t) => t > after);
    if (already !== undefined) return already;
    let waiter: { after: number; resolve: (at: number) => void } | undefined;
    const heard = new Promise<number>((resolve) => {
      waiter = { after, resolve };
      this.voicedWaiters.push(waiter);
    });
    const timer = new AbortController();
    const result = await Promise.race([
      heard,
      sleep(timeoutMs, null, { signal: timer.signal }).catch(() => null),
    ]);
    timer.abort();
    this.voicedWaiters = this.voicedWaiters.filter((w) => w !== waiter);
    return result;
  }

  /** Resolves once nothing voiced came for `quietMs` (false after `timeoutMs`). */
  async waitQuiet(quietMs: number, timeoutMs: number): Promise<boolean> {
    const deadline = wallClock() + timeoutMs;
    for (;;) {
      const now = wallClock();
      if (now - this.lastVoicedAt >= quietMs) return true;
      if (now > deadline) return false;
      await sleep(Math.min(quietMs - (now - this.lastVoicedAt) + 5, 100));
    }
  }

  countVoiced(from: number, to: number): number {
    return this.voicedAt.filter((t) => t > from && t <= to).length;
  }
}

const randomBetween = (low: number, high: number) => low + Math.random() * (high - low);

function framesOf(pcm: Int16Array): Frame[] {
  const frames: Frame[] = [];
  for (let at = 0; at < pcm.length; at += FRAME_SAMPLES) {
    const frame = new Int16Array(FRAME_SAMPLES);
    frame.set(pcm.subarray(at, Math.min(pcm.length, at + FRAME_SAMPLES)));
    frames.push({ payload: encodeG711('PCMA', frame), voiced: frameRms(frame) > VOICED_RMS });
  }
  return frames;
}

function bindRtp(): Promise<dgram.Socket> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket('udp4');
    socket.once('error', reject);
    socket.bind(0, HOST, () => {
      socket.off('error', reject);
      socket.on('error', () => {});
      resolve(socket);
    });
  });
}

/** The assistant's last voiced packet after `from` before its voice left a gap of STOPPED_GAP_MS. */
function stoppedAt(voicedAt: number[], from: number): number | null {
  let last: number | null = null;
  let previous = from;
  for (const t of voicedAt) {
    if (t <= from) continue;
    if (t - previous >= STOPPED_GAP_MS) break;
    last = t;
    previous = t;
  }
  return last;
}

async function runCall(
  stack: SipStack,
  lines: Set<Line>,
  plan: CallerPlan,
  speech: Frame[],
  index: number,
): Promise<CallResult> {
  const result: CallResult = {
    index,
    answered: false,
    setupMs: Number.NaN,
    openingHeard: false,
    turns: [],
    endedBy: null,
  };
  const socket = await bindRtp();
  const line = new Line(socket);
  let session: InviteSession | null = null;
  try {
    const offer = createOffer({ address: HOST, port: socket.address().port, codecs: ['PCMA'] });
    const invited = wallClock();
    const outcome = await stack.agent.invite({
      uri: `sip:4000@${plan.target.host}:${plan.target.port}`,
      from: `<sip:${callerNumber(index)}@${HOST}>`,
      to: `<sip:4000@${plan.target.host}>`,
      destination: { protocol: 'udp', address: plan.target.host, port: plan.target.port },
      sdp: offer.sdp,
    });
    if (!outcome.answered) {
      result.error = `INVITE answered ${outcome.status} ${outcome.reason}`;
      return result;
    }
    result.setupMs = wallClock() - invited;
    result.answered = true;
    session = outcome.session;
    const applied = applyAnswer(offer, session.remoteSdp);
    if (!applied.ok) throw new Error(`SDP answer refused: ${applied.reason}`);
    line.remote = {
      address: applied.negotiated.remoteAddress,
      port: applied.negotiated.remotePort,
      payloadType: applied.negotiated.payloadType,
    };
    lines.add(line);
    const answered = wallClock();
    void session.whenEnded.then(() => {
      result.endedBy ??= 'assistant';
    });
    const ended = () => result.endedBy !== null;

    result.openingHeard = (await line.waitVoiced(answered, 5000)) !== null;
    await line.waitQuiet(QUIET_MS, 15_000);

    const say = async () => {
      await sleep(randomBetween(200, 600));
      const spoken = await line.speak(speech);
      return spoken;
    };

    if (plan.part === 'barge') {
      const question = await say();
      const replyAt = await line.waitVoiced(question.last, REPLY_WAIT_MS);
      result.turns.push({
        firstVoicedAt: question.first,
        lastVoicedAt: question.last,
        replyAt,
        talkedOver: line.countVoiced(question.first, question.last),
      });
      if (replyAt !== null && !ended()) {
        // Cut in once the long reply has played for about a second.
        await sleep(Math.max(0, replyAt + randomBetween(900, 1300) - wallClock()));
        const cutIn = wallClock();
        const playing = line.countVoiced(cutIn - 100, cutIn) > 0;
        const interruption = await line.speak(speech);
        const answer = await line.waitVoiced(interruption.last, REPLY_WAIT_MS);
        result.barge = {
          replyStartedAt: replyAt,
          playing,
          firstVoicedAt: interruption.first,
          stoppedAt: stoppedAt(line.voicedAt, interruption.first),
        };
        result.turns.push({
          firstVoicedAt: interruption.first,
          lastVoicedAt: interruption.last,
          replyAt: answer,
          talkedOver: 0,
        });
        if (answer !== null) await line.waitQuiet(QUIET_MS, 20_000);
      }
    } else {
      for (let turn = 0; turn < plan.turns && !ended(); turn++) {
        const spoken = await say();
        const replyAt = await line.waitVoiced(spoken.last, REPLY_WAIT_MS);
        result.turns.push({
          firstVoicedAt: spoken.first,
          lastVoicedAt: spoken.last,
          replyAt,
          talkedOver: line.countVoiced(spoken.first, spoken.last),
        });
        if (replyAt === null) continue;
        await line.waitQuiet(QUIET_MS, 20_000);
      }
    }
    if (!ended()) {
      result.endedBy = 'caller';
      await session.bye();
    }
  } catch (err) {
    result.error = err instanceof Error ? err.message : String(err);
    if (session && !result.endedBy) await session.bye().catch(() => undefined);
  } finally {
    lines.delete(line);
    socket.close();
  }
  return result;
}

async function main() {
  const send = process.send?.bind(process);
  if (!send) throw new Error('speech-caller must be started with child_process.fork');
  const stack = await createSipStack({
    host: HOST,
    port: 0,
    protocols: ['udp'],
    agent: { userAgent: 'bench caller' },
  });
  const lines = new Set<Line>();

  // One sender for every call, on 20 ms deadlines from its start (not setInterval's drift).
  const startAt = performance.now();
  let tick = 0;
  const sendTick = () => {
    for (const line of lines) line.tick();
    tick++;
    setTimeout(sendTick, Math.max(0, startAt + tick * PERIOD_MS - performance.now()));
  };
  setTimeout(sendTick, PERIOD_MS);

  process.on('message', (message: CallerRequest) => {
    if (message.type === 'stop') {
      void stack.close().finally(() => process.exit(0));
      return;
    }
    const { plan } = message;
    const bytes = Buffer.from(plan.speech, 'base64');
    const pcm = new Int16Array(bytes.length / 2);
    for (let i = 0; i < pcm.length; i++) pcm[i] = bytes.readInt16LE(i * 2);
    const speech = framesOf(pcm);
    const elu = performance.eventLoopUtilization();
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    void Promise.all(
      Array.from({ length: plan.calls }, async (_, index) => {
        await sleep((index * 1000) / plan.rate);
        return runCall(stack, lines, plan, speech, index);
      }),
    ).then((calls) => {
      delay.disable();
      const load: CallerLoad = {
        busy: performance.eventLoopUtilization(elu).utilization,
        delayP99Ms: delay.percentile(99) / 1e6,
        delayMaxMs: delay.max / 1e6,
      };
      send({ type: 'done', calls, load } satisfies CallerMessage);
    });
  });
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready' } satisfies CallerMessage);
}

void main();
