import { isRouteErrorResponse, useRouteError } from 'react-router';

const DEFAULT_MESSAGE = '应用程序遇到了错误';

// After a deploy the old chunk names are gone, so a lazy page import fails with one of these
// browser-specific texts (or the server answers the missing .js with index.html as text/html).
// Reloading fetches the new build, which is why this case gets its own "updated" view.
const RESOURCE_LOAD_FAILURE_PATTERNS = [
  /Failed to fetch dynamically imported module/i, // Chrome, Edge
  /error loading dynamically imported module/i, // Firefox
  /Importing a module script failed/i, // Safari
  /is not a valid JavaScript MIME type/i, // a chunk answered with the wrong MIME type
];

export function isResourceLoadFailure(error: unknown): boolean {
  return (
    error instanceof TypeError &&
    RESOURCE_LOAD_FAILURE_PATTERNS.some((pattern) => pattern.test(error.message))
  );
}

function describe(error: unknown): string {
  if (isRouteErrorResponse(error)) return error.statusText || DEFAULT_MESSAGE;
  if (error instanceof Error && error.message) return error.message;
  return DEFAULT_MESSAGE;
}

function reload(): void {
  window.location.reload();
}

// Plain markup on purpose: this page must render even when the component library is what broke.
function ErrorView({ title, text, action }: { title: string; text: string; action: string }) {
  return (
    <div role="alert" className="flex h-full flex-col items-center justify-center gap-3 p-6 text-center">
      <h1 className="text-xl font-semibold text-gray-900">{title}</h1>
      <p className="max-w-lg break-words text-sm text-gray-600">{text}</p>
      <button
        type="button"
        className="rounded-md bg-[#4D8EFF] px-4 py-1.5 text-sm text-white hover:opacity-90"
        onClick={reload}
      >
        {action}
      </button>
    </div>
  );
}

export function RouteErrorPage() {
  const error = useRouteError();
  if (isResourceLoadFailure(error)) {
    return (
      <ErrorView title="页面已更新，新功能已上线" text="请刷新页面以获取最新功能和优化" action="立即刷新" />
    );
  }
  return <ErrorView title="出错了" text={describe(error)} action="重试" />;
}
