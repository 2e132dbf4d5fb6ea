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

const foldersIn = (path: string) =>
  readdirSync(resolve(import.meta.dirname, path), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);

const featureNames = foldersIn('../features');
const entityNames = foldersIn('../entities');
/** The layers under src/ that are neither the app (which composes everything) nor a feature or entity. */
const sharedNames = foldersIn('..').filter(
  (name) => !['app', 'features', 'entities', 'test', '__tests__'].includes(name),
);

function restrictedGroups(folder: string) {
  const override = biomeConfig.overrides?.find((candidate) =>
    candidate.includes?.includes(`apps/web/src/${folder}/**`),
  );
  const rule = override?.linter?.rules?.style?.noRestrictedImports;
  return {
    level: rule?.level,
    groups: (rule?.options?.patterns ?? []).map((pattern) => pattern.group ?? []),
  };
}

// Biome cannot express "each feature folder" generically, so every folder needs its own override;
// this keeps a newly added feature from silently escaping the boundary rule.
describe('feature boundaries', () => {
  it('finds the feature folders', () => {
    expect(featureNames).toEqual(expect.arrayContaining(['auth', 'dashboard']));
  });

  it.each(featureNames)('biome.json forbids feature "%s" from importing other features', (feature) => {
    const { level, groups } = restrictedGroups(`features/${feature}`);

    expect(level).toBe('error');
    expect(groups).toContainEqual(
      expect.arrayContaining(['@/features/**', `!@/features/${feature}`, `!@/features/${feature}/**`]),
    );
    expect(groups).toContainEqual(expect.arrayContaining(['../../*', '../../**']));
  });

  // Entities (the call layer the call features share) sit between the features and the shared code.
  it('finds the entity folders', () => {
    expect(entityNames).toEqual(expect.arrayContaining(['call']));
  });

  it.each(entityNames)(
    'biome.json forbids entity "%s" from importing features or other entities',
    (entity) => {
      const { level, groups } = restrictedGroups(`entities/${entity}`);

      expect(level).toBe('error');
      expect(groups).toContainEqual(
        expect.arrayContaining([
          '@/features/**',
          '@/entities/**',
          `!@/entities/${entity}`,
          `!@/entities/${entity}/**`,
        ]),
      );
      expect(groups).toContainEqual(expect.arrayContaining(['../../*', '../../**']));
    },
  );

  it.each(sharedNames)('biome.json forbids shared src/%s from importing features or entities', (folder) => {
    const { level, groups } = restrictedGroups(folder);

    expect(level).toBe('error');
    expect(groups).toContainEqual(expect.arrayContaining(['@/features/**', '@/entities/**']));
  });
});
