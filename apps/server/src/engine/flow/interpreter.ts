import { performance } from 'node:perf_hooks';
import {
  type CallTurn,
  type FlowNode,
  type FlowNodeOf,
  type FlowNodeType,
  type FlowStep,
  flowNodeTitle,
  renderFlowTemplate,
} from '@callpilot/contracts';
import type { PlayResult, Utterance } from '../telephony/types';
import { chinaClock, flowPattern, pickBranch } from './conditions';
import { keysOf, normaliseSpeech, untilHash } from './input';
import type {
  FlowAssistantOutcome,
  FlowDeps,
  FlowEvents,
  FlowHttpResult,
  FlowRunInput,
  FlowRunResult,
  LoadedFlow,
} from './types';

/** A call that executes more nodes than this is a runaway (a loop validation could not see). */
export const MAX_NODE_EXECUTIONS = 1000;
/** Subflows calling subflows: deeper than this is almost surely a cycle between flows. */
export const MAX_SUBFLOW_DEPTH = 5;
/** A voicemail ends after this much silence once the caller has spoken. */
export const VOICEMAIL_SILENCE_MS = 5000;
/** Presses of a menu's repeat key per visit before they count as invalid input. */
const MAX_REPEATS = 10;

const TRANSFER_OUTCOME_LABELS = { busy: '忙线', no_answer: '无人接听', failed: '转接失败' } as const;

/**
 * The interpreter's own CPU time: performance.now() around the synchronous stretches between
 * awaits, so the leg, the clock and the deps are excluded (as CpuMeter in call-session.ts).
 * Pausing or resuming twice is harmless: turns reach `emit` both from the flow and from inside
 * an assistant node, where the meter is already paused, and every await resumes it after.
 */
class CpuMeter {
  private since = 0;
  private total = 0;
  running = false;
  resume() {
    if (this.running) return;
    this.running = true;
    this.since = performance.now();
  }
  pause() {
    if (!this.running) return;
    this.running = false;
    this.total += performance.now() - this.since;
  }
  take(): number {
    const value = this.total;
    this.total = 0;
    return value;
  }
}

/** Thrown to end the call; caught at the top and never leaves runFlow. */
class CallOver extends Error {
  /** The step of the node the call ended in has been written (outer subflow nodes still mark theirs). */
  marked = false;
  constructor(
    readonly endReason: FlowRunResult['endReason'],
    readonly hangupBy: FlowRunResult['hangupBy'],
    /** What the node's step says about the end (appended to its own detail). */
    readonly note: string,
    readonly error: unknown = null,
    readonly label = '',
  ) {
    super(endReason);
  }
}

/** One flow being run: the call's own (depth 0) or a subflow. */
interface Frame {
  flow: LoadedFlow;
  depth: number;
  nodes: Map<string, FlowNode>;
  /** `${source}\u0000${exit}` → target node id. */
  edges: Map<string, string>;
}

/** The step of the node running now, filled in by its handler. */
interface StepDraft {
  node: FlowNode;
  frame: Frame;
  startedAt: number;
  inputs: string[];
  output: Record<string, string>;
  detail: string;
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));
const joinDetail = (a: string, b: string) => (a && b ? `${a}；${b}` : a || b);
const retriesNote = (n: number) => (n > 0 ? `，重试 ${n} 次` : '');

function frameOf(flow: LoadedFlow, depth: number): Frame {
  const nodes = new Map<string, FlowNode>();
  for (const node of flow.graph.nodes) nodes.set(node.id, node);
  const edges = new Map<string, string>();
  for (const edge of flow.graph.edges) {
    const key = `${edge.source}\u0000${edge.sourceHandle}`;
    // Two edges from one exit (a draft may have them): the first drawn wins, as the editor shows.
    if (!edges.has(key)) edges.set(key, edge.target);
  }
  return { flow, depth, nodes, edges };
}

/** A value from a JSON body by a dotted path: `data.items.0.name`, `items[0].name`, `$.data`. */
export function readJsonPath(source: unknown, path: string): unknown {
  const parts = path
    .trim()
    .replace(/^\$\.?/, '')
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')
    .filter((p) => p !== '');
  let current: unknown = source;
  for (const part of parts) {
    if (current === null || current === undefined || typeof current !== 'object') return undefined;
    if (!Object.hasOwn(current, part)) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

const asVariable = (value: unknown): string => {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
};

/** A JSON body template: variables go in JSON-escaped, so a quote in what a caller said cannot break it. */
export function renderJsonTemplate(text: string, variables: Readonly<Record<string, string>>): string {
  return text.replace(/\{\{\s*([\p{L}_][\p{L}\p{N}_]{0,31}(?:\.[\p{L}\p{N}_]{1,32})?)\s*\}\}/gu, (_, name) =>
    JSON.stringify(variables[name] ?? '').slice(1, -1),
  );
}

/**
 * A URL template: a variable that starts the URL is its base and goes in as it is; every other
 * one is percent-encoded, so what a caller said cannot add path segments or query parameters.
 */
export function renderUrlTemplate(text: string, variables: Readonly<Record<string, string>>): string {
  const trimmed = text.trim();
  return trimmed.replace(
    /\{\{\s*([\p{L}_][\p{L}\p{N}_]{0,31}(?:\.[\p{L}\p{N}_]{1,32})?)\s*\}\}/gu,
    (_, name: string, offset: number) =>
      offset === 0 ? (variables[name] ?? '') : encodeURIComponent(variables[name] ?? ''),
  );
}

/** The China-time variables every node can read (refreshed as each node starts). */
function timeVariables(ms: number) {
  const iso = new Date(ms + 8 * 3600_000).toISOString();
  const date = iso.slice(0, 10);
  const time = iso.slice(11, 16);
  return { now: `${date} ${time}`, date, time, weekday: String(chinaClock(ms).weekday) };
}

/** Normalised keywords per intent list, computed once per loaded graph. */
const keywordCache = new WeakMap<object, string[][]>();
function intentKeywords(node: FlowNodeOf<'speech'>): string[][] {
  let cached = keywordCache.get(node.data.intents);
  if (!cached) {
    cached = node.data.intents.map((i) => i.keywords.map(normaliseSpeech).filter(Boolean));
    keywordCache.set(node.data.intents, cached);
  }
  return cached;
}

/**
 * Runs an IVR flow over an answered leg, from its 开始 node until a node ends the call (挂机,
 * a transfer, the caller hanging up) or an exit leads nowhere. Every node becomes a FlowStep and
 * every line spoken or input heard a CallTurn, reported as they happen. It never throws: an
 * error ends the call as `failed` with the error in the result.
 */
export async function runFlow(
  input: FlowRunInput,
  deps: FlowDeps,
  events: FlowEvents = {},
): Promise<FlowRunResult> {
  const { leg } = input;
  const { clock } = deps;
  const meter = new CpuMeter();
  const path: FlowStep[] = [];
  const turns: CallTurn[] = [];
  const overheadMs: number[] = [];
  // No prototype: `{{constructor}}` in a prompt must read as an unset variable, not a function.
  const variables: Record<string, string> = Object.create(null);
  Object.assign(variables, input.variables ?? {}, {
    caller: input.caller,
    callee: input.callee,
    call_id: input.callId,
  });
  const speed = input.flow.graph.settings.voice.speed;
  const result: Pick<FlowRunResult, 'transfer' | 'assistant' | 'voicemail'> = {
    transfer: null,
    assistant: null,
    voicemail: null,
  };
  let executions = 0;
  let aborted = false;

  const onAbort = () => {
    aborted = true;
    void leg.hangup().catch(() => undefined);
  };
  if (input.signal?.aborted) onAbort();
  else input.signal?.addEventListener('abort', onAbort, { once: true });

  const offset = (at: number) => Math.max(0, Math.round(at - leg.answeredAt));
  const render = (text: string) => renderFlowTemplate(text, variables);

  const lineGone = (): CallOver | null => {
    if (leg.ended?.by === 'remote') return new CallOver('callee_hangup', 'callee', '来电者挂机');
    if (aborted || leg.ended) return new CallOver('failed', 'system', '通话被中止');
    return null;
  };
  const checkLine = () => {
    const gone = lineGone();
    if (gone) throw gone;
  };

  /**
   * Starts work outside the interpreter (the leg, the deps, event handlers) with the CPU meter
   * stopped. The meter runs only in synchronous stretches: every await in this file follows a
   * pause (here, or an own async function pausing on its way out) and is followed by a resume,
   * so the hop back from a promise, where other calls' code runs, is never counted.
   */
  const outside = <T>(work: () => Promise<T> | T): Promise<T> | T => {
    meter.pause();
    return work();
  };

  const emit = async (turn: Omit<CallTurn, 'index'>) => {
    const full: CallTurn = { index: turns.length, ...turn };
    turns.push(full);
    meter.pause();
    if (events.onTurn) await events.onTurn(full);
  };

  const setVariable = (step: StepDraft, name: string, value: string) => {
    variables[name] = value;
    step.output[name] = value;
  };

  const spoke = (text: string, played: PlayResult) =>
    emit({
      speaker: 'assistant',
      text,
      dtmf: null,
      startMs: offset(played.startedAt),
      endMs: offset(played.endedAt),
      interrupted: played.interrupted,
      latency: null,
      segments: [],
    });

  /** Says a template line (nothing when it renders empty); `check`: end the run if the line went meanwhile. */
  const say = async (template: string, interruptible: boolean, check = true): Promise<PlayResult | null> => {
    try {
      const text = render(template).trim();
      if (!text || leg.ended) {
        if (check) checkLine();
        return null;
      }
      const played = await outside(() => leg.say(text, { interruptible, speed }));
      meter.resume();
      await spoke(text, played);
      meter.resume();
      if (check) checkLine();
      return played;
    } finally {
      meter.pause();
    }
  };

  const listen = async (
    node: FlowNode,
    kind: 'digits' | 'speech' | 'any',
    timeoutMs: number,
    maxDigits?: number,
  ): Promise<Utterance | null> => {
    try {
      events.onWaiting?.({ nodeId: node.id, kind, timeoutSec: timeoutMs / 1000 });
      const heard = await outside(() =>
        leg.listen(maxDigits === undefined ? { timeoutMs } : { timeoutMs, maxDigits }),
      );
      meter.resume();
      if (heard) {
        await heardTurn(heard);
        meter.resume();
      }
      checkLine();
      return heard;
    } finally {
      meter.pause();
    }
  };

  const heardTurn = (heard: Utterance) =>
    emit({
      speaker: 'callee',
      text: heard.text,
      dtmf: heard.dtmf,
      startMs: offset(heard.startedAt),
      endMs: offset(heard.endedAt),
      interrupted: false,
      latency: null,
      segments: [],
    });

  const finishStep = async (step: StepDraft, exit: string | null) => {
    const now = clock.now();
    const done: FlowStep = {
      nodeId: step.node.id,
      nodeType: step.node.type,
      nodeName: flowNodeTitle(step.node),
      atMs: offset(step.startedAt),
      durationMs: Math.max(0, Math.round(now - step.startedAt)),
      exit,
      input: step.inputs.length > 0 ? step.inputs.join(' / ') : null,
      output: step.output,
      detail: step.detail,
      flowId: step.frame.depth > 0 ? step.frame.flow.flowId : null,
    };
    path.push(done);
    meter.pause();
    overheadMs.push(meter.take());
    if (events.onStep) await events.onStep(done, { ...variables });
  };

  // ---- nodes -----------------------------------------------------------------------------------

  /**
   * A node's behaviour: its exit. Async handlers pause the meter on their way out (finally), as
   * every async function here does; nodes that never wait return at once.
   */
  type Handler<T extends FlowNodeType> = (node: FlowNodeOf<T>, step: StepDraft) => string | Promise<string>;

  const start: Handler<'start'> = (_node, step) => {
    step.detail = step.frame.depth > 0 ? `进入子流程「${step.frame.flow.name}」` : '来电接通';
    return 'next';
  };

  const play: Handler<'play'> = async (node, step) => {
    try {
      const d = node.data;
      if (d.audioId && deps.audio && leg.playAudio) {
        const audioId = d.audioId;
        const pcm = await outside(() => deps.audio?.(audioId).catch(() => null) ?? null);
        meter.resume();
        checkLine();
        if (pcm && leg.playAudio) {
          const playAudio = leg.playAudio.bind(leg);
          const played = await outside(() => playAudio(pcm, { interruptible: d.interruptible }));
          meter.resume();
          await spoke(render(d.text).trim() || '（播放录音）', played);
          meter.resume();
          step.detail = played.interrupted ? '播放录音（被打断）' : '播放录音';
          checkLine();
          return 'next';
        }
        step.detail = '录音不可用，改为朗读文字';
      }
      const played = await say(d.text, d.interruptible);
      meter.resume();
      step.detail = joinDetail(step.detail, played?.interrupted ? '放音（被打断）' : '放音');
      return 'next';
    } finally {
      meter.pause();
    }
  };

  const menu: Handler<'menu'> = async (node, step) => {
    try {
      const d = node.data;
      const maxDigits = Math.max(1, ...d.options.map((o) => o.key.length));
      let failures = 0;
      let repeats = 0;
      let lastInvalid = '';
      const repeated = () => (repeats > 0 ? `，重听 ${repeats} 次` : '');
      for (;;) {
        await say(d.prompt, d.interruptible);
        meter.resume();
        const heard = await listen(node, 'digits', d.timeoutSec * 1000, maxDigits);
        meter.resume();
        let failure: 'invalid' | 'timeout' = 'timeout';
        if (heard) {
          const keys = keysOf(heard);
          step.inputs.push(keys ?? heard.text);
          // `#` finishes a multi-digit key; what follows it is not part of the choice.
          const entry = keys === null ? null : untilHash(keys).keys;
          if (entry) setVariable(step, 'digits', entry);
          if (entry && d.repeatKey && entry === d.repeatKey && repeats < MAX_REPEATS) {
            repeats++;
            continue;
          }
          const option = entry ? d.options.find((o) => o.key === entry) : undefined;
          if (option && entry) {
            step.detail = `按键 ${entry}${option.label ? ` ${option.label}` : ''}${retriesNote(failures)}${repeated()}`;
            return `key:${entry}`;
          }
          failure = 'invalid';
          lastInvalid = keys ?? heard.text;
        }
        failures++;
        if (failures > d.maxRetries) {
          step.detail =
            failure === 'invalid'
              ? `输入错误（${lastInvalid}）${retriesNote(failures - 1)}${repeated()}`
              : `超时${retriesNote(failures - 1)}${repeated()}`;
          return failure;
        }
        await say(failure === 'invalid' ? d.invalidPrompt : d.timeoutPrompt, false);
        meter.resume();
      }
    } finally {
      meter.pause();
    }
  };

  const collect: Handler<'collect'> = async (node, step) => {
    try {
      const d = node.data;
      const pattern = d.pattern ? flowPattern(d.pattern) : null;
      let failures = 0;
      let why = '';
      for (;;) {
        await say(d.prompt, true);
        meter.resume();
        const heard = await listen(node, 'digits', d.timeoutSec * 1000, d.maxDigits);
        meter.resume();
        let failure: 'invalid' | 'timeout' = 'timeout';
        if (heard) {
          failure = 'invalid';
          const keys = keysOf(heard);
          step.inputs.push(keys ?? heard.text);
          const entry = keys === null ? null : d.finishOnHash ? untilHash(keys).keys : keys;
          if (entry === null || !/^[0-9*]+$/.test(entry)) why = `输入错误（${keys ?? heard.text}）`;
          else if (entry.length < d.minDigits || entry.length > d.maxDigits)
            why = `位数不符（${entry.length} 位）`;
          else if (pattern && !pattern.test(entry)) why = '不符合校验规则';
          else {
            setVariable(step, d.variable, entry);
            setVariable(step, 'digits', entry);
            step.detail = `收号 ${entry}${retriesNote(failures)}`;
            return 'next';
          }
        }
        failures++;
        if (failures > d.maxRetries) {
          step.detail =
            failure === 'invalid' ? `${why}${retriesNote(failures - 1)}` : `超时${retriesNote(failures - 1)}`;
          return failure;
        }
        await say(failure === 'invalid' ? d.invalidPrompt : d.timeoutPrompt, false);
        meter.resume();
      }
    } finally {
      meter.pause();
    }
  };

  const speech: Handler<'speech'> = async (node, step) => {
    try {
      const d = node.data;
      const keywords = intentKeywords(node);
      let failures = 0;
      for (;;) {
        await say(d.prompt, true);
        meter.resume();
        const heard = await listen(node, 'speech', d.timeoutSec * 1000);
        meter.resume();
        let failure: 'nomatch' | 'timeout' = 'timeout';
        if (heard) {
          failure = 'nomatch';
          const text = heard.text.trim() || (heard.dtmf ?? '');
          step.inputs.push(text);
          setVariable(step, d.variable, text);
          setVariable(step, 'speech', text);
          const said = normaliseSpeech(text);
          const index = keywords.findIndex((list) => list.some((k) => said.includes(k)));
          const intent = index >= 0 ? d.intents[index] : undefined;
          if (intent) {
            step.detail = `匹配意图「${intent.name}」${retriesNote(failures)}`;
            return `intent:${intent.id}`;
          }
        }
        failures++;
        if (failures > d.maxRetries) {
          step.detail =
            failure === 'nomatch'
              ? `未匹配意图${retriesNote(failures - 1)}`
              : `超时${retriesNote(failures - 1)}`;
          return failure;
        }
        await say(d.retryPrompt, false);
        meter.resume();
      }
    } finally {
      meter.pause();
    }
  };

  const condition: Handler<'condition'> = (node, step) => {
    const branch = pickBranch(node, variables, clock.now());
    if (branch) {
      step.detail = `命中「${branch.name}」`;
      return `branch:${branch.id}`;
    }
    step.detail = '均未命中，走「其他」';
    return 'else';
  };

  const assistant: Handler<'assistant'> = async (node, step) => {
    try {
      const d = node.data;
      const assistantVariables: Record<string, string> = {};
      for (const v of d.variables) assistantVariables[v.name] = render(v.value);
      let outcome: FlowAssistantOutcome;
      let failure = '';
      if (!d.assistantId) {
        failure = '未选择智能小助手';
        outcome = { outcome: 'failed', grade: null, assistantId: '', assistantName: '', version: null };
      } else {
        try {
          outcome = await outside(() =>
            deps.runAssistant({
              assistantId: d.assistantId,
              version: d.version,
              variables: assistantVariables,
              leg,
              onTurn: (turn) => emit(turn),
              signal: input.signal,
            }),
          );
          meter.resume();
        } catch (err) {
          meter.resume();
          failure = messageOf(err);
          outcome = {
            outcome: 'failed',
            grade: null,
            assistantId: d.assistantId,
            assistantName: '',
            version: d.version,
          };
        }
      }
      if (d.assistantId) result.assistant = outcome;
      setVariable(step, 'assistant.grade', outcome.grade ?? '');
      setVariable(step, 'assistant.outcome', outcome.outcome);
      const name = outcome.assistantName ? `「${outcome.assistantName}」` : '';
      const grade = outcome.grade ? `，意向 ${outcome.grade}` : '';
      switch (outcome.outcome) {
        case 'transfer':
          step.detail = `小助手${name}：客户要求转人工${grade}`;
          checkLine();
          return 'transfer';
        case 'completed':
          step.detail = `小助手${name}结束${grade}`;
          checkLine();
          return 'next';
        case 'hangup':
          step.detail = `小助手${name}通话中${grade}`;
          checkLine();
          // The assistant saw the line go before the leg reports it: the caller is gone either way.
          throw new CallOver('callee_hangup', 'callee', '来电者挂机');
        default:
          // A caller must not be dropped because an assistant could not run: the flow goes on.
          step.detail = `小助手运行失败${failure ? `：${failure}` : ''}，继续流程`;
          checkLine();
          return 'next';
      }
    } finally {
      meter.pause();
    }
  };

  const transfer: Handler<'transfer'> = async (node, step) => {
    try {
      const d = node.data;
      const target = render(d.target).trim();
      if (!target) {
        setVariable(step, 'transfer.outcome', 'failed');
        step.detail = '未填写转接号码';
        return 'failed';
      }
      const callerId =
        d.callerId === 'caller'
          ? (variables.caller ?? '')
          : d.callerId === 'callee'
            ? (variables.callee ?? '')
            : render(d.callerIdNumber).trim();
      await say(d.prompt, false);
      meter.resume();
      const outcome = await outside(() =>
        leg.transfer(target, {
          ...(callerId ? { callerId } : {}),
          ringTimeoutMs: d.ringTimeoutSec * 1000,
        }),
      );
      meter.resume();
      const at = clock.now();
      if (outcome.ok) {
        result.transfer = { number: target, at, ok: true };
        step.detail = `已转接 ${target}`;
        throw new CallOver('transferred', 'assistant', '');
      }
      result.transfer = { number: target, at, ok: false };
      const failure = outcome.outcome ?? 'failed';
      setVariable(step, 'transfer.outcome', failure);
      step.detail = `转接 ${target}：${TRANSFER_OUTCOME_LABELS[failure]}${outcome.detail ? `（${outcome.detail}）` : ''}`;
      checkLine();
      return failure;
    } finally {
      meter.pause();
    }
  };

  const voicemail: Handler<'voicemail'> = async (node, step) => {
    try {
      const d = node.data;
      await say(d.prompt, false);
      meter.resume();
      const startAt = clock.now();
      const deadline = startAt + d.maxSeconds * 1000;
      const texts: string[] = [];
      let heardAny = false;
      let ending = '';
      for (;;) {
        const left = deadline - clock.now();
        if (left <= 0) {
          ending = '达到最长时长';
          break;
        }
        // Before the caller speaks, the whole length is theirs; after, a pause ends the message.
        const waitMs = heardAny ? Math.min(VOICEMAIL_SILENCE_MS, left) : left;
        events.onWaiting?.({ nodeId: node.id, kind: 'any', timeoutSec: waitMs / 1000 });
        const heard = await outside(() => leg.listen({ timeoutMs: waitMs }));
        meter.resume();
        if (heard) {
          heardAny = true;
          await heardTurn(heard);
          meter.resume();
          if (heard.text.trim()) texts.push(heard.text.trim());
          if (heard.dtmf?.includes('#')) {
            ending = '按 # 结束';
            break;
          }
        }
        // Hanging up is how most callers finish a message: it is still kept.
        if (leg.ended) break;
        if (!heard) {
          ending = heardAny ? '' : '未留言';
          break;
        }
      }
      const endAt = Math.min(clock.now(), leg.ended?.at ?? Number.POSITIVE_INFINITY);
      const seconds = Math.max(0, Math.round((endAt - startAt) / 1000));
      setVariable(step, 'voicemail.seconds', String(heardAny ? seconds : 0));
      if (heardAny) {
        result.voicemail = { startMs: offset(startAt), endMs: offset(endAt), text: texts.join('，') };
        if (texts.length > 0) step.inputs.push(texts.join('，'));
      }
      step.detail = heardAny ? `留言 ${seconds} 秒${ending ? `（${ending}）` : ''}` : ending;
      checkLine();
      return 'next';
    } finally {
      meter.pause();
    }
  };

  const sms: Handler<'sms'> = async (node, step) => {
    try {
      const to = render(node.data.to).trim();
      const content = render(node.data.content).trim();
      if (!to || !content) {
        step.detail = `短信未发送：${to ? '短信内容为空' : '接收号码为空'}`;
        return 'next';
      }
      try {
        await outside(() => deps.sendSms(to, content));
        meter.resume();
        step.detail = `短信已发送至 ${to}`;
      } catch (err) {
        meter.resume();
        // The caller is still on the line: a lost SMS is reported, the flow goes on.
        step.detail = `短信发送失败：${messageOf(err)}`;
      }
      checkLine();
      return 'next';
    } finally {
      meter.pause();
    }
  };

  const http: Handler<'http'> = async (node, step) => {
    try {
      const d = node.data;
      const headers: Record<string, string> = {};
      for (const h of d.headers) headers[h.name.trim()] = render(h.value);
      const body = d.method === 'GET' || !d.body.trim() ? null : renderJsonTemplate(d.body, variables);
      if (body !== null && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
        headers['content-type'] = 'application/json';
      const request = {
        method: d.method,
        url: renderUrlTemplate(d.url, variables),
        headers,
        body,
        timeoutMs: d.timeoutMs,
        ...(input.signal ? { signal: input.signal } : {}),
      };
      let response: FlowHttpResult;
      let attempts = 0;
      let totalMs = 0;
      for (;;) {
        attempts++;
        try {
          response = await outside(() => deps.http(request));
          meter.resume();
        } catch (err) {
          meter.resume();
          response = { ok: false, status: null, error: messageOf(err), ms: 0 };
        }
        checkLine();
        totalMs += response.ms;
        if (response.ok && response.status >= 200 && response.status < 300) break;
        // Worth another try: the network, a timeout or the server's own failure; never a refusal or a 4xx.
        const retryable =
          !response.ok && !response.refused && (response.status === null || response.status >= 500);
        if (!retryable || attempts > d.retries) break;
      }
      const success = response.ok && response.status >= 200 && response.status < 300;
      const ms = Math.round(totalMs);
      setVariable(step, 'http.status', response.status === null ? '' : String(response.status));
      setVariable(step, 'http.ms', String(ms));
      let source: unknown;
      let usedDefault = false;
      if (success && response.ok) source = response.body;
      else if (d.defaultResult.trim()) {
        try {
          source = JSON.parse(d.defaultResult);
          usedDefault = true;
        } catch {
          meter.resume();
          source = undefined;
        }
      }
      if (source !== undefined)
        for (const m of d.mappings) setVariable(step, m.variable, asVariable(readJsonPath(source, m.path)));
      const tries = attempts > 1 ? `，共请求 ${attempts} 次` : '';
      if (success) step.detail = `HTTP ${response.status} · ${ms} ms${tries}`;
      else {
        const what = response.ok ? `HTTP ${response.status}` : response.error;
        step.detail = `${what} · ${ms} ms${tries}${usedDefault ? '，使用默认结果' : ''}`;
      }
      return success ? 'success' : 'failure';
    } finally {
      meter.pause();
    }
  };

  const set: Handler<'set'> = (node, step) => {
    const shown: string[] = [];
    for (const a of node.data.assignments) {
      const value = render(a.value);
      setVariable(step, a.variable, value);
      shown.push(`${a.variable} = ${value}`);
    }
    const line = shown.join('，');
    step.detail = line.length > 80 ? `${line.slice(0, 79)}…` : line;
    return 'next';
  };

  const subflow: Handler<'subflow'> = async (node, step) => {
    try {
      const flowId = node.data.flowId;
      if (!flowId)
        throw new CallOver('failed', 'system', '未选择子流程', new Error('subflow node without a flow'));
      if (step.frame.depth >= MAX_SUBFLOW_DEPTH)
        throw new CallOver(
          'failed',
          'system',
          `子流程嵌套超过 ${MAX_SUBFLOW_DEPTH} 层，通话结束`,
          new Error(`subflows nested deeper than ${MAX_SUBFLOW_DEPTH}`),
        );
      let loaded: LoadedFlow;
      try {
        loaded = await outside(() => deps.loadSubflow(flowId));
        meter.resume();
      } catch (err) {
        meter.resume();
        throw new CallOver('failed', 'system', `子流程无法加载：${messageOf(err)}`, err);
      }
      checkLine();
      step.detail = `子流程「${loaded.name}」`;
      await runGraph(frameOf(loaded, step.frame.depth + 1));
      meter.resume();
      step.detail = `子流程「${loaded.name}」已返回`;
      return 'next';
    } finally {
      meter.pause();
    }
  };

  const hangup: Handler<'hangup'> = async (node, step) => {
    try {
      const reason = node.data.reason.trim();
      step.detail = reason || '挂机';
      // The decision is made: a caller hanging up during the goodbye changes who hung up, not why.
      await say(node.data.text, false, false);
      meter.resume();
      if (aborted) throw new CallOver('failed', 'system', '通话被中止');
      throw new CallOver('completed', leg.ended?.by === 'remote' ? 'callee' : 'assistant', '', null, reason);
    } finally {
      meter.pause();
    }
  };

  /** No exit: the walk returns to the calling flow, or ends the call in a flow called directly. */
  const returnNode: Handler<'return'> = (_node, step) => {
    step.detail = '返回上级流程';
    return 'return';
  };

  const handlers: { [T in FlowNodeType]: Handler<T> } = {
    start,
    play,
    menu,
    collect,
    speech,
    condition,
    assistant,
    transfer,
    voicemail,
    sms,
    http,
    set,
    subflow,
    return: returnNode,
    hangup,
  };
  const runNode = (node: FlowNode, step: StepDraft) =>
    (handlers[node.type] as Handler<FlowNodeType>)(node as FlowNodeOf<FlowNodeType>, step);

  // ---- the walk ---------------------------------------------------------------------------------

  /** Runs a flow from its start; returns when a subflow reaches its end, throws CallOver when the call ends. */
  async function runGraph(frame: Frame): Promise<void> {
    const first = frame.flow.graph.nodes.find((n) => n.type === 'start');
    if (!first)
      throw new CallOver(
        'failed',
        'system',
        `流程「${frame.flow.name}」缺少开始节点`,
        new Error(`flow ${frame.flow.flowId} has no start node`),
      );
    let node: FlowNode = first;
    for (;;) {
      const step: StepDraft = {
        node,
        frame,
        startedAt: clock.now(),
        inputs: [],
        output: {},
        detail: '',
      };
      let exit: string;
      try {
        if (++executions > MAX_NODE_EXECUTIONS)
          throw new CallOver(
            'failed',
            'system',
            `节点执行超过 ${MAX_NODE_EXECUTIONS} 次，疑似死循环，通话结束`,
            new Error(`more than ${MAX_NODE_EXECUTIONS} node executions`),
          );
        checkLine();
        Object.assign(variables, timeVariables(step.startedAt));
        const pending = runNode(node, step);
        // A node that never waits answers at once: no await, so no hop to count or lose.
        exit = typeof pending === 'string' ? pending : await pending;
        meter.resume();
      } catch (err) {
        meter.resume();
        const over =
          err instanceof CallOver
            ? err
            : (lineGone() ?? new CallOver('failed', 'system', `流程出错：${messageOf(err)}`, err));
        step.detail = joinDetail(step.detail, over.marked ? '通话在子流程中结束' : over.note);
        over.marked = true;
        // finishStep leaves the meter paused: the caller (a subflow node, or the top) resumes it.
        await finishStep(step, null);
        throw over;
      }
      const targetId = frame.edges.get(`${node.id}\u0000${exit}`);
      const target = targetId === undefined ? undefined : frame.nodes.get(targetId);
      if (!target) {
        // A subflow's loose end is its return to the flow that called it.
        if (frame.depth > 0) {
          await finishStep(step, node.type === 'return' ? null : exit);
          return;
        }
        if (node.type === 'return') step.detail = '流程结束';
        else step.detail = joinDetail(step.detail, '流程未连接下一步');
        await finishStep(step, node.type === 'return' ? null : exit);
        const over = new CallOver('completed', 'assistant', '');
        over.marked = true;
        throw over;
      }
      await finishStep(step, exit);
      meter.resume();
      node = target;
    }
  }

  let over: CallOver;
  meter.resume();
  try {
    await runGraph(frameOf(input.flow, 0));
    // runGraph at depth 0 only ends by throwing; this is a guard, not a path.
    over = new CallOver('completed', 'assistant', '');
  } catch (err) {
    over = err instanceof CallOver ? err : new CallOver('failed', 'system', '', err);
  } finally {
    meter.pause();
    input.signal?.removeEventListener('abort', onAbort);
  }
  // An abort wins over whatever the node made of the line going away.
  if (aborted && leg.ended?.by !== 'remote' && over.endReason !== 'failed')
    over = new CallOver('failed', 'system', '', over.error);
  if (over.endReason !== 'transferred' && !leg.ended) {
    try {
      await leg.hangup();
    } catch {
      // The line may already be gone; the call is over either way.
    }
  }
  return {
    endReason: over.endReason,
    hangupBy: over.hangupBy,
    endedAt: leg.ended?.at ?? clock.now(),
    path,
    turns,
    variables: { ...variables },
    endLabel: over.label,
    transfer: result.transfer,
    assistant: result.assistant,
    voicemail: result.voicemail,
    overheadMs,
    error: over.error,
  };
}
