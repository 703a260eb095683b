// Lint rules for the extension: typescript-eslint's recommended set plus a
// few that catch forgotten promises in an event-driven extension.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['out/**', 'node_modules/**', 'eslint.config.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test's test() returns a promise the runner itself awaits.
        {
          allowForKnownSafeCalls: [{ from: 'package', name: ['test', 'describe'], package: 'node:test' }],
        },
      ],
      '@typescript-eslint/explicit-function-return-type': ['error', { allowExpressions: true }],
      eqeqeq: ['error', 'always'],
      curly: 'error',
    },
  },
);
