package io.quarkiverse.mysqllock.deployment;

import java.util.Map;

import io.quarkiverse.mysqllock.runtime.locked.LockedMethod;
import io.quarkus.builder.item.SimpleBuildItem;
import io.quarkus.runtime.RuntimeValue;

/** The table of {@code @Locked} methods recorded at static init, whose config expressions are resolved at start. */
final class LockedTableBuildItem extends SimpleBuildItem {

    final RuntimeValue<Map<String, LockedMethod>> table;
    /** Whether a method's durations hold {@code ${...}} config expressions. */
    final boolean expressions;

    LockedTableBuildItem(RuntimeValue<Map<String, LockedMethod>> table, boolean expressions) {
        this.table = table;
        this.expressions = expressions;
    }
}
