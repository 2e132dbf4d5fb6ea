import type { ReviewChange } from '@callpilot/contracts';

/** Chinese names for the paths a reviewer reads most; any other path is shown as it is. */
const LABELS: Record<string, string> = {
  name: '名称',
  use: '用途',
  'config.openingLine': '开场白',
  'config.systemPrompt': '提示词',
  'config.variables': '变量',
  'config.voice': '音色',
  'config.brain': '大模型',
  'config.hearing': '语音识别',
  'config.knowledge': '知识库',
  'config.conversation': '对话设置',
  'config.intentRules': '意向规则',
  nodes: '节点',
  edges: '连线',
};

const labelOf = (path: string) => {
  const exact = LABELS[path];
  if (exact) return exact;
  const prefix = Object.keys(LABELS)
    .filter((key) => path.startsWith(`${key}.`) || path.startsWith(`${key}[`))
    .sort((a, b) => b.length - a.length)[0];
  return prefix ? `${LABELS[prefix]} ${path.slice(prefix.length).replace(/^\./, '')}` : path;
};

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Arrays of objects that carry an id (flow nodes and edges) are compared by id, not position. */
const keyedById = (v: unknown): v is { id: string }[] =>
  Array.isArray(v) && v.length > 0 && v.every((item) => isRecord(item) && typeof item.id === 'string');

function flatten(value: unknown, path: string, out: Map<string, unknown>) {
  if (isRecord(value)) {
    for (const [key, child] of Object.entries(value)) flatten(child, path ? `${path}.${key}` : key, out);
    return;
  }
  if (keyedById(value)) {
    for (const item of value) {
      const { id, ...rest } = item as { id: string } & Record<string, unknown>;
      const itemPath = `${path}[${id}]`;
      // A node with nothing but an id still exists: keep a marker so adding it shows.
      out.set(itemPath, true);
      flatten(rest, itemPath, out);
    }
    return;
  }
  out.set(path, value);
}

/**
 * The changed leaves from `before` (the live version, or null before the first publish) to
 * `after` (the submission). A whole node added or removed is one change, not one per field.
 */
export function diffSnapshots(before: unknown, after: unknown): ReviewChange[] {
  const left = new Map<string, unknown>();
  const right = new Map<string, unknown>();
  if (before !== null && before !== undefined) flatten(before, '', left);
  flatten(after, '', right);
  const changes: ReviewChange[] = [];
  const wholeItems = new Set<string>();
  const push = (path: string, kind: ReviewChange['kind'], b: unknown, a: unknown) =>
    changes.push({ path, label: labelOf(path), kind, before: b ?? null, after: a ?? null });
  for (const [path, value] of right) {
    if ([...wholeItems].some((item) => path.startsWith(`${item}.`))) continue;
    if (!left.has(path)) {
      if (value === true && /\]$/.test(path)) wholeItems.add(path);
      push(path, 'added', null, value === true && /\]$/.test(path) ? '(新增)' : value);
    } else if (JSON.stringify(left.get(path)) !== JSON.stringify(value)) {
      push(path, 'changed', left.get(path), value);
    }
  }
  const removedItems = new Set<string>();
  for (const [path, value] of left) {
    if (right.has(path)) continue;
    if ([...removedItems].some((item) => path.startsWith(`${item}.`))) continue;
    const whole = value === true && /\]$/.test(path);
    if (whole) removedItems.add(path);
    push(path, 'removed', whole ? '(删除)' : value, null);
  }
  return changes;
}
