// The far end's media for the SIP bench, in a process of its own so that its timing does not
// depend on the process under test: one UDP socket that every call's SDP names. It receives each
// RTP stream (one per source port) and measures what a carrier's receiver would notice: missing
// sequence numbers, timestamp jumps (a 20 ms tick never sent), and RFC 3550 interarrival jitter
// sampled once a second as a receiver report would. It answers every stream with 20 ms A-law
// packets of its own, so each leg has something to receive, decode and record.
//
// Started with child_process.fork; talks over IPC: 'mark' starts a measuring window, 'report'
// returns the window's figures, 'stop' exits. The first message it sends is { port }.
import dgram from 'node:dgram';
import { encodeG711 } from '../../../apps/server/src/engine/telephony/media/g711';

const HOST = process.env.PROBE_HOST ?? '127.0.0.1';
const PERIOD_MS = 20;
const FRAME = 160;
/** A stream not heard for this long has ended: nothing more is sent to its port. */
const IDLE_MS = 1000;

export interface ProbeStream {
  /** The sender's UDP port (one media session of the engine, or the bench's baseline sender). */
  port: number;
  packets: number;
  /** Sequence numbers skipped: packets never received. */
  missing: number;
  /** Consecutive packets whose timestamps advance by more than one frame: a tick not sent. */
  timestampJumps: number;
  /** Packets out of order or repeated. */
  reordered: number;
  /** RFC 3550 interarrival jitter in ms, sampled every second while the stream is live. */
  jitterSamples: number[];
  /** The longest time between two packets, ms. */
  maxGapMs: number;
}

export interface ProbeReport {
  windowMs: number;
  streams: ProbeStream[];
  /** CPU of this process during the window: bare UDP I/O for the same packets, the baseline. */
  cpuMs: number;
  packetsSent: number;
}

export type ProbeRequest = { type: 'mark' } | { type: 'report' } | { type: 'stop' };
export type ProbeMessage = { type: 'ready'; port: number } | { type: 'report'; report: ProbeReport };

interface Stream {
  address: string;
  port: number;
  ssrc: number;
  lastSeq: number;
  lastTs: number;
  lastArrival: number;
  /** RFC 3550 J, in timestamp units (1/8 ms). */
  jitter: number;
  window: ProbeStream;
  // What this probe sends back.
  outSeq: number;
  outTs: number;
  outSsrc: number;
}

const emptyWindow = (port: number): ProbeStream => ({
  port,
  packets: 0,
  missing: 0,
  timestampJumps: 0,
  reordered: 0,
  jitterSamples: [],
  maxGapMs: 0,
});

/** A 1 kHz tone at a speaking level, one second of 20 ms A-law frames played in a loop. */
const TONE: Uint8Array[] = Array.from({ length: 50 }, (_, f) => {
  const pcm = Int16Array.from({ length: FRAME }, (_, i) =>
    Math.round(6000 * Math.sin((2 * Math.PI * 1000 * (f * FRAME + i)) / 8000)),
  );
  return encodeG711('PCMA', pcm, new Uint8Array(FRAME));
});

function main() {
  const send = process.send?.bind(process);
  if (!send) throw new Error('rtp-probe must be started with child_process.fork');
  const socket = dgram.createSocket('udp4');
  const streams = new Map<number, Stream>();
  let finished: ProbeStream[] = [];
  let windowStart = performance.now();
  let cpuAtMark = process.cpuUsage();
  let packetsSent = 0;
  let tick = 0;
  const startAt = performance.now();

  socket.on('error', () => {});
  socket.on('message', (datagram, rinfo) => {
    const now = performance.now();
    if (datagram.length < 12 || datagram[0]! >> 6 !== 2) return;
    const seq = datagram.readUInt16BE(2);
    const ts = datagram.readUInt32BE(4);
    const ssrc = datagram.readUInt32BE(8);
    let stream = streams.get(rinfo.port);
    if (!stream || stream.address !== rinfo.address || stream.ssrc !== ssrc) {
      // A port reused by the next call is a new stream, not a jump in the old one.
      if (stream) finished.push(stream.window);
      stream = {
        address: rinfo.address,
        port: rinfo.port,
        ssrc,
        lastSeq: seq,
        lastTs: ts,
        lastArrival: now,
        jitter: 0,
        window: emptyWindow(rinfo.port),
        outSeq: Math.floor(Math.random() * 65536),
        outTs: Math.floor(Math.random() * 2 ** 32),
        outSsrc: Math.floor(Math.random() * 2 ** 32),
      };
      stream.window.packets = 1;
      streams.set(rinfo.port, stream);
      return;
    }
    const w = stream.window;
    w.packets++;
    const seqStep = (seq - stream.lastSeq) & 0xffff;
    if (seqStep === 0 || seqStep > 0x8000) {
      w.reordered++;
      return;
    }
    w.missing += seqStep - 1;
    const tsStep = (ts - stream.lastTs) >>> 0;
    if (tsStep > seqStep * FRAME) w.timestampJumps++;
    const gapMs = now - stream.lastArrival;
    if (gapMs > w.maxGapMs) w.maxGapMs = gapMs;
    // RFC 3550 §6.4.1 and A.8, with arrival times in timestamp units.
    const d = gapMs * 8 - tsStep;
    stream.jitter += (Math.abs(d) - stream.jitter) / 16;
    stream.lastSeq = seq;
    stream.lastTs = ts;
    stream.lastArrival = now;
  });

  const sampleJitter = setInterval(() => {
    const now = performance.now();
    for (const stream of streams.values()) {
      if (now - stream.lastArrival < IDLE_MS) stream.window.jitterSamples.push(stream.jitter / 8);
    }
  }, 1000);

  // The probe's own sender: deadlines from the start, like the engine's, so what it sends is
  // a fair far end rather than a drifting one.
  const header = Buffer.alloc(12);
  const sendTick = () => {
    const now = performance.now();
    for (const stream of streams.values()) {
      if (now - stream.lastArrival > IDLE_MS) continue;
      header[0] = 0x80;
      header[1] = 8;
      header.writeUInt16BE(stream.outSeq, 2);
      header.writeUInt32BE(stream.outTs, 4);
      header.writeUInt32BE(stream.outSsrc, 8);
      const payload = TONE[Math.floor(stream.outTs / FRAME) % TONE.length]!;
      socket.send([header, payload], stream.port, stream.address);
      stream.outSeq = (stream.outSeq + 1) & 0xffff;
      stream.outTs = (stream.outTs + FRAME) >>> 0;
      packetsSent++;
    }
    tick++;
    setTimeout(sendTick, Math.max(0, startAt + tick * PERIOD_MS - performance.now()));
  };

  process.on('message', (message: ProbeRequest) => {
    if (message.type === 'mark') {
      windowStart = performance.now();
      cpuAtMark = process.cpuUsage();
      packetsSent = 0;
      finished = [];
      // Ended streams are forgotten; live ones start a fresh window.
      for (const [port, stream] of streams) {
        if (windowStart - stream.lastArrival > IDLE_MS) streams.delete(port);
        else stream.window = emptyWindow(port);
      }
    } else if (message.type === 'report') {
      const cpu = process.cpuUsage(cpuAtMark);
      const report: ProbeReport = {
        windowMs: performance.now() - windowStart,
        streams: [...finished, ...[...streams.values()].map((s) => s.window)],
        cpuMs: (cpu.user + cpu.system) / 1000,
        packetsSent,
      };
      send({ type: 'report', report } satisfies ProbeMessage);
    } else if (message.type === 'stop') {
      clearInterval(sampleJitter);
      socket.close();
      process.exit(0);
    }
  });
  // Without the parent there is nothing to report to.
  process.on('disconnect', () => process.exit(0));

  socket.bind(0, HOST, () => {
    // Hundreds of streams arrive in bursts of one packet each per tick: a deep buffer keeps a
    // burst from being dropped by the kernel and counted as lost ticks.
    socket.setRecvBufferSize(4 * 1024 * 1024);
    setTimeout(sendTick, PERIOD_MS);
    send({ type: 'ready', port: socket.address().port } satisfies ProbeMessage);
  });
}

main();
