/** A share as a percentage with at most one decimal (40%, 38.5%); '-' when there is nothing to divide. */
export function formatPercent(rate: number | null | undefined): string {
  if (rate === null || rate === undefined) return '-';
  return `${(rate * 100).toFixed(1).replace(/\.0$/, '')}%`;
}
