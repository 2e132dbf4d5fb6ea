/**
 * The `sip` telephony adapter: the same `TelephonyAdapter` the simulated carrier implements,
 * over the SIP stack (signalling), the media engine (RTP in a worker) and the VAD.
 *
 * Outbound: INVITE through the number's trunk with our G.711 offer, digest answered, early media
 * from a 183 played into the recording, ring timeout → CANCEL. Inbound: an INVITE that passed
 * the stack's screening is offered to the runtime, which answers (200 with our answer, or our
 * offer when the INVITE had none) or refuses (486/480 with a Q.850 Reason).
 *
 * Transfer: REFER, and when the line refuses REFER (405, 501, 403...), a second call to the
 * target through the same trunk, bridged to the caller in the media worker. The assistant's call
 * (its record and recording) ends when the target answers; the bridge then belongs to the adapter
 * until either person hangs up.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Clock } from '../../clock';
import type { Vad } from '../../speech/vad';
import type { MediaEngine, MediaSession } from '../media/media-engine';
import type {
  CallLeg,
  InboundOffer,
  LegMedia,
  OriginateRequest,
  OriginateResult,
  TelephonyAdapter,
  TransferFailure,
  UnansweredOutcome,
} from '../types';

export type { LegMedia };

import { SipCallLeg } from './call-leg';
import { type CallFailure, outcomeOfFinalResponse, outcomeOfLocalEnd, refusalFor } from './causes';
import { uriOf } from './dialog';
import { DigestAuthenticator } from './digest';
import { parseDtmfInfo } from './dtmf-info';
import { parseNameAddr, parseUri, type SipRequest, type SipResponse } from './message';
import {
  answerOffer,
  applyAnswer,
  createOffer,
  type G711Codec,
  type LocalDescription,
  type NegotiatedMedia,
} from './sdp';
import type { SipStack } from './stack';
import type { SipEndpoint } from './transport';
import type { IncomingInvite, InviteSession, RequestSource } from './user-agent';

/** How one outbound call reaches the far end: its number's trunk, resolved by the runtime. */
export interface SipRoute {
  trunkId: string;
  /** The first hop: the outbound proxy, the registrar, or the IP trunk's peer. */
  destination: SipEndpoint;
  /** Host of the Request-URI and of From/To. */
  domain: string;
  /** The caller-ID as the trunk wants it (E.164, national or as stored). */
  callerId: string;
  /** The dialled number as the trunk wants it. */
  callee: string;
  credentials?: { username: string; password: string };
  codecs: readonly G711Codec[];
}

export interface SipAdapterOptions {
  stack: SipStack;
  media: MediaEngine;
  vad: Vad;
  clock: Clock;
  /** The address our SDP gives for RTP (the external address behind NAT). */
  mediaAddress: string;
  /** Where the media worker writes each call's stereo WAV. */
  recordingDir: string;
  /** Offline voice and no ears, for calls that bring none. */
  defaultMedia: () => LegMedia;
  ringTimeoutMs?: number;
  /**
   * The way back out for an inbound call's transfer leg: the trunk its INVITE came from, with
   * our number (the one the caller dialled) as the caller-ID. Null, or no resolver, when that
   * trunk is unknown; such a call cannot be transferred on a line that refuses REFER.
   */
  inboundRoute?: (call: { source: RequestSource; request: SipRequest; ourNumber: string }) => SipRoute | null;
  /** `callId`: the platform's call the step belonged to, so its log line is found with the call's. */
  onError?: (err: unknown, context: string, callId?: string) => void;
}

export interface SipOriginateRequest extends OriginateRequest {
  sip?: SipRoute;
  /** Each provisional response, for the trunk's 测试呼叫 steps. */
  onProvisional?: (status: number, reason: string) => void;
  /** The final response to the INVITE (after any digest challenge), for the same steps. */
  onFinalResponse?: (status: number, reason: string) => void;
  /** False for a call no record will claim (测试呼叫): its WAV would be left on disk forever. */
  record?: boolean;
}

const DEFAULT_RING_TIMEOUT_MS = 45_000;

/**
 * Final responses to REFER that mean "this line does not transfer" (method not allowed or not
 * implemented, refer extension unsupported, forbidden by policy, declined, not acceptable):
 * the target was never called, so we call it ourselves. A 408 or 481 is not here: by RFC 3261
 * §12.2.1.2 it ends the dialog, and with it the call there was to bridge.
 */
const REFER_REFUSALS = new Set([403, 405, 420, 488, 501, 603]);
/** Added to a transfer's ring timeout for the line to set the target's call up. */
const REFER_SETUP_MS = 5_000;

/**
 * Why a transfer did not connect, as an IVR flow branches on it, from the target's final response
 * (a REFER's NOTIFY): busy (486, 600), nobody answering (408, 480, 487, or no outcome in time),
 * anything else failed.
 */
export function transferFailureOf(outcome: { status?: number; timedOut?: boolean }): TransferFailure {
  if (outcome.timedOut) return 'no_answer';
  if (outcome.status === 486 || outcome.status === 600) return 'busy';
  if (outcome.status === 408 || outcome.status === 480 || outcome.status === 487) return 'no_answer';
  return 'failed';
}

/** The same for a second leg we dialled ourselves (its outcome is already the carrier's). */
const legFailure = (outcome: UnansweredOutcome): TransferFailure =>
  outcome === 'busy' || outcome === 'no_answer' ? outcome : 'failed';

/** Why the human's leg did not connect, as the transfer's detail in the call record. */
function transferLegFailure(outcome: UnansweredOutcome, detail?: string): string {
  if (outcome === 'busy') return '人工坐席忙线';
  if (outcome === 'no_answer') return '人工坐席无人接听';
  return `人工坐席未接通${detail ? `（${detail}）` : ''}`;
}

type Dialled =
  | {
      answered: true;
      session: InviteSession;
      media: MediaSession;
      offer: LocalDescription;
      negotiated: NegotiatedMedia;
    }
  | { answered: false; outcome: UnansweredOutcome; detail?: string };

/** A caller bridged to a transfer's second leg: lives until either hangs up. */
interface Bridge {
  /** BYE to both sides (when `bye`), both media sessions closed; resolves once done. */
  end(bye: boolean): Promise<void>;
}

/** The national form numbers are stored in: +8621… / 8621… → 021…, +86138… → 138…. */
export function nationalNumber(user: string): string {
  // Not a phone number (sip:reception@…): matched as written.
  if (!/^[\d\s()+*#.-]+$/.test(user)) return user;
  const digits = user.replace(/[^\d+*#]/g, '');
  const international = digits.startsWith('+86')
    ? digits.slice(3)
    : digits.startsWith('0086')
      ? digits.slice(4)
      : null;
  if (international === null)
    return digits.startsWith('86') && digits.length === 13 ? digits.slice(2) : digits;
  return /^1\d{10}$/.test(international) || international.startsWith('0')
    ? international
    : `0${international}`;
}

const userOf = (value: string | undefined): string => {
  const uri = parseUri(value ? (parseNameAddr(value)?.uri ?? value) : '');
  return uri?.user ?? '';
};

/** Why an outbound INVITE was finally refused, in the product's terms. */
function unansweredFailure(outcome: { status: number; reason: string; response?: SipResponse }): CallFailure {
  if (!outcome.response && outcome.status === 408) return outcomeOfLocalEnd('no_response');
  if (!outcome.response && outcome.status === 503) return outcomeOfLocalEnd('transport_error');
  // The UA answers each challenge once (RFC 3261 §22.2): a 401/407 that reaches us refused the
  // trunk's credentials, or the trunk has none set up.
  if (outcome.status === 401 || outcome.status === 407) return outcomeOfLocalEnd('auth_failed');
  return outcomeOfFinalResponse(
    outcome.status,
    outcome.reason,
    outcome.response?.headers.getAll('Reason') ?? [],
  );
}

/**
 * Where a blind transfer sends the caller: a SIP or tel URI as given, or a number (as people
 * write it, 400-800-8000) at `domain`, the trunk's domain or else the far end's.
 */
export function transferTarget(number: string, session: InviteSession, domain?: string): string {
  const target = number.trim();
  if (/^(sips?|tel):/i.test(target)) return target;
  const host = domain ?? parseUri(uriOf(session.dialog.remoteAddress) ?? '')?.host ?? '';
  return `sip:${target.replace(/[\s().-]/g, '')}@${host}`;
}

export interface SipAdapter extends TelephonyAdapter {
  readonly kind: 'sip';
  originate(request: SipOriginateRequest): Promise<OriginateResult>;
  /** Live legs (for the leak checks of the tests and the bench). */
  readonly activeLegs: number;
}

export function createSipAdapter(options: SipAdapterOptions): SipAdapter {
  const { stack, media: engine, clock } = options;
  const handlers = new Set<(offer: InboundOffer) => void>();
  const legs = new Set<CallLeg>();
  const bridges = new Set<Bridge>();

  function remoteOf(negotiated: NegotiatedMedia) {
    return {
      address: negotiated.remoteAddress,
      port: negotiated.remotePort,
      codec: negotiated.codec,
      payloadType: negotiated.payloadType,
      telephoneEventPt: negotiated.telephoneEventPayloadType,
      receivePayloadType: negotiated.receive.payloadType,
      receiveTelephoneEventPt: negotiated.receive.telephoneEventPayloadType,
      ptime: 20 as const,
    };
  }

  /**
   * Points the session at the far end and applies the agreed direction: an offer that is
   * sendonly or inactive from the start (music on hold, a listen-only announcement) means we
   * must not send, and a recvonly one that we need not expect caller audio.
   */
  async function startMedia(media: MediaSession, negotiated: NegotiatedMedia): Promise<void> {
    // Direction first: once the remote is set the worker takes the far end's packets, and the
    // leg's listeners are attached right after this resolves. A worker message between the two
    // (a key pressed at once) would reach a session nobody listens to yet.
    await media.setDirection(negotiated.direction);
    await media.setRemote(remoteOf(negotiated));
  }

  function makeLeg(input: {
    callId: string;
    direction: 'inbound' | 'outbound';
    from: string;
    to: string;
    session: InviteSession;
    media: MediaSession;
    legMedia: LegMedia;
    /** Our description as the call was set up: answers to re-offers continue its o= line. */
    description: LocalDescription;
    negotiated: NegotiatedMedia;
    /** The trunk's domain, for transfer targets; inbound calls use the caller's. */
    domain?: string;
    /** The media session writes the call's WAV. */
    records: boolean;
    /** Where a transfer's second leg goes when the line refuses REFER; null when nowhere. */
    transferRoute: () => SipRoute | null;
  }): SipCallLeg {
    const { session, media } = input;
    session.description = input.description;
    let telephoneEvent = input.negotiated.telephoneEventPayloadType !== null;
    /** Set once a transfer bridged the caller: the media belongs to the bridge from then on. */
    let bridged = false;
    const leg = new SipCallLeg({
      id: input.callId,
      direction: input.direction,
      from: input.from,
      to: input.to,
      answeredAt: clock.now(),
      clock,
      session: input.session,
      media: input.media,
      endpointer: options.vad.createEndpointer(),
      synthesize: input.legMedia.synthesize,
      speakSentence: input.legMedia.speakSentence,
      recognizer: input.legMedia.recognizer,
      hotwords: input.legMedia.hotwords,
      telephoneEvent: () => telephoneEvent,
      recordsLine: input.records,
      transfer: async (number, transfer = {}) => {
        const outcome = await session.refer(transferTarget(number, session, input.domain), {
          referredBy: transfer.callerId,
          // The line rings the target: past the ring timeout (and a moment to set it up) nobody answers.
          ...(transfer.ringTimeoutMs ? { timeoutMs: transfer.ringTimeoutMs + REFER_SETUP_MS } : {}),
        });
        // A REFER taken whose target then failed (NOTIFY 486...) is a failed transfer: the
        // line did call the target, and calling it again ourselves would ring it twice.
        if (outcome.ok) return { ok: true, detail: outcome.detail };
        if (!outcome.refused || !REFER_REFUSALS.has(outcome.status ?? 0)) {
          return { ok: false, detail: outcome.detail, outcome: transferFailureOf(outcome) };
        }
        return bridgeTransfer({
          callId: input.callId,
          number,
          session,
          media,
          callerId: transfer.callerId,
          ringTimeoutMs: transfer.ringTimeoutMs,
          route: input.transferRoute(),
          handOver: () => {
            bridged = true;
            leg.handOver();
          },
        });
      },
      onError: (err, context) => options.onError?.(err, context, input.callId),
    });
    session.handlers.onRequest = (request) => {
      if (request.method === 'INFO') {
        // Answered 200 whatever it carries: empty INFOs are keep-alives to some SBCs.
        const info = parseDtmfInfo(request.headers.get('Content-Type'), request.body);
        if (info.ok) leg.receiveDtmf(info.digit);
        return 200;
      }
      return request.method === 'NOTIFY' ? 200 : 405;
    };
    serveReoffers(session, media, input.callId, (negotiated) => {
      telephoneEvent = negotiated.telephoneEventPayloadType !== null;
    });
    legs.add(leg);
    void leg.whenEnded.then(async () => {
      legs.delete(leg);
      if (bridged) return;
      await input.media.close().catch((err) => options.onError?.(err, 'media close', input.callId));
    });
    return leg;
  }

  /**
   * Answers the far end's re-offers (hold, a codec change, session refreshes) from `media`,
   * and points the media at what was agreed.
   */
  function serveReoffers(
    session: InviteSession,
    media: MediaSession,
    callId: string,
    onNegotiated?: (negotiated: NegotiatedMedia) => void,
  ) {
    const apply = (negotiated: NegotiatedMedia) => {
      onNegotiated?.(negotiated);
      void startMedia(media, negotiated).catch((err) => options.onError?.(err, 'media', callId));
    };
    session.handlers.onMedia = apply;
    session.handlers.onOffer = (sdp) => {
      // Answering from our last description keeps the o= line's session id and version going
      // (RFC 3264 §8) and keeps us on hold if we hold the far end.
      const answered = answerOffer(sdp, {
        address: options.mediaAddress,
        port: media.localPort,
        previous: session.description ?? undefined,
      });
      if (!answered.ok) return null;
      session.description = answered.local;
      apply(answered.negotiated);
      return answered.sdp;
    };
  }

  /**
   * The transfer for a line that refuses REFER: call the target through the call's own trunk
   * and, once it answers, join the two calls' media. The caller hears silence while it rings
   * (the assistant has just said it is transferring). If the target does not answer, the call
   * goes on with the assistant.
   */
  async function bridgeTransfer(first: {
    callId: string;
    number: string;
    session: InviteSession;
    media: MediaSession;
    /** The number the target sees: the From user of the second leg; the trunk's caller-ID if unset. */
    callerId?: string;
    ringTimeoutMs?: number;
    route: SipRoute | null;
    handOver: () => void;
  }): Promise<{ ok: boolean; detail?: string; outcome?: TransferFailure }> {
    const { route } = first;
    if (!route) return { ok: false, detail: '线路不支持转接', outcome: 'failed' };
    const callerEnded = () => first.session.state === 'ended';
    const ended = { ok: false, detail: '通话已结束，未能转接', outcome: 'failed' } as const;
    if (callerEnded()) return ended;
    // The caller hanging up while the target rings cancels the target's call.
    const callerGone = new AbortController();
    void first.session.whenEnded.then(() => callerGone.abort());
    const uri = transferTarget(first.number, first.session, route.domain);
    let dialled: Dialled;
    try {
      dialled = await dial({
        callId: `${first.callId}-transfer`,
        route: first.callerId ? { ...route, callerId: first.callerId } : route,
        uri,
        ringTimeoutMs: first.ringTimeoutMs,
        // The second leg is not the assistant's call: nothing of it is recorded.
        record: false,
        signal: callerGone.signal,
      });
    } catch (err) {
      // No RTP port left, or the stack is closing: the call goes on with the assistant.
      options.onError?.(err, 'transfer leg', first.callId);
      return { ok: false, detail: '转接失败：无法发起人工坐席呼叫', outcome: 'failed' };
    }
    if (!dialled.answered) {
      if (callerEnded()) return ended;
      return {
        ok: false,
        detail: transferLegFailure(dialled.outcome, dialled.detail),
        outcome: legFailure(dialled.outcome),
      };
    }
    const second = { session: dialled.session, media: dialled.media };
    second.session.description = dialled.offer;
    if (callerEnded()) {
      await second.session.bye();
      await second.media.close().catch(() => undefined);
      return ended;
    }
    // From here the caller's dialog and media belong to the bridge, not to the assistant's leg.
    first.handOver();
    try {
      // The assistant's recording ends at the transfer: the two people's conversation is not
      // part of the assistant's call, and the recording worker may store the file at once.
      const stopped = await first.media.stopRecording();
      if (stopped.recordingError)
        options.onError?.(new Error(stopped.recordingError), 'recording', first.callId);
      await engine.bridge(first.media, second.media);
    } catch (err) {
      // The media worker failed under us: nobody can talk, end both calls.
      options.onError?.(err, 'bridge', first.callId);
      await Promise.all([first.session.bye(), second.session.bye()]);
      await Promise.all([first.media.close(), second.media.close()].map((p) => p.catch(() => undefined)));
      return { ok: false, detail: '转接失败：无法接通双方的通话', outcome: 'failed' };
    }
    startBridge({ session: first.session, media: first.media }, second, first.callId);
    return { ok: true, detail: 'bridged' };
  }

  /** Keeps a bridge until either side hangs up, goes silent, or the adapter closes. */
  function startBridge(
    a: { session: InviteSession; media: MediaSession },
    b: { session: InviteSession; media: MediaSession },
    callId: string,
  ) {
    let ending: Promise<void> | null = null;
    const silenceWatchers: Array<() => void> = [];
    const bridge: Bridge = {
      end(bye) {
        ending ??= (async () => {
          for (const stop of silenceWatchers) stop();
          if (bye) {
            await Promise.all([a.session.bye(), b.session.bye()]);
          }
          await Promise.all([a.media.close(), b.media.close()].map((p) => p.catch(() => undefined)));
          bridges.delete(bridge);
        })();
        return ending;
      },
    };
    bridges.add(bridge);
    // Either side's BYE ends the other's call: bye() on a session already ended does nothing.
    for (const side of [a, b]) {
      void side.session.whenEnded.then(() => bridge.end(true));
      // RTP stopped (a NAT dropped the mapping, a phone crashed): the same as a BYE, without one.
      const onInactive = () => {
        void side.session.bye('Q.850;cause=41;text="RTP timeout"');
        void bridge.end(true);
      };
      side.media.on('inactive', onInactive);
      silenceWatchers.push(() => side.media.off('inactive', onInactive));
    }
    serveReoffers(a.session, a.media, callId);
    serveReoffers(b.session, b.media, callId);
    // Keys sent as SIP INFO go on as RFC 4733 where the other side takes it; INFO is answered
    // either way (empty ones are keep-alives to some SBCs).
    const relayInfo = (to: MediaSession) => (request: SipRequest) => {
      if (request.method === 'INFO') {
        const info = parseDtmfInfo(request.headers.get('Content-Type'), request.body);
        if (info.ok) void to.sendDtmf(info.digit).catch(() => undefined);
        return 200;
      }
      return request.method === 'NOTIFY' ? 200 : 405;
    };
    a.session.handlers.onRequest = relayInfo(b.media);
    b.session.handlers.onRequest = relayInfo(a.media);
  }

  async function openMedia(callId: string, record = true): Promise<MediaSession> {
    return engine.open({
      callId,
      ...(record ? { recordingPath: path.join(options.recordingDir, `${callId}.wav`) } : {}),
    });
  }

  /**
   * One outbound INVITE through `route` with our G.711 offer: digest answered, early media from
   * a 183 played (into the recording, if any), ring timeout → CANCEL. Answered, the media points
   * at the far end and the caller takes the session and media over.
   */
  async function dial(request: {
    callId: string;
    route: SipRoute;
    /** Request-URI and To. */
    uri: string;
    record?: boolean;
    ringTimeoutMs?: number;
    signal?: AbortSignal;
    onProvisional?: (status: number, reason: string) => void;
    onFinalResponse?: (status: number, reason: string) => void;
  }): Promise<Dialled> {
    const { route } = request;
    const media = await openMedia(request.callId, request.record);
    const offer = createOffer({
      address: options.mediaAddress,
      port: media.localPort,
      codecs: route.codecs,
    });
    const ringTimeout = new AbortController();
    const timer = new AbortController();
    clock.sleep(request.ringTimeoutMs ?? options.ringTimeoutMs ?? DEFAULT_RING_TIMEOUT_MS, timer.signal).then(
      () => ringTimeout.abort(),
      () => undefined,
    );
    const signal = request.signal
      ? AbortSignal.any([request.signal, ringTimeout.signal])
      : ringTimeout.signal;
    let earlyMedia = false;
    try {
      const outcome = await stack.agent.invite({
        uri: request.uri,
        from: `<sip:${route.callerId}@${route.domain}>`,
        to: `<${request.uri}>`,
        destination: route.destination,
        sdp: offer.sdp,
        auth: route.credentials ? new DigestAuthenticator(route.credentials) : undefined,
        signal,
        onProvisional: (response) => {
          request.onProvisional?.(response.status, response.reason);
          // 183 with SDP: ringback or an announcement from the carrier; it goes to the recording.
          if (earlyMedia || response.body.length === 0) return;
          const applied = applyAnswer(offer, response.body.toString('utf8'));
          if (!applied.ok) return;
          earlyMedia = true;
          void startMedia(media, applied.negotiated).catch(() => undefined);
        },
      });
      if (outcome.answered) request.onFinalResponse?.(outcome.response.status, outcome.response.reason);
      else if (outcome.response) request.onFinalResponse?.(outcome.status, outcome.reason);
      if (!outcome.answered) {
        await media.close();
        const failure = outcome.cancelled
          ? outcomeOfLocalEnd(ringTimeout.signal.aborted ? 'ring_timeout' : 'cancelled')
          : unansweredFailure(outcome);
        return { answered: false, outcome: failure.outcome, detail: failure.detail };
      }
      const applied = applyAnswer(offer, outcome.session.remoteSdp);
      if (!applied.ok) {
        await outcome.session.bye('Q.850;cause=79;text="Media refused"');
        await media.close();
        const failure = outcomeOfLocalEnd('media_refused');
        return { answered: false, outcome: failure.outcome, detail: failure.detail };
      }
      await startMedia(media, applied.negotiated);
      return { answered: true, session: outcome.session, media, offer, negotiated: applied.negotiated };
    } catch (err) {
      await media.close().catch(() => undefined);
      throw err;
    } finally {
      timer.abort();
    }
  }

  stack.agent.onInvite((invite: IncomingInvite) => {
    const callId = randomUUID();
    const to = nationalNumber(userOf(invite.request.uri) || userOf(invite.request.headers.get('To')));
    const from = nationalNumber(userOf(invite.request.headers.get('From')));
    let media: MediaSession | null = null;
    const offer: InboundOffer = {
      callId,
      from,
      to,
      cancelled: invite.cancelled.signal,
      async answer(legMedia?: LegMedia) {
        try {
          media = await openMedia(callId);
        } catch (err) {
          // Refused now, or the caller would ring with no answer until the INVITE times out.
          const refusal = refusalFor('no_capacity');
          invite.reject(refusal.status, refusal.reasonPhrase, [['Reason', refusal.reason]]);
          throw err;
        }
        const remoteOffer = invite.request.body.toString('utf8');
        let local: LocalDescription | null = null;
        let sdp: string;
        let negotiated: NegotiatedMedia | null = null;
        let description: LocalDescription;
        if (remoteOffer.trim()) {
          const answered = answerOffer(remoteOffer, { address: options.mediaAddress, port: media.localPort });
          if (!answered.ok) {
            invite.reject(488, 'Not Acceptable Here', [['Warning', `399 callpilot "${answered.reason}"`]]);
            await media.close();
            throw new Error(`inbound offer refused: ${answered.reason}`);
          }
          sdp = answered.sdp;
          negotiated = answered.negotiated;
          description = answered.local;
        } else {
          // No offer in the INVITE: ours goes in the 200 and the answer comes in the ACK.
          local = createOffer({ address: options.mediaAddress, port: media.localPort });
          sdp = local.sdp;
          description = local;
        }
        let confirmed: { session: InviteSession; ack: import('./message').SipRequest };
        try {
          confirmed = await invite.answer(sdp);
        } catch (err) {
          await media.close();
          throw err;
        }
        if (local) {
          const applied = applyAnswer(local, confirmed.ack.body.toString('utf8'));
          if (!applied.ok) {
            await confirmed.session.bye('Q.850;cause=79;text="Media refused"');
            await media.close();
            throw new Error(`answer in ACK refused: ${applied.reason}`);
          }
          negotiated = applied.negotiated;
        }
        await startMedia(media, negotiated!);
        return makeLeg({
          callId,
          direction: 'inbound',
          from,
          to,
          session: confirmed.session,
          media,
          legMedia: legMedia ?? options.defaultMedia(),
          description,
          negotiated: negotiated!,
          records: true,
          transferRoute: () =>
            options.inboundRoute?.({ source: invite.source, request: invite.request, ourNumber: to }) ?? null,
        });
      },
      async reject(cause) {
        const refusal = refusalFor(cause);
        invite.reject(refusal.status, refusal.reasonPhrase, [['Reason', refusal.reason]]);
      },
    };
    if (handlers.size === 0) {
      const refusal = refusalFor('unavailable');
      invite.reject(refusal.status, refusal.reasonPhrase, [['Reason', refusal.reason]]);
      return;
    }
    for (const handler of handlers) handler(offer);
  });

  return {
    kind: 'sip',
    get activeLegs() {
      // A bridge is a call in progress too (draining waits for it), though no assistant is on it.
      return legs.size + bridges.size;
    },

    async originate(request: SipOriginateRequest): Promise<OriginateResult> {
      const route = request.sip;
      const started = clock.now();
      const ringMs = () => clock.now() - started;
      if (!route) {
        return { answered: false, outcome: 'failed', ringMs: 0, detail: '号码未关联 SIP 中继' };
      }
      let rang = false;
      const dialled = await dial({
        callId: request.callId,
        route,
        uri: `sip:${route.callee}@${route.domain}`,
        record: request.record,
        ringTimeoutMs: request.ringTimeoutMs,
        signal: request.signal,
        onProvisional: (status, reason) => {
          // 180 Ringing, or 183 Session Progress (ringback as early media): the phone rings.
          if ((status === 180 || status === 183) && !rang) {
            rang = true;
            request.onRinging?.();
          }
          request.onProvisional?.(status, reason);
        },
        onFinalResponse: request.onFinalResponse,
      });
      if (!dialled.answered) {
        return { answered: false, outcome: dialled.outcome, ringMs: ringMs(), detail: dialled.detail };
      }
      const leg = makeLeg({
        callId: request.callId,
        direction: 'outbound',
        from: request.from,
        to: request.to,
        session: dialled.session,
        media: dialled.media,
        legMedia: request.media ?? options.defaultMedia(),
        description: dialled.offer,
        negotiated: dialled.negotiated,
        domain: route.domain,
        records: request.record !== false,
        // The transfer leg leaves by the trunk this call went out on, under the same caller-ID.
        transferRoute: () => route,
      });
      return { answered: true, leg, ringMs: ringMs() };
    },

    onInbound(handler) {
      handlers.add(handler);
      return () => handlers.delete(handler);
    },

    async close() {
      await Promise.all([...legs].map((leg) => leg.hangup().catch(() => undefined)));
      await Promise.all([...bridges].map((bridge) => bridge.end(true)));
    },
  };
}
