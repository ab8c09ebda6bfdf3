package io.quarkiverse.mysqllock.runtime.locked;

/** How a {@code @Locked} method returns, which decides how long its lock is held and what SKIP returns. */
public enum ReturnKind {
    VOID,
    VALUE,
    OPTIONAL,
    COMPLETION_STAGE,
    UNI,
    /** A Kotlin {@code suspend} function returning a value: its last parameter is the caller's continuation. */
    SUSPEND,
    /** A Kotlin {@code suspend} function returning {@code Unit}. */
    SUSPEND_UNIT;

    /** Whether it is a Kotlin {@code suspend} function. */
    public boolean suspends() {
        return this == SUSPEND || this == SUSPEND_UNIT;
    }
}
