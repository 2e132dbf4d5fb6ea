import { flowGraph } from '@callpilot/contracts';
import { and, eq } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { callFlows, callFlowVersions } from '../../db/schema';
import type { FlowSource } from '../../engine/call/ports';
import type { RecordingStore } from '../../engine/recording/store';
import { notFound } from '../../lib/errors';
import { flowAudioSamples } from './flow-audio.service';

/**
 * The engine's view of call flows (engine/call/ports.ts): the graph a call runs, frozen when it
 * starts, so a publish or a rollback during the call changes nothing for it.
 */
export const flowSource = (db: Database, store: RecordingStore | undefined): FlowSource => ({
  async forCall(projectId, flowId, version) {
    const [flow] = await db
      .select({
        name: callFlows.name,
        draft: callFlows.draft,
        publishedVersion: callFlows.publishedVersion,
      })
      .from(callFlows)
      .where(and(eq(callFlows.projectId, projectId), eq(callFlows.id, flowId)))
      .limit(1);
    if (!flow) throw notFound('流程不存在或已删除');
    if (version === 'draft')
      return { flowId, name: flow.name, version: null, graph: flowGraph.parse(flow.draft) };
    const wanted = version ?? flow.publishedVersion;
    if (wanted === null) throw notFound(`流程「${flow.name}」尚未发布`);
    const [frozen] = await db
      .select({ graph: callFlowVersions.graph })
      .from(callFlowVersions)
      .where(and(eq(callFlowVersions.flowId, flowId), eq(callFlowVersions.version, wanted)))
      .limit(1);
    if (!frozen) throw notFound(`流程「${flow.name}」没有版本 v${wanted}`);
    return { flowId, name: flow.name, version: wanted, graph: flowGraph.parse(frozen.graph) };
  },
  audio: async (projectId, audioId) => (store ? flowAudioSamples(db, store, projectId, audioId) : null),
});
