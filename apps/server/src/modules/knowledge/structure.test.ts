import { describe, expect, it } from 'vitest';
import { structureText } from './structure';

describe('FAQ-aware segmentation of Markdown and text', () => {
  const faq = [
    '# 澜江通信常见问题',
    '',
    '## 一、宽带安装',
    '',
    '### 宽带办理后多久可以上门安装？',
    '城区用户在受理后2天内上门安装。',
    '',
    '**问：宽带可以暂停使用吗？**',
    '答：可以申请宽带暂停，每次暂停1至6个月。',
    '',
    'Q：组网路由器怎么收费？',
    'A：单台每月租金10元。',
    '',
    '1. 光猫要交押金吗？',
    '光猫为免费借用，不收押金。',
    '',
    '**报修后多久有人上门？** 城区 4 小时内上门。',
    '',
    '## 二、营业时间',
    '',
    '营业厅周一至周日 9:00-18:00 营业。节假日另行通知。',
  ].join('\n');

  it('makes each FAQ entry one question-answer segment, whatever form it is written in', () => {
    const pieces = structureText(faq, 500, 50);
    const pairs = pieces.filter((p) => p.question !== null);
    expect(pairs.map((p) => [p.question, p.answer])).toEqual([
      ['宽带办理后多久可以上门安装？', '城区用户在受理后2天内上门安装。'],
      ['宽带可以暂停使用吗？', '可以申请宽带暂停，每次暂停1至6个月。'],
      ['组网路由器怎么收费？', '单台每月租金10元。'],
      ['光猫要交押金吗？', '光猫为免费借用，不收押金。'],
      ['报修后多久有人上门？', '城区 4 小时内上门。'],
    ]);
    for (const p of pairs) expect(p.content).toBe(`${p.question}\n${p.answer}`);
    expect(pairs[0]!.context).toBe('澜江通信常见问题 宽带安装');
  });

  it('chunks prose by paragraph with its headings as context, not as text to read out', () => {
    const prose = structureText(faq, 500, 50).filter((p) => p.question === null);
    expect(prose).toHaveLength(1);
    expect(prose[0]!.content).toBe('营业厅周一至周日 9:00-18:00 营业。节假日另行通知。');
    expect(prose[0]!.context).toBe('澜江通信常见问题 营业时间');
  });

  it('reads a Markdown table with 问题 and 答案 columns as pairs, any other table as prose', () => {
    const text = [
      '## 常见问题',
      '| 序号 | 问题 | 答案 |',
      '| --- | --- | --- |',
      '| 1 | 怎么补卡？ | 携带身份证到营业厅办理。 |',
      '| 2 | 补卡收费吗？ | 补卡费 10 元。 |',
      '',
      '| 套餐 | 月费 |',
      '| :-- | --: |',
      '| 畅享 129 | 129 元 |',
    ].join('\n');
    const pieces = structureText(text, 500, 50);
    expect(pieces.filter((p) => p.question).map((p) => [p.question, p.answer])).toEqual([
      ['怎么补卡？', '携带身份证到营业厅办理。'],
      ['补卡收费吗？', '补卡费 10 元。'],
    ]);
    expect(pieces.filter((p) => !p.question).map((p) => p.content)).toEqual(['套餐，月费\n畅享 129，129 元']);
  });

  it('cuts only an answer longer than the chunk size, each part keeping its question', () => {
    const long = `### 套餐有哪些？\n${'主推套餐含大量流量和通话分钟数。'.repeat(20)}`;
    const pieces = structureText(long, 120, 10);
    expect(pieces.length).toBeGreaterThan(1);
    for (const p of pieces) {
      expect(p.question).toBe('套餐有哪些？');
      expect(p.content.length).toBeLessThanOrEqual(120 + '套餐有哪些？\n'.length);
    }
  });
});
