import { describe, expect, it } from 'vitest';
import { digitsFor } from './numbers';
import { analyzeQuery, termIndex } from './query';

const words = (query: string, index?: Map<string, string>) =>
  analyzeQuery(query, index)
    .terms.filter((t) => !t.bigram && t.weight >= 0.5)
    .map((t) => t.term);

describe('query cleaning for spoken Chinese', () => {
  it('removes call fillers and politeness phrases before ranking, and says which', () => {
    const { analysis } = analyzeQuery('喂，你好，我想问一下那个宽带装好要等几天啊，谢谢');
    expect(analysis.removedFillers).toEqual(
      expect.arrayContaining(['喂', '你好', '我想问一下', '那个', '谢谢']),
    );
    expect(analysis.cleaned).not.toMatch(/喂|你好|我想问一下|那个|谢谢/);
    const terms = words('喂，你好，我想问一下那个宽带装好要等几天啊，谢谢');
    expect(terms).toContain('宽带');
    for (const filler of ['喂', '你好', '那个', '谢谢', '问一下']) expect(terms).not.toContain(filler);
  });

  it('writes numbers read out as digits, as documents write them', () => {
    expect(digitsFor('一百二十九块的套餐')).toBe('129元的套餐');
    expect(digitsFor('打幺零零五八')).toBe('打10058');
    expect(digitsFor('两个G流量')).toBe('2GB流量');
    // A 5G network or plan is not five gigabytes.
    expect(digitsFor('五G套餐')).toBe('5G套餐');
    expect(digitsFor('5G网络')).toBe('5G网络');
    expect(digitsFor('一千兆宽带')).toBe('1000M宽带');
    expect(digitsFor('三十天内')).toBe('30天内');
    expect(digitsFor('超了一分钟是不是一毛五')).toBe('超了1分钟是不是0.15元');
    // Words that start with a numeral but are not numbers stay as they are.
    expect(digitsFor('一下子一样一般万一十分满意')).toBe('一下子一样一般万一十分满意');
    // Both forms are searched: a document may say 七天 or 7 天.
    const terms = analyzeQuery('七天无理由').terms.map((t) => t.term);
    expect(terms).toEqual(expect.arrayContaining(['7', '七天']));
  });

  it('replaces colloquial words by the standard term, keeping the spoken word as an alternative', () => {
    const { analysis, terms } = analyzeQuery('猫的灯一直闪');
    expect(analysis.normalized).toEqual([{ from: '猫', to: '光猫' }]);
    const modem = terms.find((t) => t.term === '光猫');
    expect(modem?.spoken).toEqual(['猫']);
    expect(modem?.alternatives).toContain('猫');
    // A phrase of several words, or one the segmenter glues to its neighbour, is still found.
    expect(analyzeQuery('网很卡怎么办').analysis.normalized).toContainEqual({ from: '网很卡', to: '网速慢' });
    expect(analyzeQuery('猫子坏了').analysis.normalized).toContainEqual({ from: '猫子', to: '光猫' });
    // 猫 within 光猫 is the standard itself.
    expect(analyzeQuery('光猫坏了').analysis.normalized).not.toContainEqual({ from: '猫', to: '光猫' });
    expect(words('话费还剩多少钱')).toContain('余额');
    expect(words('我要退订')).toContain('取消');
  });

  it("applies a project's own entries on top of the built-in ones, and they win", () => {
    const index = termIndex([
      { standard: '光猫', variants: ['小白盒'] },
      { standard: '宽带套餐', variants: ['猫'] },
    ]);
    expect(words('小白盒坏了', index)).toContain('光猫');
    expect(analyzeQuery('我的猫 坏了', index).analysis.normalized).toContainEqual({
      from: '猫',
      to: '宽带套餐',
    });
  });

  it('keeps the characters the caller said, and their bigrams, as weak evidence', () => {
    const { terms } = analyzeQuery('流量包怎么买');
    const bigrams = terms.filter((t) => t.bigram).map((t) => t.term);
    expect(bigrams).toEqual(expect.arrayContaining(['量包']));
    for (const t of terms.filter((x) => x.bigram)) expect(t.weight).toBeLessThan(0.5);
    const chars = terms.filter((x) => !x.bigram && x.term.length === 1 && x.weight < 0.5).map((x) => x.term);
    expect(chars).toEqual(expect.arrayContaining(['流', '量']));
  });
});
