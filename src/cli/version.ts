// The version `--version` prints and `autoclaim_build_info` reports; test/cli/version.test.ts
// keeps it equal to package.json's.
export const VERSION = '0.1.0';
