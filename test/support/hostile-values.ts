/**
 * Values user code may throw or return that cannot be read: shared by the tests that feed them to
 * the run (hooks, tools, stop conditions, the model, stores).
 */

/** A Proxy every trap of which throws — reads, `in`, keys, descriptors, even `instanceof`'s `getPrototypeOf`. */
export const throwingProxy = (): object =>
  new Proxy(
    {},
    {
      get() {
        throw new Error('hostile get');
      },
      has() {
        throw new Error('hostile has');
      },
      ownKeys() {
        throw new Error('hostile ownKeys');
      },
      getOwnPropertyDescriptor() {
        throw new Error('hostile descriptor');
      },
      getPrototypeOf() {
        throw new Error('hostile getPrototypeOf');
      },
    },
  );

/** A revoked Proxy: any operation on it throws a `TypeError`. */
export const revokedProxy = (): object => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
};

/** A Proxy posing as an `Error` (its prototype is `Error.prototype`) whose reads throw. */
export const errorPosingProxy = (): object =>
  new Proxy(new Error('inner'), {
    get() {
      throw new Error('hostile get');
    },
  });
