// ESLint, part of `npm test`: type-aware rules that catch what tsc does not —
// a promise nobody awaits, a switch that forgets a status, a value import of
// something only used as a type.
import nextCoreWebVitals from "eslint-config-next/core-web-vitals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "node_modules/**",
      ".next/**",
      ".data/**",
      "lib/generated/**",
      "test-results/**",
      "playwright-report/**",
      "packages/*/dist/**",
      "stubs/**",
      "**/*.mjs",
      "**/*.cjs",
      "**/*.js",
      "next-env.d.ts",
    ],
  },
  // Next's own rules (React, hooks, accessibility, Next's pitfalls) as `next lint` used to apply them.
  ...nextCoreWebVitals,
  {
    files: ["**/*.ts", "**/*.tsx"],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { "@typescript-eslint": tseslint.plugin },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/switch-exhaustiveness-check": ["error", { considerDefaultExhaustiveForUnions: true }],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
    },
  },
  {
    // Hooks are React's: a test fixture named use… (useTestDatabase) is not one.
    files: ["tests/**", "e2e/**", "bench/**", "scripts/**", "**/*.test.ts"],
    rules: { "react-hooks/rules-of-hooks": "off" },
  },
);
