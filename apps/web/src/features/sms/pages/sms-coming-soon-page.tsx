import { Empty } from 'antd';

/** A tab of the section that is not built yet: says what it will do rather than showing nothing. */
export function SmsComingSoonPage({ title, description }: { title: string; description: string }) {
  return (
    <section className="rounded-lg border border-gray-200 bg-white py-12">
      <Empty description={`即将推出：${title}。${description}`} />
    </section>
  );
}
