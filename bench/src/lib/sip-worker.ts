// The SIP worker the sip bench measures: our SIP stack, a media worker and the `sip` adapter
// from apps/server/src/engine/telephony, with an auto-answer handler that answers every call and
// plays a tone (no assistant, no database). The in-process parts of the bench and the worker
// processes of the failover part (sip-worker-child.ts) both start it from here, so they measure
// the same thing.

import { systemClock } from '../../../apps/server/src/engine/clock';
import type { Vad } from '../../../apps/server/src/engine/speech/vad';
import { MediaEngine } from '../../../apps/server/src/engine/telephony/media/media-engine';
import { LINE_AUDIO_BATCH_MS } from '../../../apps/server/src/engine/telephony/media/protocol';
import {
  createSipAdapter,
  type LegMedia,
  type SipAdapter,
} from '../../../apps/server/src/engine/telephony/sip/sip-adapter';
import { createSipStack, type SipStack } from '../../../apps/server/src/engine/telephony/sip/stack';
import type { SipProxyAddress } from '../../../apps/server/src/env';
import { createInviteScreen } from '../../../apps/server/src/runtime/sip-screen';
import type { Scope } from './proc';

/** The bench's "voice": the text is how many ms of 440 Hz tone to say. */
const tones = new Map<number, Int16Array>();
export const toneMedia: LegMedia = {
  recognizer: null,
  synthesize: async (text) => {
    const samples = Math.round((Number(text) || 1000) * 8);
    // Computed once per length: 200 legs each asking for a second of tone every second would
    // otherwise put the bench's own sine arithmetic on the main thread it measures.
    let tone = tones.get(samples);
    if (!tone) {
      tone = Int16Array.from({ length: samples }, (_, i) =>
        Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000)),
      );
      tones.set(samples, tone);
    }
    return tone;
  },
};

export interface SipWorkerOptions {
  vad: Vad;
  host: string;
  /** 0 for any free port. */
  sipPort: number;
  rtpPortMin: number;
  rtpPortMax: number;
  recordingDir: string;
  /** RFC 3261 T1; production's 500 ms unless a part needs otherwise. */
  t1: number;
  /** For the n-th call, how long we play the tone before hanging up ourselves; null: until the far end does. */
  hangupAfterMs: (index: number) => number | null;
  /**
   * Behind Kamailio, as sip-runtime runs with SIP_PROXY: the 100 Trying leaves at once, and
   * callers are admitted by the X-Source-Addr of these proxies, `trunkHost` being the one trunk peer.
   */
  proxy?: { proxies: SipProxyAddress[]; trunkHost: string };
  /** The SIP Call-ID of each call once answered. */
  onAnswered?: (sipCallId: string) => void;
}

export interface SipWorker {
  stack: SipStack;
  engine: MediaEngine;
  adapter: SipAdapter;
  sipPort: number;
  offered: number;
  answered: number;
  peakLegs: number;
  endedByUs: number;
  endedByFarEnd: number;
  failures: string[];
}

/** A fresh stack, media worker and adapter, closed by the scope (the adapter first). */
export async function startSipWorker(scope: Scope, options: SipWorkerOptions): Promise<SipWorker> {
  const { proxy } = options;
  // The adapter hands over an offer synchronously from the screened INVITE's dispatch, so the
  // Call-ID the screen saw last is the offer's (the offer's own id is ours, not the SIP one).
  let screenedCallId = '';
  const screening = proxy
    ? createInviteScreen({
        clock: systemClock,
        proxies: proxy.proxies,
        trunkFor: (address) => (address === proxy.trunkHost ? { trunk: 'bench carrier' } : null),
        draining: () => false,
      })
    : null;
  const stack = await createSipStack({
    host: options.host,
    port: options.sipPort,
    protocols: ['udp'],
    t1: options.t1,
    // What sip-runtime sets with SIP_PROXY: Kamailio moves a call on after 1.5 s without any reply.
    tryingDelayMs: proxy ? 0 : undefined,
    agent: {
      userAgent: 'CallPilot bench',
      screen: (request, source) => {
        screenedCallId = request.headers.get('Call-ID') ?? '';
        return screening ? screening.screen(request, source) : null;
      },
    },
  });
  scope.defer(() => stack.close());
  const engine = await MediaEngine.start({
    rtpPortMin: options.rtpPortMin,
    rtpPortMax: options.rtpPortMax,
    bindAddress: options.host,
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
    vad: options.vad,
    clock: systemClock,
    mediaAddress: options.host,
    recordingDir: options.recordingDir,
    defaultMedia: () => toneMedia,
    onError: (err, context) => note(context, err),
  });
  scope.defer(() => adapter.close());
  const state: SipWorker = {
    stack,
    engine,
    adapter,
    sipPort: stack.transport.local.port,
    offered: 0,
    answered: 0,
    peakLegs: 0,
    endedByUs: 0,
    endedByFarEnd: 0,
    failures,
  };
  adapter.onInbound((offer) => {
    const index = state.offered++;
    const sipCallId = screenedCallId;
    void (async () => {
      const leg = await offer.answer(toneMedia);
      state.answered++;
      state.peakLegs = Math.max(state.peakLegs, adapter.activeLegs);
      options.onAnswered?.(sipCallId);
      void leg.whenEnded.then((end) => {
        if (end.by === 'local') state.endedByUs++;
        else state.endedByFarEnd++;
      });
      const after = options.hangupAfterMs(index);
      if (after !== null) {
        await leg.say(String(after), { interruptible: false });
        await leg.hangup();
        return;
      }
      while (!leg.ended) await leg.say('1000', { interruptible: false });
    })().catch((err) => note(`call ${index}`, err));
  });
  return state;
}
