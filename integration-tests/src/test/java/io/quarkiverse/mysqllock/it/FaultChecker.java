package io.quarkiverse.mysqllock.it;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.it.FaultHistory.Section;
import io.quarkiverse.mysqllock.it.FaultHistory.Write;
import io.quarkiverse.mysqllock.it.FaultSuite.Fault;

/**
 * Checks a fault run's history:
 * <ol>
 * <li>No two critical sections on one name overlap unless the earlier holder's (the smaller fence's) lock was lost,
 * and then its write was not accepted, or it was told of the loss before the later holder began, or its write took
 * effect (server time) before the later holder began, or the later holder got no fencing token and wrote nothing.
 * Anything else is an unsafe overlap. A LEASE holder must not find its lock valid after the later holder was granted it
 * (two holders at once, by their own checks).</li>
 * <li>Accepted fences of a name strictly increase, each fence is issued once, a holder that asked for the lock after
 * another ended has the greater fence, and the resource's value equals its number of accepted writes.</li>
 * <li>Every lock the server dropped was reported lost to its holder: those overlapped by a later holder, and those
 * a fault certainly took (the section ran through it).</li>
 * <li>After each fault, every hot name is acquired again within the engine's bound.</li>
 * </ol>
 * The end-state checks (rule 5) are made by the controller while the workers are still alive.
 */
final class FaultChecker {

    /**
     * A LEASE holder must find its lease invalid before the server can grant the name to another (its deadline runs out
     * a margin before the lease's end on the server), and so must a leader on either engine (a NAMED term begins two
     * keepalive intervals after its grant and ends when its session goes unconfirmed that long); a NAMED lock's holder
     * learns of a dropped lock within the keepalive, so there it is a figure, not a violation.
     */
    static final String STILL_VALID = "holders that found their lock valid after a later holder was granted it";

    static final String DELIVERED_LOST = "later holder's hold was lost at its delivery (paused inside acquire() past"
            + " its lease's end): no fence, nothing written";
    static final String LATE_WRITE = "earlier holder's write landed after the later holder began, before its first"
            + " write (ordered by the fence; told afterwards)";

    private final LockMode engine;
    /**
     * Whether a holder's own check must never say "held" once a later holder was granted: LEASE (leases end by the clock,
     * a margin before the server's), and elections on both engines (a NAMED term is confirmed within two keepalive
     * intervals and begins that long after its grant).
     */
    private final boolean strictValidity;
    private final FaultHistory history;
    private final List<Fault> faults;
    private final List<String> names;
    private final long recoveryBoundMicros;
    private final long ttlMicros;
    final List<String> violations = new ArrayList<>();
    final Map<String, Object> figures = new LinkedHashMap<>();

    FaultChecker(LockMode engine, boolean elections, FaultHistory history, List<Fault> faults, List<String> names,
            long recoveryBoundMicros, long ttlMicros) {
        this.strictValidity = engine == LockMode.LEASE || elections;
        this.engine = engine;
        this.history = history;
        this.faults = faults;
        this.names = names;
        this.recoveryBoundMicros = recoveryBoundMicros;
        this.ttlMicros = ttlMicros;
    }

    FaultChecker check() {
        List<Section> sections = counted();
        Map<String, List<Section>> byName = new TreeMap<>();
        for (Section s : sections) {
            byName.computeIfAbsent(s.name, n -> new ArrayList<>()).add(s);
        }
        Set<Section> overlapped = overlaps(byName);
        fences(byName);
        writes(sections);
        losses(sections, overlapped);
        liveness();
        return this;
    }

    /**
     * Rule 4 only, and the sections' outcomes: for the transaction workload, whose writes are not guarded by their
     * fence but by the fenced commit, and whose safety {@link TransactionChecker} judges from the commits themselves.
     */
    FaultChecker checkLiveness() {
        counted();
        liveness();
        return this;
    }

    /** The sections, their outcomes counted; those of live workers that never ended are a violation. */
    private List<Section> counted() {
        List<Section> sections = history.sections();
        Map<String, Long> outcomes = new TreeMap<>();
        for (Section s : sections) {
            outcomes.merge(s.outcome == null ? (s.died ? "died" : "unfinished") : s.outcome, 1L, Long::sum);
        }
        figures.put("critical sections", (long) sections.size());
        figures.put("write outcomes seen by holders", outcomes);
        long unfinished = sections.stream().filter(s -> s.endAt == 0).count();
        if (unfinished > 0) {
            violations.add(unfinished + " critical section(s) of live workers never ended");
        }
        return sections;
    }

    // rule 1 (and the overlap evidence for rule 3)
    private Set<Section> overlaps(Map<String, List<Section>> byName) {
        Map<String, Long> explained = new TreeMap<>();
        Set<Section> overlapped = new HashSet<>();
        long unsafe = 0;
        long stillValid = 0;
        for (List<Section> list : byName.values()) {
            list.sort(Comparator.comparingLong(s -> s.acquiredAt));
            for (int i = 0; i < list.size(); i++) {
                Section a = list.get(i);
                long end = a.endAt == 0 ? Long.MAX_VALUE : a.endAt;
                for (int j = i + 1; j < list.size() && list.get(j).acquiredAt < end; j++) {
                    Section x = list.get(j);
                    // The earlier holder is the one the server granted first: the smaller fence. A holder paused
                    // inside acquire() returns late with an old fence (LEASE), so local times alone can mislead.
                    boolean byFence = a.fence > 0 && x.fence > 0;
                    Section earlier = byFence && x.fence < a.fence ? x : a;
                    Section later = earlier == a ? x : a;
                    if (deliveredLost(later, earlier)) {
                        explained.merge(DELIVERED_LOST, 1L, Long::sum);
                        continue;
                    }
                    overlapped.add(earlier);
                    if (earlier.validAt > later.acquiredAt) {
                        // the earlier holder's own check still said "held" after the later holder was granted the name
                        stillValid++;
                        if (strictValidity && stillValid <= 20) {
                            violations.add("Two holders at once on '" + a.name + "': " + describe(earlier) + " found its"
                                    + " lease valid at " + earlier.validAt + ", after " + describe(later) + " was granted");
                        }
                    }
                    String why = explain(earlier, later);
                    if (why == null) {
                        unsafe++;
                        if (unsafe <= 20) {
                            violations.add("Unsafe overlap on '" + a.name + "': " + describe(earlier) + " and then "
                                    + describe(later));
                        }
                    } else {
                        explained.merge(why, 1L, Long::sum);
                    }
                }
            }
        }
        figures.put("unsafe overlaps", unsafe);
        figures.put(STILL_VALID, stillValid);
        figures.put("late writes ordered only by the fence", explained.getOrDefault(LATE_WRITE, 0L));
        figures.put("overlaps explained", explained);
        return overlapped;
    }

    /**
     * A hold lost before it was delivered: its holder asked before the other was granted the name, and its grant was
     * lost before acquire() returned: LEASE, paused inside acquire() past its lease's end (the other took the name over
     * by observed expiry meanwhile); NAMED, its session ended by a fault as the grant came back (the server then
     * granted the name to the other). Told, no fencing token (found lost, or none could be issued), nothing written.
     * It overlapped nobody; its local times mislead, and without a fence the fences cannot order the two.
     */
    private static boolean deliveredLost(Section later, Section earlier) {
        return later.fence == 0 && ("lost-before-write".equals(later.outcome) || "no-fence".equals(later.outcome))
                && later.told() && later.requestedAt < earlier.acquiredAt;
    }

    private static String explain(Section a, Section b) {
        boolean lost = a.told() || a.died;
        if (!lost) {
            return null; // two holders and the first never learned it: also a silent loss (rule 3)
        }
        if (b.fence == 0 && ("lost-before-write".equals(b.outcome) || "no-fence".equals(b.outcome))) {
            // fencingToken() threw (the lock lost, or no token could be issued): the later holder wrote nothing
            return "later holder had no fencing token and wrote nothing";
        }
        if (a.acceptedAt == 0) {
            return a.died ? "earlier holder died before writing"
                    : "earlier holder's write was not accepted (" + a.outcome + ")";
        }
        if (a.acceptedAt < b.acquiredAt) {
            return "earlier holder's write took effect before the later holder began";
        }
        if (a.told() && a.lostAt < b.acquiredAt) {
            return "earlier holder was told of the loss before the later holder began";
        }
        if (a.told() && a.fence < b.fence && (b.acceptedAt == 0 || a.acceptedAt < b.acceptedAt)) {
            // The lock was taken from a live holder (NAMED: KILL of its session) between its validity check and its
            // write; no lock service can tell it sooner. The resource saw its token before the later holder's, so
            // the fence ordered the writes, and the holder was told afterwards. Reported as a figure of its own.
            return LATE_WRITE;
        }
        return null;
    }

    private static String describe(Section s) {
        return s.id + " [fence " + s.fence + ", acquired " + s.acquiredAt + ", ended " + s.endAt + ", write " + s.outcome
                + (s.acceptedAt > 0 ? " at " + s.acceptedAt : "") + (s.told() ? ", told " + s.lostAt + " " + s.lostReason : "")
                + (s.died ? ", died" : "") + "]";
    }

    // rule 2
    private void fences(Map<String, List<Section>> byName) {
        long duplicates = 0;
        long regressions = 0;
        for (List<Section> list : byName.values()) {
            Map<Long, Section> byFence = new HashMap<>();
            for (Section s : list) {
                if (s.fence > 0 && byFence.putIfAbsent(s.fence, s) != null && ++duplicates <= 20) {
                    violations
                            .add("Fence " + s.fence + " of '" + s.name + "' was issued twice: " + describe(byFence.get(s.fence))
                                    + " and " + describe(s));
                }
            }
            // A holder that asked for the lock after another ended must have the greater fence.
            List<Section> byEnd = new ArrayList<>(list);
            byEnd.sort(Comparator.comparingLong(s -> s.endAt == 0 ? Long.MAX_VALUE : s.endAt));
            long maxEnded = 0;
            Section maxSection = null;
            int e = 0;
            List<Section> byRequest = new ArrayList<>(list);
            byRequest.sort(Comparator.comparingLong(s -> s.requestedAt));
            for (Section b : byRequest) {
                while (e < byEnd.size() && byEnd.get(e).endAt != 0 && byEnd.get(e).endAt <= b.requestedAt) {
                    if (byEnd.get(e).fence > maxEnded) {
                        maxEnded = byEnd.get(e).fence;
                        maxSection = byEnd.get(e);
                    }
                    e++;
                }
                if (b.fence > 0 && b.fence <= maxEnded) {
                    regressions++;
                    if (regressions <= 20) {
                        violations.add("Fence went backwards on '" + b.name + "': " + describe(b) + " asked for the"
                                + " lock after " + describe(maxSection) + " ended");
                    }
                }
            }
        }
        figures.put("fences issued twice", duplicates);
        figures.put("fence regressions", regressions);
    }

    private void writes(List<Section> sections) {
        Map<String, Long> accepted = new TreeMap<>();
        Map<String, Long> lastFence = new HashMap<>();
        long outOfOrder = 0;
        for (Write w : history.writes()) {
            accepted.merge(w.name(), 1L, Long::sum);
            Long previous = lastFence.put(w.name(), w.fence());
            if (previous != null && w.fence() <= previous) {
                outOfOrder++;
                violations.add("Accepted fences of '" + w.name() + "' did not increase: " + previous + " then " + w.fence());
            }
        }
        long lostUpdates = 0;
        // the hot names, and the run-once names whose rows their writes created
        java.util.Set<String> resources = new java.util.TreeSet<>(names);
        resources.addAll(history.values().keySet());
        resources.addAll(accepted.keySet());
        for (String name : resources) {
            long value = history.values().getOrDefault(name, 0L);
            long count = accepted.getOrDefault(name, 0L);
            if (value != count) {
                lostUpdates += Math.abs(value - count);
                violations.add("Resource '" + name + "' has value " + value + " but " + count + " accepted writes");
            }
        }
        long phantoms = sections.stream().filter(s -> "accepted".equals(s.outcome) && s.acceptedAt == 0).count();
        if (phantoms > 0) {
            violations.add(phantoms + " write(s) reported accepted to their holder are not in the resource");
        }
        figures.put("writes acknowledged to holders, missing from the resource", phantoms);
        figures.put("accepted writes", (long) history.writes().size());
        figures.put("accepted fences out of order", outOfOrder);
        figures.put("lost updates", lostUpdates);
        figures.put("writes that failed at the holder but committed", sections.stream()
                .filter(s -> "failed".equals(s.outcome) && s.acceptedAt > 0).count());
    }

    // rule 3
    private void losses(List<Section> sections, Set<Section> overlapped) {
        Map<String, Long> reported = new TreeMap<>();
        Map<String, Long> dropped = new TreeMap<>();
        Map<String, Long> silent = new TreeMap<>();
        for (Section s : sections) {
            boolean certain = certainlyDropped(s);
            if (s.told()) {
                reported.merge(kindBefore(s.lostAt), 1L, Long::sum);
            }
            if (overlapped.contains(s) || certain) {
                String kind = kindBefore(s.endAt == 0 ? Long.MAX_VALUE : s.endAt);
                dropped.merge(kind, 1L, Long::sum);
                if (!s.told() && !s.died) {
                    silent.merge(kind, 1L, Long::sum);
                    violations.add("Silent loss: " + describe(s) + (certain ? " ran through a fault that took its lock"
                            : " was overlapped by a later holder") + " and was never told");
                }
            }
        }
        figures.put("locks dropped, by fault", dropped);
        figures.put("losses reported, by fault", reported);
        figures.put("silent losses", silent.values().stream().mapToLong(Long::longValue).sum());
    }

    /** The section held its lock through a fault that cannot leave a lock in place. */
    private boolean certainlyDropped(Section s) {
        for (Fault f : faults) {
            boolean through = s.activeThroughout(f.injectedAt(), f.healedAt());
            boolean own = f.worker() != null && java.util.Arrays.asList(f.worker().split(",")).contains(s.worker);
            boolean longerThanTtl = f.healedAt() - f.injectedAt() > ttlMicros;
            boolean taken = switch (f.kind()) {
                // held from before the holder was looked up until after its session was killed
                case KILL_SESSION -> engine == LockMode.NAMED && s.name.equals(f.lockName()) && through;
                case DB_RESTART -> through && (engine == LockMode.NAMED || longerThanTtl);
                case NETWORK_CUT -> through && own && (engine == LockMode.NAMED || longerThanTtl);
                case PAUSE, NETWORK_STALL -> through && own && engine == LockMode.LEASE && longerThanTtl;
                // the held row keeps its lease from being renewed; every other lease goes on
                case ROW_LOCK -> through && s.name.equals(f.lockName()) && engine == LockMode.LEASE && longerThanTtl;
                // named locks on a read-only server are invisible to a writable one; leases cannot be renewed
                case READ_ONLY -> through && (engine == LockMode.NAMED || longerThanTtl);
                // a lease survives a failover if what it needs replicated: the overlaps are the evidence; a black-holed
                // connection is abandoned, but its named locks stay held on the server until the link answers again
                case SIGKILL, FAILOVER, BLACK_HOLE, FLEET_DOWN -> false;
                // what no lock may lose: the holder's application using up its pool; a restart with other settings
                // (its locks end with its graceful stop, released, not taken)
                case POOL_SATURATION, ROLLING_RESTART -> false;
                // a holder on a node killed or cut off cannot renew: its lease ends, and it must be told
                case NODE_KILL, NODE_PARTITION -> through && own && longerThanTtl;
            };
            if (taken) {
                return true;
            }
        }
        return false;
    }

    private String kindBefore(long time) {
        Fault last = null;
        for (Fault f : faults) {
            if (f.injectedAt() <= time) {
                last = f;
            }
        }
        return last == null ? "before any fault" : last.kind().label;
    }

    // rule 4
    private void liveness() {
        Map<String, Long> maxRecovery = new TreeMap<>();
        Map<String, Long> count = new TreeMap<>();
        for (Fault f : faults) {
            count.merge(f.kind().label, 1L, Long::sum);
            long recovery = recoveryMicros(f);
            maxRecovery.merge(f.kind().label, recovery / 1000, Math::max);
            if (recovery > recoveryBoundMicros) {
                violations.add("No recovery within " + recoveryBoundMicros / 1000 + " ms after " + f + ": "
                        + (recovery == Long.MAX_VALUE ? "never" : recovery / 1000 + " ms"));
            }
        }
        figures.put("faults injected", count);
        figures.put("max recovery ms, by fault", maxRecovery);
        figures.put("recovery bound ms", recoveryBoundMicros / 1000);
    }

    /** Time from the fault's reference point until every hot name was acquired again. */
    long recoveryMicros(Fault f) {
        long from = f.recoveryFrom(engine);
        long worst = 0;
        for (String name : names) {
            long first = history.firstAcquisitionAfter(name, from);
            if (first == 0) {
                return Long.MAX_VALUE;
            }
            worst = Math.max(worst, first - from);
        }
        return worst;
    }
}
