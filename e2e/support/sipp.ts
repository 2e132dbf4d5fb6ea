import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  freePortRange,
  haveSipp,
  PORT_BANDS,
  runSipp,
  SIPP,
} from '../../apps/server/src/engine/telephony/sip/sipp-test-support';

// The server's SIPp test support, shared so every suite spawns, waits for and kills SIPp alike.
export { freePortRange, PORT_BANDS };
export const sippPath = SIPP;
export const hasSipp = haveSipp;

/** Answers OPTIONS pings and one call: 100/180/200 then BYE, or 486 for numbers starting with 486. */
export const TRUNK_FAR_END_SCENARIO = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'sipp-trunk-far-end.xml',
);

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
  const run = runSipp({
    scenario: options.scenario,
    dir: options.workDir,
    port: options.port,
    mediaPort: options.mediaPort,
    // Each OPTIONS ping is a call to SIPp: the scenario itself stops it after the INVITE's call.
    calls: null,
    timeoutS: options.seconds,
    messages: true,
  });
  return {
    exited: run.then(
      (result) => result.code ?? result.signal ?? 'unknown',
      (error: Error) => error.message,
    ),
    log: () => `${run.output()}\n--- messages ---\n${run.messages().slice(-6000) || '(no messages traced)'}`,
    kill: run.kill,
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
