package io.quarkiverse.mysqllock.runtime.locked;

/** Builds a lock name from a method's arguments; generated at build time for each templated {@code @Locked} method. */
public interface LockNameResolver {

    String resolve(Object[] arguments);
}
