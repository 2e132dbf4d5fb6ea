import {
  type AssistantConfig,
  type CallTurn,
  type EndReason,
  INTENT_GRADE_LABELS,
  type IntentGrade,
  intentGrade,
  UNANSWERED_END_REASONS,
} from '@callpilot/contracts';
import { z } from 'zod';
import type { BrainProvider } from '../brain/create-brain';
import { detectIntent, findTransferRequest } from '../brain/intent';
import { createOpenAIClient } from '../brain/openai-client';

export interface CallAnalysis {
  grade: IntentGrade | null;
  reason: string;
  summary: string;
  fields: Record<string, string>;
  by: 'llm' | 'rules';
}

export interface AnalyzeCallInput {
  config: AssistantConfig;
  turns: CallTurn[];
  endReason: EndReason;
  /** The grade the brain set during the call, if any. */
  liveGrade: { grade: IntentGrade; reason: string } | null;
  /** The assistant's model; null or absent analyses by rules. */
  provider?: BrainProvider | null;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

const ANALYSIS_TIMEOUT_MS = 20_000;

const UNANSWERED_SUMMARY: Partial<Record<EndReason, string>> = {
  busy: '客户忙线，未接通。',
  no_answer: '无人接听，未接通。',
  powered_off: '客户手机关机，未接通。',
  vacant: '号码为空号，未接通。',
  rejected: '客户拒接，未接通。',
  voicemail: '电话转入语音信箱，未与客户通话。',
  failed: '呼叫失败，未与客户通话。',
};

const OUTCOME_SENTENCE: Partial<Record<EndReason, string>> = {
  completed: '通话正常结束。',
  callee_hangup: '客户中途挂断。',
  opt_out: '客户要求不再来电，号码已加入免打扰。',
  transferred: '已为客户转接人工客服。',
  silence: '客户长时间未回应，通话结束。',
  max_duration: '通话达到最长时长后结束。',
};

const QUESTION = /[？?]|吗\s*[。！]?$|多少|怎么|哪里|哪儿|什么|几点|能不能|可不可以|是否/u;

const calleeLines = (turns: CallTurn[]) =>
  turns.filter((t) => t.speaker === 'callee' && t.text.trim()).map((t) => t.text.trim());

/** What a person would note down: the questions asked, keys pressed, the transfer number. */
function extractFields(
  config: AssistantConfig,
  turns: CallTurn[],
  endReason: EndReason,
): Record<string, string> {
  const fields: Record<string, string> = {};
  const questions = calleeLines(turns).filter((text) => QUESTION.test(text));
  if (questions.length) fields.客户问题 = questions.join('；');
  const keys = turns.flatMap((t) => (t.speaker === 'callee' && t.dtmf ? [t.dtmf] : [])).join('');
  if (keys) fields.客户按键 = keys;
  if (endReason === 'transferred' && config.conversation.transferNumber) {
    fields.转人工号码 = config.conversation.transferNumber;
  }
  return fields;
}

interface RulesGrade {
  grade: IntentGrade;
  reason: string;
  /** The callee lines that decided it, for the summary. */
  evidence: string[];
}

/**
 * Rules, in order: an opt-out is D; any refusal heard (built-in or the assistant's D keywords) is
 * D; otherwise the strongest of the callee's keyword cues and the brain's live grade; asking for a
 * human is at least B; nothing positive heard is C.
 */
function gradeByRules(input: AnalyzeCallInput): RulesGrade {
  const { config, turns, endReason, liveGrade } = input;
  const lines = calleeLines(turns);
  if (endReason === 'opt_out') {
    const refusal = lines.find((text) => detectIntent(config, text)?.grade === 'D');
    return { grade: 'D', reason: '客户明确拒绝并要求不再来电', evidence: refusal ? [refusal] : [] };
  }
  const cues = lines.flatMap((text) => {
    const intent = detectIntent(config, text);
    return intent ? [{ ...intent, text }] : [];
  });
  const refusal = cues.find((cue) => cue.grade === 'D');
  if (refusal) return { grade: 'D', reason: refusal.reason, evidence: [refusal.text] };
  if (liveGrade?.grade === 'D') return { grade: 'D', reason: liveGrade.reason, evidence: [] };

  const best = [...cues].sort((a, b) => a.grade.localeCompare(b.grade))[0];
  let grade: IntentGrade | null = best?.grade ?? null;
  let reason = best?.reason ?? '';
  const evidence = best ? [best.text] : [];
  if (liveGrade && (!grade || liveGrade.grade < grade)) {
    grade = liveGrade.grade;
    reason = `通话中判断：${liveGrade.reason}`;
  }
  const transferAsked = endReason === 'transferred' || lines.some((text) => findTransferRequest(text));
  if (transferAsked && (!grade || grade > 'B')) {
    grade = 'B';
    reason = '客户要求转人工，可能有意向';
    const asked = lines.find((text) => findTransferRequest(text));
    if (asked) evidence.unshift(asked);
  }
  if (!grade) {
    grade = 'C';
    reason = lines.length <= 2 ? '通话较短，客户未表达意向' : '客户未表达明确意向';
  }
  return { grade, reason, evidence };
}

const clip = (text: string, max = 40) =>
  [...text].length > max ? `${[...text].slice(0, max).join('')}…` : text;

function rulesAnalysis(input: AnalyzeCallInput): CallAnalysis {
  const { grade, reason, evidence } = gradeByRules(input);
  const lines = calleeLines(input.turns);
  const quoted = (evidence.length ? evidence : lines.slice(0, 1)).slice(0, 2);
  const said = quoted.length ? `客户表示：${quoted.map((t) => `「${clip(t)}」`).join('')}。` : '客户未说话。';
  const summary = `${INTENT_GRADE_LABELS[grade]}，${said}${OUTCOME_SENTENCE[input.endReason] ?? ''}`;
  return {
    grade,
    reason,
    summary,
    fields: extractFields(input.config, input.turns, input.endReason),
    by: 'rules',
  };
}

const llmAnswer = z.object({
  grade: intentGrade.nullable(),
  reason: z.string().max(500).default(''),
  summary: z.string().min(1).max(1000),
  fields: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String)).default({}),
});

/** Models wrap JSON in prose or code fences despite instructions; take the outermost object. */
function jsonObject(text: string): unknown {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) throw new Error('no JSON object in the reply');
  return JSON.parse(text.slice(start, end + 1));
}

function transcript(turns: CallTurn[]): string {
  return turns
    .filter((t) => t.text.trim() || t.dtmf)
    .map((t) => `${t.speaker === 'assistant' ? '客服' : '客户'}：${t.text.trim() || `（按键 ${t.dtmf}）`}`)
    .join('\n');
}

async function llmAnalysis(input: AnalyzeCallInput, provider: BrainProvider): Promise<CallAnalysis> {
  const rules = input.config.intentRules;
  const gradeLines = (['A', 'B', 'C', 'D'] as const)
    .map((g) => `${g}（${INTENT_GRADE_LABELS[g]}）${rules[g].description ? `：${rules[g].description}` : ''}`)
    .join('\n');
  const client = createOpenAIClient(provider, {
    fetch: input.fetch,
    timeoutMs: input.timeoutMs ?? ANALYSIS_TIMEOUT_MS,
  });
  const completion = await client.chat.completions.create({
    model: provider.model,
    temperature: 0,
    messages: [
      {
        role: 'system',
        content: [
          '你是电话销售质检员，阅读一通 AI 外呼的通话记录，判断客户意向并总结。',
          `意向等级：\n${gradeLines}`,
          '只输出一个 JSON 对象，不要输出其他内容，格式：',
          '{"grade":"A|B|C|D","reason":"判断依据，一句话","summary":"一到两句中文摘要","fields":{"字段名":"值"}}',
          'fields 记录通话中提到的关键信息，如 客户问题、预约时间、意向产品；没有则为空对象。',
        ].join('\n'),
      },
      {
        role: 'user',
        content: `结束原因：${input.endReason}\n通话记录：\n${transcript(input.turns)}`,
      },
    ],
  });
  const content = completion.choices[0]?.message?.content ?? '';
  const answer = llmAnswer.parse(jsonObject(content));
  // An opt-out is a fact, not an opinion: the do-not-call list already has the number.
  const grade = input.endReason === 'opt_out' ? 'D' : (answer.grade ?? 'C');
  return {
    grade,
    reason: answer.reason,
    summary: answer.summary,
    fields: { ...extractFields(input.config, input.turns, input.endReason), ...answer.fields },
    by: 'llm',
  };
}

/**
 * After a call: its intent grade, a short summary and the fields worth keeping. Unanswered calls
 * get no grade. With a model configured the model judges; any failure of it (network, refusal,
 * a reply that is not the JSON asked for) falls back to the rules, so every call gets an analysis.
 */
export async function analyzeCall(input: AnalyzeCallInput): Promise<CallAnalysis> {
  const answeredByPerson = !UNANSWERED_END_REASONS.includes(input.endReason);
  if (!answeredByPerson) {
    const leftMessage = input.endReason === 'voicemail' && input.turns.some((t) => t.speaker === 'assistant');
    return {
      grade: null,
      reason: '未接通',
      summary: leftMessage
        ? '电话转入语音信箱，已留言。'
        : (UNANSWERED_SUMMARY[input.endReason] ?? '未接通。'),
      fields: {},
      by: 'rules',
    };
  }
  if (input.provider && input.turns.some((t) => t.speaker === 'callee')) {
    try {
      return await llmAnalysis(input, input.provider);
    } catch {
      // Fall through: a rules grade beats no grade.
    }
  }
  return rulesAnalysis(input);
}
