import { isRouteErrorResponse, useRouteError } from 'react-router';

const DEFAULT_MESSAGE = '应用程序遇到了错误';

function describe(error: unknown): string {
  if (isRouteErrorResponse(error)) return error.statusText || DEFAULT_MESSAGE;
  if (error instanceof Error && error.message) return error.message;
  return DEFAULT_MESSAGE;
}

// Plain markup on purpose: this page must render even when the component library is what broke.
export function RouteErrorPage() {
  const error = useRouteError();
  return (
    <div role="alert" className="flex h-full flex-col items-center justify-center gap-3 p-6 text-center">
      <h1 className="text-xl font-semibold text-gray-900">出错了</h1>
      <p className="max-w-lg break-words text-sm text-gray-600">{describe(error)}</p>
      <button
        type="button"
        className="rounded-md bg-[#4D8EFF] px-4 py-1.5 text-sm text-white hover:opacity-90"
        onClick={() => window.location.reload()}
      >
        重试
      </button>
    </div>
  );
}
