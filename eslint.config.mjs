// ESLint: typescript-eslint's type-aware recommended rules, plus the three that catch what our
// tests would only catch by luck: a promise nobody awaits (a write that fails silently), a promise
// passed where a callback's result is ignored (an event handler that throws into nowhere), and a
// switch over a union that forgets a member (a new status nobody handles). Formatting is Prettier's.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const NODE_GLOBALS = { process: 'readonly', console: 'readonly', URL: 'readonly', Buffer: 'readonly' };

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**'] },
  js.configs.recommended,
  // type-aware rules for TypeScript; the few .js/.mjs/.cjs files (bin, scripts, the dashboard's
  // browser script, configs) get the plain recommended rules
  ...tseslint.configs.recommendedTypeChecked.map((c) => ({ ...c, files: ['**/*.ts'] })),
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // tsc checks these already (noUnusedLocals, noUnusedParameters in tsconfig.json)
      '@typescript-eslint/no-unused-vars': 'off',
      // `async` says a function returns a promise, as an interface's method must, whether or not
      // its body awaits; the promise nobody awaits is what no-floating-promises is for
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // tests read the API's JSON answers as `any` on purpose: the assertions are the check
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: { globals: NODE_GLOBALS },
  },
  {
    // the dashboard's own script runs in the browser
    files: ['assets/**/*.js'],
    languageOptions: {
      globals: {
        window: 'readonly',
        document: 'readonly',
        fetch: 'readonly',
        location: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        EventSource: 'readonly',
        history: 'readonly',
        navigator: 'readonly',
        URLSearchParams: 'readonly',
        FormData: 'readonly',
        console: 'readonly',
      },
    },
  },
);
