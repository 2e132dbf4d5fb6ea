// Numbers as callers say them (一百二十九, 幺零零八六, 两个G, 一毛五) and as documents write them.

const DIGIT: Record<string, number> = {
  零: 0,
  〇: 0,
  一: 1,
  幺: 1,
  二: 2,
  两: 2,
  三: 3,
  四: 4,
  五: 5,
  六: 6,
  七: 7,
  八: 8,
  九: 9,
};
const UNIT: Record<string, number> = { 十: 10, 百: 100, 千: 1000, 万: 10000 };
const NUMERAL_RUN = /[零〇一幺二两三四五六七八九十百千万]+/gu;
/** A lone numeral counts as a number only before one of these (三天, 两个, 五折). */
const MEASURE = /^[个块毛元角天日月年号次张台岁折倍周期分秒点小兆gG%级档条位人份件]/u;
/** Words that begin with a numeral yet are not numbers. */
const NOT_NUMBERS = [
  '一下',
  '一样',
  '一般',
  '一直',
  '一起',
  '一些',
  '一定',
  '一会',
  '一切',
  '一点点',
  '万一',
  '十分',
  '一律',
  '一旦',
  '一致',
  '统一',
  '唯一',
  '一键',
  '一并',
  '一同',
  '一次性',
];

/** 一百二十九 → 129, 幺零零八六 → 10086 (digit by digit when no unit is said), 三十 → 30. */
function numeralValue(run: string): number | undefined {
  if (![...run].some((c) => c in UNIT)) {
    if (run.length < 2) return DIGIT[run];
    return Number([...run].map((c) => DIGIT[c]).join(''));
  }
  let total = 0;
  let section = 0;
  let digit = 0;
  for (const c of run) {
    if (c in DIGIT) {
      digit = DIGIT[c]!;
    } else if (c === '万') {
      total += (section + digit) * 10000;
      section = 0;
      digit = 0;
    } else {
      section += (digit === 0 && c === '十' ? 1 : digit) * UNIT[c]!;
      digit = 0;
    }
  }
  return total + section + digit;
}

/** Data amounts and speeds as documents write them: 2个G / 2G → 2GB, 1000兆 → 1000M. */
const units = (text: string) =>
  text
    .replace(/(\d+)\s*块(?:钱)?(\d)?/g, (_, yuan: string, jiao?: string) =>
      jiao ? `${yuan}.${jiao}元` : `${yuan}元`,
    )
    .replace(/(\d+)\s*毛(?:钱)?(\d)?/g, (_, jiao: string, fen?: string) => `0.${jiao}${fen ?? ''}元`)
    // 5G is a network, 5G 套餐 a plan: only an amount (两个G, 5G流量) is gigabytes.
    .replace(/(\d+(?:\.\d+)?)\s*个?\s*[gG](?![bB网套手信卡基时])/g, '$1GB')
    .replace(/(\d+)\s*兆/g, '$1M');

/** Numbers read out as words written as digits, as documents write prices, hours and hotlines. */
export function digitsFor(text: string): string {
  return units(
    text.replace(NUMERAL_RUN, (run, offset: number) => {
      const after = text.slice(offset + run.length);
      const around = text.slice(Math.max(0, offset - 1), offset + run.length + 2);
      if (NOT_NUMBERS.some((w) => around.includes(w) || `${run}${after}`.startsWith(w))) return run;
      // A lone numeral after 块/毛 is the next unit down (一块五, 一毛五).
      if (run.length === 1 && !MEASURE.test(after) && !/[块毛]$/u.test(text.slice(0, offset))) return run;
      const value = numeralValue(run);
      return value === undefined || Number.isNaN(value) ? run : String(value);
    }),
  );
}
