package io.quarkiverse.mysqllock.runtime.locked;

/** How a {@code @Locked} method returns, which decides how long its lock is held and what SKIP returns. */
public enum ReturnKind {
    VOID,
    VALUE,
    OPTIONAL,
    COMPLETION_STAGE,
    UNI
}
