export function RouteFallback() {
  return <div className="flex h-full items-center justify-center text-sm text-gray-500">加载中...</div>;
}
