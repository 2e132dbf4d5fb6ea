import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  fillScenario,
  freePortRange,
  haveSipp,
  PORT_BANDS,
  runSipp,
  SIPP,
  SIPP_PCAPS,
  type SippOptions,
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
  // Each OPTIONS ping is a call to SIPp: the scenario itself stops it after the INVITE's call.
  return start(options, { calls: null });
}

/** One e2e SIPp run, its messages traced: its exit, its screen and messages, and a kill. */
function start(
  options: { scenario: string; port: number; mediaPort: number; workDir: string; seconds: number },
  more: Partial<SippOptions>,
): SippRun {
  const run = runSipp({
    scenario: options.scenario,
    dir: options.workDir,
    port: options.port,
    mediaPort: options.mediaPort,
    timeoutS: options.seconds,
    messages: true,
    ...more,
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
export const sippCaptures = process.env.SIPP_CAPTURES ?? SIPP_PCAPS;

/**
 * A caller dialling `number` from `caller`, then speaking and hanging up (an INVITE from a trunk's
 * peer). The captures' directory is written into a copy in `workDir`: SIPp reads it at load time.
 */
export function inboundCallerScenario(workDir: string): string {
  const source = path.join(path.dirname(fileURLToPath(import.meta.url)), 'sipp-inbound-caller.xml');
  return fillScenario(source, workDir, { __CAPTURES__: sippCaptures });
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
  return start(options, { remote: options.target, keys: options.keys, args: ['-s', options.number] });
}
