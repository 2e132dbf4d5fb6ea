import { fireEvent, render, screen } from '@testing-library/react';
import { Button, DatePicker, Form, Input } from 'antd';
import { describe, expect, it } from 'vitest';
import { AppProvider } from '../provider';

describe('root providers', () => {
  it('validates forms with the Chinese default messages', async () => {
    render(
      <AppProvider>
        <Form>
          <Form.Item label="手机号" name="phone" rules={[{ required: true }]}>
            <Input />
          </Form.Item>
          <Form.Item label="名称" name="name" rules={[{ max: 2 }]} initialValue="超过两个字">
            <Input />
          </Form.Item>
          <Button htmlType="submit">提交</Button>
        </Form>
      </AppProvider>,
    );
    fireEvent.click(screen.getByRole('button', { name: '提交' }));
    expect(await screen.findByText('请输入手机号')).toBeTruthy();
    expect(await screen.findByText('名称最多2个字符')).toBeTruthy();
  });

  it('speaks Chinese in pickers', () => {
    render(
      <AppProvider>
        <DatePicker open />
      </AppProvider>,
    );
    expect(screen.getByText('今天')).toBeTruthy();
  });
});
