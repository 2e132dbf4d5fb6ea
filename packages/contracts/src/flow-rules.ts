import {
  FLOW_NODE_LABELS,
  type FlowGraph,
  type FlowIssue,
  type FlowNode,
  flowNodeExits,
  flowNodeOutputs,
  flowTemplateVariables,
  SYSTEM_FLOW_VARIABLE_NAMES,
  WAITING_FLOW_NODE_TYPES,
} from './flows';

/**
 * The rules that make a flow safe to run, shared by the editor (live, with links to the node)
 * and the server (on save as information, on publish as the gate). Errors block publishing;
 * warnings never do.
 */

export interface FlowRuleContext {
  /** The flow's own id: a subflow node may not call it. */
  flowId?: string;
}

/** How a node is named in messages: its own name, else its type. */
export const flowNodeTitle = (node: FlowNode) => node.name.trim() || FLOW_NODE_LABELS[node.type];

/** Every text of a node that may hold `{{variables}}`, and the variables its rules read. */
export function flowNodeInputs(node: FlowNode): string[] {
  const texts: string[] = [];
  const direct: string[] = [];
  switch (node.type) {
    case 'play':
      texts.push(node.data.text);
      break;
    case 'menu':
      texts.push(node.data.prompt, node.data.invalidPrompt, node.data.timeoutPrompt);
      break;
    case 'collect':
      texts.push(node.data.prompt, node.data.invalidPrompt, node.data.timeoutPrompt);
      break;
    case 'speech':
      texts.push(node.data.prompt, node.data.retryPrompt);
      break;
    case 'condition':
      for (const branch of node.data.branches)
        for (const rule of branch.rules)
          if (rule.kind === 'variable') {
            direct.push(rule.variable);
            texts.push(rule.value);
          }
      break;
    case 'assistant':
      for (const v of node.data.variables) texts.push(v.value);
      break;
    case 'transfer':
      texts.push(node.data.target, node.data.prompt, node.data.callerIdNumber);
      break;
    case 'voicemail':
      texts.push(node.data.prompt);
      break;
    case 'sms':
      texts.push(node.data.to, node.data.content);
      break;
    case 'http':
      texts.push(node.data.url, node.data.body, ...node.data.headers.map((h) => h.value));
      break;
    case 'set':
      for (const a of node.data.assignments) texts.push(a.value);
      break;
    case 'hangup':
      texts.push(node.data.text);
      break;
    default:
      break;
  }
  const names = [...direct];
  for (const text of texts)
    for (const name of flowTemplateVariables(text)) if (!names.includes(name)) names.push(name);
  return names;
}

/** Settings a node cannot run without, as the message naming the field. */
function missingSettings(node: FlowNode): string[] {
  const missing: string[] = [];
  switch (node.type) {
    case 'play':
      if (!node.data.text.trim() && !node.data.audioId) missing.push('请填写放音内容或上传音频');
      break;
    case 'menu':
      if (!node.data.prompt.trim()) missing.push('请填写菜单提示音');
      break;
    case 'collect':
      if (!node.data.prompt.trim()) missing.push('请填写收号提示音');
      if (node.data.minDigits > node.data.maxDigits) missing.push('最少位数不能大于最多位数');
      break;
    case 'speech':
      if (!node.data.prompt.trim()) missing.push('请填写提问内容');
      if (node.data.intents.length === 0) missing.push('请至少添加一个意图');
      for (const intent of node.data.intents)
        if (intent.keywords.length === 0) missing.push(`意图「${intent.name}」没有关键词`);
      break;
    case 'condition':
      if (node.data.branches.length === 0) missing.push('请至少添加一个分支');
      for (const branch of node.data.branches)
        if (branch.rules.length === 0) missing.push(`分支「${branch.name}」没有条件`);
      break;
    case 'assistant':
      if (!node.data.assistantId) missing.push('请选择智能小助手');
      break;
    case 'transfer':
      if (!node.data.target.trim()) missing.push('请填写转接号码或 SIP 地址');
      if (node.data.callerId === 'custom' && !node.data.callerIdNumber.trim()) missing.push('请填写外显号码');
      break;
    case 'sms':
      if (!node.data.to.trim()) missing.push('请填写接收号码');
      if (!node.data.content.trim()) missing.push('请填写短信内容');
      break;
    case 'http':
      if (!node.data.url.trim()) missing.push('请填写请求地址');
      else if (!/^https?:\/\//i.test(node.data.url.trim()) && !node.data.url.trim().startsWith('{{'))
        missing.push('请求地址须以 http:// 或 https:// 开头');
      if (node.data.body.trim() && node.data.method === 'GET') missing.push('GET 请求不能带请求体');
      if (node.data.defaultResult.trim()) {
        try {
          JSON.parse(node.data.defaultResult);
        } catch {
          missing.push('默认结果须为 JSON');
        }
      }
      break;
    case 'set':
      if (node.data.assignments.length === 0) missing.push('请至少设置一个变量');
      break;
    case 'subflow':
      if (!node.data.flowId) missing.push('请选择子流程');
      break;
    default:
      break;
  }
  return missing;
}

/** Strongly connected components (Tarjan), iteratively so a 500-node flow cannot blow the stack. */
function stronglyConnected(ids: string[], next: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  for (const root of ids) {
    if (index.has(root)) continue;
    const work: Array<{ id: string; i: number }> = [{ id: root, i: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length) {
      const frame = work[work.length - 1] as { id: string; i: number };
      const targets = next.get(frame.id) ?? [];
      if (frame.i < targets.length) {
        const target = targets[frame.i++] as string;
        if (!index.has(target)) {
          index.set(target, counter);
          low.set(target, counter++);
          stack.push(target);
          onStack.add(target);
          work.push({ id: target, i: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.id, Math.min(low.get(frame.id) as number, index.get(target) as number));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.id, Math.min(low.get(parent.id) as number, low.get(frame.id) as number));
      if (low.get(frame.id) === index.get(frame.id)) {
        const component: string[] = [];
        for (;;) {
          const member = stack.pop() as string;
          onStack.delete(member);
          component.push(member);
          if (member === frame.id) break;
        }
        components.push(component);
      }
    }
  }
  return components;
}

/** Every problem of a flow, nodes in graph order. */
export function validateFlow(graph: FlowGraph, context: FlowRuleContext = {}): FlowIssue[] {
  const issues: FlowIssue[] = [];
  const add = (
    nodeId: string | null,
    severity: FlowIssue['severity'],
    code: FlowIssue['code'],
    message: string,
  ) => issues.push({ nodeId, severity, code, message });
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));

  const starts = graph.nodes.filter((n) => n.type === 'start');
  if (starts.length === 0) add(null, 'error', 'no_start', '流程缺少「开始」节点');
  for (const extra of starts.slice(1)) add(extra.id, 'error', 'many_starts', '流程只能有一个「开始」节点');

  const next = new Map<string, string[]>();
  const connected = new Set<string>();
  for (const edge of graph.edges) {
    const source = byId.get(edge.source);
    if (!source || !byId.has(edge.target)) {
      add(source ? source.id : null, 'error', 'dangling_edge', '有连线指向不存在的节点');
      continue;
    }
    if (!flowNodeExits(source).some((exit) => exit.id === edge.sourceHandle)) {
      add(source.id, 'error', 'dangling_edge', `「${flowNodeTitle(source)}」有连线来自已删除的出口`);
      continue;
    }
    connected.add(`${edge.source}\u0000${edge.sourceHandle}`);
    const list = next.get(edge.source) ?? [];
    list.push(edge.target);
    next.set(edge.source, list);
  }

  // Reachability from the start, and the variables that may be set on some path to each node.
  const reachable = new Set<string>();
  const queue = starts.slice(0, 1).map((n) => n.id);
  for (const id of queue) reachable.add(id);
  while (queue.length) {
    const id = queue.shift() as string;
    for (const target of next.get(id) ?? [])
      if (!reachable.has(target)) {
        reachable.add(target);
        queue.push(target);
      }
  }
  const setBefore = new Map<string, Set<string>>();
  if (starts[0]) {
    // Worklist fixpoint: each node passes on only the names it learnt since its last visit, so
    // the work is bounded by edges × variables whatever order the nodes are stored in (a pass
    // over every node until nothing changes took half a second on a 500-node flow in reverse order).
    const outputs = new Map(graph.nodes.map((n) => [n.id, flowNodeOutputs(n)]));
    const fresh = new Map<string, Set<string>>([[starts[0].id, new Set()]]);
    const visited = new Set<string>();
    const work = [starts[0].id];
    const queued = new Set(work);
    setBefore.set(starts[0].id, new Set());
    while (work.length) {
      const id = work.pop() as string;
      queued.delete(id);
      const learnt = fresh.get(id) ?? new Set<string>();
      fresh.set(id, new Set());
      // The first visit passes on everything known here plus what the node sets itself.
      const passOn = visited.has(id) ? learnt : new Set([...learnt, ...(outputs.get(id) ?? [])]);
      visited.add(id);
      for (const target of next.get(id) ?? []) {
        let known = setBefore.get(target);
        let changed = false;
        if (!known) {
          known = new Set();
          setBefore.set(target, known);
          changed = true;
        }
        const targetFresh = fresh.get(target) ?? new Set<string>();
        for (const name of passOn)
          if (!known.has(name)) {
            known.add(name);
            targetFresh.add(name);
            changed = true;
          }
        fresh.set(target, targetFresh);
        if (changed && !queued.has(target)) {
          queued.add(target);
          work.push(target);
        }
      }
    }
  }

  const keysSeen = (node: FlowNode & { type: 'menu' }) => {
    const seen = new Set<string>();
    for (const option of node.data.options) {
      if (seen.has(option.key))
        add(node.id, 'error', 'duplicate_key', `「${flowNodeTitle(node)}」的按键 ${option.key} 重复`);
      if (option.key === node.data.repeatKey)
        add(node.id, 'error', 'duplicate_key', `「${flowNodeTitle(node)}」的按键 ${option.key} 与重听键相同`);
      seen.add(option.key);
    }
  };

  for (const node of graph.nodes) {
    const title = flowNodeTitle(node);
    if (starts[0] && !reachable.has(node.id))
      add(node.id, 'error', 'unreachable', `「${title}」无法从「开始」到达`);
    for (const message of missingSettings(node))
      add(node.id, 'error', 'missing_setting', `「${title}」：${message}`);
    for (const exit of flowNodeExits(node)) {
      if (connected.has(`${node.id}\u0000${exit.id}`)) continue;
      if (node.type === 'http' && exit.id === 'failure')
        add(node.id, 'error', 'http_no_failure', `「${title}」没有连接失败出口：接口不可用时来电将无处可去`);
      else add(node.id, 'error', 'exit_unconnected', `「${title}」的出口「${exit.label}」未连接`);
    }
    if (node.type === 'menu') {
      if (node.data.options.length < 2)
        add(node.id, 'error', 'menu_too_few', `「${title}」至少需要两个按键选项，只有一个选项时请用「放音」`);
      keysSeen(node);
    }
    if (node.type === 'speech') {
      const ids = new Set<string>();
      for (const intent of node.data.intents) {
        if (ids.has(intent.id))
          add(node.id, 'error', 'duplicate_key', `「${title}」的意图「${intent.name}」重复`);
        ids.add(intent.id);
      }
    }
    if (node.type === 'condition') {
      const ids = new Set<string>();
      for (const branch of node.data.branches) {
        if (ids.has(branch.id))
          add(node.id, 'error', 'duplicate_key', `「${title}」的分支「${branch.name}」重复`);
        ids.add(branch.id);
        for (const rule of branch.rules) {
          if (rule.kind === 'variable' && rule.op === 'regex') checkPattern(node, rule.value, add);
          if (rule.kind === 'caller' && rule.op === 'regex') checkPattern(node, rule.value, add);
          if (rule.kind === 'date_range' && rule.from > rule.to)
            add(node.id, 'error', 'missing_setting', `「${title}」：开始日期不能晚于结束日期`);
        }
      }
    }
    if (node.type === 'collect' && node.data.pattern) checkPattern(node, node.data.pattern, add);
    if (node.type === 'subflow' && context.flowId && node.data.flowId === context.flowId)
      add(node.id, 'error', 'self_subflow', `「${title}」不能调用流程自身`);
    const known = setBefore.get(node.id);
    if (known) {
      for (const name of flowNodeInputs(node)) {
        if (SYSTEM_FLOW_VARIABLE_NAMES.has(name) || known.has(name)) continue;
        add(
          node.id,
          'warning',
          'variable_unset',
          `「${title}」使用的变量 {{${name}}} 在此之前没有被赋值，将按空值处理`,
        );
      }
    }
  }

  // A loop the caller cannot leave: no node in it waits for input (or counts retries).
  for (const component of stronglyConnected(
    graph.nodes.map((n) => n.id),
    next,
  )) {
    const single = component.length === 1 ? component[0] : undefined;
    if (single !== undefined && !(next.get(single) ?? []).includes(single)) continue;
    const waits = component.some((id) => {
      const node = byId.get(id);
      return node ? WAITING_FLOW_NODE_TYPES.has(node.type) : false;
    });
    if (waits) continue;
    const first = graph.nodes.find((n) => component.includes(n.id)) as FlowNode;
    const names = component
      .map((id) => byId.get(id))
      .filter((n): n is FlowNode => n !== undefined)
      .map(flowNodeTitle)
      .slice(0, 4)
      .join('、');
    add(first.id, 'error', 'endless_loop', `「${names}」构成的循环中没有等待来电者的节点，通话会无限循环`);
  }
  return issues;
}

function checkPattern(
  node: FlowNode,
  pattern: string,
  add: (nodeId: string, severity: 'error', code: 'bad_pattern', message: string) => void,
) {
  try {
    new RegExp(pattern);
  } catch {
    add(node.id, 'error', 'bad_pattern', `「${flowNodeTitle(node)}」的正则表达式「${pattern}」无效`);
  }
}
