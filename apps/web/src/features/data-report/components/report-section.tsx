import type { ReactNode } from 'react';

/** A titled block of a report page: a chart with its table underneath. */
export function ReportSection({
  title,
  extra,
  children,
}: {
  title: string;
  extra?: ReactNode;
  children: ReactNode;
}) {
  return (
    <section aria-label={title} className="rounded-lg border border-gray-200 bg-white p-4">
      <div className="mb-3 flex items-center justify-between gap-4">
        <h2 className="text-base font-medium">{title}</h2>
        {extra}
      </div>
      {children}
    </section>
  );
}
