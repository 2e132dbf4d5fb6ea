import type { ReportDrill } from '@callpilot/contracts';
import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { drillHref } from '../utils/report-range';

/** A number in a table that opens the calls behind it; plain text when the server gave no filter. */
export function ReportDrillLink({ drill, children }: { drill: ReportDrill | null; children: ReactNode }) {
  return drill ? <Link to={drillHref(drill)}>{children}</Link> : <span>{children}</span>;
}
