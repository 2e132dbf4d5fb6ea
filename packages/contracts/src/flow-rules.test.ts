import { describe, expect, it } from 'vitest';
import { validateFlow } from './flow-rules';
import { type FlowGraph, type FlowIssue, flowGraph, MAX_FLOW_NODES } from './flows';

type NodeSpec = [id: string, type: string, data?: Record<string, unknown>, name?: string];
type EdgeSpec = [source: string, exit: string, target: string];

const graph = (nodes: NodeSpec[], edges: EdgeSpec[]): FlowGraph =>
  flowGraph.parse({
    nodes: nodes.map(([id, type, data, name]) => ({ id, type, name: name ?? '', ...(data ? { data } : {}) })),
    edges: edges.map(([source, sourceHandle, target], i) => ({ id: `e${i}`, source, sourceHandle, target })),
  });

const codes = (issues: FlowIssue[]) => issues.map((i) => `${i.severity}:${i.code}:${i.nodeId ?? '-'}`);
const errors = (issues: FlowIssue[]) => issues.filter((i) => i.severity === 'error');

const MENU = {
  prompt: '请按键',
  options: [
    { key: '1', label: '账单' },
    { key: '2', label: '报修' },
  ],
};

/** A small hotline that uses most node types with every exit connected. */
const HOTLINE = graph(
  [
    ['start', 'start'],
    [
      'hours',
      'condition',
      {
        branches: [{ id: 'open', name: '营业时间内', rules: [{ kind: 'business_hours' }] }],
      },
    ],
    ['welcome', 'play', { text: '您好，欢迎致电。' }],
    ['menu', 'menu', { ...MENU, options: [...MENU.options, { key: '0', label: '人工' }] }, '主菜单'],
    [
      'lookup',
      'http',
      {
        url: 'https://crm.example.com/bill?phone={{caller}}',
        mappings: [{ variable: 'balance', path: 'data.balance' }],
      },
    ],
    ['bill', 'play', { text: '您的余额是{{balance}}元。' }],
    ['sorry', 'play', { text: '查询失败。' }],
    [
      'ask',
      'speech',
      {
        prompt: '请描述故障',
        intents: [{ id: 'net', name: '断网', keywords: ['没网', '断网'] }],
      },
    ],
    ['ai', 'assistant', { assistantId: 'asst-1' }],
    ['desk', 'transfer', { target: '4001234567' }],
    ['vm', 'voicemail'],
    ['text', 'sms', { content: '感谢来电' }],
    ['bye', 'hangup', { text: '再见', reason: '结束' }],
  ],
  [
    ['start', 'next', 'hours'],
    ['hours', 'branch:open', 'welcome'],
    ['hours', 'else', 'vm'],
    ['welcome', 'next', 'menu'],
    ['menu', 'key:1', 'lookup'],
    ['menu', 'key:2', 'ask'],
    ['menu', 'key:0', 'desk'],
    ['menu', 'invalid', 'bye'],
    ['menu', 'timeout', 'menu'],
    ['lookup', 'success', 'bill'],
    ['lookup', 'failure', 'sorry'],
    ['bill', 'next', 'text'],
    ['sorry', 'next', 'menu'],
    ['ask', 'intent:net', 'ai'],
    ['ask', 'nomatch', 'ai'],
    ['ask', 'timeout', 'bye'],
    ['ai', 'next', 'text'],
    ['ai', 'transfer', 'desk'],
    ['desk', 'busy', 'vm'],
    ['desk', 'no_answer', 'vm'],
    ['desk', 'failed', 'vm'],
    ['vm', 'next', 'text'],
    ['text', 'next', 'bye'],
  ],
);

describe('validateFlow', () => {
  it('a complete flow has no errors and no warnings', () => {
    expect(validateFlow(HOTLINE, { flowId: 'flow-1' })).toEqual([]);
  });

  it('no_start and many_starts', () => {
    const none = validateFlow(graph([['a', 'hangup']], []));
    expect(codes(none)).toEqual(['error:no_start:-']);
    expect(none[0]?.message).toBe('流程缺少「开始」节点');
    const two = validateFlow(
      graph(
        [
          ['s1', 'start'],
          ['s2', 'start'],
          ['end', 'hangup'],
        ],
        [
          ['s1', 'next', 'end'],
          ['s2', 'next', 'end'],
        ],
      ),
    );
    expect(codes(two)).toContain('error:many_starts:s2');
  });

  it('unreachable: a node the start cannot lead to', () => {
    const issues = validateFlow(
      graph(
        [
          ['start', 'start'],
          ['end', 'hangup'],
          ['orphan', 'hangup', {}, '孤儿节点'],
        ],
        [['start', 'next', 'end']],
      ),
    );
    expect(codes(issues)).toEqual(['error:unreachable:orphan']);
    expect(issues[0]?.message).toBe('「孤儿节点」无法从「开始」到达');
  });

  it('exit_unconnected names the exit', () => {
    const issues = validateFlow(
      graph(
        [
          ['start', 'start'],
          ['menu', 'menu', MENU, '主菜单'],
          ['end', 'hangup'],
        ],
        [
          ['start', 'next', 'menu'],
          ['menu', 'key:1', 'end'],
          ['menu', 'key:2', 'end'],
          ['menu', 'invalid', 'end'],
        ],
      ),
    );
    expect(codes(issues)).toEqual(['error:exit_unconnected:menu']);
    expect(issues[0]?.message).toBe('「主菜单」的出口「超时」未连接');
  });

  it.each<[string, string, Record<string, unknown>, string]>([
    ['play without text or audio', 'play', { text: '' }, '请填写放音内容或上传音频'],
    ['menu without a prompt', 'menu', { ...MENU, prompt: '' }, '请填写菜单提示音'],
    ['collect without a prompt', 'collect', { prompt: '' }, '请填写收号提示音'],
    [
      'collect with min > max',
      'collect',
      { prompt: '请输入', minDigits: 6, maxDigits: 4 },
      '最少位数不能大于最多位数',
    ],
    ['speech without intents', 'speech', { prompt: '请说' }, '请至少添加一个意图'],
    [
      'speech intent without keywords',
      'speech',
      { prompt: '请说', intents: [{ id: 'a', name: '报修', keywords: [] }] },
      '意图「报修」没有关键词',
    ],
    ['condition without branches', 'condition', {}, '请至少添加一个分支'],
    [
      'condition branch without rules',
      'condition',
      { branches: [{ id: 'b', name: '白天', rules: [] }] },
      '分支「白天」没有条件',
    ],
    [
      'date range from after to',
      'condition',
      {
        branches: [
          { id: 'b', name: '活动', rules: [{ kind: 'date_range', from: '2026-12-31', to: '2026-01-01' }] },
        ],
      },
      '开始日期不能晚于结束日期',
    ],
    ['assistant not chosen', 'assistant', {}, '请选择智能小助手'],
    ['transfer without target', 'transfer', {}, '请填写转接号码或 SIP 地址'],
    [
      'transfer custom caller id empty',
      'transfer',
      { target: '10086', callerId: 'custom' },
      '请填写外显号码',
    ],
    ['sms without content', 'sms', {}, '请填写短信内容'],
    ['sms without recipient', 'sms', { to: '', content: '你好' }, '请填写接收号码'],
    ['http without url', 'http', {}, '请填写请求地址'],
    ['http with another scheme', 'http', { url: 'ftp://x' }, '请求地址须以 http:// 或 https:// 开头'],
    ['http GET with a body', 'http', { url: 'https://x.cn', body: '{}' }, 'GET 请求不能带请求体'],
    [
      'http default result not JSON',
      'http',
      { url: 'https://x.cn', defaultResult: '{oops' },
      '默认结果须为 JSON',
    ],
    ['set without assignments', 'set', {}, '请至少设置一个变量'],
    ['subflow not chosen', 'subflow', {}, '请选择子流程'],
  ])('missing_setting: %s', (_, type, data, message) => {
    const issues = validateFlow(
      graph(
        [
          ['start', 'start'],
          ['n', type, data, '节点'],
        ],
        [['start', 'next', 'n']],
      ),
    );
    const missing = issues.filter((i) => i.code === 'missing_setting');
    expect(missing.map((i) => i.message)).toContain(`「节点」：${message}`);
    expect(missing.every((i) => i.nodeId === 'n' && i.severity === 'error')).toBe(true);
  });

  it('a http url that starts with a variable is accepted', () => {
    const issues = validateFlow(
      graph(
        [
          ['start', 'start'],
          ['n', 'http', { url: '{{base}}/x' }],
        ],
        [['start', 'next', 'n']],
      ),
    );
    expect(issues.filter((i) => i.code === 'missing_setting')).toEqual([]);
  });

  it('variable_unset is a warning, only when no path before the node sets the variable', () => {
    const flow = graph(
      [
        ['start', 'start'],
        ['early', 'play', { text: '订单{{order}}，来电{{caller}}' }, '太早'],
        ['menu', 'menu', MENU],
        ['set', 'set', { assignments: [{ variable: 'order', value: 'A1' }] }],
        ['late', 'play', { text: '订单{{order}}' }],
        [
          'check',
          'condition',
          {
            branches: [
              {
                id: 'b',
                name: 'b',
                rules: [{ kind: 'variable', variable: 'level', op: 'eq', value: 'VIP' }],
              },
            ],
          },
          '判断',
        ],
        ['end', 'hangup'],
      ],
      [
        ['start', 'next', 'early'],
        ['early', 'next', 'menu'],
        ['menu', 'key:1', 'set'],
        ['menu', 'key:2', 'late'],
        ['menu', 'invalid', 'end'],
        ['menu', 'timeout', 'end'],
        ['set', 'next', 'late'],
        ['late', 'next', 'check'],
        ['check', 'branch:b', 'end'],
        ['check', 'else', 'end'],
      ],
    );
    const issues = validateFlow(flow);
    expect(errors(issues)).toEqual([]);
    expect(codes(issues)).toEqual(['warning:variable_unset:early', 'warning:variable_unset:check']);
    expect(issues[0]?.message).toBe('「太早」使用的变量 {{order}} 在此之前没有被赋值，将按空值处理');
    expect(issues[1]?.message).toContain('{{level}}');
  });

  it('endless_loop: a cycle with no node that waits for the caller', () => {
    const spinning = validateFlow(
      graph(
        [
          ['start', 'start'],
          ['a', 'play', { text: '一' }, '甲'],
          ['b', 'set', { assignments: [{ variable: 'x', value: '1' }] }, '乙'],
        ],
        [
          ['start', 'next', 'a'],
          ['a', 'next', 'b'],
          ['b', 'next', 'a'],
        ],
      ),
    );
    expect(codes(spinning)).toEqual(['error:endless_loop:a']);
    expect(spinning[0]?.message).toContain('甲');
    expect(spinning[0]?.message).toContain('乙');
    const self = validateFlow(
      graph(
        [
          ['start', 'start'],
          ['a', 'set', { assignments: [{ variable: 'x', value: '1' }] }],
        ],
        [
          ['start', 'next', 'a'],
          ['a', 'next', 'a'],
        ],
      ),
    );
    expect(codes(self)).toEqual(['error:endless_loop:a']);
    // The hotline loops back to its menu (timeout, a failed lookup): the menu waits, so that is fine.
    expect(codes(validateFlow(HOTLINE)).filter((c) => c.includes('endless_loop'))).toEqual([]);
  });

  it('http_no_failure instead of a plain unconnected exit for an HTTP node', () => {
    const issues = validateFlow(
      graph(
        [
          ['start', 'start'],
          ['api', 'http', { url: 'https://crm.example.com' }, '查询'],
          ['end', 'hangup'],
        ],
        [
          ['start', 'next', 'api'],
          ['api', 'success', 'end'],
        ],
      ),
    );
    expect(codes(issues)).toEqual(['error:http_no_failure:api']);
    expect(issues[0]?.message).toContain('没有连接失败出口');
  });

  it('menu_too_few: a menu needs two options', () => {
    const issues = validateFlow(
      graph(
        [
          ['start', 'start'],
          ['menu', 'menu', { prompt: '请按键', options: [{ key: '1' }] }],
          ['end', 'hangup'],
        ],
        [
          ['start', 'next', 'menu'],
          ['menu', 'key:1', 'end'],
          ['menu', 'invalid', 'end'],
          ['menu', 'timeout', 'end'],
        ],
      ),
    );
    expect(codes(issues)).toEqual(['error:menu_too_few:menu']);
  });

  it('duplicate_key: menu keys, the repeat key, intents and branches', () => {
    const issues = validateFlow(
      graph(
        [
          ['start', 'start'],
          ['menu', 'menu', { prompt: '请按键', options: [{ key: '1' }, { key: '1' }, { key: '*' }] }, '菜单'],
          [
            'ask',
            'speech',
            {
              prompt: '请说',
              intents: [
                { id: 'a', name: '报修', keywords: ['坏'] },
                { id: 'a', name: '报修二', keywords: ['断'] },
              ],
            },
          ],
          [
            'check',
            'condition',
            {
              branches: [
                { id: 'x', name: '甲', rules: [{ kind: 'weekday' }] },
                { id: 'x', name: '乙', rules: [{ kind: 'weekday' }] },
              ],
            },
          ],
        ],
        [
          ['start', 'next', 'menu'],
          ['menu', 'key:1', 'ask'],
          ['menu', 'key:*', 'ask'],
          ['menu', 'invalid', 'ask'],
          ['menu', 'timeout', 'ask'],
          ['ask', 'intent:a', 'check'],
          ['ask', 'nomatch', 'check'],
          ['ask', 'timeout', 'check'],
        ],
      ),
    );
    const duplicates = issues.filter((i) => i.code === 'duplicate_key').map((i) => i.message);
    expect(duplicates).toEqual([
      '「菜单」的按键 1 重复',
      '「菜单」的按键 * 与重听键相同',
      '「语音识别」的意图「报修二」重复',
      '「条件分支」的分支「乙」重复',
    ]);
  });

  it('bad_pattern: collect patterns and regex rules that do not compile', () => {
    const issues = validateFlow(
      graph(
        [
          ['start', 'start'],
          ['digits', 'collect', { prompt: '请输入', pattern: '([0-9]' }, '收号'],
          [
            'check',
            'condition',
            {
              branches: [
                {
                  id: 'b',
                  name: 'b',
                  match: 'any',
                  rules: [
                    { kind: 'variable', variable: 'digits', op: 'regex', value: '[' },
                    { kind: 'caller', op: 'regex', value: '^1(3' },
                  ],
                },
              ],
            },
          ],
          ['end', 'hangup'],
        ],
        [
          ['start', 'next', 'digits'],
          ['digits', 'next', 'check'],
          ['digits', 'invalid', 'end'],
          ['digits', 'timeout', 'end'],
          ['check', 'branch:b', 'end'],
          ['check', 'else', 'end'],
        ],
      ),
    );
    expect(codes(issues)).toEqual([
      'error:bad_pattern:digits',
      'error:bad_pattern:check',
      'error:bad_pattern:check',
    ]);
    expect(issues[0]?.message).toBe('「收号」的正则表达式「([0-9]」无效');
  });

  it('dangling_edge: to a missing node, or from an exit that no longer exists', () => {
    const issues = validateFlow(
      graph(
        [
          ['start', 'start'],
          ['menu', 'menu', MENU, '菜单'],
          ['end', 'hangup'],
        ],
        [
          ['start', 'next', 'menu'],
          ['menu', 'key:1', 'end'],
          ['menu', 'key:2', 'end'],
          ['menu', 'key:9', 'end'],
          ['menu', 'invalid', 'gone'],
          ['menu', 'timeout', 'end'],
        ],
      ),
    );
    expect(codes(issues)).toEqual([
      'error:dangling_edge:menu',
      'error:dangling_edge:menu',
      'error:exit_unconnected:menu',
    ]);
    expect(issues.map((i) => i.message)).toContain('「菜单」有连线来自已删除的出口');
  });

  it('self_subflow: a flow may not call itself', () => {
    const flow = graph(
      [
        ['start', 'start'],
        ['sub', 'subflow', { flowId: 'flow-1' }, '子流程'],
        ['end', 'hangup'],
      ],
      [
        ['start', 'next', 'sub'],
        ['sub', 'next', 'end'],
      ],
    );
    expect(codes(validateFlow(flow, { flowId: 'flow-1' }))).toEqual(['error:self_subflow:sub']);
    expect(validateFlow(flow, { flowId: 'flow-2' })).toEqual([]);
  });

  it(`a ${MAX_FLOW_NODES}-node flow with loops completes validation without errors`, () => {
    // Groups of menu → play / set → condition, each condition looping back or going on; node
    // order reversed so the variable fixpoint cannot finish in one pass.
    const nodes: NodeSpec[] = [['start', 'start']];
    const edges: EdgeSpec[] = [['start', 'next', 'm0']];
    const groups = Math.floor((MAX_FLOW_NODES - 2) / 4);
    for (let i = 0; i < groups; i++) {
      const next = i + 1 < groups ? `m${i + 1}` : 'end';
      nodes.push(
        [`m${i}`, 'menu', { prompt: `请按键{{v${i > 0 ? i - 1 : 0}}}`, options: MENU.options }],
        [`p${i}`, 'play', { text: `第${i}组` }],
        [`s${i}`, 'set', { assignments: [{ variable: `v${i}`, value: '{{digits}}' }] }],
        [
          `c${i}`,
          'condition',
          {
            branches: [
              {
                id: 'go',
                name: '继续',
                rules: [{ kind: 'variable', variable: `v${i}`, op: 'eq', value: '1' }],
              },
            ],
          },
        ],
      );
      edges.push(
        [`m${i}`, 'key:1', `p${i}`],
        [`m${i}`, 'key:2', `s${i}`],
        [`m${i}`, 'invalid', `m${i}`],
        [`m${i}`, 'timeout', 'end'],
        [`p${i}`, 'next', `s${i}`],
        [`s${i}`, 'next', `c${i}`],
        [`c${i}`, 'branch:go', next],
        [`c${i}`, 'else', `m${i}`],
      );
    }
    nodes.push(['end', 'hangup']);
    const big = graph([nodes[0] as NodeSpec, ...nodes.slice(1).reverse()], edges);
    expect(big.nodes.length).toBeGreaterThan(MAX_FLOW_NODES - 5);
    const issues = validateFlow(big);
    expect(errors(issues)).toEqual([]);
    // Every variable read is set on some path before it (the loops bring each back round).
    expect(issues).toEqual([]);
  });
});
