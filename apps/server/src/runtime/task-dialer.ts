import type { FastifyBaseLogger } from 'fastify';
import type { DatabaseHandle } from '../db/client';
import type { CallAssistant, CallPorts } from '../engine/call/ports';
import { type CallDeps, type CallOutcome, placeCall, SIM_CALLER_NUMBER } from '../engine/call/run-call';
import type { Clock } from '../engine/clock';
import { Dialer } from '../engine/dialer/dialer';
import type { DialerStore, DialJob } from '../engine/dialer/ports';

/** How a dial's call is run: the runtime gives each call its deps and its signals. */
export type RunDial = (
  job: DialJob,
  place: (deps: CallDeps, signals: { signal: AbortSignal; shutdown: AbortSignal }) => Promise<CallOutcome>,
) => Promise<CallOutcome>;

/**
 * The dialer of call tasks: each claimed contact becomes a placed call on the task's frozen
 * assistant version, with the contact's values and the id the dialer's recovery looks for.
 */
export function taskDialer(options: {
  store: DialerStore;
  database: DatabaseHandle;
  ports: CallPorts;
  clock: Clock;
  processId: string;
  log: FastifyBaseLogger;
  retryTimeScale: number;
  ownsTask: (taskId: string) => boolean;
  onTaskChanged: (projectId: string, taskId: string) => void;
  run: RunDial;
}): Dialer {
  // Frozen versions never change: one load per task version, not per call.
  const assistants = new Map<string, Promise<CallAssistant>>();
  return new Dialer({
    store: options.store,
    clock: options.clock,
    processId: options.processId,
    defaultCallerNumber: SIM_CALLER_NUMBER,
    recoverForeignLeasesAtStart: options.database.kind === 'pglite',
    ownsTask: options.ownsTask,
    log: options.log,
    onTaskChanged: options.onTaskChanged,
    retryTimeScale: options.retryTimeScale,
    dial: async (job) => {
      const { task, contact } = job;
      if (!task.assistantId) throw new Error('task has no assistant');
      const assistantId = task.assistantId;
      const key = `${task.projectId}/${assistantId}@${task.assistantVersion ?? 'live'}`;
      let loaded = assistants.get(key);
      if (!loaded) {
        loaded = options.ports.assistants.forCall(
          task.projectId,
          assistantId,
          task.assistantVersion ?? undefined,
        );
        assistants.set(key, loaded);
        loaded.catch(() => assistants.delete(key));
      }
      const assistant = await loaded;
      let lineFree!: (outcome: CallOutcome) => void;
      const hungUp = new Promise<CallOutcome>((resolve) => {
        lineFree = resolve;
      });
      const whole = options.run(job, (deps, signals) =>
        placeCall(
          deps,
          {
            projectId: task.projectId,
            assistantId,
            callId: job.callId,
            callerNumber: job.callerNumber,
            calleeNumber: contact.phone,
            variables: contact.variables,
            taskId: task.id,
            taskName: task.name,
            contactId: contact.id,
            contactName: contact.name,
            ...signals,
            onEnded: lineFree,
          },
          assistant,
        ),
      );
      // The slot is the line: free at the hang-up. Analysis and the recording's queueing run on,
      // handed to the dialer so the task still completes only after them.
      const ended = await Promise.race([hungUp, whole]);
      return { ...ended, afterCall: whole };
    },
  });
}
