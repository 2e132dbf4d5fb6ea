import { randomInt } from 'node:crypto';
import { DtmfReceiver, DtmfSender, invalidDtmfDigit } from './dtmf';
import { decodeG711, encodeG711, SILENCE_BYTE } from './g711';
import { InterarrivalJitter, JitterBuffer, LOST } from './jitter-buffer';
import {
  type MediaDirection,
  MediaError,
  type MediaSessionResult,
  type MediaSessionStats,
  type PlayOutcome,
  type RemoteMedia,
  type SessionEvent,
} from './protocol';
import { parseRtp, serializeRtp } from './rtp';

/** Where each tick's two frames go: the call's stereo WAV (StereoWavWriter). */
export interface FrameRecorder {
  writeFrame(caller: Int16Array | null, assistant: Int16Array | null): void;
  close(): Promise<{ path: string }>;
}

export const FRAME_SAMPLES = 160;
const SAMPLES_PER_MS = 8;
/** RFC 3389 comfort noise: the far end is silent; it takes a sequence number but carries no audio. */
const COMFORT_NOISE_PT = 13;

export interface RtpSessionOptions {
  callId: string;
  recorder?: FrameRecorder | null;
  inactivityTimeoutMs?: number;
  audioBatchMs?: number;
  jitterDepth?: number;
}

/** Sends one datagram; the worker binds it to the session's socket. */
export type SendDatagram = (packet: Buffer, port: number, address: string) => void;

interface Playback {
  pcm: Int16Array;
  offset: number;
  done: (outcome: PlayOutcome) => void;
}

const validPayloadType = (pt: unknown) =>
  Number.isInteger(pt) && (pt as number) >= 0 && (pt as number) <= 127;

/**
 * The media of one call, stepped by the worker's 20 ms ticks: each tick takes the caller's next
 * frame from the jitter buffer, sends exactly one packet (queued speech, a telephone event, or
 * silence: carriers hang up on a leg that stops sending RTP), and gives both frames to the
 * recorder. Everything here runs on the media worker's thread; nothing blocks.
 */
export class RtpSession {
  readonly callId: string;
  private remote: RemoteMedia | null = null;
  private receiveAudioPt = -1;
  private receiveEventPt: number | null = null;
  /** Where packets go: the SDP's address until the far end's first packets latch it. */
  private target: { address: string; port: number } | null = null;
  private latchedFrom: { address: string; port: number } | null = null;
  private direction: MediaDirection = 'sendrecv';
  private readonly ssrc = randomInt(0, 2 ** 32);
  private sequence = randomInt(0, 65536);
  private timestamp = randomInt(0, 2 ** 32);
  private readonly dtmfSender = new DtmfSender();
  private dtmfReceiver = new DtmfReceiver();
  private readonly jitter: JitterBuffer<Int16Array>;
  private readonly arrival = new InterarrivalJitter();
  private remoteSsrc: number | null = null;
  /**
   * Caller audio taken from the jitter buffer and not yet played out: the far end may send
   * 30 ms packets whatever our SDP asked, and each tick plays exactly 20 ms.
   */
  private heardChunks: Int16Array[] = [];
  private heardOffset = 0;
  private heardSamples = 0;
  private lastPacketSamples = FRAME_SAMPLES;
  private readonly queue: Playback[] = [];
  private speaking = false;
  private forwardAudio = false;
  private readonly batch: Int16Array;
  private batchFill = 0;
  private lastHeardAt = 0;
  private inactiveReported = false;
  private readonly inactivityTimeoutMs: number;
  private mediaTicks = 0;
  private recorder: FrameRecorder | null;
  private recordingStopped: Promise<{ recordingPath: string | null; recordingError?: string }> | null = null;
  /**
   * The session this one is bridged to (a transfer's second leg when the line refused REFER):
   * each plays out what the other hears, and the assistant is out of the conversation.
   */
  private peer: RtpSession | null = null;
  /** Frames the peer heard, waiting for this session's next tick (one or two: both tick each 20 ms). */
  private readonly bridgedFrames: Int16Array[] = [];
  private readonly silenceFrame = new Int16Array(FRAME_SAMPLES);
  private silencePayload = new Uint8Array(FRAME_SAMPLES);
  // Reused every tick: the recorder and the packet serializer copy what they are given, and
  // 200 calls × 50 ticks a second of short-lived buffers is garbage the tick can do without.
  private readonly speechFrame = new Int16Array(FRAME_SAMPLES);
  private readonly encodedFrame = new Uint8Array(FRAME_SAMPLES);
  private closed = false;
  private readonly counters = {
    sent: 0,
    received: 0,
    lateTicks: 0,
    discarded: 0,
    foreign: 0,
    dtmfReceived: 0,
  };

  constructor(
    options: RtpSessionOptions,
    private readonly send: SendDatagram,
    private readonly emit: (event: SessionEvent, transfer?: ArrayBuffer[]) => void,
  ) {
    this.callId = options.callId;
    this.recorder = options.recorder ?? null;
    this.inactivityTimeoutMs = options.inactivityTimeoutMs ?? 30_000;
    this.jitter = new JitterBuffer({ depth: options.jitterDepth ?? 3 });
    const batchFrames = Math.max(1, Math.round((options.audioBatchMs ?? 80) / 20));
    this.batch = new Int16Array(batchFrames * FRAME_SAMPLES);
  }

  setRemote(remote: RemoteMedia, nowMs: number): void {
    if (
      typeof remote?.address !== 'string' ||
      !Number.isInteger(remote.port) ||
      remote.port < 0 ||
      remote.port > 65535 ||
      (remote.codec !== 'PCMA' && remote.codec !== 'PCMU') ||
      !validPayloadType(remote.payloadType) ||
      (remote.telephoneEventPt != null && !validPayloadType(remote.telephoneEventPt)) ||
      (remote.receivePayloadType != null && !validPayloadType(remote.receivePayloadType)) ||
      (remote.receiveTelephoneEventPt != null && !validPayloadType(remote.receiveTelephoneEventPt))
    ) {
      throw new MediaError('BAD_ARGUMENT', `invalid remote media: ${JSON.stringify(remote)}`);
    }
    const previous = this.remote;
    const sameEndpoint = previous && previous.address === remote.address && previous.port === remote.port;
    this.remote = { ...remote, telephoneEventPt: remote.telephoneEventPt ?? null };
    this.receiveAudioPt = remote.receivePayloadType ?? remote.payloadType;
    this.receiveEventPt =
      remote.receiveTelephoneEventPt !== undefined
        ? remote.receiveTelephoneEventPt
        : (remote.telephoneEventPt ?? null);
    this.silencePayload = new Uint8Array(FRAME_SAMPLES).fill(SILENCE_BYTE[remote.codec]);
    // A re-INVITE that names the same endpoint (a session refresh) keeps the latched source;
    // a new endpoint is a new far end, to be latched again.
    if (!sameEndpoint) {
      this.target = { address: remote.address, port: remote.port };
      this.latchedFrom = null;
      this.remoteSsrc = null;
      this.resetReceiver();
    }
    this.lastHeardAt = nowMs;
    this.inactiveReported = false;
  }

  setDirection(direction: MediaDirection, nowMs: number): void {
    if (!['sendrecv', 'sendonly', 'recvonly', 'inactive'].includes(direction)) {
      throw new MediaError('BAD_ARGUMENT', `invalid direction: ${JSON.stringify(direction)}`);
    }
    if (direction !== this.direction) {
      this.direction = direction;
      // Coming off hold restarts the inactivity count: nothing was expected while held.
      this.lastHeardAt = nowMs;
      this.inactiveReported = false;
      if (!this.receives) this.resetReceiver();
    }
  }

  play(pcm: Int16Array, done: (outcome: PlayOutcome) => void): void {
    // Bridged, the line carries the other party's voice; the assistant has left the call.
    if (this.closed || this.peer || pcm.length === 0) {
      done({ playedMs: 0, interrupted: this.closed || this.peer !== null });
      return;
    }
    this.queue.push({ pcm, offset: 0, done });
  }

  /** Cuts the current line and drops the queued ones: the next tick already sends silence. */
  stopPlayback(): void {
    for (const item of this.queue.splice(0)) {
      item.done({ playedMs: Math.round(item.offset / SAMPLES_PER_MS), interrupted: true });
    }
  }

  sendDtmf(digits: string, done: () => void): void {
    const bad = invalidDtmfDigit(digits);
    if (bad !== null) throw new MediaError('BAD_ARGUMENT', `not a DTMF key: ${JSON.stringify(bad)}`);
    if (this.remote?.telephoneEventPt == null) {
      throw new MediaError('BAD_ARGUMENT', 'the far end did not negotiate telephone-event (RFC 4733)');
    }
    if (this.closed) {
      done();
      return;
    }
    this.dtmfSender.enqueue(digits, done);
  }

  setForwardAudio(on: boolean): void {
    this.forwardAudio = on;
    if (!on) this.batchFill = 0;
  }

  /**
   * Joins this session and `peer`: from the next tick each sends what the other heard (decoded
   * after its jitter buffer and re-encoded in its own codec, so PCMA meets PCMU), and a key
   * pressed on one is sent on to the other when that one agreed telephone-event. Speech still
   * queued on either is dropped: the assistant's last words must not talk over the two people.
   */
  bridge(peer: RtpSession): void {
    if (peer === this) throw new MediaError('BAD_ARGUMENT', 'a session cannot be bridged to itself');
    if (this.closed || peer.closed) throw new MediaError('NO_SUCH_SESSION', 'a bridged session is closed');
    if ((this.peer && this.peer !== peer) || (peer.peer && peer.peer !== this)) {
      throw new MediaError('BAD_ARGUMENT', 'a session is already bridged to another one');
    }
    for (const [one, other] of [
      [this, peer],
      [peer, this],
    ] as const) {
      one.stopPlayback();
      one.bridgedFrames.length = 0;
      one.peer = other;
      // Batches of caller audio go to speech recognition, which has nothing to do any more.
      one.batchFill = 0;
    }
  }

  /** Ends the bridge, if any, on both sides; each session then sends silence again. */
  unbridge(): void {
    const peer = this.peer;
    if (!peer) return;
    this.peer = null;
    peer.peer = null;
    this.bridgedFrames.length = 0;
    peer.bridgedFrames.length = 0;
  }

  get bridgedTo(): RtpSession | null {
    return this.peer;
  }

  /**
   * Finalises the recording now; the call goes on unrecorded. A transfer bridged to a second leg
   * ends the assistant's call record there, and the two people's conversation is not part of it.
   */
  stopRecording(): Promise<{ recordingPath: string | null; recordingError?: string }> {
    // Once: close() after a transfer reports the file stopRecording() finalised.
    this.recordingStopped ??= (async () => {
      const recorder = this.recorder;
      this.recorder = null;
      if (!recorder) return { recordingPath: null };
      try {
        return { recordingPath: (await recorder.close()).path };
      } catch (err) {
        return { recordingPath: null, recordingError: (err as Error).message };
      }
    })();
    return this.recordingStopped;
  }

  private get receives() {
    return this.direction === 'sendrecv' || this.direction === 'recvonly';
  }

  private get sends() {
    return this.direction === 'sendrecv' || this.direction === 'sendonly';
  }

  /** One datagram arrived on the session's port. */
  receive(datagram: Buffer, address: string, port: number, nowMs: number): void {
    const remote = this.remote;
    if (this.closed || !remote || !this.receives) return;
    const parsed = parseRtp(datagram);
    if (!parsed.ok) {
      this.counters.discarded++;
      return;
    }
    const packet = parsed.packet;
    const pt = packet.payloadType;
    // The far end's own numbering is accepted too: some endpoints send with what their answer
    // said rather than with what our SDP declared.
    const isAudio = pt === this.receiveAudioPt || pt === remote.payloadType;
    const isEvent =
      !isAudio && pt !== COMFORT_NOISE_PT && (pt === this.receiveEventPt || pt === remote.telephoneEventPt);
    if (!isAudio && !isEvent && pt !== COMFORT_NOISE_PT) {
      this.counters.discarded++;
      return;
    }
    if (this.latchedFrom) {
      if (this.latchedFrom.address !== address || this.latchedFrom.port !== port) {
        this.counters.foreign++;
        return;
      }
    } else {
      // Symmetric RTP: answer to where the far end's packets come from, which a NAT may have
      // rewritten, rather than to the private address its SDP names.
      this.latchedFrom = { address, port };
      this.target = { address, port };
      this.emit({ type: 'latched', address, port, sdpAddress: remote.address, sdpPort: remote.port });
    }
    if (this.remoteSsrc !== packet.ssrc) {
      if (this.remoteSsrc !== null) this.resetReceiver();
      this.remoteSsrc = packet.ssrc;
    }
    this.counters.received++;
    this.lastHeardAt = nowMs;
    this.inactiveReported = false;
    if (isAudio) {
      this.arrival.update(packet.timestamp, nowMs);
      if (packet.payload.length > 0) this.lastPacketSamples = packet.payload.length;
      this.jitter.push(packet.sequenceNumber, decodeG711(remote.codec, packet.payload));
      return;
    }
    if (isEvent) {
      const digit = this.dtmfReceiver.receive(packet);
      if (digit) {
        this.counters.dtmfReceived++;
        // Bridged, the key is for the other party (an IVR or a colleague's extension), not the
        // assistant; a peer without telephone-event cannot be sent it in the media.
        if (this.peer) {
          if (this.peer.remote?.telephoneEventPt != null && !this.peer.closed) {
            this.peer.dtmfSender.enqueue(digit);
          }
        } else {
          this.emit({ type: 'dtmf', digit });
        }
      }
    }
    this.jitter.push(packet.sequenceNumber, null);
  }

  /** One 20 ms tick. `late` says the scheduler ran it a period or more after its deadline. */
  tick(nowMs: number, late: boolean): void {
    const remote = this.remote;
    if (this.closed || !remote) return;
    this.mediaTicks++;
    if (late) this.counters.lateTicks++;

    const heard = this.receives ? this.nextHeardFrame() : null;
    const peer = this.peer;
    if (peer) {
      if (heard) {
        // Both sessions tick every 20 ms, so the peer takes each frame within a tick; the bound
        // only matters if one of them stops sending (held) and its frames are no longer taken.
        if (peer.bridgedFrames.length >= 3) peer.bridgedFrames.shift();
        // nextHeardFrame() returns a fresh array each time: no copy needed.
        peer.bridgedFrames.push(heard);
      }
    } else if (this.forwardAudio) {
      this.forward(heard);
    }
    if (
      this.direction === 'sendrecv' &&
      !this.inactiveReported &&
      nowMs - this.lastHeardAt >= this.inactivityTimeoutMs
    ) {
      this.inactiveReported = true;
      this.emit({ type: 'inactive', silentMs: Math.round(nowMs - this.lastHeardAt) });
    }

    let said: Int16Array | null = null;
    const target = this.target;
    if (this.sends && target && target.address !== '0.0.0.0' && target.port !== 0) {
      const event = remote.telephoneEventPt != null ? this.dtmfSender.next(this.timestamp) : null;
      if (event) {
        this.transmit(
          remote.telephoneEventPt as number,
          event.timestamp,
          event.marker,
          event.payload,
          target,
        );
        this.speaking = false;
        // The key takes the place of the bridged party's voice for this tick; keeping the frame
        // would delay everything they say from now on by one more frame per key packet.
        if (this.peer) this.bridgedFrames.shift();
      } else {
        said = this.nextOutgoingFrame();
        const startsTalkSpurt = said !== null && !this.speaking;
        this.speaking = said !== null;
        const payload = said ? encodeG711(remote.codec, said, this.encodedFrame) : this.silencePayload;
        this.transmit(remote.payloadType, this.timestamp, startsTalkSpurt, payload, target);
      }
    } else {
      // A line we may not send on (the far end holds us, or offered sendonly from the start)
      // still runs at real time, muted: a paused line would hold say() until the far end
      // comes back, and a call that never does would never end.
      this.nextOutgoingFrame();
      this.speaking = false;
    }
    // Timestamps follow the sampling clock whether or not this tick was sent (RFC 3550 §5.1).
    this.timestamp = (this.timestamp + FRAME_SAMPLES) >>> 0;
    this.recorder?.writeFrame(heard, said);
  }

  private transmit(
    payloadType: number,
    timestamp: number,
    marker: boolean,
    payload: Uint8Array,
    target: { address: string; port: number },
  ) {
    const packet = serializeRtp({
      payloadType,
      sequenceNumber: this.sequence,
      timestamp,
      ssrc: this.ssrc,
      marker,
      payload,
    });
    this.sequence = (this.sequence + 1) & 0xffff;
    this.counters.sent++;
    this.send(packet, target.port, target.address);
  }

  /** The stream changed (new far end, new SSRC) or is no longer received: start afresh. */
  private resetReceiver() {
    this.jitter.reset();
    this.arrival.reset();
    this.dtmfReceiver = new DtmfReceiver();
    this.heardChunks = [];
    this.heardOffset = 0;
    this.heardSamples = 0;
  }

  /** The caller's next 20 ms, silence in place of lost packets; null when nothing is due. */
  private nextHeardFrame(): Int16Array | null {
    while (this.heardSamples < FRAME_SAMPLES) {
      const next = this.jitter.pop();
      if (next === null) break;
      if (next !== LOST && next.length === FRAME_SAMPLES && this.heardSamples === 0) return next;
      const chunk = next === LOST ? new Int16Array(this.lastPacketSamples) : next;
      this.heardChunks.push(chunk);
      this.heardSamples += chunk.length;
    }
    if (this.heardSamples === 0) return null;
    // Short of a frame only when the buffer ran dry mid-packet: the rest is silence.
    const frame = new Int16Array(FRAME_SAMPLES);
    let filled = 0;
    while (filled < FRAME_SAMPLES && this.heardChunks.length > 0) {
      const head = this.heardChunks[0] as Int16Array;
      const take = Math.min(FRAME_SAMPLES - filled, head.length - this.heardOffset);
      frame.set(head.subarray(this.heardOffset, this.heardOffset + take), filled);
      filled += take;
      this.heardOffset += take;
      this.heardSamples -= take;
      if (this.heardOffset === head.length) {
        this.heardChunks.shift();
        this.heardOffset = 0;
      }
    }
    return frame;
  }

  /** What this tick sends: the bridged party's voice, or else the assistant's queued speech. */
  private nextOutgoingFrame(): Int16Array | null {
    if (this.peer) return this.bridgedFrames.shift() ?? null;
    return this.nextSpeechFrame();
  }

  /** The next 20 ms of queued speech, or null when nothing is queued. */
  private nextSpeechFrame(): Int16Array | null {
    const item = this.queue[0];
    if (!item) return null;
    const frame = this.speechFrame;
    const end = Math.min(item.offset + FRAME_SAMPLES, item.pcm.length);
    frame.fill(0);
    frame.set(item.pcm.subarray(item.offset, end));
    item.offset = end;
    if (item.offset >= item.pcm.length) {
      this.queue.shift();
      item.done({ playedMs: Math.round(item.pcm.length / SAMPLES_PER_MS), interrupted: false });
    }
    return frame;
  }

  private forward(heard: Int16Array | null) {
    this.batch.set(heard ?? this.silenceFrame, this.batchFill);
    this.batchFill += FRAME_SAMPLES;
    if (this.batchFill < this.batch.length) return;
    const pcm = this.batch.slice();
    this.batchFill = 0;
    this.emit({ type: 'audio', pcm }, [pcm.buffer as ArrayBuffer]);
  }

  get stats(): MediaSessionStats {
    const jitter = this.jitter.stats;
    return {
      ...this.counters,
      lost: jitter.lost,
      late: jitter.late,
      duplicates: jitter.duplicates,
      jitterMs: Math.round(this.arrival.ms * 100) / 100,
    };
  }

  /** Ends the media: pending lines and digits settle, the recording is finalised. */
  async close(): Promise<MediaSessionResult> {
    if (this.closed)
      throw new MediaError('NO_SUCH_SESSION', `media session of ${this.callId} already closed`);
    this.closed = true;
    this.unbridge();
    this.stopPlayback();
    this.dtmfSender.abandon();
    if (this.forwardAudio && this.batchFill > 0) {
      const pcm = this.batch.slice(0, this.batchFill);
      this.emit({ type: 'audio', pcm }, [pcm.buffer as ArrayBuffer]);
    }
    const { recordingPath, recordingError } = await this.stopRecording();
    return {
      recordingPath,
      durationMs: this.mediaTicks * 20,
      stats: this.stats,
      ...(recordingError ? { recordingError } : {}),
    };
  }
}
