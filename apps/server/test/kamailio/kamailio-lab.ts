import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freeUdpPort } from '../../src/engine/telephony/sip/sipp-test-support';

/**
 * Runs the shipped Kamailio configuration (deploy/kamailio/kamailio.cfg) on loopback in front
 * of SIPp processes playing the SIP workers, and SIPp callers placing calls through it. Every
 * port is chosen at run time and every process lives in a temporary directory that `close()`
 * removes after killing what it started, so runs never collide with each other or with a
 * Kamailio installed as a service.
 *
 * What the tests assert comes from the far ends, not from Kamailio: each worker's SIPp logs
 * every message it received and sent, and each caller's SIPp logs every response it got.
 */

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
export const KAMAILIO_CFG = path.join(repoRoot, 'deploy/kamailio/kamailio.cfg');
const WORKER_SCENARIO = path.join(repoRoot, 'deploy/kamailio/test/worker-uas.xml');
const CALLER_SCENARIO = path.join(repoRoot, 'deploy/kamailio/test/caller-uac.xml');
const HOST = '127.0.0.1';

/** `which`, plus the sbin directories a non-login shell may leave out of PATH (kamailio lives there). */
export function findExecutable(name: string): string | null {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/local/sbin', '/usr/sbin', '/sbin'];
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return null;
}

export async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** One SIP message as a SIPp message log (-trace_msg) recorded it. */
export interface LoggedMessage {
  direction: 'received' | 'sent';
  startLine: string;
  /** Lower-case header names; every occurrence kept in order. */
  headers: Map<string, string[]>;
  callId: string;
  cseqMethod: string;
}

const COMPACT_HEADERS: Record<string, string> = { i: 'call-id', v: 'via', f: 'from', t: 'to', m: 'contact' };

export function parseMessageLog(text: string): LoggedMessage[] {
  const messages: LoggedMessage[] = [];
  for (const block of text.split(/^-{20,} .*$/m)) {
    const lines = block.replace(/^\n+/, '').split('\n');
    const banner = lines[0] ?? '';
    const direction = banner.startsWith('UDP message received')
      ? 'received'
      : banner.startsWith('UDP message sent')
        ? 'sent'
        : null;
    if (!direction) continue;
    // The banner is followed by one empty line, then the message itself.
    const messageLines = lines.slice(2).map((line) => line.replace(/\r$/, ''));
    const startLine = messageLines[0];
    if (!startLine) continue;
    const headers = new Map<string, string[]>();
    for (const line of messageLines.slice(1)) {
      if (line === '') break;
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const raw = line.slice(0, colon).trim().toLowerCase();
      const name = COMPACT_HEADERS[raw] ?? raw;
      const values = headers.get(name) ?? [];
      values.push(line.slice(colon + 1).trim());
      headers.set(name, values);
    }
    const callId = headers.get('call-id')?.[0];
    const cseq = headers.get('cseq')?.[0];
    // A block cut short by a process killed mid-write has no Call-ID or CSeq yet.
    if (!callId || !cseq) continue;
    messages.push({ direction, startLine, headers, callId, cseqMethod: cseq.split(/\s+/)[1] ?? '' });
  }
  return messages;
}

export interface SipReply {
  status: number;
  text: string;
}

/**
 * Sends one out-of-dialog request over UDP and resolves with its final response, retransmitting
 * as a UDP client must (the far end may not be listening yet when the first copy leaves).
 */
export async function sendSipRequest(
  target: { host: string; port: number },
  method: string,
  requestUri: string,
  timeoutMs = 5000,
): Promise<SipReply> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, HOST, () => resolve()));
  const localPort = socket.address().port;
  const callId = `${randomUUID()}@${HOST}`;
  const request = [
    `${method} ${requestUri} SIP/2.0`,
    `Via: SIP/2.0/UDP ${HOST}:${localPort};rport;branch=z9hG4bK${randomUUID().replaceAll('-', '')}`,
    'Max-Forwards: 70',
    `From: <sip:lab@${HOST}>;tag=${randomUUID().slice(0, 8)}`,
    `To: <${requestUri}>`,
    `Call-ID: ${callId}`,
    `CSeq: 1 ${method}`,
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
  try {
    return await new Promise<SipReply>((resolve, reject) => {
      const send = () => socket.send(request, target.port, target.host);
      const retransmit = setInterval(send, 250);
      const giveUp = setTimeout(() => {
        clearInterval(retransmit);
        reject(new Error(`no final response to ${method} ${requestUri} within ${timeoutMs} ms`));
      }, timeoutMs);
      socket.on('message', (data) => {
        const text = data.toString('utf8');
        const status = Number(/^SIP\/2\.0 (\d{3})/.exec(text)?.[1]);
        if (!text.includes(callId) || !(status >= 200)) return;
        clearInterval(retransmit);
        clearTimeout(giveUp);
        resolve({ status, text });
      });
      send();
    });
  } finally {
    socket.close();
  }
}

/** A SIPp process playing one worker (deploy/kamailio/test/worker-uas.xml). */
export interface Worker {
  name: string;
  port: number;
  /** Its line in the dispatcher list, e.g. `sip:127.0.0.1:40123`. */
  uri: string;
  messages(): LoggedMessage[];
  /** Call-IDs of the INVITEs this worker answered 200. */
  answeredCalls(): Set<string>;
  /** Call-IDs of the calls whose BYE reached this worker. */
  endedCalls(): Set<string>;
  /** From now on it answers OPTIONS 503, as a real worker does while draining. */
  drain(): Promise<void>;
  kill(): Promise<void>;
}

export interface DispatcherEntry {
  uri: string;
  duid: string;
  /** Dispatcher flags: 0 active, 4 administratively disabled (never selected, never pinged). */
  flags?: number;
  /** The proxy's socket to reach this worker from (SIP_LISTEN_WORKERS). */
  socket?: string;
}

export interface Proxy {
  port: number;
  /** Everything Kamailio logged so far (stderr). */
  log(): string;
  /** Resolves when a log line matches, with that line. */
  waitForLog(pattern: RegExp, timeoutMs: number): Promise<string>;
}

export interface CallResult {
  /** Final status of the INVITE, if one arrived. */
  invite?: number;
  /** Final status of the BYE, if one arrived. */
  bye?: number;
  /** When the first INVITE left and when its final response came, epoch ms (SIPp's clock). */
  inviteSentAt?: number;
  inviteFinalAt?: number;
}

export interface CallerRun {
  exitCode: number | null;
  /** The caller's own SIP port: what the proxy must report as the call's source. */
  port: number;
  /** Every call the caller placed, by Call-ID. */
  calls: Map<string, CallResult>;
  /** Calls whose INVITE did not end in 200, with what they got instead. */
  failedInvites(): string[];
}

export interface CallOptions {
  calls: number;
  ratePerSecond: number;
  /** How long each answered call lasts before the caller hangs up. */
  holdMs: number;
  /** Request-URI host:port; the proxy itself unless set (a trunk, for a worker's outbound call). */
  target?: string;
  /** Place the calls from this port (a worker's, for outbound calls) instead of a fresh one. */
  fromPort?: number;
  /** Place the calls from this loopback address (127.0.0.3: a caller that is no trunk's peer). */
  fromHost?: string;
}

interface Started {
  child: ChildProcess;
  exited: Promise<number | null>;
  stderr: () => string;
  /** Kamailio forks children: its whole process group must go. */
  group: boolean;
}

export class KamailioLab {
  private readonly processes: Started[] = [];
  private readonly usedPorts = new Set<number>();
  private proxyLogText = '';
  private closing = false;

  private constructor(
    private readonly kamailioBin: string,
    private readonly sippBin: string,
    readonly dir: string,
  ) {}

  static create(kamailioBin: string): KamailioLab {
    const sippBin = findExecutable('sipp');
    if (!sippBin) {
      throw new Error('sipp not found: install the Debian package "sip-tester" (.ci/run installs it).');
    }
    return new KamailioLab(kamailioBin, sippBin, fs.mkdtempSync(path.join(os.tmpdir(), 'kamailio-lab-')));
  }

  /** A UDP port free right now on loopback, never one this lab handed out already. */
  async freePort(): Promise<number> {
    for (;;) {
      const port = await freeUdpPort(HOST);
      if (!this.usedPorts.has(port)) {
        this.usedPorts.add(port);
        return port;
      }
    }
  }

  private start(bin: string, args: string[], group: boolean): Started {
    const child = spawn(bin, args, { cwd: this.dir, stdio: ['ignore', 'ignore', 'pipe'], detached: group });
    let stderr = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => {
      child.once('exit', (code) => resolve(code));
      child.once('error', () => resolve(null));
    });
    const started = { child, exited, stderr: () => stderr, group };
    this.processes.push(started);
    return started;
  }

  private static kill(started: Started): void {
    const pid = started.child.pid;
    if (pid === undefined || started.child.exitCode !== null || started.child.signalCode !== null) return;
    try {
      if (started.group) process.kill(-pid, 'SIGKILL');
      else started.child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }

  async startWorker(name: string, extraArgs: string[] = []): Promise<Worker> {
    const port = await this.freePort();
    const messageLog = path.join(this.dir, `worker-${name}.log`);
    const sipp = this.start(
      this.sippBin,
      [
        '-sf',
        WORKER_SCENARIO,
        '-i',
        HOST,
        '-p',
        String(port),
        '-nostdin',
        '-trace_msg',
        '-message_file',
        messageLog,
        ...extraArgs,
      ],
      false,
    );
    const messages = () =>
      fs.existsSync(messageLog) ? parseMessageLog(fs.readFileSync(messageLog, 'utf8')) : [];
    const callIds = (match: (m: LoggedMessage) => boolean) =>
      new Set(
        messages()
          .filter(match)
          .map((m) => m.callId),
      );
    const worker: Worker = {
      name,
      port,
      uri: `sip:${HOST}:${port}`,
      messages,
      answeredCalls: () =>
        callIds(
          (m) => m.direction === 'sent' && m.cseqMethod === 'INVITE' && m.startLine.startsWith('SIP/2.0 200'),
        ),
      endedCalls: () => callIds((m) => m.direction === 'received' && m.startLine.startsWith('BYE ')),
      drain: async () => {
        const reply = await sendSipRequest({ host: HOST, port }, 'MESSAGE', `sip:drain@${HOST}:${port}`);
        if (reply.status !== 200) throw new Error(`worker ${name} refused to drain: ${reply.status}`);
      },
      kill: async () => {
        KamailioLab.kill(sipp);
        await sipp.exited;
      },
    };
    // Ready once it answers: a worker that is not listening yet would look dead to the proxy.
    const ready = await sendSipRequest({ host: HOST, port }, 'OPTIONS', `sip:${HOST}:${port}`).catch(
      (error: Error) => error,
    );
    if (ready instanceof Error)
      throw new Error(`worker ${name} did not start: ${ready.message}\n${sipp.stderr()}`);
    return worker;
  }

  async startProxy(
    entries: DispatcherEntry[],
    defines: Record<string, string | number> = {},
  ): Promise<Proxy> {
    const port = await this.freePort();
    const listFile = path.join(this.dir, 'dispatcher.list');
    fs.writeFileSync(
      listFile,
      `${entries
        .map(
          (e) =>
            `1 ${e.uri} ${e.flags ?? 0} 0 duid=${e.duid};maxload=200${e.socket ? `;socket=${e.socket}` : ''}`,
        )
        .join('\n')}\n`,
    );
    const runDir = path.join(this.dir, 'run');
    const settings: Record<string, string | number> = {
      SIP_LISTEN: `udp:${HOST}:${port}`,
      DS_LIST: JSON.stringify(listFile),
      SIP_CHILDREN: 2,
      LOG_LEVEL: 2,
      ...defines,
    };
    const kamailio = this.start(
      this.kamailioBin,
      [
        '-DD',
        '-E',
        '-f',
        KAMAILIO_CFG,
        '-Y',
        runDir,
        '-P',
        path.join(runDir, 'kamailio.pid'),
        '-m',
        '32',
        ...Object.entries(settings).flatMap(([name, value]) => ['-A', `${name}=${value}`]),
      ],
      true,
    );
    const lineWaiters = new Set<() => void>();
    kamailio.child.stderr?.on('data', (chunk: string) => {
      this.proxyLogText += chunk;
      for (const wake of lineWaiters) wake();
    });
    const proxy: Proxy = {
      port,
      log: () => this.proxyLogText,
      waitForLog: (pattern, timeoutMs) =>
        new Promise<string>((resolve, reject) => {
          const check = () => {
            const line = this.proxyLogText.split('\n').find((l) => pattern.test(l));
            if (line === undefined) return;
            lineWaiters.delete(check);
            clearTimeout(timer);
            resolve(line);
          };
          const timer = setTimeout(() => {
            lineWaiters.delete(check);
            reject(new Error(`Kamailio never logged ${pattern} within ${timeoutMs} ms`));
          }, timeoutMs);
          lineWaiters.add(check);
          check();
        }),
    };
    // Kamailio answers OPTIONS to itself once its workers are loaded: that is when calls can come.
    const ready = await sendSipRequest({ host: HOST, port }, 'OPTIONS', `sip:${HOST}:${port}`, 10_000).catch(
      (error: Error) => error,
    );
    if (ready instanceof Error) {
      throw new Error(`Kamailio did not start: ${ready.message}\n${this.proxyLogText.slice(-4000)}`);
    }
    return proxy;
  }

  /**
   * Runs a SIPp caller to completion: `calls` calls at `ratePerSecond`, each held `holdMs`. A
   * caller still running when the lab closes is killed, and its promise resolves with what it saw.
   */
  async placeCalls(proxy: Proxy, options: CallOptions): Promise<CallerRun> {
    const port = options.fromPort ?? (await this.freePort());
    const trace = path.join(this.dir, `caller-${port}-${randomUUID().slice(0, 8)}.tsv`);
    // The caller's own bound: the slowest legitimate path (a failover, then a BYE timing out on a
    // dead worker) takes a few seconds beyond the last call's start.
    const limitS = Math.ceil(options.calls / options.ratePerSecond + options.holdMs / 1000 + 15);
    const sipp = this.start(
      this.sippBin,
      [
        `${HOST}:${proxy.port}`,
        '-sf',
        CALLER_SCENARIO,
        '-i',
        options.fromHost ?? HOST,
        '-p',
        String(port),
        '-key',
        'target',
        options.target ?? `${HOST}:${proxy.port}`,
        '-m',
        String(options.calls),
        '-r',
        String(options.ratePerSecond),
        '-d',
        String(options.holdMs),
        '-nostdin',
        '-timeout',
        `${limitS}s`,
        '-timeout_error',
        '-trace_shortmsg',
        '-shortmessage_file',
        trace,
      ],
      false,
    );
    const exitCode = await sipp.exited;
    const calls = new Map<string, CallResult>();
    const text = fs.existsSync(trace) ? fs.readFileSync(trace, 'utf8') : '';
    for (const line of text.split('\n')) {
      // date, time, epoch, S(ent)/R(eceived), Call-ID, "CSeq:<n> <method>", start line
      const [, , epoch, direction, callId, cseq, startLine] = line.split('\t');
      if (!callId || !cseq || !startLine) continue;
      const call = calls.get(callId) ?? {};
      calls.set(callId, call);
      const at = Number(epoch) * 1000;
      if (direction === 'S' && startLine.startsWith('INVITE ')) call.inviteSentAt ??= at;
      const status = Number(/^SIP\/2\.0 (\d{3})/.exec(startLine)?.[1]);
      if (direction !== 'R' || !(status >= 200)) continue;
      if (cseq.endsWith(' INVITE')) {
        call.invite = status;
        call.inviteFinalAt ??= at;
      }
      if (cseq.endsWith(' BYE')) call.bye = status;
    }
    // A caller still on the line when the test ends is killed by close(): not a failure.
    if (calls.size === 0 && !this.closing) {
      throw new Error(`the SIPp caller placed no call (exit ${exitCode}): ${sipp.stderr().slice(-2000)}`);
    }
    return {
      exitCode,
      port,
      calls,
      failedInvites: () =>
        [...calls]
          .filter(([, call]) => call.invite !== 200)
          .map(([id, call]) => `${id}: ${call.invite ?? 'none'}`),
    };
  }

  /** Kamailio's log, for a failing assertion's message. */
  proxyLog(): string {
    return this.proxyLogText.slice(-6000);
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const started of this.processes) KamailioLab.kill(started);
    await Promise.all(this.processes.map((started) => started.exited));
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
