import type { AssistantVariable, ColumnMapping } from '@callpilot/contracts';
import { badRequest } from '../../lib/errors';
import { normalizePhone } from '../../lib/phone';
import type { SheetRow } from './import-parse';

const PHONE_HEADERS = [
  '号码',
  '手机',
  '手机号',
  '手机号码',
  '电话',
  '电话号码',
  '联系电话',
  '联系方式',
  '客户电话',
  '客户手机',
  'phone',
  'mobile',
  'tel',
  'telephone',
  'phone number',
  'mobile phone',
  'cellphone',
];
const NAME_HEADERS = [
  '姓名',
  '名字',
  '客户姓名',
  '客户名称',
  '客户',
  '联系人',
  '称呼',
  'name',
  'full name',
  'customer',
];
const simplify = (header: string) =>
  header
    .trim()
    .toLowerCase()
    .replace(/[\s_]+/g, ' ');

/** Guesses phone, name and variable columns from the headers; the phone column by content if need be. */
export function guessMapping(
  headers: string[],
  rows: SheetRow[],
  variables: AssistantVariable[],
): ColumnMapping {
  const simple = headers.map(simplify);
  const byList = (list: string[]) => simple.findIndex((h) => list.includes(h));
  let phone = byList(PHONE_HEADERS);
  if (phone < 0) phone = simple.findIndex((h) => /手机|电话|号码|phone|mobile|tel/.test(h));
  if (phone < 0) {
    // Headers like "联系人1" or "col_a": the column whose sample cells are mostly numbers wins.
    const sample = rows.slice(0, 50);
    let best = 0;
    headers.forEach((_, i) => {
      const hits = sample.filter((r) => normalizePhone(r.cells[i]).ok).length;
      if (hits > best && hits * 2 >= sample.length) {
        best = hits;
        phone = i;
      }
    });
  }
  if (phone < 0) {
    throw badRequest('未找到号码列：表头须包含“号码”“手机”“电话”或“phone”列（可下载导入模板参照）');
  }
  let name = byList(NAME_HEADERS);
  if (name < 0) name = simple.findIndex((h, i) => i !== phone && /姓名|名字|name/.test(h));
  const mapped: Record<string, string> = {};
  for (const variable of variables) {
    const i = simple.indexOf(simplify(variable.name));
    if (i >= 0) mapped[variable.name] = headers[i]!;
  }
  return {
    phone: headers[phone]!,
    name: name >= 0 && name !== phone ? headers[name]! : '',
    variables: mapped,
  };
}

/** The column indexes a mapping names, or a 400 naming the field when it does not fit the file. */
export function resolveMapping(headers: string[], mapping: ColumnMapping, variables: AssistantVariable[]) {
  const indexOf = (field: string, header: string) => {
    const i = headers.indexOf(header);
    if (i < 0) throw badRequest(`字段 ${field}：文件中没有“${header}”列`);
    return i;
  };
  const phone = indexOf('mapping.phone', mapping.phone);
  const name = mapping.name ? indexOf('mapping.name', mapping.name) : -1;
  const vars: { variable: AssistantVariable; index: number }[] = [];
  for (const [key, header] of Object.entries(mapping.variables)) {
    const variable = variables.find((v) => v.name === key);
    if (!variable) throw badRequest(`字段 mapping.variables：小助手没有变量“${key}”`);
    if (header === '') continue;
    vars.push({ variable, index: indexOf(`mapping.variables.${key}`, header) });
  }
  return { phone, name, vars };
}
