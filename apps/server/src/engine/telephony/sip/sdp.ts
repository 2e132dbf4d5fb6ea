/**
 * SDP offer/answer for G.711 telephony (RFC 3264 on RFC 4566 / 8866 descriptions).
 *
 * We speak one audio stream: PCMA or PCMU at 8 kHz, plus RFC 4733 telephone-event with whatever
 * payload type the other side numbers it. Everything else offered (video, opus, SRTP profiles,
 * extra audio streams) is declined stream by stream as RFC 3264 §6 asks: same m-lines in the same
 * order, port 0 for what we refuse. Parsing and writing go through sdp-transform; the semantics
 * (directions, hold, payload types, o= versions) are here.
 */
import { randomInt } from 'node:crypto';
import type { MediaDescription, SessionDescription } from 'sdp-transform';
import * as sdpTransform from 'sdp-transform';

export type G711Codec = 'PCMU' | 'PCMA';
export type MediaDirection = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';

const STATIC_PAYLOAD_TYPES: Record<G711Codec, number> = { PCMU: 0, PCMA: 8 };
const DEFAULT_TELEPHONE_EVENT_PT = 101;
const DEFAULT_PTIME = 20;

export interface LocalMediaOptions {
  /** Where we receive RTP: the configured external address when behind NAT. */
  address: string;
  port: number;
  /** Codecs we accept, most preferred first; PCMA then PCMU by default (what Chinese carriers prefer). */
  codecs?: readonly G711Codec[];
  /** Packet duration we ask to receive. */
  ptime?: number;
  /** Offer/accept RFC 4733 DTMF. */
  telephoneEvent?: boolean;
  /** Payload type of telephone-event in our offers (answers reuse the offer's). */
  telephoneEventPayloadType?: number;
  /** What we want to do: sendrecv normally, sendonly to hold the far end. */
  direction?: MediaDirection;
  /** The o= session id; random digits by default. Kept for the life of the dialog. */
  sessionId?: string;
  /** The first o= version. */
  sessionVersion?: number;
}

type ResolvedOptions = Required<LocalMediaOptions>;

/** An SDP we sent, kept by the dialog so later offers/answers reuse its o= line. */
export interface LocalDescription {
  sdp: string;
  sessionId: string;
  version: number;
  options: ResolvedOptions;
  /** Only for our offers: what the answer has to choose from. */
  offered?: { codecs: readonly G711Codec[]; telephoneEventPayloadType: number | null };
  /**
   * The m-lines in order, null standing for our audio stream, the others declined (port 0).
   * Later offers in the dialog keep them: RFC 3264 §8 forbids removing m-lines.
   */
  layout: (MediaDescription | null)[];
}

export interface NegotiatedMedia {
  /** Where to send RTP (media-level c= over session-level); 0.0.0.0 when the far end holds us old style. */
  remoteAddress: string;
  remotePort: number;
  codec: G711Codec;
  /** Payload type to send audio with, in the far end's numbering. */
  payloadType: number;
  /** Payload type to send RFC 4733 events with; null when the far end has none (fall back to SIP INFO). */
  telephoneEventPayloadType: number | null;
  /** Payload types we declared, which incoming packets carry. */
  receive: { payloadType: number; telephoneEventPayloadType: number | null };
  /** Packet duration the far end wants to receive. */
  ptime: number;
  /** Our direction: whether we send (sendrecv, sendonly) and whether we receive (sendrecv, recvonly). */
  direction: MediaDirection;
  /** The far end said it will not receive (a=sendonly, a=inactive or c=0.0.0.0): it put us on hold. */
  remoteHold: boolean;
  /** The far end's o= line, so a re-INVITE with an unchanged version is recognised (RFC 3264 §8). */
  remoteOrigin: { sessionId: string; version: string };
}

export type AnswerResult =
  | { ok: true; sdp: string; local: LocalDescription; negotiated: NegotiatedMedia }
  | { ok: false; reason: string };

export type ApplyAnswerResult = { ok: true; negotiated: NegotiatedMedia } | { ok: false; reason: string };

function resolve(options: LocalMediaOptions): ResolvedOptions {
  return {
    address: options.address,
    port: options.port,
    codecs: options.codecs && options.codecs.length > 0 ? options.codecs : ['PCMA', 'PCMU'],
    ptime: options.ptime ?? DEFAULT_PTIME,
    telephoneEvent: options.telephoneEvent ?? true,
    telephoneEventPayloadType: options.telephoneEventPayloadType ?? DEFAULT_TELEPHONE_EVENT_PT,
    direction: options.direction ?? 'sendrecv',
    sessionId: options.sessionId ?? String(randomInt(1, 2 ** 31)),
    sessionVersion: options.sessionVersion ?? 1,
  };
}

const ipVersion = (address: string) => (address.includes(':') ? 6 : 4);

interface AudioLine {
  payloads: { payloadType: number; codec: string; rate: number; channels?: number }[];
  fmtp: { payload: number; config: string }[];
}

/** Writes a description with one audio stream, or several m-lines when answering. */
function writeDescription(options: ResolvedOptions, version: number, media: MediaDescription[]): string {
  const description: SessionDescription = {
    version: 0,
    origin: {
      username: '-',
      sessionId: options.sessionId,
      sessionVersion: version,
      netType: 'IN',
      ipVer: ipVersion(options.address),
      address: options.address,
    },
    name: '-',
    connection: { version: ipVersion(options.address), ip: options.address },
    timing: { start: 0, stop: 0 },
    media,
  };
  return sdpTransform.write(description);
}

function audioMedia(options: ResolvedOptions, line: AudioLine, direction: MediaDirection): MediaDescription {
  return {
    type: 'audio',
    port: options.port,
    protocol: 'RTP/AVP',
    payloads: line.payloads.map((payload) => payload.payloadType).join(' '),
    rtp: line.payloads.map((payload) => ({
      payload: payload.payloadType,
      codec: payload.codec,
      rate: payload.rate,
    })),
    fmtp: line.fmtp,
    ptime: options.ptime,
    direction,
  };
}

function offerLine(options: ResolvedOptions): AudioLine {
  const payloads: AudioLine['payloads'] = options.codecs.map((codec) => ({
    payloadType: STATIC_PAYLOAD_TYPES[codec],
    codec,
    rate: 8000,
  }));
  const fmtp: AudioLine['fmtp'] = [];
  if (options.telephoneEvent) {
    payloads.push({ payloadType: options.telephoneEventPayloadType, codec: 'telephone-event', rate: 8000 });
    // 0-15 are the DTMF digits; the media layer neither sends nor acts on other events.
    fmtp.push({ payload: options.telephoneEventPayloadType, config: '0-15' });
  }
  return { payloads, fmtp };
}

/** Our offer, for an outbound INVITE or for a 200 answering an INVITE that came without SDP. */
export function createOffer(options: LocalMediaOptions): LocalDescription {
  return buildOffer(resolve(options), [null]);
}

function buildOffer(resolved: ResolvedOptions, layout: (MediaDescription | null)[]): LocalDescription {
  const version = resolved.sessionVersion;
  const audio = audioMedia(resolved, offerLine(resolved), resolved.direction);
  const sdp = writeDescription(
    resolved,
    version,
    layout.map((line) => line ?? audio),
  );
  return {
    layout,
    sdp,
    sessionId: resolved.sessionId,
    version,
    options: resolved,
    offered: {
      codecs: resolved.codecs,
      telephoneEventPayloadType: resolved.telephoneEvent ? resolved.telephoneEventPayloadType : null,
    },
  };
}

/**
 * A new offer in the same session (re-INVITE or UPDATE): hold is `sendonly`, unhold `sendrecv`.
 * The o= version goes up only when the description changes; a session-timer refresh resends the
 * previous one unchanged, as RFC 3264 §8 requires.
 */
export function createReoffer(
  previous: LocalDescription,
  changes: Partial<Pick<LocalMediaOptions, 'direction' | 'address' | 'port' | 'codecs'>>,
): LocalDescription {
  const options = resolve({
    ...previous.options,
    ...stripUndefined(changes),
    sessionVersion: previous.version,
  });
  const same = buildOffer(options, previous.layout);
  if (same.sdp === previous.sdp) return same;
  return buildOffer({ ...options, sessionVersion: previous.version + 1 }, previous.layout);
}

// ---------------------------------------------------------------------------------------------
// Reading the other side's description.

/** The o= line's session id and version as written: versions may exceed 2^53, so they stay strings. */
export function readOrigin(sdp: string): { sessionId: string; version: string } | null {
  const match = /^o=\S+ (\d+) (\d+) /m.exec(sdp);
  return match ? { sessionId: match[1]!, version: match[2]! } : null;
}

function parseSdp(sdp: string): SessionDescription | null {
  if (!/^v=0\s*$/m.test(sdp)) return null;
  try {
    const parsed = sdpTransform.parse(sdp);
    return parsed.origin && Array.isArray(parsed.media) ? parsed : null;
  } catch {
    return null;
  }
}

interface Flags {
  send: boolean;
  recv: boolean;
}

const flagsOf = (direction: MediaDirection): Flags => ({
  send: direction === 'sendrecv' || direction === 'sendonly',
  recv: direction === 'sendrecv' || direction === 'recvonly',
});

const directionOf = ({ send, recv }: Flags): MediaDirection =>
  send && recv ? 'sendrecv' : send ? 'sendonly' : recv ? 'recvonly' : 'inactive';

const isUnspecified = (address: string) => address === '0.0.0.0' || address === '::';

/** A remote m-line read for audio purposes. */
interface RemoteAudio {
  address: string | undefined;
  port: number;
  profileOk: boolean;
  /** Payload types listed on the m= line, each with what it maps to. */
  formats: { payloadType: number; codec: string; rate: number; channels: number }[];
  ptime: number;
  /** Direction the far end declared, with an RFC 2543 hold address taken as "will not receive". */
  flags: Flags;
}

function readAudio(session: SessionDescription, media: MediaDescription): RemoteAudio {
  const address = media.connection?.ip ?? session.connection?.ip;
  const direction = (media.direction ?? session.direction ?? 'sendrecv') as MediaDirection;
  const flags = flagsOf(direction);
  // c=0.0.0.0 (RFC 2543 hold, still sent by old PBXes) means nothing can reach the far end.
  if (address === undefined || isUnspecified(address)) flags.recv = false;
  const maps = new Map(media.rtp.map((rtp) => [rtp.payload, rtp]));
  const formats = String(media.payloads ?? '')
    .split(/\s+/)
    .filter((text) => /^\d+$/.test(text))
    .map((text) => {
      const payloadType = Number(text);
      const rtp = maps.get(payloadType);
      if (rtp) {
        return {
          payloadType,
          codec: rtp.codec.toUpperCase(),
          rate: rtp.rate ?? 8000,
          channels: rtp.encoding === undefined ? 1 : Number(rtp.encoding),
        };
      }
      // Static payload types need no rtpmap (RFC 3551 §6).
      const codec = payloadType === 0 ? 'PCMU' : payloadType === 8 ? 'PCMA' : '';
      return { payloadType, codec, rate: 8000, channels: 1 };
    });
  const ptimeText = media.ptime ?? (session as { ptime?: number }).ptime;
  const ptime = Number(ptimeText);
  return {
    address,
    port: media.port,
    profileOk: media.protocol.toUpperCase() === 'RTP/AVP',
    formats,
    ptime: Number.isFinite(ptime) && ptime > 0 ? ptime : DEFAULT_PTIME,
    flags,
  };
}

function findCodec(audio: RemoteAudio, codecs: readonly G711Codec[]) {
  for (const codec of codecs) {
    const format = audio.formats.find((f) => f.codec === codec && f.rate === 8000 && f.channels === 1);
    if (format) return { codec, payloadType: format.payloadType };
  }
  return null;
}

function findTelephoneEvent(audio: RemoteAudio): number | null {
  // Events must run on the audio clock; a 16 kHz telephone-event belongs to a wideband codec.
  return audio.formats.find((f) => f.codec === 'TELEPHONE-EVENT' && f.rate === 8000)?.payloadType ?? null;
}

function describeFormats(audio: RemoteAudio): string {
  const names = [...new Set(audio.formats.map((f) => f.codec || 'unknown'))];
  return names.length > 0 ? names.join(', ') : 'none';
}

/**
 * Answers an offer (an INVITE's, a re-INVITE's, an UPDATE's). `ok: false` means no stream we can
 * carry: the UA answers 488 Not Acceptable Here. Pass `previous` (our last description in this
 * dialog) to keep the o= session id and raise the version only if the answer changed.
 */
export function answerOffer(
  offerSdp: string,
  local: LocalMediaOptions & { previous?: LocalDescription },
): AnswerResult {
  const offer = parseSdp(offerSdp);
  const origin = readOrigin(offerSdp);
  if (!offer || !origin) return { ok: false, reason: 'malformed SDP offer' };
  const base = local.previous ? { ...local.previous.options, ...stripUndefined(local) } : local;
  const options = resolve({ ...base, sessionId: local.previous?.sessionId ?? local.sessionId });

  let chosen: {
    index: number;
    audio: RemoteAudio;
    codec: G711Codec;
    payloadType: number;
    te: number | null;
  } | null = null;
  let refusal = 'no audio stream offered';
  for (const [index, media] of offer.media.entries()) {
    if (media.type !== 'audio') continue;
    const audio = readAudio(offer, media);
    if (audio.port === 0) continue;
    if (!audio.profileOk) {
      refusal = `unsupported media profile ${media.protocol}`;
      continue;
    }
    const codec = findCodec(audio, options.codecs);
    if (!codec) {
      refusal = `no common codec (offered: ${describeFormats(audio)})`;
      continue;
    }
    chosen = { index, audio, ...codec, te: options.telephoneEvent ? findTelephoneEvent(audio) : null };
    break;
  }
  if (!chosen) return { ok: false, reason: refusal };
  const { index: chosenIndex, audio, codec, payloadType, te } = chosen;

  const ours = flagsOf(options.direction);
  const direction = directionOf({ send: ours.send && audio.flags.recv, recv: ours.recv && audio.flags.send });
  const line: AudioLine = { payloads: [{ payloadType, codec, rate: 8000 }], fmtp: [] };
  if (te !== null) {
    line.payloads.push({ payloadType: te, codec: 'telephone-event', rate: 8000 });
    line.fmtp.push({ payload: te, config: '0-15' });
  }
  const layout = offer.media.map((offered, index): MediaDescription | null =>
    index === chosenIndex
      ? null
      : {
          type: offered.type,
          port: 0,
          protocol: offered.protocol,
          payloads: String(offered.payloads ?? '') || '0',
          rtp: [],
          fmtp: [],
        },
  );
  const audioLine = audioMedia(options, line, direction);
  const media = layout.map((declined) => declined ?? audioLine);

  let version = local.previous ? local.previous.version : options.sessionVersion;
  let sdp = writeDescription(options, version, media);
  if (local.previous && sdp !== local.previous.sdp) {
    version += 1;
    sdp = writeDescription(options, version, media);
  }
  const negotiated: NegotiatedMedia = {
    remoteAddress: audio.address ?? '0.0.0.0',
    remotePort: audio.port,
    codec,
    payloadType,
    telephoneEventPayloadType: te,
    receive: { payloadType, telephoneEventPayloadType: te },
    ptime: audio.ptime,
    direction,
    remoteHold: !audio.flags.recv,
    remoteOrigin: origin,
  };
  // Later re-offers keep what this answer settled: the chosen codec first and the far end's
  // telephone-event number, so a hold re-INVITE does not switch codec or renumber events.
  const settled: ResolvedOptions = {
    ...options,
    codecs: [codec, ...options.codecs.filter((other) => other !== codec)],
    telephoneEventPayloadType: te ?? options.telephoneEventPayloadType,
  };
  return {
    ok: true,
    sdp,
    local: { sdp, sessionId: options.sessionId, version, options: settled, layout },
    negotiated,
  };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Reads the answer to one of our offers (in a 183, a 200, or the ACK of an INVITE we answered
 * with an offer). `ok: false` when the far end refused the audio stream or picked something we
 * did not offer: the UA then ends the call (BYE or CANCEL) as failed.
 */
export function applyAnswer(offer: LocalDescription, answerSdp: string): ApplyAnswerResult {
  const answer = parseSdp(answerSdp);
  const origin = readOrigin(answerSdp);
  if (!answer || !origin) return { ok: false, reason: 'malformed SDP answer' };
  const audioIndex = offer.layout.indexOf(null);
  const media = answer.media[audioIndex];
  if (answer.media.length !== offer.layout.length || !media || media.type !== 'audio') {
    return { ok: false, reason: 'answer does not match the offered m-lines' };
  }
  const audio = readAudio(answer, media);
  if (audio.port === 0) return { ok: false, reason: 'audio stream rejected' };
  const offeredCodecs = offer.offered?.codecs ?? offer.options.codecs;
  const codec = findCodec(audio, offeredCodecs);
  if (!codec)
    return { ok: false, reason: `answer has no offered codec (answered: ${describeFormats(audio)})` };
  const offeredTe = offer.offered ? offer.offered.telephoneEventPayloadType : null;
  const te = offeredTe === null ? null : findTelephoneEvent(audio);
  const ours = flagsOf(offer.options.direction);
  const direction = directionOf({ send: ours.send && audio.flags.recv, recv: ours.recv && audio.flags.send });
  return {
    ok: true,
    negotiated: {
      remoteAddress: audio.address ?? '0.0.0.0',
      remotePort: audio.port,
      codec: codec.codec,
      payloadType: codec.payloadType,
      telephoneEventPayloadType: te,
      receive: {
        payloadType: STATIC_PAYLOAD_TYPES[codec.codec],
        telephoneEventPayloadType: te === null ? null : offeredTe,
      },
      ptime: audio.ptime,
      direction,
      remoteHold: !audio.flags.recv,
      remoteOrigin: origin,
    },
  };
}
