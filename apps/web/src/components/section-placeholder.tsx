import { Empty } from 'antd';
import { FeatureUnavailableAlert } from '@/components/feature-unavailable-alert';
import { type SectionKey, sections } from '@/config/nav';

/** A shell section whose pages have not been built yet: its title and an honest empty state. */
export function SectionPlaceholder({ section: key }: { section: SectionKey }) {
  const section = sections.find((candidate) => candidate.key === key);
  return (
    <main className="flex flex-col gap-6 p-6">
      <h1 className="text-2xl font-semibold text-gray-900">{section?.label}</h1>
      {section?.feature && <FeatureUnavailableAlert feature={section.feature} />}
      <section className="rounded-lg border border-gray-200 bg-white py-12">
        <Empty description="该功能正在建设中，暂无内容" />
      </section>
    </main>
  );
}
