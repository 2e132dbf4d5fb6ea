import type { BalanceLimit } from '@callpilot/contracts';
import { describe, expect, it } from 'vitest';
import { isFeatureAvailable } from '../use-feature-available';

const limits: BalanceLimit = {
  assistantLimit: 0,
  knowledgeLimit: 3,
  ttsCloneLimit: 0,
  hasBalance: true,
  concurrentCallin: 0,
  concurrentCallout: 2,
};

describe('feature availability', () => {
  it('opens every feature when the project has no balance record', () => {
    expect(isFeatureAvailable({ ...limits, hasBalance: false }, 'assistant')).toBe(true);
    expect(isFeatureAvailable(undefined, 'ttsClone')).toBe(true);
  });

  it('needs a non-zero limit when the project has a balance', () => {
    expect(isFeatureAvailable(limits, 'assistant')).toBe(false);
    expect(isFeatureAvailable(limits, 'knowledge')).toBe(true);
    expect(isFeatureAvailable(limits, 'ttsClone')).toBe(false);
    expect(isFeatureAvailable(limits, 'concurrentCallin')).toBe(false);
    expect(isFeatureAvailable(limits, 'concurrentCallout')).toBe(true);
  });
});
