// Exit codes of SPEC §3 (sysexits.h where one fits).
export const EXIT = {
  OK: 0,
  FAILURE: 1, // runtime failure; `once`: a step failed or is unknown
  USAGE: 2,
  LOCKED: 75, // EX_TEMPFAIL: another instance holds the state file
  CONFIG: 78, // EX_CONFIG
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
