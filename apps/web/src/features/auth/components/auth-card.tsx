import type { ReactNode } from 'react';

/** The frame every public identity page shares: centred card, product name, page subtitle. */
export function AuthCard({
  subtitle,
  children,
  wide = false,
}: {
  subtitle: string;
  children: ReactNode;
  wide?: boolean;
}) {
  return (
    <main className="flex min-h-full items-center justify-center bg-gray-50 px-4 py-10">
      <div className={`w-full rounded-lg bg-white p-8 shadow-sm ${wide ? 'max-w-lg' : 'max-w-sm'}`}>
        <h1 className="mb-1 text-center text-2xl font-semibold text-gray-900">智能语音外呼平台</h1>
        <p className="mb-6 text-center text-sm text-gray-500">{subtitle}</p>
        {children}
      </div>
    </main>
  );
}
