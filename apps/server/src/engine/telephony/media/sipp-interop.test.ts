import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freeMediaPort,
  freePortRange,
  freeUdpPort,
  killSipps,
  PORT_BANDS,
  playPcapScenario,
  runSipp,
  SIPP_PCAPS,
} from '../sip/sipp-test-support';
import { decodeG711 } from './g711';
import { MediaEngine } from './media-engine';

/*
 * Interop with another RTP implementation: SIPp (Debian sip-tester, installed by .ci/run) plays
 * its own captures, two RFC 4733 keys and G.711 A-law speech in 30 ms packets, at a session.
 * The SIP side here is the least that lets SIPp place one call: answer the INVITE with our RTP
 * port in the SDP, answer the BYE.
 */

const HOST = '127.0.0.1';
let engine: MediaEngine;
let dir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-sipp-'));
  const base = await freePortRange(4, { band: PORT_BANDS.rtp });
  engine = await MediaEngine.start({ rtpPortMin: base, rtpPortMax: base + 3, bindAddress: HOST });
});

afterAll(async () => {
  killSipps();
  await engine?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The RTP payloads of a classic pcap of Ethernet/IPv4/UDP frames, in capture order. */
function pcapPayloads(file: string): Uint8Array[] {
  const bytes = fs.readFileSync(file);
  const payloads: Uint8Array[] = [];
  for (let offset = 24; offset + 16 <= bytes.length; ) {
    const length = bytes.readUInt32LE(offset + 8);
    const frame = bytes.subarray(offset + 16, offset + 16 + length);
    const ipHeader = ((frame[14] as number) & 0x0f) * 4;
    const rtp = frame.subarray(14 + ipHeader + 8);
    payloads.push(rtp.subarray(12 + ((rtp[0] as number) & 0x0f) * 4));
    offset += 16 + length;
  }
  return payloads;
}

/** Answers SIPp's INVITE with an SDP naming `rtpPort`, and its BYE. */
async function answeringSipPeer(rtpPort: number) {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, HOST, () => resolve()));
  socket.on('message', (datagram, rinfo) => {
    const text = datagram.toString('utf8');
    const method = text.slice(0, text.indexOf(' '));
    if (method !== 'INVITE' && method !== 'BYE') return;
    const headers = text.split('\r\n\r\n')[0]?.split('\r\n').slice(1) ?? [];
    const header = (name: string) =>
      headers.filter((h) => h.toLowerCase().startsWith(`${name.toLowerCase()}:`));
    const sdp =
      method === 'INVITE'
        ? `v=0\r\no=media 1 1 IN IP4 ${HOST}\r\ns=-\r\nc=IN IP4 ${HOST}\r\nt=0 0\r\n` +
          `m=audio ${rtpPort} RTP/AVP 8 101\r\na=rtpmap:8 PCMA/8000\r\na=rtpmap:101 telephone-event/8000\r\na=ptime:20\r\n`
        : '';
    const to = header('To')[0] ?? '';
    const response = [
      'SIP/2.0 200 OK',
      ...header('Via'),
      ...header('From'),
      to.includes(';tag=') ? to : `${to};tag=media1`,
      ...header('Call-ID'),
      ...header('CSeq'),
      `Contact: <sip:media@${HOST}:${socket.address().port}>`,
      ...(sdp ? ['Content-Type: application/sdp'] : []),
      `Content-Length: ${Buffer.byteLength(sdp)}`,
      '',
      sdp,
    ].join('\r\n');
    socket.send(response, rinfo.port, rinfo.address);
  });
  return { port: socket.address().port, close: () => socket.close() };
}

describe('MediaEngine against SIPp', () => {
  it('hears the keys and the speech SIPp plays from its captures, latched to its media port', async () => {
    const session = await engine.open({ callId: 'sipp', recordingPath: path.join(dir, 'sipp.wav') });
    await session.setRemote({
      address: HOST,
      port: 9,
      codec: 'PCMA',
      payloadType: 8,
      telephoneEventPt: 101,
      ptime: 20,
    });
    const digits: string[] = [];
    const latchedPorts: number[] = [];
    const heard: Int16Array[] = [];
    session.on('dtmf', (digit) => digits.push(digit));
    session.on('latched', (info) => latchedPorts.push(info.port));
    session.on('audio', (pcm) => heard.push(pcm));
    await session.setForwardAudio(true);
    const peer = await answeringSipPeer(session.localPort);
    const mediaPort = await freeMediaPort();
    const sipp = await runSipp({
      scenario: playPcapScenario(dir),
      dir,
      port: await freeUdpPort(),
      mediaPort,
      remote: `${HOST}:${peer.port}`,
      timeoutS: 15,
    });
    peer.close();
    const result = await session.close();

    expect(sipp.code, sipp.output).toBe(0);
    expect(digits).toEqual(['1', '#']);
    expect(latchedPorts).toEqual([mediaPort]);
    // The speech arrives sample for sample: find a stretch of the capture (30 ms packets) in
    // what the session forwarded (20 ms frames), then compare the 20 packets from there on.
    const captured = pcapPayloads(path.join(SIPP_PCAPS, 'g711a.pcap')).map((p) => decodeG711('PCMA', p));
    const expected = Int16Array.from(captured.flatMap((packet) => [...packet]));
    const pcm = Int16Array.from(heard.flatMap((chunk) => [...chunk]));
    const from = 24 * 240;
    const probe = expected.subarray(from, from + 160);
    let at = -1;
    for (let i = 0; i + 160 <= pcm.length && at < 0; i++) {
      if (probe.every((v, k) => pcm[i + k] === v)) at = i;
    }
    expect(at, "the capture's speech was not heard").toBeGreaterThan(0);
    const compared = 20 * 240;
    expect(pcm.length - at).toBeGreaterThanOrEqual(compared);
    expect(pcm.subarray(at, at + compared)).toEqual(expected.subarray(from, from + compared));
    expect(result.stats.received).toBeGreaterThan(40);
    expect(result.stats.lost).toBe(0);
  });
});
