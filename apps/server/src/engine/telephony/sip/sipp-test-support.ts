import { type ChildProcess, spawn } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * Tests only: SIPp (Debian sip-tester) as the far end of a call, and the free ports it and our
 * side need. Shared by the engine's SIP and media tests, the runtime's whole-server SIP tests
 * and the e2e suite, so every one spawns, waits for and kills SIPp the same way.
 */

export const SIPP = process.env.SIPP_PATH ?? '/usr/bin/sipp';
export const haveSipp = fs.existsSync(SIPP);
/** The RTP captures sip-tester ships (g711a.pcap, dtmf_2833_1.pcap, ...). */
export const SIPP_PCAPS = '/usr/share/sip-tester';
export const LOOPBACK = '127.0.0.1';

const here = path.dirname(fileURLToPath(import.meta.url));
const PLAY_PCAP_SCENARIO = path.join(here, '..', 'media', 'testdata', 'sipp-play-pcap.xml');

/** Says loudly that `what` is skipped when SIPp is missing; answers whether it is there. */
export function sippOrWarn(what: string): boolean {
  if (!haveSipp) {
    console.warn(
      `\n*** ${what} SKIPPED: ${SIPP} is missing (Debian package sip-tester; .ci/run installs it) ***\n`,
    );
  }
  return haveSipp;
}

// ---------------------------------------------------------------------------------------------
// Ports

/**
 * Where ranges are drawn from: below Linux's ephemeral range (32768 up), so a port the kernel hands
 * another socket meanwhile cannot take them. RTP has a band of its own: a media engine binds its
 * ports only when a call starts, so a SIPp started before that must not sit on one.
 */
export const PORT_BANDS = { rtp: [11000, 21000], sip: [21000, 32000] } as const;

/** A UDP socket bound to `port` on `host`, or null when it is taken. */
export function bindUdp(port: number, host = LOOPBACK): Promise<dgram.Socket | null> {
  return new Promise((resolve) => {
    const socket = dgram.createSocket('udp4');
    socket.once('error', () => {
      socket.close();
      resolve(null);
    });
    socket.bind(port, host, () => resolve(socket));
  });
}

function listenTcp(port: number, host: string): Promise<net.Server | null> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(null));
    server.listen(port, host, () => resolve(server));
  });
}

export const closeUdp = (socket: dgram.Socket) =>
  new Promise<void>((resolve) => socket.close(() => resolve()));

const release = (held: (dgram.Socket | net.Server)[]) =>
  Promise.all(
    held.map(
      (socket) =>
        new Promise<void>((resolve) =>
          socket instanceof net.Server ? socket.close(() => resolve()) : socket.close(() => resolve()),
        ),
    ),
  );

/** A UDP port free right now (the kernel's pick), for a socket bound at once (SIPp's signalling). */
export async function freeUdpPort(host = LOOPBACK): Promise<number> {
  const socket = await bindUdp(0, host);
  if (!socket) throw new Error(`no free UDP port on ${host}`);
  const { port } = socket.address();
  await release([socket]);
  return port;
}

/**
 * `count` consecutive ports starting on an even one, free for UDP (and TCP too with `tcp`, for a
 * SIP listener) on `host` right now; drawn at random in `band`, so parallel test files rarely meet.
 * `avoid` lists ranges picked already but not bound yet (`[first, count]`), such as an RTP range.
 */
export async function freePortRange(
  count: number,
  {
    host = LOOPBACK,
    tcp = false,
    band = PORT_BANDS.sip as readonly [number, number],
    avoid = [],
  }: {
    host?: string;
    tcp?: boolean;
    band?: readonly [number, number];
    avoid?: readonly (readonly [number, number])[];
  } = {},
): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const base = 2 * Math.floor((band[0] + Math.random() * (band[1] - band[0] - count)) / 2);
    if (avoid.some(([first, n]) => base < first + n && first < base + count)) continue;
    const held: (dgram.Socket | net.Server)[] = [];
    let free = true;
    for (let port = base; port < base + count && free; port++) {
      const udp = await bindUdp(port, host);
      const server = udp && tcp ? await listenTcp(port, host) : null;
      if (udp) held.push(udp);
      if (server) held.push(server);
      free = udp !== null && (!tcp || server !== null);
    }
    await release(held);
    if (free) return base;
  }
  throw new Error(`no ${count} free consecutive ports on ${host} in ${band[0]}-${band[1]}`);
}

/**
 * SIPp's media port (-mp): it binds that one and the one two above it (video) as it starts, so
 * they come from the band of ports bound at once, never from the one kept for our RTP ranges.
 */
export const freeMediaPort = () => freePortRange(4);

// ---------------------------------------------------------------------------------------------
// Running SIPp

export interface SippOptions {
  /** A scenario file (-sf), or the name of a built-in one (-sn): `uac`, `uas`. */
  scenario: string;
  /** Where SIPp runs and writes its logs. */
  dir: string;
  /** SIPp's own SIP port (-p). */
  port: number;
  /** SIPp's address for signalling and media (-i, -mi); 127.0.0.1 unless set. */
  host?: string;
  /** SIPp's RTP port (-mp); SIPp's default (6000 or the next free) unless set. */
  mediaPort?: number;
  /** Our side, `host:port`: SIPp calls it. Without it SIPp waits for our call. */
  remote?: string;
  /** How many calls before SIPp exits (-m); 1 unless set, no limit with null (the scenario stops it). */
  calls?: number | null;
  /** Scenario keys (-key name value). */
  keys?: Record<string, string | number>;
  /** SIPp fails and exits after this many seconds (-timeout, -timeout_error); 20 unless set. */
  timeoutS?: number;
  /** Keep what the scenario's <log> actions write (`log` of the result). */
  logs?: boolean;
  /** Trace every SIP message SIPp sent and received (`messages()`). */
  messages?: boolean;
  /** Anything else, after the above. */
  args?: string[];
}

export interface SippResult {
  /** The exit code: 0 when every call passed every scenario check; null when killed. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** SIPp's unexpected messages and failed checks, then the end of its screen, for a message. */
  output: string;
  /** Unexpected messages and failed checks (-trace_err); empty when all went as scripted. */
  errors: string;
  /** What the scenario's <log> actions wrote (with `logs`). */
  log: string;
}

/** One SIPp run: resolves when SIPp exits, whatever the outcome (a spawn failure rejects). */
export interface SippRun extends Promise<SippResult> {
  /** SIPp's screen and the errors so far, while it runs. */
  output(): string;
  /** The SIP messages traced so far (with `messages`). */
  messages(): string;
  kill(): void;
}

const running = new Set<ChildProcess>();
let runs = 0;

const readIfThere = (file: string) => {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
};

/** The arguments of one run, its log files included. */
function sippArgs(options: SippOptions, files: { errors: string; log: string; messages: string }) {
  const host = options.host ?? LOOPBACK;
  const builtIn = !options.scenario.endsWith('.xml');
  const keys = Object.entries(options.keys ?? {}).flatMap(([name, value]) => ['-key', name, String(value)]);
  return [
    ...(builtIn ? ['-sn', options.scenario] : ['-sf', options.scenario]),
    ...(options.calls === null ? [] : ['-m', String(options.calls ?? 1)]),
    ...['-i', host, '-p', String(options.port), '-mi', host],
    ...(options.mediaPort === undefined ? [] : ['-mp', String(options.mediaPort)]),
    ...['-nostdin', '-timeout', String(options.timeoutS ?? 20), '-timeout_error'],
    ...['-trace_err', '-error_file', files.errors],
    ...(options.logs ? ['-trace_logs', '-log_file', files.log] : []),
    ...(options.messages ? ['-trace_msg', '-message_file', files.messages] : []),
    ...keys,
    ...(options.args ?? []),
    ...(options.remote ? [options.remote] : []),
  ];
}

/** Starts SIPp; every run still going is killed by `killSipps` (call it in afterAll/afterEach). */
export function runSipp(options: SippOptions): SippRun {
  const id = `sipp-${process.pid}-${++runs}`;
  const files = {
    errors: path.join(options.dir, `${id}-errors.log`),
    log: path.join(options.dir, `${id}-logs.log`),
    messages: path.join(options.dir, `${id}-messages.log`),
  };
  const child = spawn(SIPP, sippArgs(options, files), {
    cwd: options.dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let screen = '';
  const collect = (chunk: Buffer) => {
    screen = (screen + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const output = () => {
    const errors = readIfThere(files.errors);
    return `${errors ? `${errors.slice(-3000)}\n` : ''}${screen.slice(-3000)}`;
  };
  const done = new Promise<SippResult>((resolve, reject) => {
    child.once('error', (error) => {
      running.delete(child);
      reject(new Error(`SIPp did not start (${SIPP}): ${error.message}`));
    });
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve({
        code,
        signal,
        output: output(),
        errors: readIfThere(files.errors),
        log: readIfThere(files.log),
      });
    });
  });
  return Object.assign(done, {
    output,
    messages: () => readIfThere(files.messages),
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  });
}

/** Kills every SIPp this test file started that is still running. */
export function killSipps(): void {
  for (const child of running) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/** A copy of `file` in `dir` with each placeholder replaced: for what SIPp takes as no -key. */
export function fillScenario(file: string, dir: string, fill: Record<string, string | number>): string {
  let text = fs.readFileSync(file, 'utf8');
  for (const [name, value] of Object.entries(fill)) text = text.replaceAll(name, String(value));
  const copy = path.join(dir, `filled-${++runs}-${path.basename(file)}`);
  fs.writeFileSync(copy, text);
  return copy;
}

/**
 * A copy in `dir` of the scenario that calls us, plays sip-tester's PCMA capture and two RFC 4733
 * keys, and hangs up; `fill` replaces more of it.
 */
export const playPcapScenario = (dir: string, fill: Record<string, string> = {}) =>
  fillScenario(PLAY_PCAP_SCENARIO, dir, { __PCAPS__: SIPP_PCAPS, ...fill });

// ---------------------------------------------------------------------------------------------
// Waiting on SIPp

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What a run has come to so far: its result once it ended, else undefined. */
function watch(run: Promise<SippResult>): () => SippResult | undefined {
  let ended: SippResult | undefined;
  run.then(
    (result) => {
      ended = result;
    },
    () => undefined,
  );
  return () => ended;
}

/**
 * Waits in real time (SIPp's messages take real time) until `ready` holds; fails at once, with
 * SIPp's account, if SIPp ends first.
 */
export async function untilOrSippEnds(
  ready: () => boolean,
  what: string,
  run: Promise<SippResult>,
  ms = 10_000,
): Promise<void> {
  const ended = watch(run);
  const started = Date.now();
  while (!ready()) {
    const result = ended();
    if (result) throw new Error(`SIPp ended before ${what} (exit ${result.code}):\n${result.output}`);
    if (Date.now() - started > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(10);
  }
}

/** Whether a UDP socket is bound to `port` on any address, read from /proc/net/udp{,6}. */
function udpBound(port: number): boolean {
  // The second column is the local address:port, in hex.
  const needle = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  return ['/proc/net/udp', '/proc/net/udp6'].some((file) =>
    readIfThere(file)
      .split('\n')
      .slice(1)
      .some((line) => line.trim().split(/\s+/)[1]?.endsWith(needle)),
  );
}

/**
 * Resolves once SIPp's UDP socket is bound to `port`, so it is ready for our INVITE: a fixed wait
 * is too short on a loaded machine, and on a virtual clock a lost INVITE is never retransmitted.
 * The kernel's table is read rather than probed by binding, which could take the port from SIPp.
 */
export async function untilSippListens(port: number, run: Promise<SippResult>): Promise<void> {
  if (!fs.existsSync('/proc/net/udp')) {
    await sleep(1000);
    return;
  }
  await untilOrSippEnds(() => udpBound(port), `SIPp listening on UDP port ${port}`, run);
}

/**
 * `step` unless SIPp ends first: a failed scenario check does not stop SIPp, it goes on with
 * what it captured, so our side may wait for a message that never comes. Its account then
 * explains the failure rather than a test timeout.
 */
export function beforeSippEnds<T>(step: Promise<T>, run: Promise<SippResult>): Promise<T> {
  return Promise.race([
    step,
    run.then((result) => {
      throw new Error(`SIPp ended first (exit ${result.code}):\n${result.output}`);
    }),
  ]);
}
