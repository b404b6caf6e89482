// A command line that cannot be acted on (exit 2). In a module of its own so that program.ts can
// recognise it without loading the command context (and with it the config pipeline).
export class UsageError extends Error {}
