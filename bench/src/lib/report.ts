/** One budget verdict; the runner collects them to decide the exit code. */
export interface BudgetResult {
  name: string;
  pass: boolean;
  detail: string;
  /** Not measured (a tool it needs is missing): neither a pass nor a failure, and said so. */
  skipped?: boolean;
}

/** Prints the verdict as soon as it is known, so a later crash does not hide it. */
export function budget(name: string, pass: boolean, detail: string): BudgetResult {
  console.log(`  ${pass ? 'PASS' : 'FAIL'}  ${name}: ${detail}`);
  return { name, pass, detail };
}

/** A budget that could not be measured here, printed as loudly as a verdict. */
export function skipped(name: string, reason: string): BudgetResult {
  console.log(`  SKIP  ${name}: ${reason}`);
  return { name, pass: true, detail: reason, skipped: true };
}

export const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
export const fmtMs = (ms: number) => (ms < 1000 ? `${ms.toFixed(0)} ms` : `${(ms / 1000).toFixed(2)} s`);
export const fmtKiB = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
export const fmtRatio = (r: number) => `${r.toFixed(2)}x`;
export const fmtPct = (r: number) => `${(r * 100).toFixed(0)}%`;

/** A plain text table: first column left-aligned, figures right-aligned so they line up by magnitude. */
export function table(header: string[], rows: string[][]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    r
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(header), rule, ...rows.map(line)].map((l) => `  ${l}`).join('\n');
}
