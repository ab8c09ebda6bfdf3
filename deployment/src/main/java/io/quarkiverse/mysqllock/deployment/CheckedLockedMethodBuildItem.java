package io.quarkiverse.mysqllock.deployment;

import java.util.List;

import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.runtime.locked.ReturnKind;
import io.quarkus.builder.item.MultiBuildItem;

/**
 * A {@code @Locked} method that passed every check, with its annotation parsed: what the interceptor needs for it, and
 * for a templated lock name what its resolver is generated from.
 */
final class CheckedLockedMethodBuildItem extends MultiBuildItem {

    /** The method's {@link io.quarkiverse.mysqllock.runtime.locked.LockedMethodKey}. */
    final String key;
    /** {@code @Locked method <class>#<method>()}, for messages. */
    final String description;
    /** The lock name when the template has no placeholder, else null. */
    final String fixedName;
    /** The class {@link LockNameResolverGenerator} generates for a templated name, else null. */
    final String resolverClassName;
    final List<LockNameTemplate.Segment> segments;
    /** In the order of the placeholder segments. */
    final List<LockNamePlaceholders.Placeholder> placeholders;
    /** {@code waitFor}, {@code atLeastFor} and {@code atMostFor} as written ({@code ${...}}: resolved at start). */
    final String wait;
    final OnBusy onBusy;
    final String atLeastFor;
    /** Empty when not set. */
    final String atMostFor;
    final Locked.Mode mode;
    /** mode PERMIT: the semaphore's permits; 0 otherwise. */
    final int permits;
    final ReturnKind kind;
    /** The index of the {@code ScheduledExecution} parameter whose tick the method claims, or -1. */
    final int tickParameter;
    /** {@code interruptOnLoss}: a loss interrupts the thread running the method. */
    final boolean interruptOnLoss;
    /** The index of the {@code LockHandle} parameter the interceptor fills, or -1. */
    final int handleParameter;
    /** A tick-claiming method's {@code @Scheduled(every)}, whose ticks count per interval; else empty. */
    final String every;
    /** A tick-claiming method's one {@code @Scheduled(cron)} and its {@code timeZone}; else empty. */
    final String cron;
    final String timeZone;
    /** {@code datasource}: empty for the lock datasource. */
    final String dataSource;

    CheckedLockedMethodBuildItem(String key, String description, String fixedName, String resolverClassName,
            List<LockNameTemplate.Segment> segments, List<LockNamePlaceholders.Placeholder> placeholders, String wait,
            OnBusy onBusy, String atLeastFor, String atMostFor, Locked.Mode mode, int permits, ReturnKind kind,
            int tickParameter, boolean interruptOnLoss, int handleParameter, String every, String cron, String timeZone,
            String dataSource) {
        this.mode = mode;
        this.permits = permits;
        this.key = key;
        this.description = description;
        this.fixedName = fixedName;
        this.resolverClassName = resolverClassName;
        this.segments = List.copyOf(segments);
        this.placeholders = List.copyOf(placeholders);
        this.wait = wait;
        this.onBusy = onBusy;
        this.atLeastFor = atLeastFor;
        this.atMostFor = atMostFor;
        this.kind = kind;
        this.tickParameter = tickParameter;
        this.interruptOnLoss = interruptOnLoss;
        this.handleParameter = handleParameter;
        this.every = every;
        this.cron = cron;
        this.timeZone = timeZone;
        this.dataSource = dataSource;
    }
}
