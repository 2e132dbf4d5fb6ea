import type { TestChatEvent, TestChatRequest } from '@callpilot/contracts';
import { postEventStream } from '@/lib/request';
import { projectUrl } from './assistant-query-keys';

/** One turn of the test chat: the reply arrives as events (segments, deltas, intent, actions, done). */
export function streamTestChat(
  projectId: string,
  id: string,
  body: TestChatRequest,
  handlers: { onEvent: (event: TestChatEvent) => void; signal?: AbortSignal },
): Promise<void> {
  return postEventStream<TestChatEvent>(
    projectUrl(projectId, `/assistants/${encodeURIComponent(id)}/test-chat`),
    body,
    handlers,
  );
}
