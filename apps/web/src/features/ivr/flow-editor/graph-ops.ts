import {
  type FlowEdge,
  type FlowGraph,
  type FlowNode,
  type FlowNodeType,
  flowNode,
  flowNodeExits,
} from '@callpilot/contracts';

// Pure operations on the contracts' FlowGraph: the store records each result as one undo step.

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

function randomSuffix(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ID_ALPHABET[Math.floor(Math.random() * ID_ALPHABET.length)];
  return out;
}

/** A node id the graph does not hold yet (the contracts allow 1-40 of [A-Za-z0-9_-]). */
export function newNodeId(type: FlowNodeType, taken: ReadonlySet<string>): string {
  for (;;) {
    const id = `${type}_${randomSuffix(6)}`;
    if (!taken.has(id)) return id;
  }
}

export const newEdgeId = () => `e_${randomSuffix(10)}`;

/** Settings a new node starts with beyond the contracts' defaults, so it is useful at once. */
function starterData(type: FlowNodeType): Record<string, unknown> | undefined {
  switch (type) {
    case 'menu':
      return {
        options: [
          { key: '1', label: '' },
          { key: '2', label: '' },
        ],
      };
    case 'speech':
      return { intents: [{ id: 'i1', name: '意图 1', keywords: [] }] };
    case 'condition':
      return {
        branches: [{ id: 'b1', name: '工作时间', match: 'all', rules: [{ kind: 'business_hours' }] }],
      };
    default:
      return undefined;
  }
}

export function createFlowNode(
  type: FlowNodeType,
  position: { x: number; y: number },
  taken: ReadonlySet<string>,
): FlowNode {
  return flowNode.parse({
    id: newNodeId(type, taken),
    type,
    position: { x: Math.round(position.x), y: Math.round(position.y) },
    data: starterData(type),
  });
}

/**
 * Connects a node's exit to a target. An exit leads to one place: connecting it again replaces
 * its edge. The start node has no entry.
 */
export function connectExit(
  graph: FlowGraph,
  connection: { source: string; sourceHandle: string; target: string },
): FlowGraph {
  const source = graph.nodes.find((n) => n.id === connection.source);
  const target = graph.nodes.find((n) => n.id === connection.target);
  if (!source || !target || target.type === 'start') return graph;
  if (!flowNodeExits(source).some((exit) => exit.id === connection.sourceHandle)) return graph;
  const current = graph.edges.find(
    (e) => e.source === connection.source && e.sourceHandle === connection.sourceHandle,
  );
  if (current?.target === connection.target) return graph;
  const edge: FlowEdge = { id: newEdgeId(), ...connection };
  return {
    ...graph,
    edges: [
      ...graph.edges.filter(
        (e) => !(e.source === connection.source && e.sourceHandle === connection.sourceHandle),
      ),
      edge,
    ],
  };
}

/** Removes nodes (never the start) with their edges, and edges. */
export function removeElements(
  graph: FlowGraph,
  nodeIds: readonly string[],
  edgeIds: readonly string[],
): { graph: FlowGraph; refusedStart: boolean } {
  const removable = new Set(
    nodeIds.filter((id) => graph.nodes.some((n) => n.id === id && n.type !== 'start')),
  );
  const refusedStart = nodeIds.some((id) => graph.nodes.some((n) => n.id === id && n.type === 'start'));
  const dropEdges = new Set(edgeIds);
  if (removable.size === 0 && !graph.edges.some((e) => dropEdges.has(e.id))) return { graph, refusedStart };
  return {
    graph: {
      ...graph,
      nodes: graph.nodes.filter((n) => !removable.has(n.id)),
      edges: graph.edges.filter(
        (e) => !dropEdges.has(e.id) && !removable.has(e.source) && !removable.has(e.target),
      ),
    },
    refusedStart,
  };
}

/**
 * Replaces one node after its settings changed, keeping its edges on the exits they belonged to:
 * when exactly one exit disappeared and one appeared (a menu key typed over), the edge moves with
 * it; edges of exits that are gone (an option removed) go too, so none dangles.
 */
export function replaceNode(graph: FlowGraph, next: FlowNode): FlowGraph {
  const index = graph.nodes.findIndex((n) => n.id === next.id);
  const previous = graph.nodes[index];
  if (!previous || previous === next) return graph;
  const nodes = graph.nodes.slice();
  nodes[index] = next;
  const before = flowNodeExits(previous).map((e) => e.id);
  const after = flowNodeExits(next).map((e) => e.id);
  const gone = before.filter((id) => !after.includes(id));
  if (gone.length === 0) return { ...graph, nodes };
  const added = after.filter((id) => !before.includes(id));
  const renamed = gone.length === 1 && added.length === 1 ? { from: gone[0], to: added[0] } : null;
  const edges: FlowEdge[] = [];
  for (const edge of graph.edges) {
    if (edge.source !== next.id || !gone.includes(edge.sourceHandle)) edges.push(edge);
    else if (renamed && edge.sourceHandle === renamed.from)
      edges.push({ ...edge, sourceHandle: renamed.to as string });
  }
  return { ...graph, nodes, edges };
}

// ---- Clipboard ----------------------------------------------------------------------------------

/** Where copied nodes wait, so a paste works in another flow (another tab, later). */
export const FLOW_CLIPBOARD_KEY = 'callpilot.flow.clipboard';
const CLIPBOARD_FORMAT = 'callpilot.flow.clipboard';
export const PASTE_OFFSET = 40;

type Clipboard = { format: typeof CLIPBOARD_FORMAT; nodes: FlowNode[]; edges: FlowEdge[] };

/** Copies the nodes with the edges among them; answers how many nodes were copied. */
export function writeClipboard(graph: FlowGraph, nodeIds: readonly string[]): number {
  const ids = new Set(nodeIds);
  const nodes = graph.nodes.filter((n) => ids.has(n.id));
  if (nodes.length === 0) return 0;
  const edges = graph.edges.filter((e) => ids.has(e.source) && ids.has(e.target));
  const clipboard: Clipboard = { format: CLIPBOARD_FORMAT, nodes, edges };
  localStorage.setItem(FLOW_CLIPBOARD_KEY, JSON.stringify(clipboard));
  return nodes.length;
}

function readClipboard(): Clipboard | null {
  try {
    const parsed = JSON.parse(
      localStorage.getItem(FLOW_CLIPBOARD_KEY) ?? 'null',
    ) as Partial<Clipboard> | null;
    if (parsed?.format !== CLIPBOARD_FORMAT || !Array.isArray(parsed.nodes)) return null;
    // Another version of the console may have written it: keep only what this one can draw.
    const nodes = parsed.nodes.flatMap((n) => {
      const result = flowNode.safeParse(n);
      return result.success ? [result.data] : [];
    });
    const edges = Array.isArray(parsed.edges) ? parsed.edges : [];
    return { format: CLIPBOARD_FORMAT, nodes, edges };
  } catch {
    return null;
  }
}

export type PasteResult = {
  graph: FlowGraph;
  pastedIds: string[];
  /** The clipboard held a 开始 node: a flow has exactly one, so it was left out. */
  skippedStart: boolean;
};

/**
 * The clipboard's nodes added under new ids, `offset` to the lower right of where they were
 * copied, with the edges among them; null when the clipboard holds no nodes.
 */
export function pasteClipboard(graph: FlowGraph, offset: number): PasteResult | null {
  const clipboard = readClipboard();
  if (!clipboard || clipboard.nodes.length === 0) return null;
  const skippedStart = clipboard.nodes.some((n) => n.type === 'start');
  const taken = new Set(graph.nodes.map((n) => n.id));
  const ids = new Map<string, string>();
  const nodes: FlowNode[] = [];
  for (const node of clipboard.nodes) {
    if (node.type === 'start') continue;
    const id = newNodeId(node.type, taken);
    taken.add(id);
    ids.set(node.id, id);
    nodes.push({ ...node, id, position: { x: node.position.x + offset, y: node.position.y + offset } });
  }
  const edges: FlowEdge[] = [];
  for (const edge of clipboard.edges) {
    const source = ids.get(edge.source);
    const target = ids.get(edge.target);
    if (source && target) edges.push({ id: newEdgeId(), source, sourceHandle: edge.sourceHandle, target });
  }
  return {
    graph: { ...graph, nodes: [...graph.nodes, ...nodes], edges: [...graph.edges, ...edges] },
    pastedIds: nodes.map((n) => n.id),
    skippedStart,
  };
}

// ---- Auto layout --------------------------------------------------------------------------------

export type NodeSize = { width: number; height: number };
/** The canvas draws every node this wide (flow-node.tsx). */
export const NODE_WIDTH = 240;

/** What a node measures before the canvas drew it: its header and one row per exit. */
export function estimateNodeSize(node: FlowNode): NodeSize {
  return { width: NODE_WIDTH, height: 84 + 24 * flowNodeExits(node).length };
}

/**
 * Left-to-right layers from the start node (dagre). Nodes the start cannot reach are hung off it
 * for the layout only, so the start stays alone in the first column whatever the graph holds.
 */
export async function layoutGraph(
  graph: FlowGraph,
  sizeOf: (node: FlowNode) => NodeSize = estimateNodeSize,
): Promise<FlowGraph> {
  if (graph.nodes.length === 0) return graph;
  // Loaded on first use: opening a flow does not wait for the layout engine.
  const { Graph, layout } = await import('@dagrejs/dagre');
  const g = new Graph({ multigraph: true });
  g.setGraph({ rankdir: 'LR', nodesep: 36, ranksep: 110, marginx: 24, marginy: 24 });
  g.setDefaultEdgeLabel(() => ({}));
  const start = graph.nodes.find((n) => n.type === 'start');
  // The start first: dagre breaks cycles depth-first in node order, so it never gains an entry.
  const ordered = start ? [start, ...graph.nodes.filter((n) => n !== start)] : graph.nodes;
  const sizes = new Map<string, NodeSize>();
  for (const node of ordered) {
    const size = sizeOf(node);
    sizes.set(node.id, size);
    g.setNode(node.id, { width: size.width, height: size.height });
  }
  const ids = new Set(graph.nodes.map((n) => n.id));
  const next = new Map<string, string[]>();
  for (const edge of graph.edges) {
    if (!ids.has(edge.source) || !ids.has(edge.target) || edge.source === edge.target) continue;
    g.setEdge(edge.source, edge.target, { weight: 1, minlen: 1 }, edge.id);
    next.set(edge.source, [...(next.get(edge.source) ?? []), edge.target]);
  }
  if (start) {
    const reached = new Set([start.id]);
    const queue = [start.id];
    while (queue.length)
      for (const target of next.get(queue.shift() as string) ?? []) {
        if (!reached.has(target)) {
          reached.add(target);
          queue.push(target);
        }
      }
    for (const node of ordered)
      if (!reached.has(node.id)) g.setEdge(start.id, node.id, { weight: 0, minlen: 1 }, `layout:${node.id}`);
  }
  layout(g);
  return {
    ...graph,
    nodes: graph.nodes.map((node) => {
      const placed = g.node(node.id) as { x: number; y: number } | undefined;
      const size = sizes.get(node.id) as NodeSize;
      if (!placed) return node;
      return {
        ...node,
        position: { x: Math.round(placed.x - size.width / 2), y: Math.round(placed.y - size.height / 2) },
      };
    }),
  };
}
