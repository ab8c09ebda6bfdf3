package io.quarkiverse.mysqllock.runtime.locked;

import static io.smallrye.common.expression.Expression.Flag.LENIENT_SYNTAX;
import static io.smallrye.common.expression.Expression.Flag.NO_TRIM;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Function;

import io.quarkiverse.mysqllock.LockOptions;
import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.common.expression.Expression;

/**
 * The {@code waitFor}, {@code atLeastFor} and {@code atMostFor} of a {@code @Locked} method as written: a duration, or
 * a config expression ({@code ${property}}, {@code ${property:default}}) resolved when the application starts, as
 * {@code @Scheduled} resolves its own. The build checks the members without expressions; the start checks the others,
 * with the same messages.
 */
public final class LockedOptions {

    private LockedOptions() {
    }

    /** Whether a member holds a config expression, resolved at start. */
    public static boolean isExpression(String text) {
        return text.contains("${");
    }

    /**
     * A member's duration; {@code atMostFor} may be empty (no cap).
     *
     * @param config the value of a config property, or empty if it is not set
     * @throws IllegalArgumentException naming the member, its text and what is wrong with it
     */
    public static Duration duration(String member, String text, Function<String, Optional<String>> config) {
        String resolved = isExpression(text) ? resolve(member, text, config) : text;
        String written = member + " = \"" + text + "\"" + (resolved.equals(text) ? "" : " is \"" + resolved + "\", which");
        if (resolved.isEmpty() && member.equals("atMostFor")) {
            return Duration.ZERO;
        }
        Duration duration;
        try {
            duration = DurationConverter.parseDuration(resolved);
        } catch (RuntimeException e) {
            duration = null;
        }
        if (duration == null) {
            throw new IllegalArgumentException(written + " is not a duration (use"
                    + " \"5s\", \"500ms\" or \"PT5S\")");
        }
        if (duration.isNegative()) {
            throw new IllegalArgumentException(written + " must be a duration of zero or more");
        }
        if (member.equals("atMostFor") && duration.compareTo(LockOptions.MIN_AT_MOST_FOR) < 0) {
            throw new IllegalArgumentException(written + " must be at least 500ms");
        }
        return duration;
    }

    /** Whether a {@code @Scheduled} member reads config: {@code ${property}}, or the scheduler's {@code {property}}. */
    static boolean isScheduledExpression(String text) {
        String trimmed = text.trim();
        return isExpression(trimmed) || trimmed.startsWith("{") && trimmed.endsWith("}");
    }

    /**
     * The interval of a {@code @Scheduled(every = ...)} in milliseconds, as the scheduler reads it; 0 when empty,
     * {@code off} or {@code disabled}, or not a duration (the scheduler then refuses it itself).
     */
    static long everyMillis(String every, Function<String, Optional<String>> config) {
        String text = every.trim();
        if (text.startsWith("{") && text.endsWith("}")) {
            text = "$" + text; // the scheduler's older syntax
        }
        try {
            String resolved = isExpression(text) ? resolve("every", text, config).trim() : text;
            if (resolved.isEmpty() || resolved.equalsIgnoreCase("off") || resolved.equalsIgnoreCase("disabled")) {
                return 0;
            }
            Duration interval = DurationConverter.parseDuration(resolved);
            return interval == null || interval.isNegative() ? 0 : interval.toMillis();
        } catch (RuntimeException e) {
            return 0;
        }
    }

    /** The options a method's members ask for, as a programmatic caller's {@link LockOptions} would. */
    public static LockOptions options(String description, String waitFor, String atLeastFor, String atMostFor,
            boolean interruptOnLoss, Function<String, Optional<String>> config) {
        try {
            LockOptions options = LockOptions.waitingUpTo(duration("waitFor", waitFor, config))
                    .holdingAtMost(duration("atMostFor", atMostFor, config))
                    .holdingAtLeast(duration("atLeastFor", atLeastFor, config));
            return interruptOnLoss ? options.interruptingOnLoss() : options;
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(description + ": " + e.getMessage(), e);
        }
    }

    private static String resolve(String member, String text, Function<String, Optional<String>> config) {
        try {
            return Expression.compile(text, LENIENT_SYNTAX, NO_TRIM).evaluate((context, builder) -> {
                Optional<String> value = config.apply(context.getKey());
                if (value.isPresent()) {
                    builder.append(value.get());
                } else if (context.hasDefault()) {
                    context.expandDefault();
                } else {
                    throw new IllegalArgumentException(member + " = \"" + text + "\": the property " + context.getKey()
                            + " is not set. Set it, or give the expression a default: ${" + context.getKey() + ":5s}");
                }
            });
        } catch (IllegalArgumentException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(member + " = \"" + text + "\" is not a valid config expression: "
                    + e.getMessage(), e);
        }
    }
}
