// make lint runs this over frontend/static/js: ES modules loaded by the
// browser as written, so browser globals and nothing else.
import js from "@eslint/js";
import globals from "globals";

export default [
  js.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "module",
      globals: { ...globals.browser },
    },
    rules: {
      // Leaving keys out of a copy ({ kind, ...rest }) and ignoring a caught
      // error are both meant.
      "no-unused-vars": ["error", { ignoreRestSiblings: true, caughtErrors: "none" }],
    },
  },
];
