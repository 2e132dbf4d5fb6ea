// biome-ignore-all lint/suspicious/noTemplateCurlyInString: SMS templates write their variables as ${name}.
import { describe, expect, it } from 'vitest';
import { composeSms, isOptOutReply, marketingSendAfter, waitingDetail } from './sms-compose';

describe('composeSms', () => {
  it('adds the signature in brackets, fills the variables and counts the billed parts', () => {
    const sms = composeSms('云呼科技', '您预约的${time}到店，地址${addr}。', {
      time: '周五 10:00',
      addr: ' 中山路 8 号 ',
    });
    expect(sms).toEqual({
      ok: true,
      content: '【云呼科技】您预约的周五 10:00到店，地址中山路 8 号。',
      parts: 1,
    });
    const long = composeSms('云呼科技', `${'很'.repeat(70)}\${x}`, { x: '长' });
    expect(long.ok && long.parts).toBe(2);
  });

  it('refuses a missing or blank variable and a value beyond 35 characters, naming them', () => {
    expect(composeSms('云呼', '验证码${code}，${min}分钟内有效', { code: '1234', min: ' ' })).toEqual({
      ok: false,
      message: '缺少变量 min 的值',
    });
    expect(composeSms('云呼', '您好${name}', { name: 'x'.repeat(36) })).toEqual({
      ok: false,
      message: '变量 name 的值不能超过 35 个字符',
    });
  });
});

describe('marketingSendAfter', () => {
  it('lets 推广 go between 08:00 and 20:00 China time and otherwise names the next 08:00', () => {
    expect(marketingSendAfter(new Date('2026-11-24T00:00:00Z'))).toBeNull(); // 08:00 China
    expect(marketingSendAfter(new Date('2026-11-24T11:59:59Z'))).toBeNull(); // 19:59:59
    expect(marketingSendAfter(new Date('2026-11-24T12:00:00Z'))?.toISOString()).toBe(
      '2026-11-25T00:00:00.000Z',
    );
    expect(marketingSendAfter(new Date('2026-11-24T18:30:00Z'))?.toISOString()).toBe(
      '2026-11-25T00:00:00.000Z',
    ); // 02:30 on the 25th
    expect(marketingSendAfter(new Date('2026-11-23T23:59:00Z'))?.toISOString()).toBe(
      '2026-11-24T00:00:00.000Z',
    ); // 07:59
    expect(waitingDetail(new Date('2026-11-25T00:00:00Z'))).toContain('将于 11-25 08:00 发出');
  });
});

describe('isOptOutReply', () => {
  it('takes T, TD, 退订, R and N alone in any case and punctuation, not sentences containing them', () => {
    for (const reply of ['T', 'td', ' 退订 ', 'R。', 'Ｔ Ｄ', 'n!']) expect(isOptOutReply(reply)).toBe(true);
    for (const reply of ['Thanks', '我不想退订', 'RT', '好的', '']) expect(isOptOutReply(reply)).toBe(false);
  });
});
