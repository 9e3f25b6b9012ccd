// ESLint flat config: typescript-eslint's type-aware rules on every TypeScript file (sources,
// tests, benches, e2e), the plain recommended rules on JavaScript. `npm run lint` runs it.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    ignores: [
      '**/node_modules/',
      '**/dist/',
      'sw/bundle/',
      'coverage/',
      'test-results/',
      'playwright-report/',
      '**/.tmp/',
      '**/.webpp-data/',
      // Bundles written by the builds (git-ignored).
      'examples/demo/site/js/dashboard.js',
      // Pages and scripts of the extraction fixtures: site content, not project code.
      'e2e/fixtures/',
      'examples/workbox-sw/site/sw.js',
    ],
  },
  js.configs.recommended,
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        // Every TypeScript file belongs to one of these projects (tsconfig.check.json lists them).
        project: [
          'packages/*/tsconfig.json',
          'packages/*/test/tsconfig.json',
          'origin/tsconfig.json',
          'origin/test/tsconfig.json',
          'sw/tsconfig.json',
          'sw/tsconfig.page.json',
          'sw/test/tsconfig.json',
          'sw/bench/tsconfig.json',
          'examples/demo/tsconfig.json',
          'examples/tsconfig.json',
          'e2e/tsconfig.json',
          'e2e/tsconfig.sw.json',
          'tsconfig.tools.json',
        ],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // A switch over a union names every member (or says `default`), so a new member is not
      // silently ignored.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // Off: Fastify hooks/handlers and Workbox callbacks are async by contract; dropping `async`
      // would turn a rejected promise into a synchronous throw.
      '@typescript-eslint/require-await': 'off',
      // The code's convention: a leading underscore marks a binding left unused on purpose
      // (e.g. a property dropped from a rest spread).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Passing on an abort reason or a caught rejection as it is is right; rejecting with a
      // string or a literal is still reported.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      // The bindings decoder's DecodeFailure is a control-flow sentinel caught inside the
      // decoder (no stack trace wanted on hostile input).
      '@typescript-eslint/only-throw-error': ['error', { allow: [{ from: 'file', name: 'DecodeFailure' }] }],
    },
  },
  {
    // AS241's coefficients are copied digit for digit from the paper (Wichura 1988).
    files: ['packages/core/src/normal-quantile.ts'],
    rules: { 'no-loss-of-precision': 'off' },
  },
  {
    files: ['**/test/**/*.ts', '**/bench/**/*.ts', 'e2e/**/*.ts'],
    rules: {
      // Off in tests and benches: they read untyped JSON bodies (`response.json()` is `any`)
      // and check them with expect; typing every body would add casts, not safety.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    // Page scripts of the example sites and the evaluation bench's page workload.
    files: ['examples/*/site/**/*.js', 'examples/*/legacy-site/**/*.js', 'e2e/bench/evaluation/page-workload.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['examples/workbox-sw/src/sw.js'],
    languageOptions: { globals: { ...globals.serviceworker } },
  },
);
