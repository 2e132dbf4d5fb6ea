import {
  type FlowGraph,
  type FlowIssue,
  type FlowNode,
  type FlowNodeStats,
  type FlowNodeType,
  type FlowSettings,
  validateFlow,
} from '@callpilot/contracts';
import { create } from 'zustand';
import {
  connectExit,
  createFlowNode,
  layoutGraph,
  type NodeSize,
  PASTE_OFFSET,
  pasteClipboard,
  removeElements,
  replaceNode,
  writeClipboard,
} from './graph-ops';

/**
 * The flow editor's state: the contracts' FlowGraph is the one source of truth (the canvas
 * derives xyflow's nodes and edges from it), with the selection and an undo history of graph
 * snapshots. One editor is open at a time, so one store; `load` starts it afresh for a flow.
 */

export const HISTORY_LIMIT = 100;
/** Keystrokes in one field within this long are one undo step, not one per character. */
const COALESCE_MS = 1200;

export type IssueCounts = Record<string, { errors: number; warnings: number }>;
export type NodeStat = { reached: number; hungUp: number; share: number };

type Coalesce = { key: string; at: number } | null;

export type FlowEditorState = {
  flowId: string;
  graph: FlowGraph;
  /** The graph as last saved (or loaded): dirty is "not this one". */
  savedGraph: FlowGraph;
  name: string;
  savedName: string;
  past: FlowGraph[];
  future: FlowGraph[];
  coalesce: Coalesce;
  selectedNodeIds: string[];
  selectedEdgeIds: string[];
  /** Pastes since the last copy: each lands a step further, so repeated pastes do not stack up. */
  pasteCount: number;
  /** validateFlow of the graph, refreshed shortly after edits stop (see useLiveIssues). */
  issues: FlowIssue[];
  issueCounts: IssueCounts;
  issuesOf: FlowGraph | null;
  statsByNode: Record<string, NodeStat> | null;
  /** The simulator's path so far and where it is now. */
  highlightPath: ReadonlySet<string>;
  /** Consecutive steps of that path as `source\u0000target`: the edges it took. */
  highlightSteps: ReadonlySet<string>;
  highlightActive: string | null;

  load: (flowId: string, graph: FlowGraph, name: string) => void;
  /** Records `next` as one undo step (or folds it into the last one when `coalesceKey` repeats). */
  commit: (next: FlowGraph, coalesceKey?: string) => void;
  /** Ends the current coalescing run: the next edit is its own undo step. */
  endCoalesce: () => void;
  undo: () => void;
  redo: () => void;
  setName: (name: string) => void;
  markSaved: (graph: FlowGraph, name: string) => void;
  select: (nodeIds: string[], edgeIds?: string[]) => void;
  addNode: (type: FlowNodeType, position: { x: number; y: number }) => string;
  updateNode: (id: string, recipe: (node: FlowNode) => FlowNode, coalesceKey?: string) => void;
  updateSettings: (recipe: (settings: FlowSettings) => FlowSettings, coalesceKey?: string) => void;
  moveNodes: (moves: { id: string; position: { x: number; y: number } }[], dragging: boolean) => void;
  connect: (connection: { source: string; sourceHandle: string; target: string }) => void;
  deleteElements: (nodeIds: string[], edgeIds: string[]) => { refusedStart: boolean };
  copySelection: () => number;
  paste: () => { pasted: number; skippedStart: boolean } | null;
  /** Resolves once the laid-out graph is committed (the layout engine loads on first use). */
  autoLayout: (sizeOf?: (node: FlowNode) => NodeSize) => Promise<void>;
  setIssues: (graph: FlowGraph, issues: FlowIssue[]) => void;
  setStats: (stats: FlowNodeStats | null) => void;
  setHighlight: (path: string[], active: string | null) => void;
};

const EMPTY_GRAPH: FlowGraph = {
  nodes: [],
  edges: [],
  settings: {
    voice: { provider: 'espeak', voiceId: 'cmn', speed: 1, volume: 80 },
    recognizerId: null,
  },
};

function countIssues(issues: FlowIssue[]): IssueCounts {
  const counts: IssueCounts = {};
  for (const issue of issues) {
    if (!issue.nodeId) continue;
    const entry = counts[issue.nodeId] ?? { errors: 0, warnings: 0 };
    if (issue.severity === 'error') entry.errors++;
    else entry.warnings++;
    counts[issue.nodeId] = entry;
  }
  return counts;
}

const existing = (graph: FlowGraph, ids: string[]) =>
  ids.filter((id) => graph.nodes.some((n) => n.id === id));

export const useFlowEditorStore = create<FlowEditorState>()((set, get) => ({
  flowId: '',
  graph: EMPTY_GRAPH,
  savedGraph: EMPTY_GRAPH,
  name: '',
  savedName: '',
  past: [],
  future: [],
  coalesce: null,
  selectedNodeIds: [],
  selectedEdgeIds: [],
  pasteCount: 0,
  issues: [],
  issueCounts: {},
  issuesOf: null,
  statsByNode: null,
  highlightPath: new Set(),
  highlightSteps: new Set(),
  highlightActive: null,

  load: (flowId, graph, name) => {
    const issues = validateFlow(graph, { flowId });
    set({
      flowId,
      graph,
      savedGraph: graph,
      name,
      savedName: name,
      past: [],
      future: [],
      coalesce: null,
      selectedNodeIds: [],
      selectedEdgeIds: [],
      pasteCount: 0,
      issues,
      issueCounts: countIssues(issues),
      issuesOf: graph,
      statsByNode: null,
      highlightPath: new Set(),
      highlightSteps: new Set(),
      highlightActive: null,
    });
  },

  commit: (next, coalesceKey) => {
    const { graph, past, coalesce } = get();
    if (next === graph) return;
    const now = Date.now();
    const folds =
      coalesceKey !== undefined && coalesce?.key === coalesceKey && now - coalesce.at < COALESCE_MS;
    set({
      graph: next,
      past: folds ? past : [...past, graph].slice(-HISTORY_LIMIT),
      future: [],
      coalesce: coalesceKey === undefined ? null : { key: coalesceKey, at: now },
    });
  },

  endCoalesce: () => set({ coalesce: null }),

  undo: () => {
    const { past, future, graph, selectedNodeIds } = get();
    const previous = past[past.length - 1];
    if (!previous) return;
    set({
      graph: previous,
      past: past.slice(0, -1),
      future: [graph, ...future],
      coalesce: null,
      selectedNodeIds: existing(previous, selectedNodeIds),
      selectedEdgeIds: [],
    });
  },

  redo: () => {
    const { past, future, graph, selectedNodeIds } = get();
    const next = future[0];
    if (!next) return;
    set({
      graph: next,
      past: [...past, graph].slice(-HISTORY_LIMIT),
      future: future.slice(1),
      coalesce: null,
      selectedNodeIds: existing(next, selectedNodeIds),
      selectedEdgeIds: [],
    });
  },

  setName: (name) => set({ name }),
  markSaved: (graph, name) => set({ savedGraph: graph, savedName: name }),

  select: (nodeIds, edgeIds = []) => {
    const current = get();
    const same = (a: string[], b: string[]) => a.length === b.length && a.every((id, i) => id === b[i]);
    if (same(current.selectedNodeIds, nodeIds) && same(current.selectedEdgeIds, edgeIds)) return;
    set({ selectedNodeIds: nodeIds, selectedEdgeIds: edgeIds });
  },

  addNode: (type, position) => {
    const { graph, commit } = get();
    const node = createFlowNode(type, position, new Set(graph.nodes.map((n) => n.id)));
    commit({ ...graph, nodes: [...graph.nodes, node] });
    set({ selectedNodeIds: [node.id], selectedEdgeIds: [] });
    return node.id;
  },

  updateNode: (id, recipe, coalesceKey) => {
    const { graph, commit } = get();
    const node = graph.nodes.find((n) => n.id === id);
    if (!node) return;
    commit(replaceNode(graph, recipe(node)), coalesceKey === undefined ? undefined : `${id}:${coalesceKey}`);
  },

  updateSettings: (recipe, coalesceKey) => {
    const { graph, commit } = get();
    commit({ ...graph, settings: recipe(graph.settings) }, coalesceKey && `settings:${coalesceKey}`);
  },

  moveNodes: (moves, dragging) => {
    const { graph, commit, endCoalesce } = get();
    const byId = new Map(moves.map((m) => [m.id, m.position]));
    let changed = false;
    const nodes = graph.nodes.map((node) => {
      const position = byId.get(node.id);
      if (!position || (position.x === node.position.x && position.y === node.position.y)) return node;
      changed = true;
      return { ...node, position: { x: Math.round(position.x), y: Math.round(position.y) } };
    });
    // One drag is one undo step however many frames it took.
    if (changed) commit({ ...graph, nodes }, `move:${[...byId.keys()].sort().join(',')}`);
    if (!dragging) endCoalesce();
  },

  connect: (connection) => {
    const { graph, commit } = get();
    commit(connectExit(graph, connection));
  },

  deleteElements: (nodeIds, edgeIds) => {
    const { graph, commit, selectedNodeIds, selectedEdgeIds } = get();
    const result = removeElements(graph, nodeIds, edgeIds);
    commit(result.graph);
    set({
      selectedNodeIds: existing(result.graph, selectedNodeIds),
      selectedEdgeIds: selectedEdgeIds.filter((id) => result.graph.edges.some((e) => e.id === id)),
    });
    return { refusedStart: result.refusedStart };
  },

  copySelection: () => {
    const { graph, selectedNodeIds } = get();
    const copied = writeClipboard(graph, selectedNodeIds);
    if (copied > 0) set({ pasteCount: 0 });
    return copied;
  },

  paste: () => {
    const { graph, commit, pasteCount } = get();
    const result = pasteClipboard(graph, PASTE_OFFSET * (pasteCount + 1));
    if (!result) return null;
    if (result.pastedIds.length > 0) {
      commit(result.graph);
      set({ selectedNodeIds: result.pastedIds, selectedEdgeIds: [], pasteCount: pasteCount + 1 });
    }
    return { pasted: result.pastedIds.length, skippedStart: result.skippedStart };
  },

  autoLayout: async (sizeOf) => {
    const graph = get().graph;
    const laidOut = await layoutGraph(graph, sizeOf);
    // An edit made while the layout engine loaded wins: the layout was of a graph that is gone.
    if (get().graph === graph) get().commit(laidOut);
  },

  setIssues: (graph, issues) => set({ issues, issueCounts: countIssues(issues), issuesOf: graph }),

  setStats: (stats) => {
    if (!stats) {
      set({ statsByNode: null });
      return;
    }
    const byNode: Record<string, NodeStat> = {};
    for (const row of stats.nodes)
      byNode[row.nodeId] = {
        reached: row.reached,
        hungUp: row.hungUp,
        share: stats.calls > 0 ? row.reached / stats.calls : 0,
      };
    set({ statsByNode: byNode });
  },

  setHighlight: (path, active) =>
    set({
      highlightPath: new Set(path),
      highlightSteps: new Set(path.slice(1).map((id, i) => `${path[i]}\u0000${id}`)),
      highlightActive: active,
    }),
}));

export const selectDirty = (s: FlowEditorState) => s.graph !== s.savedGraph || s.name !== s.savedName;
export const selectCanUndo = (s: FlowEditorState) => s.past.length > 0;
export const selectCanRedo = (s: FlowEditorState) => s.future.length > 0;
/** The node the side panel edits: exactly one selected. */
export const selectSelectedNode = (s: FlowEditorState) =>
  s.selectedNodeIds.length === 1 ? s.graph.nodes.find((n) => n.id === s.selectedNodeIds[0]) : undefined;
