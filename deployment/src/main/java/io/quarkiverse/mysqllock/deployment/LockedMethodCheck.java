package io.quarkiverse.mysqllock.deployment;

import java.lang.reflect.Modifier;
import java.util.List;
import java.util.Optional;

import org.jboss.jandex.AnnotationInstance;
import org.jboss.jandex.AnnotationValue;
import org.jboss.jandex.DotName;
import org.jboss.jandex.IndexView;
import org.jboss.jandex.MethodInfo;
import org.jboss.jandex.Type;

import io.quarkiverse.mysqllock.DistributedSemaphore;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.runtime.LockNames;
import io.quarkiverse.mysqllock.runtime.locked.LockedOptions;
import io.quarkiverse.mysqllock.runtime.locked.ReturnKind;

/**
 * Checks one {@code @Locked} method and parses its annotation: the return type, the durations, {@code onBusy} and the
 * lock name template with its placeholders. Adds a message for each misuse instead of stopping at the first, so that
 * the build can report them all at once.
 */
final class LockedMethodCheck {

    private static final DotName UNI = DotName.createSimple("io.smallrye.mutiny.Uni");
    private static final DotName MULTI = DotName.createSimple("io.smallrye.mutiny.Multi");
    private static final DotName COMPLETION_STAGE = DotName.createSimple("java.util.concurrent.CompletionStage");
    private static final DotName COMPLETABLE_FUTURE = DotName.createSimple("java.util.concurrent.CompletableFuture");
    private static final DotName OPTIONAL = DotName.createSimple("java.util.Optional");
    private static final DotName LOCK_HANDLE = DotName.createSimple(LockHandle.class);
    /** The last parameter of a Kotlin {@code suspend} function, as the JVM sees it. */
    private static final DotName CONTINUATION = DotName.createSimple("kotlin.coroutines.Continuation");
    private static final DotName KOTLIN_UNIT = DotName.createSimple("kotlin.Unit");
    /** What kotlinc puts on every class it compiles: a {@code Continuation} parameter elsewhere is no suspend function. */
    private static final DotName KOTLIN_METADATA = DotName.createSimple("kotlin.Metadata");
    private static final DotName OBJECT = DotName.createSimple("java.lang.Object");
    private static final DotName SCHEDULED_EXECUTION = DotName.createSimple("io.quarkus.scheduler.ScheduledExecution");
    private static final DotName SCHEDULED = DotName.createSimple("io.quarkus.scheduler.Scheduled");
    private static final DotName SCHEDULES = DotName.createSimple("io.quarkus.scheduler.Scheduled$Schedules");

    private LockedMethodCheck() {
    }

    /** Why interceptors do not apply to the method (private or static), or null when they do. */
    static String notInterceptable(MethodInfo method) {
        if (!Modifier.isPrivate(method.flags()) && !Modifier.isStatic(method.flags())) {
            return null;
        }
        return describe(method) + " is " + (Modifier.isPrivate(method.flags()) ? "private" : "static")
                + ": interceptors do not apply to it. Make it a non-private instance method of a bean";
    }

    /** The method checked and parsed, or null when it is misused; then {@code errors} says how. */
    static CheckedLockedMethodBuildItem check(IndexView index, LockedMethodBuildItem found, List<String> errors) {
        MethodInfo method = found.method();
        AnnotationInstance annotation = found.annotation();
        String description = describe(method);
        int before = errors.size();
        ReturnKind kind = returnKind(method, errors);
        OnBusy onBusy = OnBusy.valueOf(stringValue(annotation, "onBusy", OnBusy.FAIL.name()));
        // durations as written: those holding ${...} config expressions are resolved and checked at start
        String wait = stringValue(annotation, "waitFor", "0s");
        String atLeastFor = stringValue(annotation, "atLeastFor", "0s");
        String atMostFor = stringValue(annotation, "atMostFor", "");
        boolean expressions = false;
        for (String[] member : new String[][] { { "waitFor", wait }, { "atLeastFor", atLeastFor },
                { "atMostFor", atMostFor } }) {
            if (LockedOptions.isExpression(member[1])) {
                expressions = true;
                continue;
            }
            try {
                LockedOptions.duration(member[0], member[1], property -> Optional.empty());
            } catch (IllegalArgumentException e) {
                errors.add(description + ": " + e.getMessage());
            }
        }
        if (errors.size() == before && !expressions) {
            try {
                // what a programmatic caller's LockOptions would refuse
                LockedOptions.options(description, wait, atLeastFor, atMostFor, false, property -> Optional.empty());
            } catch (IllegalArgumentException e) {
                errors.add(e.getMessage());
            }
        }
        Locked.Mode mode = Locked.Mode.valueOf(stringValue(annotation, "mode", Locked.Mode.EXCLUSIVE.name()));
        AnnotationValue permitsValue = annotation.value("permits");
        int permits = permitsValue == null ? 0 : permitsValue.asInt();
        int tickParameter = tickParameter(method);
        int handleParameter = handleParameter(method, description, errors);
        AnnotationValue interruptValue = annotation.value("interruptOnLoss");
        boolean interruptOnLoss = interruptValue != null && interruptValue.asBoolean();
        if (interruptOnLoss && isAsync(kind)) {
            errors.add(description + asyncly(kind) + " and has interruptOnLoss = true, but no thread runs its work to be"
                    + " interrupted. Stop the work from the lock's onLost listener instead, or return a value");
        }
        checkMode(description, mode, permits, kind, given("atLeastFor", atLeastFor) || given("atMostFor", atMostFor),
                tickParameter,
                errors);
        if (onBusy == OnBusy.SKIP && kind == ReturnKind.SUSPEND) {
            errors.add(description + " is a Kotlin suspend function that returns a value and has onBusy = SKIP, which"
                    + " returns null: the build cannot tell a nullable result from the bytecode. Return Unit, or use"
                    + " onBusy = FAIL and catch LockNotAcquiredException");
        } else if (onBusy == OnBusy.SKIP && kind == ReturnKind.VALUE
                && method.returnType().kind() == Type.Kind.PRIMITIVE) {
            errors.add(description + " returns " + method.returnType() + " and has onBusy = SKIP, which returns"
                    + " null: return a reference type, Optional, Uni or CompletionStage, or use onBusy = FAIL");
        } else if (tickParameter >= 0 && kind == ReturnKind.VALUE && method.returnType().kind() == Type.Kind.PRIMITIVE) {
            errors.add(description + " returns " + method.returnType() + " and claims scheduled ticks (a"
                    + " ScheduledExecution parameter): a tick that already ran returns null. Return void, a reference"
                    + " type or Optional");
        }
        String template = stringValue(annotation, "value", "");
        if (LockedOptions.isExpression(template)) {
            errors.add(description + ": lock name template \"" + template + "\" holds a config expression. Lock names"
                    + " are not read from config: instances configured differently would take different locks and not"
                    + " exclude each other. Write the name, or build it from parameters ({param})");
            return null;
        }
        LockNamePlaceholders.Resolved name = LockNamePlaceholders.parseAndResolve(index, method,
                template.isEmpty() ? method.declaringClass().name() + "#" + method.name() : template, template,
                description, errors);
        if (name == null) {
            return null;
        }
        List<LockNameTemplate.Segment> segments = name.segments();
        if (!segments.isEmpty() && !segments.get(0).isPlaceholder()
                && segments.get(0).literal().startsWith(LockNames.TICK_ROW_PREFIX)) {
            errors.add(description + ": lock name template \"" + template + "\" begins with '"
                    + LockNames.TICK_ROW_PREFIX + "', which is reserved: the lock table rows where scheduled @Locked"
                    + " methods record their ticks are named so. Choose another name");
            return null;
        }
        List<LockNamePlaceholders.Placeholder> placeholders = name.placeholders();
        for (LockNamePlaceholders.Placeholder placeholder : errors.size() == before ? placeholders
                : List.<LockNamePlaceholders.Placeholder> of()) {
            if (handleParameter >= 0 && placeholder.parameter() == handleParameter) {
                errors.add(description + ": lock name template \"" + template + "\" refers to the LockHandle parameter,"
                        + " which is the lock itself, given once it is taken. Name the lock from other parameters");
                break;
            }
        }
        if (errors.size() > before) {
            return null;
        }
        boolean templated = !placeholders.isEmpty();
        return new CheckedLockedMethodBuildItem(found.key(), description, templated ? null : name.fixedName(),
                templated ? LockNameResolverGenerator.className(found.key()) : null, segments, placeholders, wait, onBusy,
                atLeastFor, atMostFor, mode, permits, kind, tickParameter, interruptOnLoss, handleParameter,
                scheduled(method, tickParameter, "every"), scheduled(method, tickParameter, "cron"),
                scheduled(method, tickParameter, "timeZone"),
                stringValue(annotation, "datasource", ""));
    }

    /**
     * A member of a tick-claiming method's one {@code @Scheduled}, as written: its {@code every} (its fire times differ
     * from instance to instance, so its ticks are counted per interval), or its {@code cron} and {@code timeZone} (for
     * the ticks it missed). Empty where not given, and for several schedules ({@code @Schedules}).
     */
    private static String scheduled(MethodInfo method, int tickParameter, String member) {
        AnnotationInstance scheduled = method.declaredAnnotation(SCHEDULED);
        if (tickParameter < 0 || scheduled == null) {
            return "";
        }
        AnnotationValue value = scheduled.value(member);
        return value == null ? "" : value.asString();
    }

    /** What a shared mode (READ, WRITE, PERMIT) allows: the primitives' blocking API, without a minimum or a cap. */
    private static void checkMode(String description, Locked.Mode mode, int permits, ReturnKind kind, boolean bounded,
            int tickParameter, List<String> errors) {
        if (mode == Locked.Mode.PERMIT && (permits < 1 || permits > DistributedSemaphore.MAX_PERMITS)) {
            errors.add(description + ": mode = PERMIT needs permits between 1 and " + DistributedSemaphore.MAX_PERMITS
                    + ", not " + permits);
        }
        if (mode != Locked.Mode.PERMIT && permits != 0) {
            errors.add(description + ": permits = " + permits + " is for mode = PERMIT only (mode is " + mode + ")");
        }
        if (mode == Locked.Mode.EXCLUSIVE) {
            return;
        }
        if (isAsync(kind)) {
            errors.add(description + asyncly(kind) + ": mode = " + mode + " takes its lock blocking. Return a value, or"
                    + " use mode = EXCLUSIVE");
        }
        if (bounded) {
            errors.add(description + ": mode = " + mode + " takes no atLeastFor or atMostFor (they apply to"
                    + " exclusive locks)");
        }
        if (tickParameter >= 0) {
            errors.add(description + ": mode = " + mode + " cannot claim scheduled ticks (its ScheduledExecution"
                    + " parameter): each tick is claimed under an exclusive lock. Use mode = EXCLUSIVE, or remove the"
                    + " parameter");
        }
    }

    /**
     * Whether the method is {@code @Scheduled} without a {@code ScheduledExecution} parameter: then only
     * {@code atLeastFor} keeps a late instance from running a tick again, which deserves a warning.
     */
    static boolean untrackedSchedule(MethodInfo method, CheckedLockedMethodBuildItem checked) {
        return checked.tickParameter < 0
                && (method.hasDeclaredAnnotation(SCHEDULED) || method.hasDeclaredAnnotation(SCHEDULES));
    }

    /**
     * Whether the method is {@code @Scheduled} and its lock has no name of its own: named after the class and method,
     * it changes when the code moves, and old and new instances of a rolling deploy stop excluding each other.
     */
    static boolean implicitlyNamedSchedule(MethodInfo method, AnnotationInstance locked) {
        return stringValue(locked, "value", "").isEmpty()
                && (method.hasDeclaredAnnotation(SCHEDULED) || method.hasDeclaredAnnotation(SCHEDULES));
    }

    static String describe(MethodInfo method) {
        return "@Locked method " + method.declaringClass().name() + "#" + method.name() + "()";
    }

    /**
     * The {@code ScheduledExecution} parameter whose tick the method claims, or -1: claimed whatever {@code onBusy} says
     * (with {@code FAIL}, a late trigger would otherwise run a tick again once the lock is free); a shared mode cannot
     * claim, which {@link #checkMode} makes an error.
     */
    /**
     * The {@code LockHandle} parameter the interceptor gives the method's lock to, or -1; more than one, or one on a
     * {@code @Scheduled} method (whose parameters the scheduler decides), is an error.
     */
    private static int handleParameter(MethodInfo method, String description, List<String> errors) {
        int found = -1;
        for (int i = 0; i < method.parametersCount(); i++) {
            if (method.parameterType(i).name().equals(LOCK_HANDLE)) {
                if (found >= 0) {
                    errors.add(description + " has more than one LockHandle parameter: the interceptor gives its lock"
                            + " to one. Keep one");
                    return found;
                }
                found = i;
            }
        }
        if (found >= 0 && (method.hasDeclaredAnnotation(SCHEDULED) || method.hasDeclaredAnnotation(SCHEDULES))) {
            errors.add(description + " is @Scheduled and has a LockHandle parameter, which the scheduler cannot pass."
                    + " Remove it and call LockManager.currentLock() inside the method");
        }
        return found;
    }

    private static int tickParameter(MethodInfo method) {
        for (int i = 0; i < method.parametersCount(); i++) {
            if (method.parameterType(i).name().equals(SCHEDULED_EXECUTION)) {
                return i;
            }
        }
        return -1;
    }

    /** Whether the method's work goes on after it returned: its lock is held until its result completes. */
    private static boolean isAsync(ReturnKind kind) {
        return kind == ReturnKind.UNI || kind == ReturnKind.COMPLETION_STAGE || kind.suspends();
    }

    /** How an asynchronous method returns, for messages that follow its description. */
    private static String asyncly(ReturnKind kind) {
        return kind.suspends() ? " is a Kotlin suspend function"
                : " returns " + (kind == ReturnKind.UNI ? "Uni" : "CompletionStage");
    }

    private static ReturnKind returnKind(MethodInfo method, List<String> errors) {
        if (method.parametersCount() > 0) {
            // a Kotlin suspend function, as the JVM sees it: its caller's continuation last, Continuation<? super R>
            Type last = method.parameterType(method.parametersCount() - 1);
            if (last.name().equals(CONTINUATION) && method.declaringClass().declaredAnnotation(KOTLIN_METADATA) != null
                    && method.returnType().name().equals(OBJECT)) {
                boolean unit = last.kind() == Type.Kind.PARAMETERIZED_TYPE
                        && last.asParameterizedType().arguments().size() == 1
                        && last.asParameterizedType().arguments().get(0).kind() == Type.Kind.WILDCARD_TYPE
                        && last.asParameterizedType().arguments().get(0).asWildcardType().superBound() != null
                        && last.asParameterizedType().arguments().get(0).asWildcardType().superBound().name()
                                .equals(KOTLIN_UNIT);
                return unit ? ReturnKind.SUSPEND_UNIT : ReturnKind.SUSPEND;
            }
        }
        Type type = method.returnType();
        if (type.kind() == Type.Kind.VOID) {
            return ReturnKind.VOID;
        }
        DotName name = type.name();
        if (name.equals(MULTI)) {
            errors.add(describe(method) + " returns Multi: a stream has no single end at which to release the lock."
                    + " Return Uni (of a List), or lock inside the stream with LockManager.acquireAsync");
            return ReturnKind.VALUE;
        }
        if (name.equals(UNI)) {
            return ReturnKind.UNI;
        }
        if (name.equals(COMPLETION_STAGE) || name.equals(COMPLETABLE_FUTURE)) {
            return ReturnKind.COMPLETION_STAGE;
        }
        return name.equals(OPTIONAL) ? ReturnKind.OPTIONAL : ReturnKind.VALUE;
    }

    /** Whether a duration member asks for something: a duration above zero, or an expression (known at start). */
    private static boolean given(String member, String text) {
        if (LockedOptions.isExpression(text)) {
            return true;
        }
        try {
            return !LockedOptions.duration(member, text, property -> Optional.empty()).isZero();
        } catch (IllegalArgumentException e) {
            return false; // reported already
        }
    }

    private static String stringValue(AnnotationInstance annotation, String member, String fallback) {
        AnnotationValue value = annotation.value(member);
        return value == null ? fallback : value.asString();
    }
}
