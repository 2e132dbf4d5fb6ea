import { type FlowGraph, type FlowIssue, flowGraph, flowNodeTitle } from '@callpilot/contracts';
import { and, eq, inArray, isNull } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { assistants, assistantVersions, callFlows, callFlowVersions, flowAudio } from '../../db/schema';

/**
 * What validateFlow cannot see from the graph alone: the flows, assistants and audio files it
 * names must be this project's and usable. Reported as issues beside validateFlow's, so the editor
 * shows them on the node and publishing refuses them with the same message.
 */
export async function referenceIssues(
  db: Database,
  projectId: string,
  flowId: string | null,
  graph: FlowGraph,
): Promise<FlowIssue[]> {
  const issues: FlowIssue[] = [];
  const error = (nodeId: string, message: string, code: FlowIssue['code'] = 'missing_setting') =>
    issues.push({ nodeId, severity: 'error', code, message });

  const subflowIds = new Set<string>();
  const assistantIds = new Set<string>();
  const audioIds = new Set<string>();
  for (const node of graph.nodes) {
    if (node.type === 'subflow' && node.data.flowId && node.data.flowId !== flowId)
      subflowIds.add(node.data.flowId);
    if (node.type === 'assistant' && node.data.assistantId) assistantIds.add(node.data.assistantId);
    if (node.type === 'play' && node.data.audioId) audioIds.add(node.data.audioId);
  }

  const flows = subflowIds.size
    ? await db
        .select({ id: callFlows.id, name: callFlows.name, publishedVersion: callFlows.publishedVersion })
        .from(callFlows)
        .where(and(eq(callFlows.projectId, projectId), inArray(callFlows.id, [...subflowIds])))
    : [];
  const loopsBack = flowId ? await subflowsReaching(db, projectId, flowId, [...subflowIds]) : new Set();
  const agents = assistantIds.size
    ? await db
        .select({ id: assistants.id, name: assistants.name, publishedVersion: assistants.publishedVersion })
        .from(assistants)
        .where(
          and(
            eq(assistants.projectId, projectId),
            inArray(assistants.id, [...assistantIds]),
            isNull(assistants.deletedAt),
          ),
        )
    : [];
  const versions = assistantIds.size
    ? await db
        .select({ assistantId: assistantVersions.assistantId, version: assistantVersions.version })
        .from(assistantVersions)
        .where(
          and(
            eq(assistantVersions.projectId, projectId),
            inArray(assistantVersions.assistantId, [...assistantIds]),
          ),
        )
    : [];
  const audio = audioIds.size
    ? await db
        .select({ id: flowAudio.id })
        .from(flowAudio)
        .where(and(eq(flowAudio.projectId, projectId), inArray(flowAudio.id, [...audioIds])))
    : [];

  for (const node of graph.nodes) {
    const title = flowNodeTitle(node);
    if (node.type === 'subflow' && node.data.flowId && node.data.flowId !== flowId) {
      const target = flows.find((f) => f.id === node.data.flowId);
      if (!target) error(node.id, `「${title}」：子流程不存在或已删除`);
      else if (target.publishedVersion === null)
        error(node.id, `「${title}」：子流程「${target.name}」尚未发布，发布后才能被调用`);
      else if (loopsBack.has(target.id))
        error(
          node.id,
          `「${title}」：子流程「${target.name}」的已发布版本又调用了本流程，通话会无限循环`,
          'self_subflow',
        );
    }
    if (node.type === 'assistant' && node.data.assistantId) {
      const agent = agents.find((a) => a.id === node.data.assistantId);
      if (!agent) error(node.id, `「${title}」：智能小助手不存在或已删除`);
      else if (agent.publishedVersion === null)
        error(node.id, `「${title}」：智能小助手「${agent.name}」尚未发布，发布后才能接听`);
      else if (
        node.data.version !== null &&
        !versions.some((v) => v.assistantId === agent.id && v.version === node.data.version)
      )
        error(node.id, `「${title}」：智能小助手「${agent.name}」没有版本 v${node.data.version}`);
    }
    if (node.type === 'play' && node.data.audioId && !audio.some((a) => a.id === node.data.audioId)) {
      // With a text the node still speaks it (the interpreter falls back); without, it says nothing.
      if (node.data.text.trim())
        issues.push({
          nodeId: node.id,
          severity: 'warning',
          code: 'missing_setting',
          message: `「${title}」：音频文件已删除，将播报文字内容`,
        });
      else error(node.id, `「${title}」：音频文件不存在或已删除，请重新选择`);
    }
  }
  return issues;
}

/**
 * Which of `start` lead back to `flowId` through the live versions of subflows: calling one of
 * them would call this flow again, without end. Breadth-first, one query per level.
 */
async function subflowsReaching(
  db: Database,
  projectId: string,
  flowId: string,
  start: string[],
): Promise<Set<string>> {
  const reaching = new Set<string>();
  for (const origin of start) {
    const seen = new Set<string>([origin]);
    let frontier = [origin];
    // A project's flows are few; the bound only guards against a pathological chain.
    for (let depth = 0; depth < 20 && frontier.length && !reaching.has(origin); depth++) {
      const live = await db
        .select({ graph: callFlowVersions.graph })
        .from(callFlows)
        .innerJoin(
          callFlowVersions,
          and(
            eq(callFlowVersions.flowId, callFlows.id),
            eq(callFlowVersions.version, callFlows.publishedVersion),
          ),
        )
        .where(and(eq(callFlows.projectId, projectId), inArray(callFlows.id, frontier)));
      const next: string[] = [];
      for (const row of live) {
        for (const id of subflowTargets(row.graph)) {
          if (id === flowId) reaching.add(origin);
          else if (!seen.has(id)) {
            seen.add(id);
            next.push(id);
          }
        }
      }
      frontier = next;
    }
  }
  return reaching;
}

/** The flows a stored graph calls as subflows. */
export function subflowTargets(stored: unknown): string[] {
  const parsed = flowGraph.safeParse(stored);
  if (!parsed.success) return [];
  const ids: string[] = [];
  for (const node of parsed.data.nodes)
    if (node.type === 'subflow' && node.data.flowId && !ids.includes(node.data.flowId))
      ids.push(node.data.flowId);
  return ids;
}
