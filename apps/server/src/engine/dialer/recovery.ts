import type { EndReason } from '@callpilot/contracts';
import { callIdFor, contactOutcome } from './policy';
import type { AttemptCall, ContactOutcome, DialerLog, DialerStore, LostContact } from './ports';

/** What becomes of a lost contact's attempt. */
export type Recovery =
  /** The call never started: the attempt is given back. */
  | { kind: 'give-back' }
  /**
   * The call exists: its end reason decides, by the retry rules. A call still live was cut off
   * with its process (`cutOff`): it is closed and counts as interrupted (系统中断).
   */
  | { kind: 'settle'; endReason: EndReason; cutOff: boolean; outcome: ContactOutcome };

export function recoveryOf(
  contact: LostContact,
  call: AttemptCall | undefined,
  now: number,
  timeScale = 1,
): Recovery {
  if (!call) return { kind: 'give-back' };
  const cutOff = !call.ended;
  const endReason: EndReason = cutOff ? 'interrupted' : (call.endReason ?? 'interrupted');
  const outcome: ContactOutcome = contact.settings
    ? contactOutcome(contact.settings, endReason, contact.attempt, now, timeScale)
    : { status: 'failed', nextAttemptAt: null };
  return { kind: 'settle', endReason, cutOff, outcome };
}

export interface RecoveryContext {
  store: DialerStore;
  processId: string;
  now: number;
  /** This process is still calling the contact: its lease merely ran late. */
  isLive: (contactId: string) => boolean;
  ownsTask?: (taskId: string) => boolean;
  retryTimeScale?: number;
  log?: DialerLog;
  onTaskChanged?: (projectId: string, taskId: string) => void;
}

/**
 * Contacts left dialing by a process that died: a call never created gives its attempt back; a
 * call cut off mid-way is closed as interrupted (系统中断) and retried by the rules; a call that
 * ended before the crash keeps its outcome. `foreign`: every lease this process does not hold is
 * lost (embedded databases have one process), otherwise only expired ones.
 */
export async function recoverLostContacts(ctx: RecoveryContext, foreign: boolean): Promise<void> {
  const { store, ownsTask } = ctx;
  const at = new Date(ctx.now);
  const lost = (
    await store.lostContacts(foreign ? { notOwnedBy: ctx.processId } : { expiredBefore: at })
  ).filter((c) => !ctx.isLive(c.contactId) && (!ownsTask || ownsTask(c.taskId)));
  if (lost.length === 0) return;
  const callIds = lost.map((c) => callIdFor(c.contactId, c.attempt));
  const calls = new Map((await store.attemptCalls(callIds)).map((c) => [c.id, c]));
  const plans = lost.map((contact, i) => {
    const callId = callIds[i] as string;
    return { contact, callId, recovery: recoveryOf(contact, calls.get(callId), ctx.now, ctx.retryTimeScale) };
  });
  const cutOff = plans.filter((p) => p.recovery.kind === 'settle' && p.recovery.cutOff).map((p) => p.callId);
  const closed = new Set(cutOff.length ? await store.closeCutOffCalls(cutOff, at) : []);
  const touched = new Map<string, string>();
  for (const { contact, callId, recovery } of plans) {
    // Still running in a process that only renewed late: its lease is renewed on its next tick.
    if (recovery.kind === 'settle' && recovery.cutOff && !closed.has(callId)) continue;
    // The lease guard: of several processes recovering one contact, only one wins.
    const won =
      recovery.kind === 'give-back'
        ? await store.giveBackAttempt(contact, at)
        : await store.settleContact(
            contact,
            { outcome: recovery.outcome, callId, endReason: recovery.endReason },
            at,
          );
    if (won) touched.set(contact.taskId, contact.projectId);
  }
  if (touched.size) {
    ctx.log?.warn({ contacts: lost.length }, 'dialer recovered contacts of a lost process');
    for (const [taskId, projectId] of touched) ctx.onTaskChanged?.(projectId, taskId);
  }
}
