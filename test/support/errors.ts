// The error a call throws, for tests that go on to read its code, disposition or message.

/** What `fn` throws, which must be a `type`; another error is rethrown, and no error fails the test. */
export function thrown<E extends Error>(type: abstract new (...args: never[]) => E, fn: () => unknown): E {
  try {
    fn();
  } catch (err) {
    if (err instanceof type) return err;
    throw err;
  }
  throw new Error(`expected a ${type.name}, nothing was thrown`);
}
