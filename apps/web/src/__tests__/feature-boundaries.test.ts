import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

type RestrictedImportPattern = { group?: string[] };
type BiomeOverride = {
  includes?: string[];
  linter?: {
    rules?: {
      style?: {
        noRestrictedImports?: { level?: string; options?: { patterns?: RestrictedImportPattern[] } };
      };
    };
  };
};

const biomeConfig = JSON.parse(
  readFileSync(resolve(import.meta.dirname, '../../../../biome.json'), 'utf8'),
) as { overrides?: BiomeOverride[] };

const featureNames = readdirSync(resolve(import.meta.dirname, '../features'), {
  withFileTypes: true,
})
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

// Biome cannot express "each feature folder" generically, so every folder needs its own override;
// this keeps a newly added feature from silently escaping the boundary rule.
describe('feature boundaries', () => {
  it('finds the feature folders', () => {
    expect(featureNames).toEqual(expect.arrayContaining(['auth', 'dashboard']));
  });

  it.each(featureNames)('biome.json forbids feature "%s" from importing other features', (feature) => {
    const override = biomeConfig.overrides?.find((candidate) =>
      candidate.includes?.includes(`apps/web/src/features/${feature}/**`),
    );
    const rule = override?.linter?.rules?.style?.noRestrictedImports;
    const groups = (rule?.options?.patterns ?? []).map((pattern) => pattern.group ?? []);

    expect(rule?.level).toBe('error');
    expect(groups).toContainEqual(
      expect.arrayContaining(['@/features/**', `!@/features/${feature}`, `!@/features/${feature}/**`]),
    );
    expect(groups).toContainEqual(expect.arrayContaining(['../../*', '../../**']));
  });
});
