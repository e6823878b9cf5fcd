// ESLint flat config (npm run lint checks, npm run format fixes): the recommended rules, a few more
// that catch real bugs, and the house style through @stylistic's rules -- 2-space indent, 120
// columns, single quotes, semicolons -- which check the style without reprinting the code.
import js from '@eslint/js';
import stylistic from '@stylistic/eslint-plugin';
import globals from 'globals';

export default [
  {
    ignores: ['dist/**', 'build/**', 'coverage/**', 'node_modules/**', 'wasm/**', 'tests/fuzz/**',
      '**/*.min.js'],
  },
  js.configs.recommended,
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: {
      ecmaVersion: 2024,
      sourceType: 'module',
      // the package runs in Node and in browsers (and workers); tests and scripts run in Node
      globals: { ...globals.node, ...globals.browser, ...globals.worker },
    },
    // directives naming rules this config leaves off are kept (other configs may turn them on)
    linterOptions: { reportUnusedDisableDirectives: 'off' },
    plugins: { '@stylistic': stylistic },
    rules: {
      // bugs
      'no-unused-vars': ['error', { args: 'none', caughtErrors: 'none', ignoreRestSiblings: true }],
      'no-implicit-globals': 'error',
      'no-shadow-restricted-names': 'error',
      'no-self-compare': 'error',
      'no-template-curly-in-string': 'error',
      'no-unreachable-loop': 'error',
      'no-use-before-define': ['error', { functions: false, classes: false, variables: false }],
      'array-callback-return': 'error',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-var': 'error',
      'prefer-const': ['error', { destructuring: 'all' }],
      'no-empty': ['error', { allowEmptyCatch: true }],
      // style (today's code: compact one-line cases, objects and ifs are allowed)
      '@stylistic/indent': ['error', 2, {
        SwitchCase: 1, flatTernaryExpressions: true, offsetTernaryExpressions: false,
        ignoredNodes: ['ConditionalExpression', 'TemplateLiteral *'],
      }],
      // a warning: no formatter wraps long JS lines, so the lines over 120 columns are listed, not fatal
      '@stylistic/max-len': ['warn', {
        code: 120, ignoreUrls: true, ignoreRegExpLiterals: true, ignoreStrings: true, ignoreTemplateLiterals: true,
      }],
      '@stylistic/quotes': ['error', 'single', { avoidEscape: true, allowTemplateLiterals: 'always' }],
      '@stylistic/semi': ['error', 'always'],
      '@stylistic/no-extra-semi': 'error',
      '@stylistic/no-trailing-spaces': 'error',
      '@stylistic/eol-last': 'error',
      '@stylistic/no-tabs': 'error',
      '@stylistic/no-mixed-spaces-and-tabs': 'error',
      '@stylistic/no-multiple-empty-lines': ['error', { max: 2, maxEOF: 0 }],
      '@stylistic/brace-style': ['error', '1tbs', { allowSingleLine: true }],
      '@stylistic/comma-spacing': 'error',
      '@stylistic/keyword-spacing': 'error',
      '@stylistic/space-before-blocks': 'error',
      '@stylistic/space-infix-ops': 'error',
      '@stylistic/arrow-spacing': 'error',
      '@stylistic/comma-dangle': ['error', 'always-multiline'],
    },
  },
  {
    // TypeScript declarations written as strings: `${string}` there is a template literal type
    files: ['scripts/gen-api.mjs'],
    rules: { 'no-template-curly-in-string': 'off' },
  },
  {
    // CommonJS files, if any
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { ...globals.node } },
  },
];
