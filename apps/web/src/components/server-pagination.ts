import type { TablePaginationConfig } from 'antd';

/**
 * A table's pagination over one page the server answered (lists paginate on the server): its page,
 * size and total, a size changer, and 共 N 条. Before the first answer it shows page 1 of nothing.
 */
export function serverPagination(
  page: { page: number; pageSize: number; total: number } | undefined,
  onChange: (page: number, pageSize: number) => void,
): TablePaginationConfig {
  return {
    current: page?.page ?? 1,
    pageSize: page?.pageSize ?? 20,
    total: page?.total ?? 0,
    showSizeChanger: true,
    showTotal: (total) => `共 ${total} 条`,
    hideOnSinglePage: false,
    onChange,
  };
}
