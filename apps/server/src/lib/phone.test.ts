import { describe, expect, it } from 'vitest';
import {
  normalizePhone,
  PHONE_BAD_CHARS,
  PHONE_BAD_LENGTH,
  PHONE_EMPTY,
  PHONE_FOREIGN,
  PHONE_NOT_MAINLAND,
  PHONE_SCIENTIFIC,
  PHONE_SERVICE,
} from './phone';

describe('normalizePhone', () => {
  it.each([
    ['13800138000', '13800138000', 'mobile'],
    [' 138 0013 8000 ', '13800138000', 'mobile'],
    ['138-0013-8000', '13800138000', 'mobile'],
    ['(138)0013-8000', '13800138000', 'mobile'],
    ['+86 138 0013 8000', '13800138000', 'mobile'],
    ['+86-13800138000', '13800138000', 'mobile'],
    ['0086 13800138000', '13800138000', 'mobile'],
    ['8613800138000', '13800138000', 'mobile'],
    ['１３８００１３８０００', '13800138000', 'mobile'],
    ['＋８６　１３８　００１３　８０００', '13800138000', 'mobile'],
    ['13800138000.0', '13800138000', 'mobile'],
    ['19912345678', '19912345678', 'mobile'],
    ['17012345678', '17012345678', 'mobile'],
    ['16212345678', '16212345678', 'mobile'],
    ['010-8888 6666', '01088886666', 'landline'],
    ['(010)88886666', '01088886666', 'landline'],
    ['（０１０）８８８８６６６６', '01088886666', 'landline'],
    ['0755 1234 5678', '075512345678', 'landline'],
    ['020-12345678', '02012345678', 'landline'],
    ['0571-12345678', '057112345678', 'landline'],
    ['0898 12345678', '089812345678', 'landline'],
    ['+86 10 8888 6666', '01088886666', 'landline'],
    ['+86 010 8888 6666', '01088886666', 'landline'],
    ['0086-755-12345678', '075512345678', 'landline'],
  ])('%s → %s (%s)', (raw, phone, kind) => {
    expect(normalizePhone(raw)).toEqual({ ok: true, phone, kind });
  });

  it.each([
    ['', PHONE_EMPTY],
    ['   ', PHONE_EMPTY],
    [null, PHONE_EMPTY],
    ['1.38001E+10', PHONE_SCIENTIFIC],
    ['1.38001e10', PHONE_SCIENTIFIC],
    ['1380013800', PHONE_BAD_LENGTH],
    ['138001380001', PHONE_BAD_LENGTH],
    ['+86 1380013800', PHONE_BAD_LENGTH],
    ['14012345678', PHONE_NOT_MAINLAND],
    ['12012345678', PHONE_NOT_MAINLAND],
    ['138-0013-800a', PHONE_BAD_CHARS],
    ['138 0013 8000 转 801', PHONE_BAD_CHARS],
    ['+1 415 555 0100', PHONE_FOREIGN],
    ['001 415 555 0100', PHONE_FOREIGN],
    ['+852 9123 4567', PHONE_FOREIGN],
    ['400-800-6688', PHONE_SERVICE],
    ['95588', PHONE_SERVICE],
    ['88886666', '固定电话须带区号（如 010-88886666）'],
    ['0512 1234 567', PHONE_NOT_MAINLAND],
    ['010-123', PHONE_BAD_LENGTH],
  ])('%s is refused: %s', (raw, reason) => {
    expect(normalizePhone(raw)).toEqual({ ok: false, reason });
  });

  it('gives every number of one 号段 its own digits, not the cached first one', () => {
    expect(normalizePhone('13800138000')).toMatchObject({ phone: '13800138000' });
    expect(normalizePhone('13800999999')).toMatchObject({ phone: '13800999999' });
    expect(normalizePhone('14012345679')).toMatchObject({ ok: false });
  });
});
