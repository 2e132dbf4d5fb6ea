import { createFlowHttpClient } from '../engine/flow/http-client';
import type { FlowHttpRequest, FlowHttpResult } from '../engine/flow/types';
import type { Env } from '../env';

/**
 * The demo's built-in mock endpoint on this very server (loopback on PORT, or PUBLIC_BASE_URL),
 * which flows' HTTP nodes may call even where private addresses are refused. Nothing else of the
 * server: the URL parser has already resolved `..` segments, so the path cannot step out of it.
 */
export function isOwnDemoMock(env: Pick<Env, 'PORT' | 'PUBLIC_BASE_URL'>): (url: URL) => boolean {
  const publicOrigin = env.PUBLIC_BASE_URL ? new URL(env.PUBLIC_BASE_URL).origin : null;
  return (url) => {
    if (!url.pathname.startsWith('/api/demo-mock/')) return false;
    if (url.origin === publicOrigin) return true;
    const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
    return loopback && url.protocol === 'http:' && (url.port || '80') === String(env.PORT);
  };
}

/**
 * Flows' HTTP nodes: a flow's author picks the URL, so private addresses are refused unless the
 * operator allows them (FLOW_HTTP_ALLOW_PRIVATE), except the demo's mock endpoint here.
 */
export const flowHttpFor = (
  env: Pick<Env, 'PORT' | 'PUBLIC_BASE_URL' | 'FLOW_HTTP_ALLOW_PRIVATE'>,
): ((request: FlowHttpRequest) => Promise<FlowHttpResult>) =>
  createFlowHttpClient({ allowPrivate: env.FLOW_HTTP_ALLOW_PRIVATE, allow: isOwnDemoMock(env) });
