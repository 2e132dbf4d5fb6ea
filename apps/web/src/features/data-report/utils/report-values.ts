import type { FigureKind } from './report-format';

/**
 * Names of the values the reports' rows and trends carry. A value the console does not know yet
 * still shows, under its own key, so a server adding one never hides data.
 */
export const VALUE_LABELS: Record<string, string> = {
  offered: '呼入量',
  calls: '通话量',
  answered: '接通量',
  assistantAnswered: '小助手接待',
  transferred: '转人工',
  optOut: '拒绝再联系',
  optOutRate: '拒绝再联系率',
  transferRate: '转人工率',
  rejected: '拒接/忙线',
  shortAnsweredShare: '短通话占比',
  abandonedRinging: '振铃放弃',
  abandonedFlow: '流程中挂断',
  abandoned: '放弃',
  overLimit: '超出并发',
  answerRate: '接通率',
  avgWaitSeconds: '平均等待',
  maxWaitSeconds: '最长等待',
  avgTalkSeconds: '平均通话时长',
  maxTalkSeconds: '最长通话时长',
  questions: '提问数',
  hits: '命中数',
  hitRate: '命中率',
  noAnswer: '未命中',
  noAnswerRate: '未命中率',
  completed: '走完流程',
};

export const valueLabel = (key: string) => VALUE_LABELS[key] ?? key;

export function valueKind(key: string): FigureKind {
  if (/Rate$|Share$/.test(key)) return 'rate';
  if (/Seconds$/.test(key)) return 'seconds';
  if (/Ms$/.test(key)) return 'ms';
  return 'count';
}

/** The keys a set of value records carries, in first-seen order. */
export function valueKeys(records: Record<string, number>[]): string[] {
  const keys = new Set<string>();
  for (const record of records) for (const key of Object.keys(record)) keys.add(key);
  return [...keys];
}
