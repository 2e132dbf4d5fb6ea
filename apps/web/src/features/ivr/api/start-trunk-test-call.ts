import type { TrunkTestEvent } from '@callpilot/contracts';
import { postEventStream } from '@/lib/request';
import { trunkUrl } from './get-trunks';

/**
 * 测试呼叫: dials `number` through the trunk; `onEvent` receives each SIP step as the server
 * reports it, then the outcome. Rejects with a RequestError when the server refuses (409 when
 * this server does not run SIP); the dialog shows that message itself. Aborting hangs up.
 */
export function startTrunkTestCall(
  projectId: string,
  trunkId: string,
  number: string,
  options: { onEvent: (event: TrunkTestEvent) => void; signal: AbortSignal },
): Promise<void> {
  return postEventStream<TrunkTestEvent>(
    trunkUrl(projectId, trunkId, '/test-call'),
    { number },
    { ...options, showError: false },
  );
}
