import type { CallSummary } from '@callpilot/contracts';

/** The called number, with the contact's name when the call came from a task's list. */
export function CallCallee({ call }: { call: Pick<CallSummary, 'calleeNumber' | 'contactName'> }) {
  return (
    <span>
      {call.calleeNumber || '-'}
      {call.contactName && <span className="ml-1 text-xs text-gray-500">{call.contactName}</span>}
    </span>
  );
}
