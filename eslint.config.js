// @ts-check
import js from '@eslint/js';
import noImportCycle from './eslint-rules/no-import-cycle.js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'var/', 'coverage/', 'bench/**/*.mjs', 'bench/out/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Tests poke at parsed JSON a lot; the boundaries in src/ are typed by zod instead.
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true, allowNullish: true }],
    },
  },
  {
    // The source is a tree, not a web: no import cycle (value imports, re-exports and import()), and the
    // shared shapes in src/domain.ts depend on nothing below them (only their siblings at the root).
    files: ['src/**/*.ts'],
    plugins: { local: { rules: { 'no-import-cycle': noImportCycle } } },
    rules: {
      'local/no-import-cycle': 'error',
    },
  },
  {
    files: ['src/domain.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '^\\.\\./|^\\./[^/]+/', message: 'domain.ts is the root of the tree: it imports nothing from a folder' }] }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
);
