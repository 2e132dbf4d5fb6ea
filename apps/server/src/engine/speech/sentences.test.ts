import { describe, expect, it } from 'vitest';
import { SentenceCutter } from './sentences';

/** Cuts a whole reply pushed at once, plus what flush returns. */
const cut = (reply: string) => {
  const cutter = new SentenceCutter();
  const pieces = cutter.push(reply);
  const rest = cutter.flush();
  return rest === null ? pieces : [...pieces, rest];
};

/** Deterministic 1-3 character deltas, as a model streams them (seeded, so failures reproduce). */
function deltas(reply: string, seed = 7): string[] {
  const out: string[] = [];
  let state = seed;
  for (let i = 0; i < reply.length; ) {
    state = (state * 1103515245 + 12345) % 2147483648;
    const size = 1 + (state % 3);
    out.push(reply.slice(i, i + size));
    i += size;
  }
  return out;
}

/** Streams a reply; records each sentence with how much of the reply had arrived when it came out. */
function stream(reply: string, seed?: number) {
  const cutter = new SentenceCutter();
  const sentences: { text: string; arrived: number }[] = [];
  let arrived = 0;
  for (const delta of deltas(reply, seed)) {
    arrived += delta.length;
    for (const text of cutter.push(delta)) sentences.push({ text, arrived });
  }
  const rest = cutter.flush();
  if (rest !== null) sentences.push({ text: rest, arrived });
  return sentences;
}

describe('SentenceCutter: sentence ends', () => {
  it.each<[string, string, string[]]>([
    ['Chinese full stops', '好的。我帮您查一下。', ['好的。', '我帮您查一下。']],
    ['questions and exclamations', '真的吗？太好了！谢谢!', ['真的吗？', '太好了！', '谢谢!']],
    ['semicolons', '第一步登录；第二步下单;完成', ['第一步登录；', '第二步下单;', '完成']],
    ['a run of marks stays together', '真的吗？！好吧。', ['真的吗？！', '好吧。']],
    ['an ellipsis', '让我想想……好的。', ['让我想想……', '好的。']],
    ['closing quotes go with their sentence', '他说：“好的。”然后走了。', ['他说：“好的。”', '然后走了。']],
    [
      'closing brackets go with their sentence',
      '请带证件（身份证。）谢谢。',
      ['请带证件（身份证。）', '谢谢。'],
    ],
    ['newlines', '第一行\n第二行', ['第一行', '第二行']],
    ['an English full stop before a space', 'It works. Thanks.', ['It works.', 'Thanks.']],
    ['an English full stop before Chinese', '好的.我们继续。', ['好的.', '我们继续。']],
    ['whitespace-only pieces are dropped', '好的。\n\n  \n谢谢。', ['好的。', '谢谢。']],
  ])('%s', (_name, reply, expected) => {
    expect(cut(reply)).toEqual(expected);
  });
});

describe('SentenceCutter: never inside numbers or abbreviations', () => {
  it.each<[string, string, string[]]>([
    ['a decimal', '运费是3.5元。谢谢。', ['运费是3.5元。', '谢谢。']],
    ['thousands separators', '一共有1,000件。好的。', ['一共有1,000件。', '好的。']],
    ['a clock time', '我们12:30见。好的。', ['我们12:30见。', '好的。']],
    ['Mr. and Dr.', 'Mr. Smith met Dr. Li today. Bye.', ['Mr. Smith met Dr. Li today.', 'Bye.']],
    ['e.g. and initials', 'Use e.g. J. K. Rowling here. Ok.', ['Use e.g. J. K. Rowling here.', 'Ok.']],
    ['a domain name', '请访问example.com查询。好的。', ['请访问example.com查询。', '好的。']],
    ['a link query', '打开 a.cn/x?id=1 即可。好。', ['打开 a.cn/x?id=1 即可。', '好。']],
  ])('%s', (_name, reply, expected) => {
    expect(cut(reply)).toEqual(expected);
  });

  it('waits for the character after a full stop, split across deltas', () => {
    const cutter = new SentenceCutter();
    expect(cutter.push('价格是3.')).toEqual([]);
    expect(cutter.push('5元。')).toEqual(['价格是3.5元。']);
    expect(cutter.push('Hello Mr.')).toEqual([]);
    expect(cutter.push(' Li. ')).toEqual(['Hello Mr. Li.']);
    expect(cutter.flush()).toBeNull();
  });

  it('does not cut the first piece at a thousands separator split across deltas', () => {
    const cutter = new SentenceCutter();
    expect(cutter.push('好的，我帮您查一下余额1,')).toEqual([]);
    expect(cutter.push('000元。')).toEqual(['好的，我帮您查一下余额1,000元。']);
  });
});

describe('SentenceCutter: the first piece may end at a comma', () => {
  it('cuts the first piece at the first comma after 6 Chinese characters', () => {
    expect(cut('您好，我是小王，很高兴为您服务，请问您需要什么帮助？')).toEqual([
      '您好，我是小王，',
      '很高兴为您服务，请问您需要什么帮助？',
    ]);
  });

  it.each<[string, string[]]>([
    ['好的、我们明天再联系您吧。', ['好的、我们明天再联系您吧。']],
    ['我们的营业时间：每天九点到十八点。', ['我们的营业时间：', '每天九点到十八点。']],
    ['这个问题我来帮您查,请稍等。', ['这个问题我来帮您查,', '请稍等。']],
  ])('%s', (reply, expected) => {
    expect(cut(reply)).toEqual(expected);
  });

  it('does not cut at a comma before 6 Chinese characters, nor in later pieces', () => {
    expect(cut('好的，没问题。明天上午您在家吗，我们派人上门。')).toEqual([
      '好的，没问题。',
      '明天上午您在家吗，我们派人上门。',
    ]);
  });

  it('starts over with the first-piece rule after flush', () => {
    const cutter = new SentenceCutter();
    expect(cutter.push('您好，我是小王，欢迎。')).toEqual(['您好，我是小王，', '欢迎。']);
    expect(cutter.flush()).toBeNull();
    expect(cutter.push('您好，我是小李，再见。')).toEqual(['您好，我是小李，', '再见。']);
  });
});

describe('SentenceCutter: long sentences', () => {
  it('cuts a sentence over 60 characters at its last comma', () => {
    const clause = '我们的产品支持多种支付方式包括银行卡和余额';
    const reply = `好的。${clause}，${clause}，${clause}，${clause}。`;
    expect(cut(reply)).toEqual(['好的。', `${clause}，${clause}，`, `${clause}，${clause}。`]);
  });

  it('hard-cuts a sentence without commas, never inside a number or a word', () => {
    const reply = `好的。${'这是一个很长的句子'.repeat(6)}编号12345678abc继续说下去直到结束。`;
    expect(cut(reply)).toEqual([
      '好的。',
      `${'这是一个很长的句子'.repeat(6)}编号`,
      '12345678abc继续说下去直到结束。',
    ]);
    // The 61st character falls inside 1234.5678, then inside "quick".
    const decimal = `${'很长的句子'.repeat(11)} 1234.5678 dogs。`;
    expect(cut(decimal)).toEqual([`${'很长的句子'.repeat(11)}`, '1234.5678 dogs。']);
    const english = `${'很长的句子'.repeat(11)} The quick brown fox。`;
    expect(cut(english)).toEqual([`${'很长的句子'.repeat(11)} The`, 'quick brown fox。']);
  });
});

describe('SentenceCutter: markdown is not read aloud', () => {
  it('strips bold, code, headings, bullets and links; numbers list items', () => {
    const reply = [
      '## 办理流程',
      '**第一步**：准备`身份证`。',
      '- 带上户口本',
      '* 带上照片',
      '1. 先联系客服',
      '2) 再申请退款',
      '> 注意：详见[官网](https://example.com)。',
      '---',
      '',
    ].join('\n');
    expect(cut(reply)).toEqual([
      '办理流程',
      '第一步：准备身份证。',
      '带上户口本',
      '带上照片',
      '1、先联系客服',
      '2、再申请退款',
      '注意：详见官网。',
    ]);
  });

  it('keeps a minus sign and mid-line dashes', () => {
    expect(cut('今天气温-5度。\n北京-上海的航班。')).toEqual(['今天气温-5度。', '北京-上海的航班。']);
  });
});

describe('SentenceCutter: a streamed reply', () => {
  const reply =
    '您好，我是小王，很高兴为您服务。您的订单已于11月24日发货，运费3.5元，共1,000件！' +
    '预计2-3天送达……请问还有什么“问题”吗？\n\n**温馨提示**：\n- 签收时请检查包装。\n- 如有破损请拒收\n' +
    '如需帮助，请在12:30前致电。Mr. Smith says hi. 祝您生活愉快';
  const expected = [
    '您好，我是小王，',
    '很高兴为您服务。',
    '您的订单已于11月24日发货，运费3.5元，共1,000件！',
    '预计2-3天送达……',
    '请问还有什么“问题”吗？',
    '温馨提示：',
    '签收时请检查包装。',
    '如有破损请拒收',
    '如需帮助，请在12:30前致电。',
    'Mr. Smith says hi.',
    '祝您生活愉快',
  ];

  it.each([1, 7, 42, 2024])('cuts 1-3 character deltas (seed %i) into the same sentences', (seed) => {
    expect(stream(reply, seed).map((s) => s.text)).toEqual(expected);
  });

  it('gives the first sentence out long before the reply is complete', () => {
    const sentences = stream(reply);
    expect(sentences[0]!.text).toBe('您好，我是小王，');
    // Out as soon as the comma arrived (a delta may carry up to 2 more characters).
    expect(sentences[0]!.arrived).toBeLessThanOrEqual('您好，我是小王，'.length + 2);
    expect(sentences[0]!.arrived).toBeLessThan(reply.length / 5);
    // Every sentence but the last comes out before the stream ends.
    expect(sentences.slice(0, -1).every((s) => s.arrived < reply.length)).toBe(true);
  });

  it('returns null from flush when nothing is left', () => {
    const cutter = new SentenceCutter();
    expect(cutter.push('好的。')).toEqual(['好的。']);
    expect(cutter.flush()).toBeNull();
    expect(new SentenceCutter().flush()).toBeNull();
    const blank = new SentenceCutter();
    expect(blank.push('  \n ')).toEqual([]);
    expect(blank.flush()).toBeNull();
  });
});
