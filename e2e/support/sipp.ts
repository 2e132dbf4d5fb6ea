import { type ChildProcess, spawn } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const sippPath = process.env.SIPP_PATH ?? '/usr/bin/sipp';
export const hasSipp = fs.existsSync(sippPath);

/** Answers OPTIONS pings and one call: 100/180/200 then BYE, or 486 for numbers starting with 486. */
export const TRUNK_FAR_END_SCENARIO = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'sipp-trunk-far-end.xml',
);

const bindUdp = (port: number, host: string) =>
  new Promise<dgram.Socket | null>((resolve) => {
    const socket = dgram.createSocket('udp4');
    socket.once('error', () => {
      socket.close();
      resolve(null);
    });
    socket.bind(port, host, () => resolve(socket));
  });

const bindTcp = (port: number, host: string) =>
  new Promise<net.Server | null>((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(null));
    server.listen(port, host, () => resolve(server));
  });

/**
 * Where ports are drawn from: below Linux's ephemeral range (32768 up), so a port the kernel hands
 * another socket meanwhile cannot take them. The server's RTP range has a band of its own: it binds
 * its ports only when a call starts, so a SIPp started before that must not sit on one.
 */
export const PORT_BANDS = { rtp: [11000, 21000], sip: [21000, 32000] } as const;

/**
 * `count` consecutive ports starting on an even one, free for UDP (and TCP on the first, for a SIP
 * port) on `host` right now; drawn at random in `band`, so parallel runs rarely meet.
 */
export async function freePortRange(
  count: number,
  { host = '127.0.0.1', tcp = false, band = PORT_BANDS.sip as readonly [number, number] } = {},
): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const base = 2 * Math.floor((band[0] + Math.random() * (band[1] - band[0] - count)) / 2);
    const held: (dgram.Socket | net.Server)[] = [];
    let free = true;
    for (let port = base; port < base + count && free; port++) {
      const udp = await bindUdp(port, host);
      if (udp) held.push(udp);
      else free = false;
    }
    if (free && tcp) {
      const server = await bindTcp(base, host);
      if (server) held.push(server);
      else free = false;
    }
    await Promise.all(
      held.map(
        (socket) =>
          new Promise<void>((resolve) =>
            socket instanceof net.Server ? socket.close(() => resolve()) : socket.close(() => resolve()),
          ),
      ),
    );
    if (free) return base;
  }
  throw new Error(`no ${count} free consecutive ports on ${host}`);
}

export interface SippRun {
  /** The exit code, or the signal's name when it was killed. */
  exited: Promise<number | string>;
  /** SIPp's screen and the SIP messages it traced, for a failing assertion's message. */
  log: () => string;
  kill: () => void;
}

/**
 * A SIPp UAS on 127.0.0.1:`port` playing `scenario`; `seconds` later it gives up and exits non-zero,
 * so a call that never comes fails the test instead of hanging it.
 */
export function sippUas(options: {
  scenario: string;
  port: number;
  mediaPort: number;
  workDir: string;
  seconds: number;
}): SippRun {
  const messages = path.join(options.workDir, `sipp-${options.port}-messages.log`);
  const child: ChildProcess = spawn(
    sippPath,
    [
      ...['-sf', options.scenario, '-i', '127.0.0.1', '-p', String(options.port)],
      ...['-mi', '127.0.0.1', '-mp', String(options.mediaPort)],
      ...['-nostdin', '-timeout', String(options.seconds), '-timeout_error'],
      ...['-trace_msg', '-message_file', messages],
    ],
    { cwd: options.workDir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let screen = '';
  child.stdout?.on('data', (chunk) => {
    screen = (screen + chunk).slice(-4000);
  });
  child.stderr?.on('data', (chunk) => {
    screen = (screen + chunk).slice(-4000);
  });
  const exited = new Promise<number | string>((resolve) => {
    child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
    child.on('error', (err) => resolve(err.message));
  });
  const traced = () => {
    try {
      return fs.readFileSync(messages, 'utf8').slice(-6000);
    } catch {
      return '(no messages traced)';
    }
  };
  return {
    exited,
    log: () => `${screen}\n--- messages ---\n${traced()}`,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** Where Debian's sip-tester keeps the RTP captures SIPp plays (g711a.pcap, dtmf_2833_*.pcap). */
export const sippCaptures = process.env.SIPP_CAPTURES ?? '/usr/share/sip-tester';

/**
 * A caller dialling `number` from `caller`, then speaking and hanging up (an INVITE from a trunk's
 * peer). The captures' directory is written into a copy in `workDir`: SIPp reads it at load time.
 */
export function inboundCallerScenario(workDir: string): string {
  const source = path.join(path.dirname(fileURLToPath(import.meta.url)), 'sipp-inbound-caller.xml');
  const file = path.join(workDir, 'sipp-inbound-caller.xml');
  fs.writeFileSync(file, fs.readFileSync(source, 'utf8').replaceAll('__CAPTURES__', sippCaptures));
  return file;
}

/**
 * A SIPp UAC on 127.0.0.1:`port` placing one call to `target` (host:port) with `scenario`, whose
 * [service] is `number` and whose other keywords are `keys`; it gives up `seconds` later.
 */
export function sippUac(options: {
  scenario: string;
  target: string;
  number: string;
  keys?: Record<string, string>;
  port: number;
  mediaPort: number;
  workDir: string;
  seconds: number;
}): SippRun {
  const messages = path.join(options.workDir, `sipp-uac-${options.port}-messages.log`);
  const keys = Object.entries(options.keys ?? {}).flatMap(([key, value]) => ['-key', key, value]);
  const child: ChildProcess = spawn(
    sippPath,
    [
      ...['-sf', options.scenario, '-s', options.number, ...keys, '-m', '1'],
      ...[
        '-i',
        '127.0.0.1',
        '-p',
        String(options.port),
        '-mi',
        '127.0.0.1',
        '-mp',
        String(options.mediaPort),
      ],
      ...['-nostdin', '-timeout', String(options.seconds), '-timeout_error'],
      ...['-trace_msg', '-message_file', messages, options.target],
    ],
    { cwd: options.workDir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let screen = '';
  const keep = (chunk: Buffer) => {
    screen = (screen + chunk).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | string>((resolve) => {
    child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
    child.on('error', (err) => resolve(err.message));
  });
  const traced = () => {
    try {
      return fs.readFileSync(messages, 'utf8').slice(-6000);
    } catch {
      return '(no messages traced)';
    }
  };
  return {
    exited,
    log: () => `${screen}\n--- messages ---\n${traced()}`,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}
