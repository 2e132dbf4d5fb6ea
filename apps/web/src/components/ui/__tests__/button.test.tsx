import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { Button } from '../button';

describe('Button', () => {
  it('renders each variant with its own styles', () => {
    render(
      <>
        <Button>保存</Button>
        <Button variant="destructive">删除</Button>
        <Button variant="dashed" size="sm">
          添加
        </Button>
      </>,
    );
    const save = screen.getByRole('button', { name: '保存' });
    const remove = screen.getByRole('button', { name: '删除' });
    const add = screen.getByRole('button', { name: '添加' });
    expect(save.dataset.variant).toBe('default');
    expect(save.className).toContain('bg-[#4D8EFF]');
    expect(remove.className).toContain('bg-[#FF5656]');
    expect(add.className).toContain('border-dashed');
    expect(add.className).toContain('h-6');
  });

  it('renders its child instead of a button with asChild', () => {
    render(
      <Button asChild variant="link">
        <a href="/dashboard">首页</a>
      </Button>,
    );
    const link = screen.getByRole('link', { name: '首页' });
    expect(link.className).toContain('hover:underline');
  });
});
