// One SIP worker process for the failover part of the sip bench: lib/sip-worker.ts behind
// Kamailio, as a worker started with SIP_PROXY runs. It lives in a process of its own so that
// the bench can kill it with SIGKILL, as `kill -9` would: no BYE, no 503, its sockets just gone.
//
// Started with spawnTsModule; configured by environment (SIP_WORKER_*). It reports over IPC
// { type: 'ready', port } once it listens, then { type: 'answered', callId } for every call it
// answers, so the bench knows which calls the killed worker held. 'stop' closes it gracefully.
import { loadVad } from '../../../apps/server/src/engine/speech/vad';
import { Scope } from './proc';
import { startSipWorker } from './sip-worker';

export type WorkerRequest = { type: 'stop' };
export type WorkerMessage =
  | { type: 'ready'; port: number }
  | { type: 'answered'; callId: string }
  | { type: 'stopped'; failures: string[]; answered: number; peakLegs: number };

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

async function main() {
  const send = process.send?.bind(process);
  if (!send) throw new Error('sip-worker-child must be started with an IPC channel');
  const [proxyHost, proxyPort] = required('SIP_WORKER_PROXY').split(':');
  const scope = new Scope();
  const worker = await startSipWorker(scope, {
    vad: await loadVad(),
    host: required('SIP_WORKER_HOST'),
    sipPort: 0,
    rtpPortMin: Number(required('SIP_WORKER_RTP_MIN')),
    rtpPortMax: Number(required('SIP_WORKER_RTP_MAX')),
    recordingDir: required('SIP_WORKER_RECORDINGS'),
    t1: 500,
    // The caller hangs up: a call the worker ended itself would never show it was lost.
    hangupAfterMs: () => null,
    proxy: {
      proxies: [{ host: proxyHost!, port: Number(proxyPort) }],
      trunkHost: required('SIP_WORKER_TRUNK_HOST'),
    },
    onAnswered: (callId) => send({ type: 'answered', callId } satisfies WorkerMessage),
  });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    const report: WorkerMessage = {
      type: 'stopped',
      failures: worker.failures,
      answered: worker.answered,
      peakLegs: worker.peakLegs,
    };
    await scope.close();
    if (process.connected) send(report, () => process.exit(0));
    else process.exit(0);
  };
  process.on('message', (message: WorkerRequest) => {
    if (message.type === 'stop') void stop();
  });
  // Without the bench there is nobody to answer for.
  process.on('disconnect', () => void stop());
  send({ type: 'ready', port: worker.sipPort } satisfies WorkerMessage);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
